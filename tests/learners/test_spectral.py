"""The spectral learner: guarded SVD, features, consistency on synthetic L-PCFGs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.grammar.compiled import build_grammar, compile_trees
from lpcfg_cli.latent_pcfg.consistency import ENGINEERED_SPECTRAL, PAPER_SPECTRAL, pivot_lpcfg
from lpcfg_cli.latent_pcfg.features import FeatureOptions, TreeSample, node_features
from lpcfg_cli.latent_pcfg.spectral import SpectralEstimator, SpectralOptions
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.numerics import svd as linalg
from lpcfg_cli.numerics.svd import truncated_svd
from lpcfg_cli.treebank.ptb import format_tree, parse_tree
from lpcfg_cli.treebank.tree import leaves

# ------------------------------------------------------------------ guarded SVD


def _low_rank(shape: tuple[int, int], rank: int, seed: int = 0) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    left = sp.random(shape[0], rank, density=0.3, random_state=rng) + sp.eye(shape[0], rank)
    right = sp.random(rank, shape[1], density=0.3, random_state=rng) + sp.eye(rank, shape[1])
    return sp.csr_matrix(left @ right)


@pytest.mark.parametrize("dense_limit", [linalg.DENSE_LIMIT, 0])
def test_svd_keeps_only_real_directions(monkeypatch, dense_limit):
    """Asked for more directions than the rank, it returns the rank and nothing spurious."""
    monkeypatch.setattr(linalg, "DENSE_LIMIT", dense_limit)  # 0: randomized path
    omega = _low_rank((300, 400), rank=5)
    svd = truncated_svd(omega, 12, min_value=0.0)  # no absolute floor: the relative one acts
    assert svd.k == 5
    exact = np.linalg.svd(omega.toarray(), compute_uv=False)[:5]
    np.testing.assert_allclose(svd.s, exact, rtol=1e-8)
    np.testing.assert_allclose(svd.u.T @ omega @ svd.v, np.diag(svd.s), atol=1e-8 * exact[0])


def test_svd_floor_drops_tiny_singular_values():
    """Directions with singular values under min_value are never inverted."""
    u = np.linalg.qr(np.random.default_rng(1).standard_normal((50, 4)))[0]
    omega = u @ np.diag([3.0, 0.5, 0.02, 0.003]) @ u.T
    assert truncated_svd(omega, 4).k == 3
    assert truncated_svd(omega, 4, min_value=0.1).k == 2
    assert truncated_svd(omega, 4, min_value=10.0).k == 1  # always one direction
    assert truncated_svd(np.zeros((5, 5)), 3).k == 0


def test_scipy_svds_spurious_values_would_be_inverted():
    """The failure the floors guard against: svds asked for k > rank returns near-zero
    singular values; inverting them blows projections up by many orders of magnitude."""
    from scipy.sparse.linalg import svds

    omega = _low_rank((200, 250), rank=3, seed=2)
    s = svds(omega, k=8, random_state=0, return_singular_vectors=False)
    assert (s < 1e-8 * s.max()).sum() >= 1  # spurious directions present
    svd = truncated_svd(omega, 8)
    assert svd.k == 3 and (1.0 / svd.s).max() < 1e3


# ------------------------------------------------------------------ features


def test_features_of_a_small_tree():

    tree = parse_tree("(S (NP (DT The) (NN dog)) (VP (VBD barked)))")
    binarized = parse_tree("(S (NP (DT The) (NN dog)) (VP+VBD barked))")
    grammar, bank = build_grammar([binarized], rare=0)
    feats = node_features(TreeSample(grammar, bank, [tree]), FeatureOptions(scale=False))
    # Post-order: DT, NN, NP, VP+VBD, S. Pre-terminals: word, head, length; others: no word.
    assert np.diff(feats.inside.indptr).tolist() == [3, 3, 7, 3, 7]
    # VP+VBD has the head tag of every ancestor (no ancestor_head); the root has neither
    # that nor a parent label (up1).
    assert np.diff(feats.outside.indptr).tolist() == [8, 8, 8, 7, 6]
    assert feats.inside.data.max() == 1.0
    # Every column belongs to one label: the two pre-terminals share no inside column.
    assert not set(feats.inside[0].indices) & set(feats.inside[1].indices)


def test_feature_scaling_favours_rare_features():
    truth = random_lpcfg(inter=4, pre=4, words=12, seed=5)
    trees = sample_trees(truth, 200, seed=6)
    grammar, bank = build_grammar(trees, rare=0)
    feats = node_features(TreeSample(grammar, bank, trees))
    col_counts = np.bincount(feats.inside.indices, minlength=feats.inside.shape[1])
    expected = np.sqrt(201 / (col_counts + 5.0))
    np.testing.assert_allclose(feats.inside.data, expected[feats.inside.indices])


# ------------------------------------------------------------------ consistency


@pytest.fixture(scope="module")
def truth():
    """Two states, and the rank conditions hold: every symbol's states differ in their inside
    and outside features (a random grammar where some symbol occurs in one context only
    does not: its Omega has rank 1 and the error stops falling)."""
    return pivot_lpcfg()


@pytest.fixture(scope="module")
def held_out(truth):
    trees = sample_trees(truth, 300, seed=99)
    bank, _ = compile_trees(truth.grammar, trees)
    return trees, tree_scores(truth, bank)[0]


def _error(truth, held_out, n: int, options=PAPER_SPECTRAL, states: int = 2) -> float:
    """Mean |log p_hat(tree) - log p(tree)| on held-out trees after n training trees."""
    trees = sample_trees(truth, n, seed=n)
    grammar, bank = build_grammar(trees, rare=0)
    model = SpectralEstimator(TreeSample(grammar, bank, trees), options).model(states)
    test, true_lp = held_out
    tb, dropped = compile_trees(grammar, test)
    assert dropped == 0
    lp, _ = tree_scores(model, tb)
    return float(np.abs(lp - true_lp).mean())


def test_tree_scores_of_the_true_model_sum_to_one(truth):
    """tree_scores is the probability of a skeletal tree: trees drawn often enough have
    empirical frequencies matching it."""
    trees = sample_trees(truth, 4000, seed=3)
    bank, _ = compile_trees(truth.grammar, trees)
    lp, sign = tree_scores(truth, bank)
    assert (sign > 0).all()
    strings = [format_tree(t) for t in trees]
    most = max(set(strings), key=strings.count)
    freq = strings.count(most) / len(strings)
    assert abs(np.exp(lp[strings.index(most)]) - freq) < 4 * np.sqrt(freq / len(trees))


def test_spectral_estimate_converges(truth, held_out):
    """Theorem 3 (JMLR): the error of p_hat falls like 1/sqrt(M); 10x data, ~3x less error."""
    e3, e4 = _error(truth, held_out, 1_000), _error(truth, held_out, 10_000)
    assert e4 < 0.6 * e3
    assert e4 < 0.15
    # The latent states matter: the treebank PCFG of the same data is far worse.
    trees = sample_trees(truth, 10_000, seed=10_000)
    grammar, bank = build_grammar(trees, rare=0)
    tb, _ = compile_trees(grammar, held_out[0])
    pcfg_error = np.abs(tree_scores(train_pcfg(grammar, bank, {}), tb)[0] - held_out[1]).mean()
    assert e4 < 0.5 * pcfg_error


@pytest.mark.slow
def test_spectral_estimate_converges_to_1e5(truth, held_out):
    e4, e5 = _error(truth, held_out, 10_000), _error(truth, held_out, 100_000)
    assert e5 < 0.6 * e4


def test_default_engineering_stays_consistent(truth, held_out):
    """All templates, scaling and smoothing (lambda -> 1 as counts grow) still converge."""
    opts = ENGINEERED_SPECTRAL
    assert _error(truth, held_out, 10_000, opts) < 0.6 * _error(truth, held_out, 1_000, opts)


@pytest.mark.slow
def test_fixed_lexical_weight_is_not_consistent(truth, held_out):
    """The 2013 paper's fixed v = 0.6 keeps 40% of every word's moment at its pre-terminal
    mean however much data there is: its error stalls (why it is not the default)."""
    count = ENGINEERED_SPECTRAL
    fixed = SpectralOptions(min_singular=1e-6, state_count=0, lexical_count=0)
    e4, e5 = (_error(truth, held_out, n, count) for n in (10_000, 100_000))
    f4, f5 = (_error(truth, held_out, n, fixed) for n in (10_000, 100_000))
    assert f5 > 1.5 * e5 and f5 / f4 > e5 / e4


def test_model_shape_and_tensor_form(truth):
    trees = sample_trees(truth, 500, seed=4)
    grammar, bank = build_grammar(trees, rare=0)
    est = SpectralEstimator(TreeSample(grammar, bank, trees), SpectralOptions(state_count=100))
    model = est.model(4)
    assert model.form == "tensor" and model.meta["method"] == "spectral"
    counts = np.bincount(bank.symbol, minlength=grammar.n_symbols)
    assert (model.states <= np.maximum(1, counts // 100)).all()
    assert (model.states <= 4).all() and (model.states >= 1).all()
    capped = SpectralEstimator(
        TreeSample(grammar, bank, trees), SpectralOptions(state_count=0, caps={"A": 1})
    ).model(4)
    assert capped.states[grammar.symbol_index["A"]] == 1


def test_parser_survives_parameters_beyond_float32(truth):
    """Scaling every binary tensor by c scales every tree of an n-word sentence by c^(n-1):
    the marginals and parses do not change. At c = 1e25 float32 would overflow; the parser
    must notice and give the same trees, with no fallback."""
    from lpcfg_cli.parsing.tiers import BlockParser

    trees = sample_trees(truth, 800, seed=12)
    grammar, bank = build_grammar(trees[:700], rare=0)
    model = SpectralEstimator(TreeSample(grammar, bank, trees[:700])).model(2)
    sentences = [leaves(t) for t in trees[700:]]
    plain = [r.tree for r in BlockParser(model).parse(sentences)]
    model.binary *= 1e25
    parser = BlockParser(model)
    scaled = [r.tree for r in parser.parse(sentences)]
    assert scaled == plain and parser.stats.fallbacks == 0
