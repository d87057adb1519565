"""Split-merge EM (Petrov et al. 2006) on trees sampled from a known L-PCFG."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.tree_charts import TreeCharts, tree_scores
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.latent_pcfg.splitmerge import (
    SplitMergeLearner,
    SplitMergeOptions,
    merge_loss,
    merge_states,
    split_states,
)
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from tests.support import latent_trees


@pytest.fixture(scope="module")
def bank():
    trees = latent_trees(1200)
    grammar, train = build_grammar(trees[:1000], rare=0)
    from lpcfg_cli.grammar.compiled import compile_trees

    held, dropped = compile_trees(grammar, trees[1000:])
    return grammar, train, held


def test_a_split_without_noise_keeps_the_distribution_and_merging_undoes_it(bank):
    grammar, train, _ = bank
    pcfg = train_pcfg(grammar, train, {})
    split, halves = split_states(pcfg, 8, 0.0, np.random.default_rng(0))
    assert (split.states == 2).all() and halves[:, 0].all() and not halves[:, 1].any()
    assert split.check_probabilistic() < 1e-12
    np.testing.assert_allclose(tree_scores(split, train)[0], tree_scores(pcfg, train)[0])
    loss, freq = merge_loss(split, TreeCharts.build(train, grammar.n_symbols), halves)
    assert np.abs(loss).max() < 1e-9  # merging exact copies loses nothing
    np.testing.assert_allclose(
        freq[:, :2].sum(axis=1), np.bincount(train.symbol, minlength=grammar.n_symbols)
    )
    back = merge_states(split, halves, loss, freq, 1.0)
    assert (back.states == 1).all()
    np.testing.assert_allclose(back.binary, pcfg.binary, atol=1e-12)
    np.testing.assert_allclose(back.lexical, pcfg.lexical, atol=1e-12)


def test_states_stop_at_the_cap(bank):
    grammar, train, _ = bank
    pcfg = train_pcfg(grammar, train, {})
    rng = np.random.default_rng(1)
    model = pcfg
    for _ in range(3):
        model, _ = split_states(model, 4, 0.1, rng)
    assert model.max_states == 4 and model.check_probabilistic() < 1e-9


def test_merge_loss_ranks_a_useless_split_below_a_useful_one(bank):
    """After EM, the approximate loss of merging each pair (computed node by node from one
    inside-outside pass) follows the exact change in training log-likelihood of merging
    that pair alone."""
    grammar, train, _ = bank
    data = TrainingData(grammar, train, {})
    model = SplitMergeLearner(SplitMergeOptions(cycles=1, merge=0.0, iterations=15)).fit(data)
    split, halves = split_states(model, 2, 0.0, np.random.default_rng(0))  # no-op: at cap
    assert not halves.any()
    charts = TreeCharts.build(train, grammar.n_symbols)
    halves = np.zeros((grammar.n_symbols, model.max_states), dtype=bool)
    halves[model.states == 2, 0] = True
    loss, freq = merge_loss(model, charts, halves)
    base = tree_scores(model, train)[0].sum()
    exact = {}
    for a in np.flatnonzero(halves[:, 0]):
        one = np.zeros_like(halves)
        one[a, 0] = True
        merged = merge_states(model, one, loss, freq, 1.0)
        exact[a] = base - tree_scores(merged, train)[0].sum()
    keys = sorted(exact)
    approx = [loss[a, 0] for a in keys]
    true = [exact[a] for a in keys]
    assert min(approx) > -1e-3 and min(true) > -1e-3  # tiny negatives: rounding, per node
    assert np.argmax(approx) == np.argmax(true)
    assert np.corrcoef(approx, true)[0, 1] > 0.95


def test_split_merge_beats_the_pcfg_on_held_out_trees(bank):
    grammar, train, held = bank
    data = TrainingData(grammar, train, {})
    model = SplitMergeLearner(SplitMergeOptions(cycles=2, iterations=15, max_states=4)).fit(data)
    assert model.check_probabilistic() < 1e-9
    assert model.meta["method"] == "splitmerge" and len(model.meta["cycles"]) == 2
    assert len(set(model.states.tolist())) > 1  # per-symbol counts
    pcfg = train_pcfg(grammar, train, {})
    assert tree_scores(model, held)[0].mean() > tree_scores(pcfg, held)[0].mean() + 0.1
