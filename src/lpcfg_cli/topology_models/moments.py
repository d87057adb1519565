"""Moments of the words at chosen positions, by dynamic programs over all topologies.

``moment(params, L, positions)`` is ``E[x_p1 (x) ... (x) x_pr]`` over sentences of ``L``
words (``x_p`` one-hot, positions 0-based, distinct, increasing): a ``(d,) * r`` tensor
behind the batch axes of ``params``. Topologies are uniform (section 3), so the moment is
the sum over every tree of its joint mass, divided by the number of trees.

The sums over trees are dynamic programs on spans (Hsu et al. 2012, Appendix C.1 adapts the
E-step's; the paper's text omits the appendix, so these are ours), summing instead of
maximising and carrying the words at the chosen ("marked") positions of a span as tensor
axes; the words elsewhere are summed out. A span's table depends only on its length and the
offsets of its marked positions, so tables are memoised on that key and shared between the
position sets of one observation function (all triples of ``L = 9`` words need about 400
tables, not 84 x 45).

- Constituency (CKY over bracketings): ``I(l, marks)[s, X]`` is the mass of the span's
  subtrees given its root state ``s``; a leaf is ``O^T`` if marked, else 1 (emissions sum
  to one); a span of length ``l`` sums over its ``l - 1`` splits
  ``sum_{s1, s2} B[s1, s2, s] I_left[s1, X] I_right[s2, Y]``. There are Catalan(L - 1) trees.
- Dependency (Eisner 1996, first order, single root, each projective tree once): states
  are words, so a span's table is keyed by its head word's value; complete spans
  ``C(l, dir, marks)[h, X]``, incomplete spans ``I(l, dir, marks)[h, a, X]`` keep the
  argument's value ``a`` until its other side is attached. A table's marks exclude its head
  (a position is marked in the one table where it is an argument, or at the root).

Every array carries the parameters' batch axes first and may be complex: ``jacobian``
evaluates a batch of complex-step perturbations in one pass.
"""

from __future__ import annotations

from functools import cache
from math import comb

import numpy as np

from lpcfg_cli.topology_models.families import Constituency, Dependency, Params


def catalan(n: int) -> int:
    """Number of binary bracketings of ``n + 1`` leaves."""
    return comb(2 * n, n) // (n + 1)


@cache
def projective_trees(length: int) -> int:
    """Number of projective dependency trees with one root over ``length`` words."""
    if length == 0:
        return 1
    # a root h with independent left and right sides: counts of the complete halves
    return sum(complete_spans(h + 1) * complete_spans(length - h) for h in range(length))


@cache
def complete_spans(length: int) -> int:
    """Number of complete (one-sided) spans of ``length`` words headed at one end."""
    if length == 1:
        return 1
    return sum(incomplete_spans(r + 1) * complete_spans(length - r) for r in range(1, length))


@cache
def incomplete_spans(length: int) -> int:
    """Number of incomplete spans (an arc between the ends) of ``length`` words."""
    return sum(complete_spans(r + 1) * complete_spans(length - 1 - r) for r in range(length - 1))


def n_topologies(kind: str, length: int) -> int:
    """Trees over ``length`` words: Catalan(L - 1) bracketings or projective trees."""
    return catalan(length - 1) if kind == "constituency" else projective_trees(length)


def _t(a: np.ndarray) -> np.ndarray:
    """Swap the last two axes (batched transpose)."""
    return np.swapaxes(a, -1, -2)


def _outer(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Marked-word axes of two tables side by side: (..., X) x (..., Y) -> (..., X * Y)."""
    out = x[..., :, None] * y[..., None, :]
    return out.reshape(*out.shape[:-2], -1)


class _Constituency:
    """Memoised inside tables of one constituency model (see the module docstring)."""

    def __init__(self, p: Constituency):
        self.p = p
        self.batch = p.pi.shape[:-1]
        self.memo: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}

    def inside(self, length: int, marks: tuple[int, ...]) -> np.ndarray:
        key = (length, marks)
        if key in self.memo:
            return self.memo[key]
        p = self.p
        if length == 1:
            if marks:
                table = np.swapaxes(p.o, -1, -2)  # (..., k, d)
            else:
                table = np.ones((*self.batch, p.k, 1), dtype=p.o.dtype)
        else:
            table = 0
            for m in range(1, length):
                left = self.inside(m, tuple(q for q in marks if q < m))
                right = self.inside(length - m, tuple(q - m for q in marks if q >= m))
                table = table + self._combine(left, right)
        self.memo[key] = table
        return table

    def _combine(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        p = self.p
        if p.t1 is not None:  # B = T1 (x)_C T2: each child through its own matrix
            return _outer(_t(p.t1) @ left, _t(p.t2) @ right)
        k, x = p.k, left.shape[-1]
        # tmp[b, s, x] = sum_a B[a, b, s] left[a, x]; out[s, x, y] = sum_b tmp[b, s, x] right[b, y]
        tmp = _t(p.b.reshape(*p.b.shape[:-3], k, k * k)) @ left
        tmp = np.swapaxes(tmp.reshape(*tmp.shape[:-2], k, k * x), -1, -2)
        return (tmp @ right).reshape(*tmp.shape[:-2], k, -1)

    def root(self, length: int, marks: tuple[int, ...]) -> np.ndarray:
        table = self.inside(length, marks)
        return np.einsum("...s,...sx->...x", self.p.pi, table) / catalan(length - 1)


class _Dependency:
    """Memoised Eisner tables of one dependency model (see the module docstring)."""

    def __init__(self, p: Dependency):
        self.p = p
        self.batch = p.pi.shape[:-1]
        self.d = p.d
        self.eye = np.eye(p.d, dtype=p.pi.dtype)
        self.memo: dict[tuple, np.ndarray] = {}

    def _mark(self, table: np.ndarray, first: bool) -> np.ndarray:
        """Make the head's value also a marked word, first or last of the table's marks:
        (..., h, X) -> (..., h, d * X) or (..., h, X * d)."""
        if first:
            return _outer(self.eye, table)  # (..., h, d, X) with d == h
        return _outer(table, self.eye)

    def complete(self, length: int, right: bool, marks: tuple[int, ...]) -> np.ndarray:
        """``C``: head at offset 0 (``right``) or ``length - 1``; (..., h, X)."""
        key = ("C", length, right, marks)
        if key in self.memo:
            return self.memo[key]
        if length == 1:
            table = np.ones((*self.batch, self.d, 1), dtype=self.p.pi.dtype)
        else:
            table = 0
            for r in range(1, length) if right else range(length - 1):
                if right:  # head 0 -> argument r (farthest), then r's own right side
                    inc = self.incomplete(r + 1, True, tuple(q for q in marks if q <= r))
                    rest = self.complete(length - r, True, tuple(q - r for q in marks if q > r))
                    out = _t(inc) @ rest[..., None, :, :]  # sum over r's value a
                    table = table + out.reshape(*out.shape[:-2], -1)
                else:  # argument r (farthest left) with its left side, then head l-1
                    rest = self.complete(r + 1, False, tuple(q for q in marks if q < r))
                    inc = self.incomplete(length - r, False, tuple(q - r for q in marks if q >= r))
                    out = _t(rest)[..., None, :, :] @ inc
                    table = table + out.reshape(*out.shape[:-2], -1)
        self.memo[key] = table
        return table

    def incomplete(self, length: int, right: bool, marks: tuple[int, ...]) -> np.ndarray:
        """``I``: an arc from the head (offset 0 if ``right``, else ``length - 1``) to the
        argument at the other end; (..., h, a, X), the argument's value ``a`` kept."""
        key = ("I", length, right, marks)
        if key in self.memo:
            return self.memo[key]
        last = length - 1
        table = 0
        for r in range(length - 1):
            lmarks = tuple(q for q in marks if 0 < q <= r)
            rmarks = tuple(q - r - 1 for q in marks if r < q < last)
            left = self.complete(r + 1, True, lmarks)  # head 0
            right_c = self.complete(length - r - 1, False, rmarks)  # head last
            if right:  # head 0, argument last
                if last in marks:
                    right_c = self._mark(right_c, first=False)
                arc = _t(self.p.right)[..., None] * right_c[..., None, :, :]  # (h, a, Y)
                out = left[..., :, None, :, None] * arc[..., :, :, None, :]
            else:  # head last, argument 0
                if 0 in marks:
                    left = self._mark(left, first=True)
                arc = _t(self.p.left)[..., None] * left[..., None, :, :]  # (h, a, X)
                out = arc[..., None] * right_c[..., :, None, None, :]
            table = table + out.reshape(*out.shape[:-2], -1)
        self.memo[key] = table
        return table

    def root(self, length: int, marks: tuple[int, ...]) -> np.ndarray:
        total = 0
        for h in range(length):
            left = self.complete(h + 1, False, tuple(q for q in marks if q < h))
            right = self.complete(length - h, True, tuple(q - h for q in marks if q > h))
            if h in marks:
                left = self._mark(left, first=False)
            out = _t(self.p.pi[..., None] * left) @ right
            total = total + out.reshape(*out.shape[:-2], -1)
        return total / projective_trees(length)


def tables(params: Params) -> _Constituency | _Dependency:
    """The memoised dynamic program of ``params`` (reuse it for many position sets)."""
    return _Constituency(params) if isinstance(params, Constituency) else _Dependency(params)


def moment(
    params: Params,
    length: int,
    positions: tuple[int, ...],
    dp: _Constituency | _Dependency | None = None,
) -> np.ndarray:
    """``E[x_p1 (x) ... (x) x_pr]`` for sentences of ``length`` words: (..., d, ..., d).

    ``positions`` are 0-based, distinct and increasing; ``dp`` (from ``tables``) shares
    memoised span tables between calls on the same parameters."""
    positions = tuple(int(q) for q in positions)
    if any(b <= a for a, b in zip(positions, positions[1:], strict=False)):
        raise ValueError(f"positions must be distinct and increasing: {positions}")
    if positions and not 0 <= positions[0] <= positions[-1] < length:
        raise ValueError(f"positions {positions} outside a sentence of {length} words")
    dp = dp or tables(params)
    flat = dp.root(length, positions)
    return flat.reshape(flat.shape[:-1] + (params.d,) * len(positions))
