"""Sentences the grammar cannot derive: the parser's smoothed grammar (tier 2) and glue
(tier 3) give them a real parse, and leave every sentence the grammar derives as it was.

A small treebank with punctuation: ``he`` and ``she`` are only ever the chain ``NP+PRP``
under an ``S`` (never a root), ``barks`` only a ``VBZ``, and no rule puts a ``.`` anywhere
but at the end of an ``S``, so ``. . .`` and two sentences in a row have no derivation even
with a smoothed lexicon.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.tokens import is_punctuation, smoothed_token_rules, token_rules
from lpcfg_cli.grammar.training_data import prepare
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing.glue import segment
from lpcfg_cli.parsing.parser import Parser
from lpcfg_cli.parsing.smoothed import live_states
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.ptb import format_tree, parse_tree
from lpcfg_cli.treebank.tree import leaves
from tests.support import fit_em, invoke, run

TREES = [
    "(S (NP (DT the) (NN dog)) (VP (VBZ barks)) (. .))",
    "(S (NP (DT the) (NN cat)) (VP (VBZ sleeps)) (. !))",
    "(S (NP (DT a) (NN bird)) (VP (VBZ sings) (NP (DT the) (NN song))) (. .))",
    "(S (NP (NN time)) (: --) (VP (VBZ flies)) (. .))",
    "(S (NP (DT the) (NN man)) (VP (VBZ sees) (NP (DT a) (NN dog))) (. .))",
    "(S (NP (DT the) (NN kettle)) (VP (VBZ boils)) (. .))",
    "(S (NP (DT a) (NN lamp)) (VP (VBZ glows)) (. !))",
    "(S (NP (DT the) (NN dog)) (VP (VBZ sees) (NP (DT the) (NN cat))) (. .))",
    "(S (NP (DT the) (NN cat)) (VP (VBZ barks)) (. .))",
    "(S (NP (PRP he)) (VP (VBZ sleeps)) (. .))",
    "(S (NP (PRP she)) (VP (VBZ sees) (NP (PRP he))) (. .))",
    "(S (NP (PRP she)) (VP (VBZ barks)) (. .))",
]

ONE_WORD = "he"  # only ever NP+PRP, never a root
UNSEEN_TAG = "the barks sleeps ."  # "barks" only ever a VBZ: here it must be a noun
TWO_SENTENCES = "the dog barks . the cat sleeps !"  # no rule joins two S
TWO_SENTENCES_APART = ["the dog barks .", "the cat sleeps !"]
PUNCTUATION = [". . .", "--", "!"]
DERIVED = ["the dog barks .", "she sees the cat .", "a bird sings the song !"]
DECODERS = ("max-marginal", "max-bracket", "max-rule-product", "variational")


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiers") / "train.mrg"
    path.write_text("\n".join(TREES) + "\n")
    return prepare([str(path)], BinarizeOptions(), rare=1)


@pytest.fixture(scope="module")
def pcfg(bank) -> LPCFG:
    return train_pcfg(bank.grammar, bank.bank, {})


@pytest.fixture(scope="module")
def em(bank) -> LPCFG:
    return fit_em(bank.grammar, bank.bank, states=2, iterations=3, seed=1)


@pytest.fixture(scope="module")
def ensemble(bank, em) -> LPCFG:
    return em.bundle(fit_em(bank.grammar, bank.bank, states=2, iterations=3, seed=2))


def _words(lines: list[str]) -> list[list[str]]:
    return [line.split() for line in lines]


def test_a_one_word_sentence_whose_chain_was_never_a_root_is_parsed_smoothed(pcfg):
    parser = BlockParser(pcfg)
    result = parser.parse([[ONE_WORD]])[0]
    assert result.tier == 2 and result.smoothed and result.fallback is None
    assert format_tree(result.tree) == "(NP (PRP he))"
    assert parser.stats.smoothed == 1 and parser.stats.fallbacks == 0


def test_a_known_word_takes_a_tag_it_was_never_seen_with(pcfg):
    parser = BlockParser(pcfg)
    result = parser.parse([UNSEEN_TAG.split()])[0]
    assert result.tier == 2
    assert format_tree(result.tree) == "(S (NP (DT the) (NN barks)) (VP (VBZ sleeps)) (. .))"


@pytest.mark.parametrize(
    ("line", "tier", "tree"),
    [
        (". . .", 3, "(S (. .) (. .) (. .))"),
        ("--", 2, "(: --)"),
        ("!", 2, "(. !)"),
    ],
)
def test_punctuation_alone_gets_a_parse_and_keeps_its_tags(pcfg, line, tier, tree):
    parser = BlockParser(pcfg)
    result = parser.parse([line.split()])[0]
    assert result.tier == tier and format_tree(result.tree) == tree
    assert (parser.stats.smoothed, parser.stats.glued) == ((1, 0) if tier == 2 else (0, 1))


def test_a_tag_sequence_with_no_derivation_is_glued_from_its_pieces(pcfg):
    parser = BlockParser(pcfg)
    result = parser.parse([TWO_SENTENCES.split()])[0]
    assert result.tier == 3 and result.pieces == 2
    alone = [format_tree(r.tree) for r in BlockParser(pcfg).parse(_words(TWO_SENTENCES_APART))]
    assert format_tree(result.tree) == f"(S {alone[0]} {alone[1]})"
    assert parser.stats.glued == 1 and parser.stats.fallbacks == 0


def test_the_glue_cut_takes_the_fewest_pieces_then_the_likeliest():
    """``segment``: pieces are items of the piece symbol; fewer pieces win over likelier
    ones, and among as few the larger sum of log posteriors wins."""
    layout = SpanLayout([4])
    n, piece = 3, 2

    def key(start: int, length: int) -> int:
        return (int(layout.base[length, 0]) + start) * n + piece

    # [0,4) is no piece; [0,2) + [2,4) (two pieces) against [0,1) + [1,4) (two, likelier)
    # and four one-word pieces (likeliest of all, but four).
    items = {key(0, 2): 0.5, key(2, 2): 0.5, key(0, 1): 0.9, key(1, 3): 0.9}
    items.update({key(t, 1): 1.0 for t in range(1, 4)})
    keys = np.array(sorted(items))
    mu = np.array([items[k] for k in keys])
    assert segment(layout, keys, mu, n, piece) == [[(0, 1), (1, 4)]]
    assert segment(layout, keys[:0], mu[:0], n, piece) == [None]


def test_sentences_the_grammar_derives_parse_as_without_the_tiers(em, monkeypatch):
    """Mixed in one block with sentences of every tier, the sentences the grammar derives
    get the trees they get with tiers 2 and 3 turned off (the parser as it was)."""
    lines = [*DERIVED, ONE_WORD, UNSEEN_TAG, *PUNCTUATION, TWO_SENTENCES, *DERIVED[::-1]]
    with_tiers = BlockParser(em).parse(_words(lines))
    monkeypatch.setattr(BlockParser, "_beyond_grammar", lambda self, sentences, results: None)
    without = BlockParser(em).parse(_words(lines))
    for line, got, want in zip(lines, with_tiers, without, strict=True):
        if line in DERIVED:
            assert got.tier == want.tier == 1 and got.threshold == want.threshold
            assert format_tree(got.tree) == format_tree(want.tree)
        else:
            assert want.tier == 4 and got.tier in (2, 3)


@pytest.mark.parametrize("decode", DECODERS)
@pytest.mark.parametrize("combine", ["product", "mean"])
def test_ensembles_and_every_decoder_parse_what_the_grammar_cannot(ensemble, decode, combine):
    lines = [ONE_WORD, UNSEEN_TAG, *PUNCTUATION, TWO_SENTENCES, *DERIVED]
    parser = BlockParser(ensemble, ParserOptions(decode=decode, combine=combine))
    results = parser.parse(_words(lines))
    assert [r.tier for r in results] == [2, 2, 3, 2, 2, 3, 1, 1, 1]
    for line, r in zip(lines, results, strict=True):
        assert leaves(r.tree) == line.split()
    assert parser.stats.smoothed == 4 and parser.stats.glued == 2 and parser.stats.fallbacks == 0


def test_the_smoothed_grammar_is_built_only_when_a_sentence_needs_it(em):
    parser = BlockParser(em)
    parser.parse(_words(DERIVED))
    assert "smoothed" not in vars(parser) and "glue" not in vars(parser)
    parser.parse([[ONE_WORD]])
    assert "smoothed" in vars(parser) and "glue" not in vars(parser)
    # The latent root vectors gained on live states only, as much per symbol as the coarse.
    for lg, smooth in zip(parser.latent, parser.smoothed.latent, strict=True):
        gained = smooth.root.astype(np.float64) - lg.root
        assert np.all(gained[~live_states(lg)] == 0)
        np.testing.assert_allclose(gained.sum(axis=1), parser.smoothed.root_share, atol=1e-6)
    assert np.all(parser.smoothed.root_share[~parser.root_ok] == 0)


def test_punctuation_keeps_its_own_tags_in_the_smoothed_lexicon(pcfg):
    parser = BlockParser(pcfg)
    assert [is_punctuation(t) for t in [".", "--", "!", "-LRB-", "(", "$", "dog", "5"]] == [
        True,
        True,
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    sentences = [["the", "dog", "barks", "."]]
    layout = SpanLayout([4])
    plain = token_rules(parser.grammar, parser.rules_by_word, layout, sentences)
    smooth = smoothed_token_rules(
        parser.grammar, parser.rules_by_word, layout, sentences, parser.coarse_lexical
    )
    tags = parser.rules_by_word.parent

    def tags_of(triples, word):
        span, rule, _ = triples
        return {int(tags[r]) for s, r in zip(span, rule, strict=True) if s == word}

    assert tags_of(smooth, 3) == tags_of(plain, 3)  # "." keeps its tag
    assert tags_of(smooth, 1) > tags_of(plain, 1)  # "dog" may take any open-class tag
    # The back-off weighs BACKOFF_SHARE of the word's own mass under the treebank PCFG.
    own = sum(parser.coarse_lexical[r] * w for s, r, w in zip(*plain, strict=True) if s == 1)
    extra = sum(parser.coarse_lexical[r] * w for s, r, w in zip(*smooth, strict=True) if s == 1)
    assert extra - own == pytest.approx(1e-3 * own)


def test_the_stream_and_workers_give_the_same_results(em, tmp_path):
    lines = [ONE_WORD, *PUNCTUATION, TWO_SENTENCES, *DERIVED, UNSEEN_TAG] * 3
    one = Parser(em, jobs=1)
    got = list(one.parse(_words(lines)))
    two = Parser(em, jobs=2, block=4)
    assert [format_tree(r.tree) for r in two.parse(_words(lines))] == [
        format_tree(r.tree) for r in got
    ]
    for stats in (one.stats, two.stats):
        assert (stats.smoothed, stats.glued, stats.fallbacks) == (12, 6, 0)


def test_the_command_line_names_each_tier_by_line_one_tree_per_line(em, tmp_path):
    em.save(tmp_path / "em.npz")
    lines = [DERIVED[0], ONE_WORD, "", ". . .", TWO_SENTENCES, "--", UNSEEN_TAG]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    outputs = []
    for jobs in ("1", "2"):
        res = invoke("parse", tmp_path / "em.npz", tmp_path / "in.txt", "--jobs", jobs)
        assert res.exit_code == 0, res.stderr
        out = res.stdout.splitlines()
        assert len(out) == len(lines) and out[2] == "()"
        for line, tree in zip(lines, out, strict=True):
            if line:
                assert leaves(parse_tree(tree)) == line.split()
        assert (
            ", 0 fallback, 3 parsed with the smoothed grammar (lines 2, 6, 7), 2 glued from "
            "pieces (1 from 2 pieces: line 5; 1 from 3 pieces: line 4)"
        ) in res.stderr
        outputs.append(res.stdout)
    assert outputs[0] == outputs[1]


def test_what_no_latent_model_parses_is_decoded_from_the_smoothed_pcfg(em, monkeypatch):
    """Should every latent pass find no parse (here: a stand-in that says so), a sentence
    the smoothed treebank PCFG derives is decoded from that pass's posteriors, a parse under
    the model's own coarse grammar, not a fallback."""
    from lpcfg_cli.parsing import tiers as parser_module

    real = parser_module.inside_pass

    def no_parse(*args, **kwargs):
        chart = real(*args, **kwargs)
        chart.log_z = np.full_like(chart.log_z, -np.inf)
        return chart

    monkeypatch.setattr(parser_module, "inside_pass", no_parse)
    lines = [*DERIVED, ONE_WORD]
    parser = BlockParser(em)
    results = parser.parse(_words(lines))
    assert [r.tier for r in results] == [2, 2, 2, 2]
    assert format_tree(results[0].tree) == "(S (NP (DT the) (NN dog)) (VP (VBZ barks)) (. .))"
    assert parser.stats.smoothed == 4 and parser.stats.fallbacks == 0


def test_too_long_is_still_a_fallback(pcfg):
    parser = BlockParser(pcfg, ParserOptions(max_length=2))
    result = parser.parse([". . .".split()])[0]
    assert result.tier == 4 and result.fallback == "longer than 2 words"
    assert parser.stats.fallbacks == 1 and parser.stats.glued == 0


@pytest.mark.data
@pytest.mark.slow
def test_dev_trees_are_those_of_the_parser_without_tiers(ptb_split, tmp_path, monkeypatch):
    """The treebank PCFG of the standard split (trained in tmp_path), on dev with lines of
    every tier mixed in: every sentence tier 1 parses gets the bytes it gets with tiers 2
    and 3 turned off, which is the parser as it was; the others get real parses. About
    20-35 s."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    prepare_data = importlib.import_module("prepare_data")
    data = tmp_path / "data"
    prepare_data.write_split(ptb_split, data)
    model = tmp_path / "pcfg.npz"
    res = run("train", "--method", "pcfg", data / "train.mrg", "-o", model, "--quiet")
    assert res.returncode == 0, res.stderr
    odd = [". . .", "--", "!", ". ."]  # none has a derivation
    dev = (data / "dev.txt").read_text().splitlines()
    lines = [line for pair in zip(dev, (odd * len(dev))[: len(dev)], strict=True) for line in pair]
    parsed = BlockParser(LPCFG.load(model)).parse(_words(lines))
    monkeypatch.setattr(BlockParser, "_beyond_grammar", lambda self, sentences, results: None)
    plain = BlockParser(LPCFG.load(model)).parse(_words(lines))
    assert all(r.fallback is None for r in parsed)
    assert all(r.tier in (2, 3) for r in parsed[1::2])
    for got, want in zip(parsed, plain, strict=True):
        if want.tier == 1:
            assert format_tree(got.tree) == format_tree(want.tree)
        else:
            assert got.tier in (2, 3)
