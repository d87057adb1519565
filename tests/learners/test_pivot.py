"""The pivot learner (Cohen & Collins 2014): its parts, and recovery of an L-PCFG that
satisfies the pivot assumption."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.latent_pcfg.consistency import (
    PURE_PIVOT,
    held_out_error,
    parameter_error,
    pivot_lpcfg,
)
from lpcfg_cli.latent_pcfg.features import TreeSample
from lpcfg_cli.latent_pcfg.pivot import (
    PivotEstimator,
    PivotOptions,
    align,
)
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import sample_trees
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.numerics.anchors import (
    anchor_posteriors,
    cca_vectors,
    fast_anchor_words,
    simplex_weights,
)

# ------------------------------------------------------------------ components


def test_fast_anchor_words_finds_the_vertices():
    rng = np.random.default_rng(0)
    vertices = rng.standard_normal((4, 6))
    weights = rng.dirichlet(np.ones(4), size=300)
    points = np.vstack([weights @ vertices, vertices])  # the vertices come last
    picked = fast_anchor_words(points, 4)
    assert sorted(picked.tolist()) == [300, 301, 302, 303]


def test_simplex_weights_recover_convex_combinations():
    rng = np.random.default_rng(1)
    vertices = rng.standard_normal((3, 5))
    weights = rng.dirichlet(np.ones(3), size=50)
    got = simplex_weights(vertices, weights @ vertices, iterations=2000)
    np.testing.assert_allclose(got, weights, atol=2e-3)
    assert np.allclose(got.sum(axis=1), 1.0) and (got >= 0).all()
    # A point outside the hull gets the nearest point of the simplex, still a distribution.
    far = simplex_weights(vertices, 10 * vertices[:1], iterations=500)
    assert far.argmax() == 0 and np.isclose(far.sum(), 1.0)


@pytest.mark.parametrize("ridge", [0.0, 0.05])
def test_cca_vectors_keep_the_convex_structure_with_or_without_a_ridge(ridge):
    """Exact moments of a model with an anchor row and column per state: every row's vector
    is the mixture of the anchors' vectors by its p(h | f), whatever the ridge (it changes
    the projection phi, not v_f = E[phi(g) | f])."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    m, d = 3, 12
    p_h = np.array([0.5, 0.3, 0.2])
    cond = rng.dirichlet(np.ones(d), size=m).T  # (d, m): p(f | h), one column per state
    cond[:m] = 0.0
    cond[np.arange(m), np.arange(m)] = 0.1  # row h is an anchor of state h
    cond /= cond.sum(axis=0, keepdims=True)
    omega = (cond * p_h) @ cond.T  # Q[f, g] = sum_h p(h) p(f | h) p(g | h)
    p = omega.sum(axis=1)
    v_in, _ = cca_vectors(sp.csr_matrix(omega), p, p, m, 1e-9, seed=0, ridge=ridge)
    post = cond * p_h / p[:, None]  # p(h | f)
    got = anchor_posteriors(v_in, np.full(d, 100.0), m, 1.0, iterations=5000)
    order = got[:m].argmax(axis=1)  # the state each anchor row stands for
    np.testing.assert_allclose(got[:, order], post, atol=1e-3)


def test_align_finds_the_permutation():
    import scipy.sparse as sp

    rng = np.random.default_rng(2)
    k = 3
    r = rng.dirichlet(np.ones(6), size=k).T  # p(f | h) (6, k)
    s = rng.dirichlet(np.ones(7), size=k).T  # p(g | h)
    p_h = np.array([0.5, 0.3, 0.2])
    q = (r * p_h) @ s.T  # Q_fg = sum_h p(h) p(f|h) p(g|h)
    post = r * p_h / (r * p_h).sum(axis=1, keepdims=True)  # q(h | f)
    perm = [2, 0, 1]
    t = align(sp.coo_matrix(q), post, s[:, perm], iterations=3000)
    expected = np.zeros((k, k))
    expected[np.arange(k), np.argsort(perm)] = 1.0
    np.testing.assert_allclose(t, expected, atol=0.05)


# ------------------------------------------------------------------ recovery


def _recovery_error(truth: LPCFG, n: int) -> tuple[float, float]:
    """(max parameter error up to the best permutation, mean held-out |log p error|)."""
    trees = sample_trees(truth, n, seed=n)
    grammar, bank = build_grammar(trees, rare=0)
    model = PivotEstimator(TreeSample(grammar, bank, trees), PURE_PIVOT).model(2)
    return parameter_error(truth, model), held_out_error(truth, model, n=300, seed=7)


def test_pivot_recovers_parameters_up_to_a_permutation():
    truth = pivot_lpcfg()
    e3, l3 = _recovery_error(truth, 2_000)
    e4, l4 = _recovery_error(truth, 20_000)
    assert e4 < 0.6 * e3 and l4 < 0.6 * l3
    assert e4 < 0.08 and l4 < 0.08


@pytest.mark.slow
def test_pivot_recovery_at_200k_trees():
    truth = pivot_lpcfg()
    e5, l5 = _recovery_error(truth, 200_000)
    e4, _ = _recovery_error(truth, 20_000)
    assert e5 < 0.7 * e4 and e5 < 0.04


def test_pivot_model_is_probabilistic_with_uniform_states():
    truth = pivot_lpcfg(seed=3)
    trees = sample_trees(truth, 500, seed=1)
    grammar, bank = build_grammar(trees, rare=0)
    model = PivotEstimator(TreeSample(grammar, bank, trees), PivotOptions(state_count=200)).model(4)
    assert model.form == "probabilistic" and (model.states == 4).all()
    assert model.check_probabilistic() < 1e-9
    assert abs(model.root.sum() - 1.0) < 1e-9 and (model.binary >= 0).all()
    assert min(model.meta["distinct_states"].values()) < 4  # rare symbols get fewer
    # Every training tree keeps a positive probability (EM can start from the model).
    lp, sign = tree_scores(model, bank)
    assert np.isfinite(lp).all() and (sign > 0).all()
    # One distinct state everywhere, copied to 4: exactly the treebank PCFG's distribution.
    one = PivotOptions(state_count=10**9, lexicon_smoothing=0.0)
    copied = PivotEstimator(TreeSample(grammar, bank, trees), one).model(4)
    assert set(copied.meta["distinct_states"].values()) == {1}
    pcfg = train_pcfg(grammar, bank, {})
    np.testing.assert_allclose(tree_scores(copied, bank)[0], tree_scores(pcfg, bank)[0], rtol=1e-10)
