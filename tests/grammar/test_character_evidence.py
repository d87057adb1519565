"""Unknown words of scripts without case weighted by their first and last characters
(``lexicon.CharacterEvidence``, applied by ``engine.tokens.character_weighted``)."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.tokens import RulesByWord, character_weighted, token_rules, token_words
from lpcfg_cli.grammar.lexicon import CharacterEvidence, RareWords, is_uncased_word
from lpcfg_cli.grammar.training_data import prepare_trees
from lpcfg_cli.model.rarewords import restore
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing.tiers import BlockParser
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.ptb import trees_from_text
from lpcfg_cli.treebank.tree import tagged_words
from tests.support import NOUN_HEADS, UNCASED_ENDS, uncased_treebank


@pytest.fixture(scope="module")
def model():
    data = prepare_trees(trees_from_text(uncased_treebank()), BinarizeOptions(), rare=1)
    return restore(train_pcfg(data.grammar, data.bank, {}))


def test_uncased_words_are_those_whose_letters_have_no_case():
    assert is_uncased_word("鄰居") and is_uncased_word("ภาษา") and is_uncased_word("老3")
    assert not is_uncased_word("word") and not is_uncased_word("Ｗｏｒｄ")
    assert not is_uncased_word("三十")  # CJK numerals are numerals, not letters
    assert not is_uncased_word("。") and not is_uncased_word("")


def test_counts_only_uncased_words_seen_once():
    group = np.array([0, 1, 1])  # symbol 2 shares symbol 1's emission group
    rare = RareWords(
        ["老師", "老闆", "打球", "word", "吃飯"],
        # (word, pre-terminal, signature, tokens)
        [[0, 0, 0, 1], [1, 0, 0, 1], [2, 2, 0, 1], [3, 1, 0, 1], [4, 1, 0, 2]],
    )
    ev = CharacterEvidence.count(rare, group)
    assert ev is not None
    np.testing.assert_allclose(ev.prior, [2 / 3, 1 / 3])  # "word" is cased, 吃飯 seen twice
    assert set(ev.first) == {"老", "打"} and set(ev.last) == {"師", "闆", "球"}
    np.testing.assert_array_equal(ev.first["老"], [2, 0])
    assert CharacterEvidence.count(RareWords(["word"], [[0, 1, 0, 1]]), group) is None
    assert CharacterEvidence.count(RareWords(), group) is None


def test_factors_follow_the_formula():
    group = np.array([0, 1])
    rare = RareWords(["老師", "老闆", "打球"], [[0, 0, 0, 1], [1, 0, 0, 1], [2, 1, 0, 1]])
    ev = CharacterEvidence.count(rare, group)
    s, prior = CharacterEvidence.SMOOTH, np.array([2 / 3, 1 / 3])

    def ratio(counts):
        counts = np.asarray(counts, dtype=float)
        return (counts + s * prior) / (counts.sum() + s) / prior

    # 老 starts two nouns, 球 ends a verb: both ends count.
    want = ratio([2, 0]) * ratio([0, 1])
    np.testing.assert_allclose(
        ev.factors("老球", False, lambda *_: "UNK-NOCASE-CJK"), want / want.max()
    )
    # The signature already ends in 球 (a learned suffix): only the first character counts.
    want = ratio([2, 0])
    np.testing.assert_allclose(
        ev.factors("老球", True, lambda *_: "UNK-NOCASE-CJK-球"), want / want.max()
    )
    # A one-character word counts its character once; unseen characters say nothing.
    np.testing.assert_allclose(
        ev.factors("老", False, lambda *_: "UNK-NOCASE-CJK"), want / want.max()
    )
    assert ev.factors("無無", False, lambda *_: "UNK-NOCASE-CJK") is None
    assert ev.factors("word", False, lambda *_: "UNK-LC") is None


def test_the_parser_tags_unknown_words_by_their_first_character(model):
    g = model.grammar
    assert g.characters is not None
    assert not any(s.rsplit("-", 1)[-1] in UNCASED_ENDS for s in g.words if s.startswith("UNK"))
    sentences = [["老甲", "打乙"], ["吃丙", "小丁"], ["打戊", "老己"], ["小庚", "吃辛"]]
    assert not any(w in g.lexicon.known for s in sentences for w in s)
    results = BlockParser(model).parse(sentences)
    for sentence, result in zip(sentences, results, strict=True):
        tags = dict(tagged_words(result.tree))
        assert all(tags[w] == ("Na" if w[0] in NOUN_HEADS else "VA") for w in sentence)


def test_only_unknown_uncased_tokens_are_reweighted(model):
    g = model.grammar
    known = next(w for w in g.known_words if not w.startswith("UNK"))
    sentences = [[known, "老甲", "word"]]
    layout = SpanLayout([3])
    rules = RulesByWord(g, pooled=True)
    lex = token_rules(g, rules, layout, sentences)
    plain = rules.expand(*token_words(g, layout, sentences, rules.pooled))
    unknown = layout.base[1, 0] + 1
    changed = lex[2] != plain[2]
    assert changed.any() and (lex[0][changed] == unknown).all()
    np.testing.assert_array_equal(lex[0], plain[0])
    np.testing.assert_array_equal(lex[1], plain[1])


def test_a_grammar_without_evidence_is_left_as_it_is(ptb_split):
    data = prepare_trees(ptb_split["train"][:200], BinarizeOptions())
    g = data.grammar
    assert g.characters is None
    sentences = [["老甲", "the"]]
    layout = SpanLayout([2])
    rules = RulesByWord(g)
    lex = rules.expand(*token_words(g, layout, sentences, False))
    assert character_weighted(g, rules, layout, sentences, lex) is lex


def test_restoring_keeps_the_rare_words_and_is_done_once(model):
    assert len(model.grammar.rare_words) > 0
    assert restore(model) is model
