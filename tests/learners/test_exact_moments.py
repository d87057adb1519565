"""Weighted trees and population moments: the spectral and pivot estimators given every tree
of a finite support weighted by its probability (the limit of infinitely many samples)."""

from dataclasses import replace

import numpy as np
import pytest

from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import build_grammar, compile_trees
from lpcfg_cli.latent_pcfg.consistency import (
    PAPER_SPECTRAL,
    PURE_PIVOT,
    exact_support,
    finite_pivot_lpcfg,
    held_out_error,
    pad_states,
    parameter_error,
    pivot_lpcfg,
)
from lpcfg_cli.latent_pcfg.features import OUTSIDE, TreeSample
from lpcfg_cli.latent_pcfg.pivot import PivotEstimator, PivotOptions
from lpcfg_cli.latent_pcfg.spectral import SpectralEstimator, SpectralOptions
from lpcfg_cli.model.sampling import sample_trees

NOMINAL = 1e18  # the sample size the count-based constants see: M -> infinity


@pytest.fixture(scope="module")
def finite():
    truth = finite_pivot_lpcfg()
    return truth, exact_support(truth)


@pytest.fixture(scope="module")
def exact(finite):
    """The support compiled as a training set."""
    _, support = finite
    grammar, bank = build_grammar(support.trees, rare=0)
    return grammar, bank, support.trees, support.probs * NOMINAL


def _check_probabilities(model, support) -> None:
    bank, dropped = compile_trees(model.grammar, support.trees)
    assert dropped == 0
    lp, sign = tree_scores(model, bank)
    assert (sign > 0).all()
    np.testing.assert_allclose(np.log(support.probs), lp, rtol=0, atol=1e-12)
    assert support.probs.sum() + support.left_out == pytest.approx(1.0, abs=1e-14)


def test_exact_support_lists_every_tree_with_its_probability(finite):
    truth, support = finite
    assert len(support.trees) == 2016 and abs(support.left_out) < 1e-12
    assert len({str(t) for t in support.trees}) == len(support.trees)
    _check_probabilities(truth, support)
    # A recursive grammar needs a height bound, and reports the mass beyond it.
    recursive = pivot_lpcfg()
    with pytest.raises(LpcfgError, match="recursive"):
        exact_support(recursive)
    cut = exact_support(recursive, max_height=4)
    assert len(cut.trees) == 722 and cut.left_out == pytest.approx(0.0849, abs=1e-4)
    _check_probabilities(recursive, cut)


def test_weights_count_trees_as_repetitions():
    """weights=None is one per tree; integer weights equal repeating the trees."""
    truth = pivot_lpcfg()
    trees = sample_trees(truth, 300, seed=4)
    w = np.random.default_rng(0).integers(1, 4, size=len(trees))
    repeated = [t for t, k in zip(trees, w, strict=True) for _ in range(k)]
    grammar, bank = build_grammar(trees, rare=0)
    grammar_r, bank_r = build_grammar(repeated, rare=0)
    held_out = sample_trees(truth, 100, seed=8)
    test, test_r = compile_trees(grammar, held_out)[0], compile_trees(grammar_r, held_out)[0]
    spectral = SpectralOptions(states=2, min_singular=1e-6, state_count=20)  # smoothing on
    pivot = PivotOptions(state_count=20)
    for est, opts in ((SpectralEstimator, spectral), (PivotEstimator, pivot)):
        plain = est(TreeSample(grammar, bank, trees), opts).model(2)
        ones = est(TreeSample(grammar, bank, trees, np.ones(len(trees))), opts).model(2)
        weighted = est(TreeSample(grammar, bank, trees, w), opts).model(2)
        copies = est(TreeSample(grammar_r, bank_r, repeated), opts).model(2)
        assert (weighted.states == copies.states).all()
        lp = tree_scores(plain, test)[0]
        np.testing.assert_allclose(tree_scores(ones, test)[0], lp, rtol=1e-9)
        np.testing.assert_allclose(
            tree_scores(weighted, test)[0], tree_scores(copies, test_r)[0], rtol=1e-7
        )
        assert np.abs(tree_scores(weighted, test)[0] - lp).max() > 1e-3  # weights matter
    with pytest.raises(LpcfgError, match="weights"):
        SpectralEstimator(TreeSample(grammar, bank, trees, np.ones(3)), spectral)


def test_spectral_from_exact_moments_recovers_the_target(finite, exact):
    """Cohen et al. (2014), theorem 2 (M = infinity in theorem 3): no error beyond rounding (10^5
    samples leave about 0.01)."""
    truth, _ = finite
    model = SpectralEstimator(TreeSample(*exact), PAPER_SPECTRAL).model(2)
    assert list(model.states) == [1, 2, 2, 2, 2]  # S is only ever a root: one state
    assert held_out_error(truth, model, seed=99) < 1e-10


def test_pivot_from_exact_moments_recovers_the_parameters(finite, exact):
    """Theorem 1 of Cohen & Collins (2014) at M = infinity, once the features are functions
    of the outside tree (``ancestor_head`` is not) and the rule EM runs to convergence
    without the uniform floor; the shipped constants leave a bias."""
    truth, _ = finite
    pure = tuple(t for t in OUTSIDE if t != "ancestor_head")
    opts = replace(PURE_PIVOT, outside_features=pure, rule_iterations=1000, floor=0.0)
    model = PivotEstimator(TreeSample(*exact), opts).model(2)
    assert parameter_error(truth, model) < 1e-4
    assert held_out_error(truth, model) < 1e-4
    biased = PivotEstimator(TreeSample(*exact), PURE_PIVOT).model(2)
    assert parameter_error(truth, biased) > 0.01


def test_pad_states_keeps_the_distribution(finite):
    truth, support = finite
    padded = pad_states(truth, np.full(5, 3))
    assert (padded.states == 3).all() and padded.check_probabilistic() < 1e-12
    _check_probabilities(padded, support)
    assert parameter_error(truth, padded) < 1e-15
