"""Word moments of the six parsing models of Hsu, Kakade & Liang (2012) against brute force.

``moments.moment`` sums over every tree topology with memoised span dynamic programs (CKY
over bracketings, Eisner spans over projective dependency trees) that carry the marked words
as tensor axes: easy places to drop a split, count a tree twice or permute an axis. The
oracle here shares none of that structure. It lists bracketings as maximal sets of
non-crossing spans and dependency trees as head arrays filtered for one root, acyclicity and
projectivity, then sums the joint of the paper's equations (1) and (2) over every topology,
every latent state assignment and every word sequence, so that a moment is a plain sum of
joint mass times one-hot outer products. The module also checks the topology counts, that
the dynamic programs broadcast over batches of complex parameter points (what a
complex-step Jacobian relies on), that memoised tables can be shared between position sets,
and the free parameterisation of ``families``.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from lpcfg_cli.topology_models import families, moments
from lpcfg_cli.topology_models.families import (
    CONSTITUENCY,
    DEPENDENCY,
    FAMILIES,
    Constituency,
    Dependency,
)

Span = tuple[int, int]
Split = tuple[Span, Span, Span]  # (parent, left child, right child)

# --- the brute-force oracle ----------------------------------------------------------------


@cache
def bracketings(length: int) -> tuple[tuple[Split, ...], ...]:
    """Every binary bracketing of ``length`` leaves, as its internal nodes with children.

    A bracketing is a maximal set of pairwise non-crossing spans of two or more leaves; it
    holds the root and ``length - 2`` other spans, so we try every such set of spans, keep
    the non-crossing ones and read each internal node's children off the set."""
    leaves = [(i, i + 1) for i in range(length)]
    if length == 1:
        return ((),)
    inner = [(i, j) for i in range(length) for j in range(i + 2, length + 1) if j - i < length]
    found = []
    for chosen in itertools.combinations(inner, length - 2):
        spans = [(0, length), *chosen]
        if any(a < c < b < e for (a, b), (c, e) in itertools.permutations(spans, 2)):
            continue  # two spans cross
        nodes = spans + leaves
        splits = []
        for i, j in spans:
            below = [(a, b) for a, b in nodes if i <= a < b <= j and (a, b) != (i, j)]
            children = sorted(
                (a, b)
                for a, b in below
                if not any(c <= a < b <= e and (c, e) != (a, b) for c, e in below)
            )
            assert len(children) == 2, (spans, (i, j), children)
            (a, m), (m2, b) = children
            assert (a, m2, b) == (i, m, j), (spans, (i, j), children)
            splits.append(((i, j), children[0], children[1]))
        found.append(tuple(splits))
    return tuple(found)


def _ancestors(heads: tuple[int, ...], node: int) -> list[int] | None:
    """The ancestors of ``node`` up to the root, or None when following heads cycles."""
    seen = []
    while heads[node] != -1:
        node = heads[node]
        if node in seen:
            return None
        seen.append(node)
    return seen


@cache
def rooted_trees(length: int) -> tuple[tuple[int, ...], ...]:
    """Every dependency tree with one root over ``length`` words, as head arrays (root -1)."""
    choices = [[-1, *(h for h in range(length) if h != i)] for i in range(length)]
    return tuple(
        heads
        for heads in itertools.product(*choices)
        if heads.count(-1) == 1 and all(_ancestors(heads, i) is not None for i in range(length))
    )


def is_projective(heads: tuple[int, ...]) -> bool:
    """Every word strictly between a head and its argument descends from that head."""
    for a, h in enumerate(heads):
        if h == -1:
            continue
        for between in range(min(a, h) + 1, max(a, h)):
            if h not in _ancestors(heads, between):
                return False
    return True


@cache
def projective_trees(length: int) -> tuple[tuple[int, ...], ...]:
    return tuple(heads for heads in rooted_trees(length) if is_projective(heads))


def constituency_joint(p: Constituency, length: int) -> np.ndarray:
    """P(x_1, ..., x_L) of a constituency model: equation (1) summed over trees and states."""
    pi, b, o = p.pi.tolist(), p.b.tolist(), p.o.tolist()
    k, d = p.k, p.d
    trees = bracketings(length)
    leaves = [(i, i + 1) for i in range(length)]
    sentences = list(itertools.product(range(d), repeat=length))
    mass = [0.0] * len(sentences)
    for splits in trees:
        children = [child for _, left, right in splits for child in (left, right)]
        nodes = sorted({(0, length), *leaves, *children})
        assert len(nodes) == 2 * length - 1
        at = {node: n for n, node in enumerate(nodes)}
        for states in itertools.product(range(k), repeat=len(nodes)):
            weight = pi[states[at[(0, length)]]] / len(trees)
            for parent, left, right in splits:
                weight *= b[states[at[left]]][states[at[right]]][states[at[parent]]]
            leaf_states = [states[at[leaf]] for leaf in leaves]
            for n, words in enumerate(sentences):
                term = weight
                for w, s in zip(words, leaf_states, strict=True):
                    term *= o[w][s]
                mass[n] += term
    return np.array(mass).reshape((d,) * length)


def dependency_joint(p: Dependency, length: int) -> np.ndarray:
    """P(x_1, ..., x_L) of a dependency model: equation (2) summed over projective trees."""
    pi, left, right = p.pi.tolist(), p.left.tolist(), p.right.tolist()
    d = p.d
    trees = projective_trees(length)
    sentences = list(itertools.product(range(d), repeat=length))
    mass = [0.0] * len(sentences)
    for heads in trees:
        arcs = [(a, h, left if a < h else right) for a, h in enumerate(heads) if h != -1]
        root = heads.index(-1)
        for n, words in enumerate(sentences):
            term = pi[words[root]] / len(trees)
            for a, h, table in arcs:
                term *= table[words[a]][words[h]]
            mass[n] += term
    return np.array(mass).reshape((d,) * length)


def joint(params: families.Params, length: int) -> np.ndarray:
    if isinstance(params, Constituency):
        return constituency_joint(params, length)
    return dependency_joint(params, length)


def oracle_moment(sentence_mass: np.ndarray, positions: tuple[int, ...]) -> np.ndarray:
    """sum over sentences x of P(x) * x_p1 (x) ... (x) x_pr, the x_p one-hot."""
    d = sentence_mass.shape[0] if sentence_mass.ndim else 0
    out = np.zeros((d,) * len(positions), dtype=sentence_mass.dtype)
    for words in np.ndindex(sentence_mass.shape):
        out[tuple(words[p] for p in positions)] += sentence_mass[words]
    return out


def position_sets(length: int) -> list[tuple[int, ...]]:
    """Every non-empty subset of the positions (singles, pairs, triples, ..., all)."""
    return [
        subset for r in range(1, length + 1) for subset in itertools.combinations(range(length), r)
    ]


# --- 1. the dynamic programs against the oracle -------------------------------------------

CASES = [(family, 3, 2, 4) for family in CONSTITUENCY]
CASES += [(family, 2, 3, 4) for family in CONSTITUENCY]
CASES += [(family, 3, None, 5) for family in DEPENDENCY]
CASES += [(family, 2, None, 5) for family in DEPENDENCY]


@pytest.mark.parametrize(("family", "d", "k", "max_length"), CASES)
def test_moments_match_brute_force(family: str, d: int, k: int | None, max_length: int) -> None:
    """Every position set of every sentence length: the dynamic program equals the oracle."""
    rng = np.random.default_rng([11, FAMILIES.index(family), d])
    params = families.random_params(family, d, k, rng)
    for length in range(1, max_length + 1):
        mass = joint(params, length)
        assert mass.min() >= 0
        assert mass.sum() == pytest.approx(1, abs=1e-12)
        for positions in position_sets(length):
            got = moments.moment(params, length, positions)
            assert got.shape == (d,) * len(positions)
            np.testing.assert_allclose(
                got,
                oracle_moment(mass, positions),
                rtol=0,
                atol=1e-12,
                err_msg=f"{family} d={d} k={k} L={length} positions={positions}",
            )


# --- 2. topology counts --------------------------------------------------------------------


def test_topology_counts() -> None:
    """The oracle's enumerators give Catalan(L - 1) bracketings and 1, 2, 7, 30, 143, 728
    projective single-root trees, as ``moments`` assumes when it divides by the count; the
    unfiltered single-root trees number L^(L-1) (rooted labelled trees), so projectivity
    does remove trees from L = 3 on."""
    expected_projective = [1, 2, 7, 30, 143, 728]
    for length in range(1, 7):
        trees = bracketings(length)
        assert len(set(trees)) == len(trees) == moments.catalan(length - 1)
        for splits in trees:
            assert len(splits) == length - 1
        assert len(rooted_trees(length)) == length ** (length - 1)
        projective = projective_trees(length)
        assert len(set(projective)) == len(projective) == expected_projective[length - 1]
        assert moments.projective_trees(length) == expected_projective[length - 1]
        assert moments.n_topologies("constituency", length) == len(trees)
        assert moments.n_topologies("dependency", length) == len(projective)
    assert is_projective((1, -1, 3, 1))  # 0 <- 1 -> 3 -> 2
    assert not is_projective((3, -1, 1, 1))  # 3 -> 0 passes over the root 1


# --- 3. batches of complex parameter points ------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_batched_complex_parameters(family: str) -> None:
    """A (3, n) complex theta gives (3, d, ..., d) moments whose rows are the unbatched
    moments of each row: a real row and a complex-step row (imaginary part 1e-20) have the
    real point's moments as real part, and a far complex row matches the oracle evaluated
    at complex parameters (the moments are polynomials, rational for DEP-IES, in theta)."""
    d, k = 3, (2 if family in CONSTITUENCY else None)
    length = 3 if family in CONSTITUENCY else 4
    rng = np.random.default_rng([23, FAMILIES.index(family)])
    n = families.n_params(family, d, k)
    theta = families.random_theta(family, d, k, rng)
    far = families.random_theta(family, d, k, rng) + 0.1j * rng.standard_normal(n)
    batch = np.stack([theta + 0j, theta + 1e-20j * rng.standard_normal(n), far])
    assert batch.shape == (3, n)
    batched = families.unpack(family, batch, d, k)
    real = families.unpack(family, theta, d, k)
    dp = moments.tables(batched)
    far_mass = joint(families.unpack(family, far, d, k), length)
    for positions in [(0,), (length - 1,), (0, length - 1), (1, 2), tuple(range(length))]:
        got = moments.moment(batched, length, positions, dp=dp)
        assert got.shape == (3,) + (d,) * len(positions)
        assert np.iscomplexobj(got)
        for row in range(3):
            alone = moments.moment(families.unpack(family, batch[row], d, k), length, positions)
            np.testing.assert_allclose(got[row], alone, rtol=0, atol=1e-12)
        expected = moments.moment(real, length, positions)
        assert not np.iscomplexobj(expected)
        for row in (0, 1):
            np.testing.assert_allclose(got[row].real, expected, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(got[0].imag, 0)
        assert np.abs(got[1].imag).max() < 1e-18
        assert np.abs(got[2].imag).max() > 1e-3  # the far row really is complex
        np.testing.assert_allclose(got[2], oracle_moment(far_mass, positions), rtol=0, atol=1e-12)
    # two leading batch axes broadcast the same way
    square = np.stack([batch[0], batch[2], batch[2], batch[1]]).reshape(2, 2, n)
    positions = (0, length - 1)
    got = moments.moment(families.unpack(family, square, d, k), length, positions)
    flat = moments.moment(batched, length, positions)
    assert got.shape == (2, 2, d, d)
    np.testing.assert_allclose(got.reshape(4, d, d), flat[[0, 2, 2, 1]], rtol=0, atol=1e-12)


# --- 4. memoised tables shared between position sets ---------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_reused_tables_match_fresh_calls(family: str) -> None:
    """One ``tables`` object serving every position set of every length 1..5, in a shuffled
    order (span tables are keyed by span length and marks only), gives what a fresh dynamic
    program gives for each call."""
    d, k = 3, (2 if family in CONSTITUENCY else None)
    rng = np.random.default_rng([31, FAMILIES.index(family)])
    params = families.random_params(family, d, k, rng)
    dp = moments.tables(params)
    calls = [(length, positions) for length in range(1, 6) for positions in position_sets(length)]
    order = rng.permutation(len(calls))
    for _ in range(2):  # the second pass only reads memoised tables
        for i in order:
            length, positions = calls[i]
            shared = moments.moment(params, length, positions, dp=dp)
            fresh = moments.moment(params, length, positions)
            np.testing.assert_allclose(
                shared, fresh, rtol=0, atol=1e-15, err_msg=f"{family} L={length} {positions}"
            )


# --- 5. the free parameterisation ----------------------------------------------------------


# (support size, number of distributions) of every free distribution, from section 3
def _distributions(family: str, d: int, k: int) -> list[tuple[int, int]]:
    return {
        "pcfg": [(k, 1), (k * k, k), (d, k)],  # pi, B, O
        "pcfg-i": [(k, 1), (k, k), (k, k), (d, k)],  # pi, T1, T2, O
        "pcfg-ie": [(k, 1), (k, k), (d, k)],  # pi, T, O
        "dep-i": [(d, 1), (d, d), (d, d)],  # pi, A_left, A_right
        "dep-ie": [(d, 1), (d, d)],  # pi, A
        "dep-ies": [(d, d)],  # A (pi is its stationary distribution)
    }[family]


SIZES = [(2, 2), (3, 2), (2, 3), (5, 3), (4, 4)]


@pytest.mark.parametrize("family", FAMILIES)
def test_parameter_counts(family: str) -> None:
    """Each distribution over m outcomes has m - 1 free entries. For PCFG-IE this gives
    (k - 1) + k(k - 1) + k(d - 1) = k^2 + (d - 1)k - 1, one less than the paper's
    "k^2 + (d - 1)k parameters" (section 4), which counts all k entries of pi without
    removing its sum-to-one constraint."""
    for d, k in SIZES:
        kk = k if family in CONSTITUENCY else d
        n = families.n_params(family, d, kk)
        assert n == sum(count * (size - 1) for size, count in _distributions(family, d, kk))
        assert families.random_theta(family, d, kk, np.random.default_rng(0)).shape == (n,)
        if family == "pcfg-ie":
            assert n == k**2 + (d - 1) * k - 1
        if family == "pcfg":
            assert n == k**3 + (d - 1) * k - 1
        if family == "dep-ies":
            assert n == d * (d - 1)


def _columns_are_distributions(m: np.ndarray, axes: tuple[int, ...]) -> None:
    assert np.all(m >= 0)
    np.testing.assert_allclose(m.sum(axis=axes), 1, rtol=0, atol=1e-12)


@pytest.mark.parametrize("family", FAMILIES)
def test_pack_unpack_and_distributions(family: str) -> None:
    """``pack`` inverts ``unpack`` (both ways), every unpacked distribution is non-negative
    and sums to one, the tied models are tied, and DEP-IES's root distribution is A's
    stationary distribution."""
    for seed, (d, k) in enumerate(SIZES):
        rng = np.random.default_rng([41, FAMILIES.index(family), seed])
        kk = k if family in CONSTITUENCY else None
        theta = families.random_theta(family, d, kk, rng)
        params = families.unpack(family, theta, d, kk)
        np.testing.assert_allclose(families.pack(family, params), theta, rtol=0, atol=1e-15)
        again = families.unpack(family, families.pack(family, params), d, kk)
        if isinstance(params, Constituency):
            assert params.k == k and params.d == d
            _columns_are_distributions(params.pi, (0,))
            _columns_are_distributions(params.b, (0, 1))  # sum over (left, right) children
            _columns_are_distributions(params.o, (0,))
            np.testing.assert_allclose(again.b, params.b, rtol=0, atol=1e-15)
            np.testing.assert_allclose(again.o, params.o, rtol=0, atol=1e-15)
            np.testing.assert_allclose(again.pi, params.pi, rtol=0, atol=1e-15)
            if family == "pcfg":
                assert params.t1 is None and params.t2 is None
            else:
                _columns_are_distributions(params.t1, (0,))
                _columns_are_distributions(params.t2, (0,))
                for s1, s2, s in itertools.product(range(k), repeat=3):
                    assert params.b[s1, s2, s] == pytest.approx(
                        params.t1[s1, s] * params.t2[s2, s], abs=1e-15
                    )
                if family == "pcfg-ie":
                    np.testing.assert_array_equal(params.t1, params.t2)
                else:
                    assert not np.allclose(params.t1, params.t2)
        else:
            assert isinstance(params, Dependency) and params.d == d
            _columns_are_distributions(params.pi, (0,))
            _columns_are_distributions(params.left, (0,))
            _columns_are_distributions(params.right, (0,))
            for name in ("pi", "left", "right"):
                np.testing.assert_allclose(
                    getattr(again, name), getattr(params, name), rtol=0, atol=1e-15
                )
            if family == "dep-i":
                assert not np.allclose(params.left, params.right)
            else:
                np.testing.assert_array_equal(params.left, params.right)
            if family == "dep-ies":
                np.testing.assert_allclose(params.left @ params.pi, params.pi, rtol=0, atol=1e-12)
                assert theta.shape == (d * (d - 1),)
