"""Goodman's max-marginal and the max-bracket decoding against enumeration of every tree."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.model.sampling import random_lpcfg
from lpcfg_cli.parsing.decoders import Brackets, best_labels, bracket_labels, goodman_trees
from lpcfg_cli.parsing.dev_f1 import DevF1
from lpcfg_cli.parsing.parser_options import ParserOptions, resolve_decoder
from lpcfg_cli.parsing.tiers import BlockParser
from lpcfg_cli.treebank.binarize import debinarize
from lpcfg_cli.treebank.tree import Tree, leaves
from tests.support import binary_trees, run_latent, short_sentences


def all_trees(n, labels):
    """(score, tree) for every binary bracketing of n words, with any label available for
    each span (its score added)."""

    def leaf(i):
        for a, score in labels.get((i, i + 1), []):
            yield score, Tree(a, [str(i)])

    def join(i, k, j, left, right):
        for a, score in labels.get((i, j), []):
            yield left[0] + right[0] + score, Tree(a, [left[1], right[1]])

    return binary_trees(0, n, leaf, join)


def tree_score(tree, scores, i=0):
    """Sum of |marginals| of a decoded tree's items; returns (score, end)."""
    if isinstance(tree[0], str):
        return scores[(tree.label(), i, i + 1)], i + 1
    left, k = tree_score(tree[0], scores, i)
    right, j = tree_score(tree[1], scores, k)
    return left + right + scores[(tree.label(), i, j)], j


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_goodman_tree_maximises_summed_marginals(seed):
    model = random_lpcfg(inter=3, pre=3, words=5, states=2, rules_per_symbol=5, seed=seed)
    g = model.grammar
    sentences = [s for s in short_sentences(model, 20, 5, seed) if len(s) >= 3][:3]
    assert sentences
    layout, chart = run_latent(model, sentences)
    marg = chart.marginals()
    item_span, item_sym = chart.keys // g.n_symbols, chart.keys % g.n_symbols
    root_ok = np.ones(g.n_symbols, dtype=bool)
    span_score, span_label = best_labels(layout, item_span, item_sym, marg, root_ok)
    trees = goodman_trees(layout, span_score, span_label, g.symbols, sentences)
    for s, words in enumerate(sentences):
        labels: dict = {}
        scores: dict = {}
        for span, a, mu in zip(item_span, item_sym, marg, strict=True):
            if layout.span_sent[span] != s or mu <= 1e-14:
                continue
            i = int(layout.span_start[span])
            key = (i, i + int(layout.span_len[span]))
            labels.setdefault(key, []).append((g.symbols[a], abs(mu)))
            scores[(g.symbols[a],) + key] = abs(mu)
        best = max(score for score, _ in all_trees(len(words), labels))
        got, end = tree_score(trees[s], scores)
        assert end == len(words)
        assert leaves(trees[s]) == words
        assert got == pytest.approx(best, rel=1e-9)


# Symbols of a binarized treebank grammar and the brackets EVALB scores for a node of each
# once debinarized (written out by hand: a chain gives each of its labels, a pre-terminal's
# tag and an intermediate symbol none).
PRETERMINALS = {"NP+NNP": ["NP"], "NNP": [], "VBZ": [], "NN": []}
PHRASES = {"S": ["S"], "@S": [], "S+VP": ["S", "VP"], "VP": ["VP"], "NP": ["NP"], "@VP": []}


def _bracket_items(lengths, rng):
    """Random items: every span of each sentence gets a random subset of the symbols that can
    label it (pre-terminals over one word), with random marginals."""
    symbols = list(PRETERMINALS) + list(PHRASES)
    layout = SpanLayout(lengths)
    spans, syms, marg = [], [], []
    for s, n in enumerate(lengths):
        for length in range(1, n + 1):
            names = list(PRETERMINALS) if length == 1 else list(PHRASES)
            for i in range(n - length + 1):
                for name in rng.choice(names, size=rng.integers(1, len(names) + 1), replace=False):
                    spans.append(int(layout.base[length, s] + i))
                    syms.append(symbols.index(name))
                    marg.append(rng.uniform(0.05, 0.9) * rng.choice([1, 1, 1, -1]))
    return symbols, layout, np.array(spans), np.array(syms), np.array(marg)


def _evalb_brackets(tree, i=0):
    """(label, i, j) of every node of a debinarized tree but its pre-terminals; and the end."""
    if isinstance(tree[0], str):
        return [], i + 1
    out, j = [], i
    for child in tree:
        inner, j = _evalb_brackets(child, j)
        out += inner
    return [(tree.label(), i, j), *out], j


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_max_bracket_tree_maximises_expected_brackets_minus_threshold(seed):
    """The decoded tree, debinarized, has the largest sum over its brackets of (P - theta),
    P pooling every symbol whose chain gives that bracket, among all binarized trees whose
    root is not intermediate; also when some marginals are negative (scored by |mu|)."""
    rng = np.random.default_rng(seed)
    theta = 0.4
    symbols, layout, item_span, item_sym, marg = _bracket_items([4, 3], rng)
    is_pre = np.array([s in PRETERMINALS for s in symbols])
    root_ok = np.array([not s.startswith("@") for s in symbols])
    brackets = Brackets.of(symbols, is_pre)
    span_score, span_label = bracket_labels(
        layout, item_span, item_sym, marg, root_ok, brackets, theta
    )
    words = [[f"w{i}" for i in range(n)] for n in layout.lengths]
    trees = goodman_trees(layout, span_score, span_label, symbols, words)
    gives = {**PRETERMINALS, **PHRASES}
    for s, n in enumerate(layout.lengths):
        pooled: dict = {}
        labels: dict = {}
        for span, a, mu in zip(item_span, item_sym, marg, strict=True):
            if layout.span_sent[span] != s:
                continue
            i = int(layout.span_start[span])
            key = (i, i + int(layout.span_len[span]))
            labels.setdefault(key, []).append(symbols[a])
            for x in gives[symbols[a]]:
                pooled[(x, *key)] = pooled.get((x, *key), 0.0) + abs(mu)

        def gain(name, key, pooled=pooled):
            return sum(pooled[(x, *key)] - theta for x in gives[name])

        scored = {k: [(a, gain(a, k)) for a in v] for k, v in labels.items()}
        scored[(0, n)] = [(a, g) for a, g in scored[(0, n)] if not a.startswith("@")]
        best = max(score for score, _ in all_trees(n, scored))
        found, end = _evalb_brackets(debinarize(trees[s]))
        assert end == n and leaves(trees[s]) == words[s]
        assert sum(pooled[b] - theta for b in found) == pytest.approx(best, rel=1e-9)


def test_auto_decodes_as_the_model_file_says():
    """``auto``: the decoder the model's learner recorded (``meta["decode"]``); files from
    before the record get the rule of their time from their method (max-bracket for EM and
    split-merge, max-marginal for the rest); a product of posteriors (not posteriors
    itself) max-marginal. Every parse of a random grammar succeeds either way."""
    random = random_lpcfg(inter=4, pre=3, words=6, states=3, rules_per_symbol=5, seed=5)
    em = replace(random, meta={**random.meta, "method": "em"})
    sm = replace(random, meta={**random.meta, "method": "splitmerge"})
    auto = ParserOptions()
    assert (
        resolve_decoder(auto, em.decoders())
        == resolve_decoder(auto, sm.decoders())
        == "max-bracket"
    )
    for method in ("spectral", "pivot", "pivot+em", "pcfg"):
        assert (
            resolve_decoder(auto, replace(random, meta={"method": method}).decoders())
            == "max-marginal"
        )
    recorded = replace(random, meta={"method": "spectral", "decode": "max-bracket"})
    assert resolve_decoder(auto, recorded.decoders()) == "max-bracket"  # the file's record wins
    assert resolve_decoder(auto, em.bundle(sm).decoders()) == "max-marginal"  # a product
    assert resolve_decoder(ParserOptions(combine="mean"), em.bundle(sm).decoders()) == "max-bracket"
    assert (
        resolve_decoder(ParserOptions(combine="mean"), em.bundle(random).decoders())
        == "max-marginal"
    )
    assert resolve_decoder(ParserOptions(decode="max-bracket"), random.decoders()) == "max-bracket"
    sentences = short_sentences(em, 12, 8, seed=5)
    results = BlockParser(em, ParserOptions(prune=0.0)).parse(sentences)
    assert all(r.fallback is None and r.tree is not None for r in results)
    same = BlockParser(em.bundle(em), ParserOptions(prune=0.0, combine="mean")).parse(sentences)
    assert [str(r.tree) for r in same] == [str(r.tree) for r in results]


def test_dev_f1_decodes_as_the_learner_fitting_the_model_will(monkeypatch):
    """While a learner fits, its models carry no decoder yet: dev F1 follows the learner's,
    the first one to ask (a chain's, pivot+em's, for its EM step)."""
    seen = []

    class Recording:
        def __init__(self, model, options, jobs=1):
            seen.append(options.decode)

        def trees(self, sentences):
            return iter([])

    monkeypatch.setattr("lpcfg_cli.parsing.dev_f1.Parser", Recording)
    dev = DevTrees(paths=(), gold=[], sentences=[], trees=[], scorer=DevF1())
    model = random_lpcfg(inter=2, pre=2, words=4, states=2, seed=1)
    model = replace(model, meta={})  # a model in the making
    for decode in ("max-bracket", "max-marginal"):
        dev.decoding(decode).f1(model)
        assert seen[-1] == decode
    chain = dev.decoding("max-marginal")  # pivot+em
    chain.decoding("max-bracket").f1(model)  # its EM step asks second
    assert seen[-1] == "max-marginal"
    dev.f1(replace(model, meta={"method": "em"}))  # a finished model says what it wants
    assert seen[-1] == "max-bracket"


def _best_per_span_by_sorting(n_spans, item_span, item_sym, value, tie, is_root, root_ok):
    """The reference: sort by span, then key (value, 1e6 less for a non-root symbol at a
    whole-sentence span) and tie, both descending with NaN last; the first of each span."""
    score, label = np.full(n_spans, -np.inf), np.full(n_spans, -1)
    key = value + np.where(is_root[item_span] & ~root_ok[item_sym], -1e6, 0.0)
    order = np.lexsort((-tie, -key, item_span))
    first = order[np.r_[True, item_span[order][1:] != item_span[order][:-1]]]
    score[item_span[first]], label[item_span[first]] = value[first], item_sym[first]
    return score, label


@pytest.mark.parametrize("seed", range(6))
def test_best_per_span_ranks_by_value_then_tie_then_order(seed):
    """Each span's best item, with ties in value (and in both value and tie), NaN values,
    infinite values and the whole-sentence penalty, as sorting finds it."""
    from lpcfg_cli.parsing.decoders import _best_per_span

    rng = np.random.default_rng(seed)
    layout = SpanLayout([4, 1, 6, 3])
    n = 300
    item_span = rng.integers(0, layout.n_spans, n)
    item_sym = rng.integers(0, 7, n)
    value = rng.integers(0, 4, n).astype(float)  # many ties
    value[rng.random(n) < 0.1] = np.nan
    value[rng.random(n) < 0.05] = -np.inf
    tie = rng.integers(0, 3, n).astype(float)
    tie[rng.random(n) < 0.1] = np.nan
    root_ok = rng.random(7) < 0.5
    is_root = np.zeros(layout.n_spans, dtype=bool)
    is_root[layout.root_spans()] = True
    got = _best_per_span(layout, item_span, item_sym, value, tie, root_ok)
    want = _best_per_span_by_sorting(
        layout.n_spans, item_span, item_sym, value, tie, is_root, root_ok
    )
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
    assert (got[1] >= 0).sum() > 10


@pytest.mark.parametrize("seed", range(4))
def test_bracket_gains_pool_each_spans_items_by_bracket(seed):
    """Max-bracket gains against pooling by sorting (``np.unique``, ``np.bincount``), with
    the items in any order, symbols of no bracket and of several."""
    from lpcfg_cli.parsing.decoders import _best_per_span

    rng = np.random.default_rng(seed)
    symbols = ["S", "S+VP", "NP", "@NP", "NN", "NP+NNP", "VP", "@S"]
    is_preterminal = np.array([False, False, False, False, True, True, False, False])
    brackets = Brackets.of(symbols, is_preterminal)
    layout = SpanLayout([5, 3])
    n = 200
    item_span = rng.integers(0, layout.n_spans, n)
    item_sym = rng.integers(0, len(symbols), n)
    score = rng.normal(size=n)
    root_ok = np.array([not s.startswith("@") for s in symbols])
    got = bracket_labels(layout, item_span, item_sym, score, root_ok, brackets, 0.4)
    mass = np.abs(score)
    per_item = np.diff(brackets.ptr)[item_sym]
    owner = np.repeat(np.arange(n), per_item)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(per_item) - per_item, per_item)
    label = brackets.ids[brackets.ptr[item_sym][owner] + offset]
    _, where = np.unique(item_span[owner] * brackets.n_labels + label, return_inverse=True)
    pooled = np.bincount(where, weights=mass[owner])
    gain = np.bincount(owner, weights=pooled[where] - 0.4, minlength=n)
    want = _best_per_span(layout, item_span, item_sym, gain, mass, root_ok)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_array_equal(got[1], want[1])
    assert len(set(got[1][got[1] >= 0].tolist())) > 3


def test_goodman_splits_match_a_cky_over_every_split():
    """The best split of every span, first of equal totals, against a CKY by span length
    over a batch of sentences, spans without a label included."""
    from lpcfg_cli.parsing.decoders import _best_splits

    rng = np.random.default_rng(3)
    layout = SpanLayout([7, 1, 0, 5, 9])
    span_score = rng.integers(0, 3, layout.n_spans).astype(float)  # ties between splits
    span_label = np.where(rng.random(layout.n_spans) < 0.8, 1, -1)
    best = np.where(span_label >= 0, span_score, -np.inf)
    split = np.zeros(layout.n_spans, dtype=np.int64)
    for length in range(2, layout.max_length + 1):
        parents, left, right = layout.splits(length)
        total = best[left] + best[right]
        k = np.argmax(total, axis=1)
        best[parents] = np.where(
            span_label[parents] >= 0,
            total[np.arange(len(parents)), k] + span_score[parents],
            -np.inf,
        )
        split[parents] = k + 1
    got_best, got_split = _best_splits(
        layout.base, layout.len_start, layout.span_sent, layout.span_start, span_score, span_label
    )
    np.testing.assert_array_equal(got_best, best)
    np.testing.assert_array_equal(got_split[layout.len_start[2] :], split[layout.len_start[2] :])
    assert np.isfinite(best[layout.root_spans()[layout.lengths > 0]]).any()
    empty = SpanLayout([])
    assert (
        len(
            _best_splits(
                empty.base,
                empty.len_start,
                empty.span_sent,
                empty.span_start,
                np.zeros(0),
                np.zeros(0, dtype=np.int64),
            )[0]
        )
        == 0
    )


def test_decoders_refuse_ids_they_cannot_index():
    """The decoding kernels read without bounds checks: items of spans or symbols outside
    the layout or the grammar, and span arrays of the wrong length, are refused by name."""
    layout = SpanLayout([3])
    root_ok = np.ones(4, dtype=bool)
    one = np.ones(1)
    with pytest.raises(ValueError, match="item_span"):
        best_labels(layout, np.array([layout.n_spans]), np.array([0]), one, root_ok)
    with pytest.raises(ValueError, match="item_sym"):
        best_labels(layout, np.array([0]), np.array([4]), one, root_ok)
    brackets = Brackets.of(["S", "NP"], np.zeros(2, dtype=bool))
    with pytest.raises(ValueError, match="item_sym"):
        bracket_labels(layout, np.array([0]), np.array([2]), one, root_ok[:2], brackets, 0.4)
    with pytest.raises(ValueError, match="span_score"):
        goodman_trees(layout, np.zeros(2), np.zeros(2, dtype=np.int64), ["S"], [["a"] * 3])
