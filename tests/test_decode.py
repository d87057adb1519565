"""Goodman's max-marginal decoding against enumeration of every tree."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.decode import best_labels, goodman_trees
from lpcfg_cli.sampling import random_lpcfg
from lpcfg_cli.tree import Tree
from lpcfg_cli.trees import leaves
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
    model = random_lpcfg(n_inter=3, n_pre=3, n_words=5, states=2, rules_per_symbol=5, seed=seed)
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
