"""The algebraic WCFG (Bailly et al. 2013, section 2.2), its targets, distances and the
spectral WFA baseline, against brute force and hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.wcfg.algebraic import WCFG, all_strings, string_code
from lpcfg_cli.wcfg.automaton import WFA, learn_wfa, select_basis
from lpcfg_cli.wcfg.distances import expected_l1, kl_divergence, l1_distance
from lpcfg_cli.wcfg.targets import (
    conditioned_on_finite,
    dyck_pcfg,
    expected_length,
    finite_probabilities,
    random_pcfg,
)


def _brute_force(w: WCFG, x: tuple[int, ...]) -> float:
    """Sum over every bracketing and state assignment, by explicit recursion on spans."""

    def inside(i: int, j: int, state: int) -> float:
        if j - i == 1:
            return w.terminals[x[i], state]
        return sum(
            w.binary[state, b, c] * inside(i, k, b) * inside(k, j, c)
            for k in range(i + 1, j)
            for b in range(w.n)
            for c in range(w.n)
        )

    return sum(w.start[a] * inside(0, len(x), a) for a in range(w.n))


def _random(n: int, d: int, seed: int, signed: bool = False) -> WCFG:
    rng = np.random.default_rng(seed)
    draw = (lambda *s: rng.uniform(-1, 1, s)) if signed else (lambda *s: rng.random(s))
    return WCFG(draw(n), draw(d, n), 0.5 * draw(n, n, n))


@pytest.mark.parametrize("signed", [False, True])
def test_values_equal_brute_force_and_every_cut(signed: bool) -> None:
    w = _random(2, 2, 3, signed)
    values = w.values_all(5)
    for length in range(1, 6):
        for code, x in enumerate(all_strings(2, length)):
            x = tuple(int(s) for s in x)
            want = _brute_force(w, x)
            assert values[length][code] == pytest.approx(want, rel=1e-12, abs=1e-15)
            assert w.value(x) == pytest.approx(want, rel=1e-12, abs=1e-15)
            assert string_code(x, 2) == code
            # eq. 12: every position is a constituent of every derivation
            for t in range(length):
                cut = w.cut_value(x[:t], x[t : t + 1], x[t + 1 :])
                assert cut == pytest.approx(want, rel=1e-10, abs=1e-14)


def test_composed_values_split_the_cut_values() -> None:
    """f(<x;z>, (y)) = sum over splits of y of f(<x;z>, (y1, y2)) (eq. 26 holds for g)."""
    w = _random(3, 2, 5)
    x, y, z = (1,), (0, 1, 1), (0,)
    parts = sum(w.composed_value(x, y[:k], y[k:], z) for k in range(1, len(y)))
    assert w.cut_value(x, y, z) == pytest.approx(parts, rel=1e-12)


def test_dyck_pcfg_probabilities() -> None:
    w = dyck_pcfg()
    a, b = 0, 1
    assert w.value((a, b)) == pytest.approx(0.4)
    assert w.value((a, a, b, b)) == pytest.approx(0.4 * 0.4)
    assert w.value((a, b, a, b)) == pytest.approx(0.2 * 0.4 * 0.4)
    assert w.value((b, a)) == 0.0
    odd = w.values_all(7)
    assert all(np.all(odd[k] == 0) for k in (1, 3, 5, 7))
    assert expected_length(w) == pytest.approx(8.0)


def test_random_pcfg_is_a_distribution_over_finite_trees() -> None:
    rng = np.random.default_rng(0)
    for _ in range(10):
        w = random_pcfg(2, 2, rng)
        assert np.allclose(finite_probabilities(w), 1.0, atol=1e-9)
        total = w.binary.sum(axis=(1, 2)) + w.terminals.sum(axis=0)
        assert np.allclose(total, 1.0) and w.start.sum() == pytest.approx(1.0)
        mass = sum(v.sum() for v in w.values_all(12))
        assert 0.9 < mass <= 1.0 + 1e-12
        assert np.isfinite(expected_length(w))


def test_conditioning_keeps_the_finite_trees_ratios() -> None:
    """A supercritical PCFG conditioned on finite trees gives every string the same
    probability up to one factor (the probability of a finite tree)."""
    w = WCFG(
        np.array([1.0, 0.0]),
        np.array([[0.2, 0.1], [0.1, 0.2]]),
        np.full((2, 2, 2), 0.7 / 4),
    )
    q = finite_probabilities(w)
    assert q[0] < 1
    c = conditioned_on_finite(w)
    for x in [(0,), (0, 1), (1, 1, 0)]:
        assert c.value(x) == pytest.approx(w.value(x) / q[0], rel=1e-9)


def test_distances() -> None:
    target, other = random_pcfg(2, 2, np.random.default_rng(1)), dyck_pcfg()
    assert kl_divergence(target, target).value == pytest.approx(0.0, abs=1e-12)
    assert kl_divergence(target, other).value > 0.1
    assert kl_divergence(target, other).floored > 0  # Dyck gives odd lengths zero
    assert l1_distance(target, target) == 0.0
    assert l1_distance(target, other) == pytest.approx(l1_distance(other, target))
    strings, counts = [(0, 1), (0, 0, 1, 1)], [3, 1]
    p = np.array([0.75, 0.25])
    want = float(np.sum(p * np.abs(np.array([0.4, 0.16]) - p)))
    assert expected_l1(other, strings, counts) == pytest.approx(want)


def test_spectral_wfa_recovers_a_wfa_from_exact_statistics() -> None:
    rng = np.random.default_rng(0)
    target = WFA(rng.random(2), 0.4 * rng.random((2, 2, 2)), rng.random(2))
    strings = [tuple(x) for k in range(9) for x in all_strings(2, k)]
    values = [target.value(x) for x in strings]
    basis = [()] + [tuple(x) for k in (1, 2) for x in all_strings(2, k)]
    w = learn_wfa(strings, values, 2, 2, basis, basis)
    scale = sum(values)  # the learner normalises the counts it is given
    for x in strings:
        if len(x) <= 4:
            assert w.value(x) * scale == pytest.approx(target.value(x), rel=1e-9, abs=1e-15)
    by_length = w.values_all(3)
    for k in range(4):
        for code, x in enumerate(all_strings(2, k)):
            assert by_length[k][code] == pytest.approx(w.value(tuple(x)), rel=1e-12)
    with pytest.raises(ValueError):
        learn_wfa(strings, values, 5, 2, basis[:2], basis[:2])


def test_wfa_basis_selection() -> None:
    pre, suf = select_basis([(0, 1), (0, 0)], [2, 1], 1.0)
    assert pre[0] == () and suf[0] == ()
    assert set(pre[1:]) == {(0,), (0, 1), (0, 0)}
    assert set(suf[1:]) == {(1,), (0,), (0, 1), (0, 0)}
    assert pre[1] == (0,)  # the most frequent prefix first
    small, _ = select_basis([(0, 1), (0, 0)], [2, 1], 0.34)
    assert small == [(), (0,)]
