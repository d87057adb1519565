"""Rare training words: trained as their signatures, given back by the parser (``rarewords``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.lexicon import is_signature
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.rarewords import restore
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing.tiers import BlockParser
from lpcfg_cli.treebank.tree import is_preterminal, iter_nodes, leaves
from tests.support import fit_em, latent_trees

ENDINGS = ("ing", "ed", "ness", "s")


def with_rare_words(trees):
    """Every fifth token replaced by a word seen twice (``zor3ing``), sometimes under two
    different pre-terminals, so that the table has words with several rows."""
    k = 0
    for tree in trees:
        for node in iter_nodes(tree):
            if is_preterminal(node):
                if k % 5 == 0:
                    j = k // 10
                    node[0] = f"zor{j}{ENDINGS[j % len(ENDINGS)]}"
                k += 1
    return trees


@pytest.fixture(scope="module")
def trained():
    trees = with_rare_words(latent_trees(300))
    grammar, bank = build_grammar(trees, rare=2)
    em = [fit_em(grammar, bank, states=2, iterations=3, seed=s) for s in (1, 2)]
    pcfg = train_pcfg(grammar, bank, {})
    return trees, em, pcfg


def test_the_table_counts_every_rare_token(trained):
    trees, em, _ = trained
    g = em[0].grammar
    rare = g.rare_words
    tokens = [w for t in trees for w in leaves(t) if w not in set(g.known_words)]
    assert len(tokens) > 100
    assert sorted(rare.words) == sorted(set(tokens))
    assert rare.table[:, 3].sum() == len(tokens)
    assert all(is_signature(g.words[s]) for s in rare.table[:, 2])
    # Training is unchanged: the rare words are not in the training vocabulary.
    assert not set(rare.words) & set(g.words)


@pytest.mark.parametrize("which", ["em", "pcfg"])
def test_restored_words_share_out_their_signatures_rules(trained, which):
    """Per pre-terminal, the restored words' rules add up to the rules of the signatures
    they were trained as (each signature's rule split among its words by their tokens)."""
    _, em, pcfg = trained
    model = em[0] if which == "em" else pcfg
    g = model.grammar
    back = restore(model)
    new = range(g.n_lexical, back.grammar.n_lexical)
    assert len(new) > 0
    group = g.emission_groups()
    table = g.rare_words.table
    for a in np.unique(back.grammar.lexical[list(new), 0]):
        own = sum(back.lexical_vector(r) for r in new if back.grammar.lexical[r, 0] == a)
        sigs = {
            int(s) for s, t in zip(table[:, 2], table[:, 1], strict=True) if group[t] == group[a]
        }
        signature = sum(
            model.lexical_vector(r)
            for r in range(g.n_lexical)
            if g.lexical[r, 0] == a and int(g.lexical[r, 1]) in sigs
        )
        np.testing.assert_allclose(own, signature, rtol=1e-12)
        coarse_own = sum(back.coarse.lexical[r] for r in new if back.grammar.lexical[r, 0] == a)
        coarse_sig = sum(
            model.coarse.lexical[r]
            for r in range(g.n_lexical)
            if g.lexical[r, 0] == a and int(g.lexical[r, 1]) in sigs
        )
        assert coarse_own == pytest.approx(coarse_sig, rel=1e-12)


def test_a_restored_word_has_rules_only_where_its_tag_was_seen(trained):
    _, em, _ = trained
    g = em[0].grammar
    back = restore(em[0])
    group = g.emission_groups()
    seen: dict[str, set[int]] = {}
    for w, a in zip(g.rare_words.table[:, 0], g.rare_words.table[:, 1], strict=True):
        seen.setdefault(g.rare_words.words[w], set()).add(int(group[a]))
    for a, w in back.grammar.lexical[g.n_lexical :]:
        assert group[a] in seen[back.grammar.words[w]]
    assert {back.grammar.words[w] for w in back.grammar.lexical[g.n_lexical :, 1]} == set(seen)


def test_the_parser_knows_restored_words_and_smooths_them_freely(trained):
    trees, em, _ = trained
    parser = BlockParser(em[0])
    lexicon = parser.grammar.lexicon
    rare = em[0].grammar.rare_words.words[0]
    entries = lexicon.lookup_weighted(rare, 1)
    assert entries[0][0] == lexicon.index[rare]
    assert is_signature(lexicon.words[entries[1][0]]) and entries[1][2] == -1
    # A frequent word is smoothed towards its signature only where it has rules.
    frequent = max(
        em[0].grammar.known_words,
        key=lambda w: em[0].grammar.word_counts[em[0].grammar.words.index(w)],
    )
    entries = lexicon.lookup_weighted(frequent, 1)
    assert all(r == lexicon.index[frequent] for _, _, r in entries[1:])
    sentence = leaves(trees[0])
    assert parser.parse([sentence])[0].tree is not None


def test_a_model_without_rare_words_is_left_alone(trained):
    trees, _, _ = trained
    grammar, bank = build_grammar(trees, rare=0)
    model = train_pcfg(grammar, bank, {})
    assert len(grammar.rare_words) == 0
    assert restore(model) is model


def test_ensemble_members_are_restored_each_with_its_own_parameters(trained):
    _, em, _ = trained
    both = restore(em[0].bundle(em[1]))
    np.testing.assert_array_equal(both.lexical, restore(em[0]).lexical)
    np.testing.assert_array_equal(both.members[0].lexical, restore(em[1]).lexical)
    assert both.members[0].grammar is both.grammar


def test_model_files_keep_the_table(trained, tmp_path):
    _, em, _ = trained
    em[0].save(tmp_path / "m.npz")
    back = LPCFG.load(tmp_path / "m.npz")
    assert back.grammar.rare_words.words == em[0].grammar.rare_words.words
    np.testing.assert_array_equal(back.grammar.rare_words.table, em[0].grammar.rare_words.table)
    # The file's float32 parameters, restored as the model's are.
    np.testing.assert_allclose(restore(back).lexical, restore(em[0]).lexical, rtol=2e-7)


def _corrupted(model, path, change) -> None:
    """Save ``model`` at ``path``, then rewrite the archive's arrays with ``change``."""
    model.save(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    change(arrays)
    np.savez(path, **arrays)


@pytest.mark.parametrize("column", [0, 1, 2, 3])
def test_a_corrupt_table_is_refused(trained, tmp_path, column):
    def change(arrays):
        table = arrays["rare_table"].copy()
        table[0, column] = 0 if column == 3 else 10**6
        arrays["rare_table"] = table

    _corrupted(trained[1][0], tmp_path / "m.npz", change)
    with pytest.raises(LpcfgError, match="rare-word table"):
        LPCFG.load(tmp_path / "m.npz")


@pytest.mark.parametrize("words", [[1, 2], ["a", "a"]])
def test_corrupt_rare_words_are_refused(trained, tmp_path, words):
    def change(arrays):
        meta = json.loads(arrays["meta_json"].tobytes())
        meta["grammar"]["rare_words"] = words
        arrays["meta_json"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        arrays["rare_table"] = arrays["rare_table"][:1] * [0, 1, 1, 1]

    _corrupted(trained[1][0], tmp_path / "m.npz", change)
    with pytest.raises(LpcfgError, match="rare words must be distinct strings"):
        LPCFG.load(tmp_path / "m.npz")
