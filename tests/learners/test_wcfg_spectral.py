"""Hankel blocks and the supervised spectral WCFG (Bailly et al. 2013, sections 2-3, 5.2):
exact recovery from a complete basis, empirical blocks by hand and in the limit, bracketed
samples, bases and the sampler."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.treebank.binarize import binarize
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import parse_tree
from lpcfg_cli.wcfg.algebraic import WCFG
from lpcfg_cli.wcfg.bracketed_samples import check_probabilistic, sample_bracketed
from lpcfg_cli.wcfg.factorisation import from_hankel, learn_supervised, numerical_rank
from lpcfg_cli.wcfg.hankel import (
    Basis,
    Bracketed,
    bracketed,
    bracketing_of,
    complete_basis,
    constituent_counts,
    empirical_blocks,
    exact_blocks,
    select_basis,
    top_basis,
)
from lpcfg_cli.wcfg.targets import dyck_pcfg, random_pcfg
from lpcfg_cli.wcfg.wcfg_learners import tree_samples


def _random_wcfg(n: int, d: int, signed: bool, seed: int) -> WCFG:
    """Positive: weights uniform in [0, 1] (binary ones scaled down so values stay moderate);
    signed: Gaussian."""
    rng = np.random.default_rng(seed)
    if signed:
        return WCFG(rng.normal(size=n), rng.normal(size=(d, n)), 0.5 * rng.normal(size=(n, n, n)))
    return WCFG(rng.uniform(size=n), rng.uniform(size=(d, n)), 0.3 * rng.uniform(size=(n, n, n)))


def _assert_same_function(target: WCFG, learned: WCFG, max_length: int = 6) -> None:
    """Equal values on every string up to ``max_length``: error <= 1e-9 of the largest value
    of each length (of all lengths where a length has only zeros)."""
    want, got = target.values_all(max_length), learned.values_all(max_length)
    overall = max(np.abs(v).max() for v in want)
    for length in range(1, max_length + 1):
        scale = np.abs(want[length]).max() or overall
        err = np.abs(want[length] - got[length]).max()
        assert err <= 1e-9 * scale, (length, err, scale)


def _l1(a: WCFG, b: WCFG, max_length: int = 6) -> float:
    return float(
        sum(
            np.abs(x - y).sum()
            for x, y in zip(a.values_all(max_length), b.values_all(max_length), strict=True)
        )
    )


# --- Lemma 1: exact recovery from a complete basis --------------------------------------------


@pytest.mark.parametrize("signed", [False, True], ids=["positive", "signed"])
@pytest.mark.parametrize("n, d", [(2, 2), (2, 3), (3, 2), (3, 3)])
def test_complete_hankel_recovers_random_wcfg(n, d, signed):
    target = _random_wcfg(n, d, signed, seed=10 * n + d)
    blocks = exact_blocks(target, complete_basis(d, 2, 2))
    assert numerical_rank(blocks.H) == n  # the basis is complete
    _assert_same_function(target, from_hankel(blocks, n))


def test_complete_hankel_recovers_dyck_pcfg():
    """The Dyck PCFG in CNF needs 4 states: its Hankel matrix has rank 4."""
    target = dyck_pcfg()
    blocks = exact_blocks(target, complete_basis(2, 3, 3))
    assert numerical_rank(blocks.H) == 4
    _assert_same_function(target, from_hankel(blocks, 4))
    # Its defining probabilities: p(ab) = 0.4, p(aabb) = 0.4 * 0.4, p(abab) = 0.2 * 0.4^2.
    learned = from_hankel(blocks, 4)
    assert learned.value((0, 1)) == pytest.approx(0.4, abs=1e-12)
    assert learned.value((0, 0, 1, 1)) == pytest.approx(0.16, abs=1e-12)
    assert learned.value((0, 1, 0, 1)) == pytest.approx(0.032, abs=1e-12)


def test_from_hankel_refuses_n_above_rank():
    blocks = exact_blocks(_random_wcfg(2, 2, False, seed=1), complete_basis(2, 2, 2))
    with pytest.raises(ValueError, match="exceed the rank 2"):
        from_hankel(blocks, 3)
    with pytest.raises(ValueError, match="at least one state"):
        from_hankel(blocks, 0)
    assert from_hankel(blocks, 1).n == 1  # a truncation below the rank is allowed


def test_exact_blocks_are_the_cut_values():
    """H and H_A entries are f(<x;z>, (y)) and f(<x;z>, (y1, y2)) (eq. 12), whether the
    insides are batched (short strings) or computed one by one."""
    w = _random_wcfg(3, 2, True, seed=3)
    basis = Basis([((), ()), ((1,), ()), ((0,), (1, 1))], [(0,), (1,), (1, 0), (0, 0, 1)])
    blocks = exact_blocks(w, basis)
    for o, (x, z) in enumerate(basis.outsides):
        for a, y in enumerate(basis.insides):
            assert blocks.H[o, a] == pytest.approx(w.cut_value(x, y, z), rel=1e-12)
            for b, y2 in enumerate(basis.insides):
                assert blocks.H_A[o, a, b] == pytest.approx(
                    w.composed_value(x, y, y2, z), rel=1e-12, abs=1e-15
                )
    np.testing.assert_allclose(blocks.h_star, [w.value(y) for y in basis.insides], rtol=1e-12)
    # A long inside string takes the one-by-one path.
    long = Basis(basis.outsides, [(0,), (1,), (0,) * 22])
    assert exact_blocks(w, long).H[0, 2] == pytest.approx(w.value((0,) * 22), rel=1e-10)


# --- empirical blocks -----------------------------------------------------------------------

# Three sentences: (0 1), ((0 1) 1) and the one-word sentence 1.
TREEBANK = [bracketing_of((0, 1)), bracketing_of(((0, 1), 1)), bracketing_of(1)]
SMALL_BASIS = Basis([((), ()), ((), (1,)), ((0,), ())], [(0,), (1,), (0, 1)])


def _hand_blocks(scale: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of TREEBANK by hand, sentence t weighing ``scale[t]``:
    s1 = (0 1): leaf 0 in <;1>, leaf 1 in <0;>, node 01 in <;> (children 0, 1);
    s2 = ((0 1) 1): node 011 in <;> (children 01, 1), node 01 in <;1> (children 0, 1),
        leaves in <;11>, <0;1>, <01;> (no context of the basis);
    s3 = 1: leaf 1 in <;>."""
    H = np.zeros((3, 3))
    H_A = np.zeros((3, 3, 3))
    s1, s2, s3 = scale
    H[0, 2] += s1  # <;>, (0 1)
    H[1, 0] += s1  # <;1>, (0)
    H[2, 1] += s1  # <0;>, (1)
    H_A[0, 0, 1] += s1  # <;>, ((0), (1))
    H_A[0, 2, 1] += s2  # <;>, ((0 1), (1))
    H[1, 2] += s2  # <;1>, (0 1)
    H_A[1, 0, 1] += s2  # <;1>, ((0), (1))
    H[0, 1] += s3  # <;>, (1)
    return H, H_A


def test_empirical_blocks_by_hand():
    blocks = empirical_blocks(TREEBANK, SMALL_BASIS, 2)
    H, H_A = _hand_blocks([1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(blocks.H, H, atol=1e-15)
    np.testing.assert_allclose(blocks.H_A, H_A, atol=1e-15)
    np.testing.assert_allclose(blocks.h_star, [0, 1 / 3, 1 / 3], atol=1e-15)
    np.testing.assert_allclose(blocks.h_sigma, [[0, 1 / 3, 0], [1 / 3, 0, 1 / 3]], atol=1e-15)
    # Weights, and repeated samples (merged before counting), divide by the total weight.
    weighted = empirical_blocks(TREEBANK, SMALL_BASIS, 2, weights=[1.0, 2.0, 1.0])
    repeated = empirical_blocks(TREEBANK + [TREEBANK[1]], SMALL_BASIS, 2)
    H, H_A = _hand_blocks([1 / 4, 2 / 4, 1 / 4])
    for got in (weighted, repeated):
        np.testing.assert_allclose(got.H, H, atol=1e-15)
        np.testing.assert_allclose(got.H_A, H_A, atol=1e-15)
    with pytest.raises(ValueError, match="symbols outside"):
        empirical_blocks([bracketing_of((0, 2))], SMALL_BASIS, 2)


def test_empirical_blocks_converge_and_learning_improves():
    """Blocks from 10^3, 10^4, 10^5 sampled trees approach the exact ones (Frobenius norm of
    the errors of H and H_A), and the WCFG learned from them approaches the target (L1 over
    the strings up to length 6)."""
    rng = np.random.default_rng(6)
    target = random_pcfg(2, 2, rng)
    basis = complete_basis(2, 2, 2)
    exact = exact_blocks(target, basis)
    samples = sample_bracketed(target, 100_000, rng)
    block_err, l1 = [], []
    for size in (1_000, 10_000, 100_000):
        got = empirical_blocks(samples[:size], basis, 2)
        diff = np.concatenate([(got.H - exact.H).ravel(), (got.H_A - exact.H_A).ravel()])
        block_err.append(float(np.linalg.norm(diff)))
        l1.append(_l1(target, learn_supervised(samples[:size], 2, basis)))
    assert block_err[0] > block_err[1] > block_err[2]
    assert block_err[2] < 0.006
    assert l1[0] > l1[1] > l1[2]
    assert l1[2] < 0.01


def test_learn_supervised_with_a_frequency_basis():
    rng = np.random.default_rng(3)
    target = random_pcfg(2, 2, rng)
    samples = sample_bracketed(target, 20_000, rng)
    basis = select_basis(samples, 2, factor=0.01)
    assert (len(basis.outsides), len(basis.insides)) == (238, 38)
    assert _l1(target, learn_supervised(samples, 2, factor=0.01)) < 0.03
    with pytest.raises(ValueError, match="choose the basis size"):
        learn_supervised(samples, 2)


# --- bracketed samples ----------------------------------------------------------------------


def test_bracketing_of_nested_tuples_and_checks():
    sample = bracketing_of(((0, 1), (1, (0, 0))))
    assert sample == Bracketed((0, 1, 1, 0, 0), ((0, 2, 5), (0, 1, 2), (2, 3, 5), (3, 4, 5)))
    # Node order does not matter: the canonical order is pre-order.
    assert bracketed(sample.words, reversed(sample.nodes)) == sample
    assert bracketing_of(1) == Bracketed((1,), ())
    deep = 0
    for _ in range(5000):  # iterative: no recursion limit
        deep = (deep, 1)
    assert len(bracketing_of(deep).nodes) == 5000
    for nodes, message in [
        ([(0, 1, 3)], "need 2 binary nodes"),
        ([(0, 1, 3), (0, 2, 3)], "two nodes span"),
        ([(0, 1, 2), (1, 2, 3)], "whole sentence"),
        ([(0, 2, 3), (1, 2, 3)], "child \\[0, 2\\) that is no node"),
        ([(0, 3, 3), (0, 1, 2)], "bad node"),
    ]:
        with pytest.raises(ValueError, match=message):
            bracketed((0, 1, 0), nodes)
    with pytest.raises(ValueError, match="symbols 0 .. 1"):
        bracketed((0, 2), [(0, 1, 2)], d=2)
    with pytest.raises(ValueError, match="two children"):
        bracketing_of((0, 1, 1))


def test_tree_samples_from_a_compiled_treebank():
    """The learner's brackets of binarized trees (``wcfg.wcfg_learners.tree_samples``)."""
    raw = [
        "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))",
        "(S (NP (NN dog)) (VP (VBZ sees) (NP (DT the) (NN cat))) (. .))",
    ]
    trees = [binarize(normalize(parse_tree(t))) for t in raw]
    grammar, bank = build_grammar(trees, rare=0)
    samples, words = tree_samples(grammar, bank, "words")
    assert words == [".", "barks", "cat", "dog", "sees", "the"]
    assert samples[0] == Bracketed((5, 3, 1), ((0, 2, 3), (0, 1, 2)))
    # Right factoring of S -> NP VP . : (NP (@S VP .)), VP over "sees the cat".
    assert samples[1] == Bracketed((3, 4, 5, 2, 0), ((0, 1, 5), (1, 4, 5), (1, 2, 4), (2, 3, 4)))
    tagged, tags = tree_samples(grammar, bank, "tags")
    assert tags == [".", "DT", "NN", "VBZ"]
    assert [s.nodes for s in tagged] == [s.nodes for s in samples]


# --- bases ----------------------------------------------------------------------------------


def test_complete_basis_lists_everything_once():
    basis = complete_basis(2, 2, 2)
    assert basis.insides == [(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]
    assert basis.outsides[:5] == [((), ()), ((), (0,)), ((), (1,)), ((0,), ()), ((1,), ())]
    assert len(basis.outsides) == 1 + 2 * 2 + 3 * 4 == len(set(basis.outsides))


def test_basis_selection_by_frequency_then_lexicographic():
    insides, outsides = constituent_counts(TREEBANK)
    assert insides == {(0,): 2, (1,): 4, (0, 1): 2, (0, 1, 1): 1}
    assert outsides[(), ()] == 3 and outsides[(), (1,)] == 2 and outsides[(0,), (1,)] == 1
    # 4 distinct insides: factor 0.5 keeps 2, the most frequent (1) then the tie (0) < (0 1).
    assert select_basis(TREEBANK, 2, factor=0.5).insides == [(1,), (0,)]
    # The symbols are always insides, <eps; eps> always the first context.
    basis = select_basis(TREEBANK, 3, n_insides=1, n_outsides=2)
    assert basis.insides == [(1,), (0,), (2,)]
    assert basis.outsides == [((), ()), ((), (1,))]
    basis = top_basis({(0, 0): 5, (0,): 1}, {((0,), ()): 9}, 1, n_insides=1, n_outsides=1)
    assert basis == Basis([((), ()), ((0,), ())], [(0, 0), (0,)])
    assert len(select_basis(TREEBANK, 2, factor=1.0).outsides) == len(outsides)
    with pytest.raises(ValueError, match="proportion"):
        select_basis(TREEBANK, 2, factor=1.5)


# --- sampling -------------------------------------------------------------------------------


def test_sample_bracketed_draws_valid_trees_with_the_right_frequencies():
    target = dyck_pcfg()
    samples = sample_bracketed(target, 20_000, np.random.default_rng(0), max_length=40)
    for sample in samples[:2000]:
        assert bracketed(sample.words, sample.nodes, d=2) == sample
    assert max(len(s.words) for s in samples) <= 40
    # The tree of "a b" and of "a a b b" are unique: their frequencies are their probabilities.
    ab = sum(s.words == (0, 1) for s in samples) / len(samples)
    aabb = sum(s.words == (0, 0, 1, 1) for s in samples) / len(samples)
    assert ab == pytest.approx(0.4, abs=0.015)
    assert aabb == pytest.approx(0.16, abs=0.01)
    with pytest.raises(ValueError, match="too large"):
        sample_bracketed(target, 5, np.random.default_rng(0), max_length=1, max_draws=1000)
    with pytest.raises(ValueError, match="sum to 1"):
        check_probabilistic(WCFG([1.0], [[0.5]], [[[0.4]]]))
