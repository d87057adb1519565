"""Tokens to lexical rules: the pooled back-off of unknown words scores as every signature."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.tokens import RulesByWord, token_rules
from lpcfg_cli.grammar.training_data import prepare_trees
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.tree import leaves


def _scores(layout, n_symbols, triples, parent, table):
    """``(span, pre-terminal, state)`` sums of ``weight * table[rule]`` (how the coarse and
    latent passes read the triples)."""
    span, rule, weight = triples
    out = np.zeros((layout.n_spans, n_symbols, table.shape[1]))
    np.add.at(out, (span, parent[rule]), table[rule] * weight[:, None])
    return out


def test_pooled_back_off_scores_every_token_as_every_signature(ptb_split):
    """An unknown word's back-off to every signature as one entry of pooled rules gives
    every (span, pre-terminal) the scores of one entry per signature rule, for any table of
    per-rule vectors (coarse probabilities, latent lexical vectors), with far fewer
    triples; known words, smoothed towards their signature, are unchanged."""
    data = prepare_trees(ptb_split["train"][:400], BinarizeOptions())
    g = data.grammar
    assert len(g.lexicon.signature_ids) > 10
    sentences = [leaves(t) for t in ptb_split["test"][:30]]
    layout = SpanLayout([len(s) for s in sentences])
    plain, pooled = RulesByWord(g), RulesByWord(g, pooled=True)
    each = token_rules(g, plain, layout, sentences)
    pool = token_rules(g, pooled, layout, sentences)
    assert (pool[1] >= len(g.lexical)).any()  # some tokens are unknown
    assert len(pool[1]) < len(each[1]) / 3
    np.testing.assert_array_equal(pooled.parent[: len(g.lexical)], g.lexical[:, 0])
    table = np.random.default_rng(0).random((len(g.lexical), 3))
    np.testing.assert_allclose(
        _scores(layout, g.n_symbols, pool, pooled.parent, pooled.pool(table)),
        _scores(layout, g.n_symbols, each, plain.parent, table),
        rtol=1e-12,
        atol=1e-15,
    )
    known = [[w for w in s if w in g.lexicon.known] for s in sentences]
    known_layout = SpanLayout([len(s) for s in known])
    for a, b in zip(
        token_rules(g, plain, known_layout, known),
        token_rules(g, pooled, known_layout, known),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


def test_expand_gives_every_rule_of_each_word_within_its_restriction(ptb_split):
    """``RulesByWord.expand`` against the rules listed one by one: every rule of the entry's
    word, and with a restriction only those whose pre-terminal has a rule for that word."""
    data = prepare_trees(ptb_split["train"][:300], BinarizeOptions())
    g = data.grammar
    rules = RulesByWord(g, pooled=True)
    rng = np.random.default_rng(0)
    n = 400
    span = rng.integers(0, 50, n)
    word = rng.integers(0, len(g.words) + 1, n)  # the pooled back-off too
    weight = rng.random(n)
    only = np.where(rng.random(n) < 0.5, rng.integers(0, len(g.words), n), -1)
    has = {(int(a), int(w)) for a, w in g.lexical}
    want = []
    for t in range(n):
        for rule in rules.order[rules.ptr[word[t]] : rules.ptr[word[t] + 1]]:
            if only[t] < 0 or (int(rules.parent[rule]), int(only[t])) in has:
                want.append((span[t], rule, weight[t]))
    got = list(zip(*(a.tolist() for a in rules.expand(span, word, weight, only)), strict=True))
    assert got == [(int(s), int(r), float(w)) for s, r, w in want]
    assert len(got) < len(rules.expand(span, word, weight)[1])


def test_expand_refuses_ids_and_lengths_it_cannot_index(ptb_split):
    """The kernel reads without bounds checks: a word id outside the table, a restriction
    outside the vocabulary or arrays of different lengths are refused, by name."""
    data = prepare_trees(ptb_split["train"][:50], BinarizeOptions())
    rules = RulesByWord(data.grammar)
    one = np.zeros(1, dtype=np.int64)
    n = len(rules.ptr) - 1
    with pytest.raises(ValueError, match="word"):
        rules.expand(one, np.array([n]), np.ones(1))
    with pytest.raises(ValueError, match="word"):
        rules.expand(one, np.array([-1]), np.ones(1))
    with pytest.raises(ValueError, match="only"):
        rules.expand(one, one, np.ones(1), np.array([rules.n_words]))
    with pytest.raises(ValueError, match="weight"):
        rules.expand(one, one, np.ones(2))
