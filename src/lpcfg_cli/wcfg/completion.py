"""Unsupervised spectral learning of a WCFG by low-rank Hankel completion (Bailly, Carreras,
Luque & Quattoni 2013, sections 4 and 5).

Only whole strings are observed, so the Hankel matrix of cut strings is unknown except on
the row ``<eps; eps>``. The learner

1. builds an inside-outside basis (``closed_problem``: section 4.1 closed as in 5.3, or
   ``simplified_problem``: the small basis of 5.1) and the linear constraints a WCFG Hankel
   satisfies: Hankel (25), inside (26), outside (27) and observation (24);
2. completes the matrix by the nuclear-norm program (29), solved as in 5.1 by FISTA on
   ``1/2 dist(H, C)^2 + tau ||H||_*`` under ``||H||_2 <= 1``: an exact projection on the
   constraint set ``C``, then a singular-value shrinkage to the target dimension
   (``complete``);
3. reads a WCFG off the completed blocks with Lemma 1 (``spectral.from_hankel``).

Representation. An element of ``O x I`` is a *cut structure*: a string with one marked
constituent, or with an operation over two marked constituents, or with two nested
operations. The entries of ``H`` that denote the same structure, ``H(<x; z>, (y1, y2)) =
H(<x, y1; z>, (y2)) = H(<x; y2, z>, (y1))``, are one variable, so the Hankel constraints (25)
hold by construction; ``K`` holds (26) and (27) (and the equalities of 5.1), ``O`` and ``z``
the observations. Entry ``(o, i)`` of ``H`` is variable ``entry_var[o, i]``.

Choices the paper leaves open, and deviations (measured on random 2-state 2-symbol PCFGs,
``targets.random_pcfg``, L1 over the strings up to length 7; the figures are in
docs/learners/wcfg.md, Choices the paper leaves open, and deviations):

- Projection: exact onto the whole constraint set at once (one sparse LU, see
  ``_Projector``) rather than "projecting iteratively on each constraint"; the result
  meets ``K v = 0`` to rounding with no inner iterations. Distances are Frobenius norms of
  the full ``H``: a variable counts once per entry it stands for.
- Shrinkage: ``tau_k = sigma_{n+1}`` of the projected point, our reading of "a
  thresholding-shrinkage operation for the target dimension"; a fixed ``tau`` (with or
  without a rank cap ``n``) is available. On section 5.1's problem from samples it matches
  a plain rank-``n`` projection (``tau=0``) on large samples and beats it on small ones; it
  beats the 0-step completion on large samples but not on small ones.
- ``mu = 0`` by default: ``mu = 1/sqrt(N)`` raised the median L1 at every sample size (the
  shrinkage then pulls the observed entries down by up to ``mu``).
- The spectral step reads the projection on ``C`` of the last iterate (feasible; Lemma 1
  truncates it to rank ``n``). From exact statistics 50 steps reach a small L1 for most
  targets (one may stall: the non-convex rank-``n`` iteration can stop at a point outside
  ``C``), 200 steps rounding level.
- Closed basis (5.3): the seeds are our reading; the paper's smallest row (1 x 11 -> H
  39 x 159, 34 observations) fits it (see ``close_basis``). Its inside-outside
  constraint counts (1,626 for that row, ~5 per row after) are far below the literal
  "for all o, i" of (26)-(27) generated here; it does not say which subset it kept.
- Not every target is the minimiser of (29): for the Dyck PCFG the completion from exact
  statistics is feasible with a smaller nuclear norm than the true Hankel.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.linalg as la
import scipy.optimize as opt
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from lpcfg_cli.wcfg.algebraic import WCFG
from lpcfg_cli.wcfg.factorisation import from_hankel
from lpcfg_cli.wcfg.hankel import HankelBlocks

String = tuple[int, ...]
Context = tuple[String, String]
Inside = tuple[String, ...]  # (y,) in I1 or (y1, y2) in I2
ROOT: Context = ((), ())


class Outside(NamedTuple):
    """An outside context of section 4.1.

    ``side`` 0: ``<left; right>`` in O1 (insert ``y``: ``left y right``);
    ``side`` 1: ``<left, sibling; right>`` (insert ``y``: ``left (sibling, y) right``);
    ``side`` 2: ``<left; sibling, right>`` (insert ``y``: ``left (y, sibling) right``).
    """

    left: String
    right: String
    sibling: String = ()
    side: int = 0


# ------------------------------------------------------------------ observed statistics


def string_probabilities(
    strings: Iterable[Sequence[int]],
    counts: Iterable[float] | None = None,
    max_length: int | None = None,
) -> dict[String, float]:
    """The empirical distribution ``p_S(x) = count(x) / total`` of whole strings (the
    observations of section 4), optionally only for ``|x| <= max_length`` (5.1 uses 3);
    the total is over every string either way."""
    table: Counter[String] = Counter()
    strings = [tuple(int(s) for s in x) for x in strings]
    weights = [1.0] * len(strings) if counts is None else [float(c) for c in counts]
    if len(weights) != len(strings):
        raise ValueError(f"{len(weights)} counts for {len(strings)} strings")
    for x, c in zip(strings, weights, strict=True):
        if not x:
            raise ValueError("the empty string has no derivation: strings must be non-empty")
        if c < 0:
            raise ValueError("counts must be non-negative")
        table[x] += c
    total = sum(table.values())
    if total <= 0:
        raise ValueError("no observation: the counts sum to 0")
    return {x: c / total for x, c in table.items() if max_length is None or len(x) <= max_length}


def _alphabet(probs: dict[String, float], d: int | None) -> int:
    top = max((max(x) for x in probs), default=-1) + 1
    if d is None:
        return top
    if top > d:
        raise ValueError(f"symbol {top - 1} outside an alphabet of {d}")
    return d


# ------------------------------------------------------------------ problems


@dataclass
class ProblemSizes:
    """What the paper's Table 1 reports (``rows x cols``, ``observed``: the strings of the
    sample observed, ``io_constraints``) with the constraints split by kind.

    ``observations`` counts every observation constraint (24), ``zero_observations`` those
    setting an unseen string to 0.

    ``inside_constraints`` (26) and ``outside_constraints`` (27) are counted as generated:
    one per ``(o, (x))`` with ``|x| >= 2`` and one per ``(<x; z> != <eps; eps>, i)``;
    ``equalities`` are the explicit equalities of section 5.1's ``K``; ``hankel_ties`` the
    entries that copy another (``rows * cols - variables``), the equalities (25) absorbed
    by the variables (``None`` when not computed)."""

    rows: int
    cols: int
    observations: int
    inside_constraints: int
    outside_constraints: int
    equalities: int = 0
    hankel_ties: int | None = None
    zero_observations: int = 0

    @property
    def observed(self) -> int:
        return self.observations - self.zero_observations

    @property
    def io_constraints(self) -> int:
        return self.inside_constraints + self.outside_constraints + self.equalities


@dataclass
class CompletionProblem:
    """Hankel completion problem over ``O x I``: ``entry_var`` (|O|, |I|) maps entries to
    variables, ``K v = 0`` are the structural constraints, ``obs v = z`` the observations.

    ``block_rows`` (O1 rows, ``<eps; eps>`` first) and ``block_insides`` (strings ``S``
    holding every symbol, with ``S x S`` among the columns) select what Lemma 1 reads."""

    outsides: list[Outside]
    insides: list[Inside]
    entry_var: np.ndarray
    K: sp.csr_matrix
    obs: sp.csr_matrix
    z: np.ndarray
    d: int
    block_rows: np.ndarray
    block_insides: list[String]
    sizes: ProblemSizes
    observed: list[String] = field(default_factory=list)  # the string of each obs row
    # Projectors on the constraints by ``mu`` (``projector``): one sparse LU each, shared by
    # every completion of this problem (the state counts tried on one basis).
    _projectors: dict[float, _Projector] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def projector(self, mu: float = 0.0) -> _Projector:
        """The exact projection on ``C`` for ``mu`` (built on first use, then kept)."""
        if mu not in self._projectors:
            self._projectors[mu] = _Projector(self, mu)
        return self._projectors[mu]

    @property
    def n_vars(self) -> int:
        return self.K.shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        return self.entry_var.shape

    @property
    def var_count(self) -> np.ndarray:
        """How many entries of ``H`` each variable stands for."""
        return np.bincount(self.entry_var.ravel(), minlength=self.n_vars)

    def matrix(self, v: np.ndarray) -> np.ndarray:
        """The dense ``H`` of variable values ``v``."""
        return v[self.entry_var]

    def variables(self, H: np.ndarray) -> np.ndarray:
        """The variables nearest to ``H`` in Frobenius norm: the mean of each class."""
        sums = np.bincount(self.entry_var.ravel(), weights=H.ravel(), minlength=self.n_vars)
        return sums / self.var_count

    def violation(self, v: np.ndarray) -> tuple[float, float]:
        """``(max |K v|, ||obs v - z||_2)``."""
        k = float(np.abs(self.K @ v).max()) if self.K.shape[0] else 0.0
        return k, float(np.linalg.norm(self.obs @ v - self.z))


def _entry_keys(outsides: Sequence[Outside], insides: Sequence[Inside]) -> tuple[np.ndarray, int]:
    """Variable of every entry: entries denoting the same cut structure share one.

    Structures: ``x (y) z`` (O1 x I1), ``x (y1 y2) z`` (O1 x I2, O2 x I1, eq. 25),
    ``x (x' (y1 y2)) z`` and ``x ((y1 y2) z') z`` (O2 x I2); only the middle kind is shared.
    """
    ids: dict[String, int] = {(): 0}

    def sid(s: String) -> int:
        return ids.setdefault(s, len(ids))

    o = np.array([(o.side, sid(o.left), sid(o.sibling), sid(o.right)) for o in outsides])
    o = o.reshape(-1, 4)
    i = np.array([(len(t) - 1, sid(t[0]), sid(t[-1])) for t in insides]).reshape(-1, 3)
    p, s = len(outsides), len(insides)
    oside, ox, osib, oz = (np.broadcast_to(o[:, k, None], (p, s)) for k in range(4))
    ipair, ia, ib = (np.broadcast_to(i[None, :, k], (p, s)) for k in range(3))
    shared = ((oside == 0) & (ipair == 1)) | ((oside > 0) & (ipair == 0))
    # key (x, a, b, z) of the shared structure x (a b) z
    a = np.where(oside == 1, osib, ia)
    b = np.where(oside == 1, ia, np.where(oside == 2, osib, ib))
    keys = np.stack([ox[shared], a[shared], b[shared], oz[shared]], axis=1)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    var = np.empty((p, s), dtype=np.int64)
    n_shared = int(inverse.max()) + 1 if len(inverse) else 0
    var[shared] = inverse.ravel()
    own = ~shared
    var[own] = n_shared + np.arange(int(own.sum()))
    return var, n_shared + int(own.sum())


def _sparse_rows(
    rows: list[np.ndarray], cols: list[np.ndarray], vals: list[np.ndarray], n_rows: int, n: int
) -> sp.csr_matrix:
    """CSR of (row, col, value) triplets, duplicates summed and zeros dropped."""
    if not rows:
        return sp.csr_matrix((n_rows, n))
    m = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, n)
    )
    m.sum_duplicates()
    m.eliminate_zeros()
    return m


def _drop_empty_and_duplicate_rows(m: sp.csr_matrix) -> sp.csr_matrix:
    """Constraints that the variable ties made trivial (``0 = 0``) or repeated."""
    m = m[np.diff(m.indptr) > 0]
    if m.shape[0] == 0:
        return m
    seen: dict[tuple, int] = {}
    keep = []
    for r in range(m.shape[0]):
        lo, hi = m.indptr[r], m.indptr[r + 1]
        key = (m.indices[lo:hi].tobytes(), m.data[lo:hi].tobytes())
        if key not in seen:
            seen[key] = r
            keep.append(r)
    return m[keep]


def _structural_constraints(
    outsides: list[Outside], insides: list[Inside], var: np.ndarray, n_vars: int
) -> tuple[sp.csr_matrix, int, int]:
    """``K`` from the inside constraints (26) and outside constraints (27); also returns
    how many of each were generated (before the ties made some trivial or equal)."""
    o_index = {o: r for r, o in enumerate(outsides)}
    i_index = {t: c for c, t in enumerate(insides)}
    p, s = var.shape
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    n_rows = 0
    # (26): H(o, (x)) - sum_{x = x1 x2} H(o, (x1, x2)) = 0 for every o, |x| >= 2
    n_inside = 0
    for c, t in enumerate(insides):
        if len(t) != 1 or len(t[0]) < 2:
            continue
        x = t[0]
        parts = [i_index[(x[:k], x[k:])] for k in range(1, len(x))]
        block = np.concatenate([var[:, [c]], var[:, parts]], axis=1)  # (p, 1 + splits)
        coef = np.array([1.0] + [-1.0] * len(parts))
        rows.append(np.repeat(n_rows + np.arange(p), block.shape[1]))
        cols.append(block.ravel())
        vals.append(np.tile(coef, p))
        n_rows += p
        n_inside += p
    # (27): H(<x;z>, i) - sum H(<x1, x2; z>, i) - sum H(<x; z1, z2>, i) = 0, <x;z> != root
    n_outside = 0
    for r, o in enumerate(outsides):
        if o.side != 0 or (not o.left and not o.right):
            continue
        x, z = o.left, o.right
        parts = [o_index[Outside(x[:k], z, x[k:], 1)] for k in range(len(x))]
        parts += [o_index[Outside(x, z[k:], z[:k], 2)] for k in range(1, len(z) + 1)]
        block = np.concatenate([var[[r], :], var[parts, :]], axis=0)  # (1 + parts, s)
        coef = np.array([1.0] + [-1.0] * len(parts))
        rows.append(np.tile(n_rows + np.arange(s), block.shape[0]))
        cols.append(block.ravel())
        vals.append(np.repeat(coef, s))
        n_rows += s
        n_outside += s
    K = _sparse_rows(rows, cols, vals, n_rows, n_vars)
    return _drop_empty_and_duplicate_rows(K), n_inside, n_outside


def _observations(
    var: np.ndarray,
    insides: list[Inside],
    probs: dict[String, float],
    unseen_zero: bool,
    n_vars: int,
) -> tuple[sp.csr_matrix, np.ndarray, list[String]]:
    """Observation constraints (24): ``H(<eps; eps>, (x)) = p(x)`` (row 0 is the root)."""
    cols, z, seen = [], [], []
    for c, t in enumerate(insides):
        if len(t) == 1 and (t[0] in probs or unseen_zero):
            cols.append(var[0, c])
            z.append(probs.get(t[0], 0.0))
            seen.append(t[0])
    q = len(cols)
    obs = sp.csr_matrix((np.ones(q), (np.arange(q), cols)), shape=(q, n_vars))
    return obs, np.array(z, dtype=np.float64), seen


# ---- closed basis (sections 4.1 and 5.3)


def _ranked(table: Counter, k: int, size) -> list:
    """The ``k`` most frequent keys; ties by ``size`` then lexicographic order."""
    return sorted(table, key=lambda t: (-table[t], size(t), t))[:k]


def string_basis(
    probs: dict[String, float], n_outsides: int, n_insides: int, d: int | None = None
) -> tuple[list[Context], list[String]]:
    """The basis of section 5.3: the ``n_outsides`` most frequent contexts ``<x; z>`` (with
    ``<eps; eps>`` first, it is the most frequent) and ``n_insides`` insides: every single
    symbol (Lemma 1 needs their columns; the paper's smallest basis is "1 x 11" over 11
    tags) then the most frequent longer substrings. Each occurrence counts with its
    string's probability; ties go to the shorter, then the lexicographically first."""
    d = _alphabet(probs, d)
    subs: Counter[String] = Counter()
    ctxs: Counter[Context] = Counter()
    for x, p in probs.items():
        length = len(x)
        for i in range(length):
            for j in range(i + 1, length + 1):
                subs[x[i:j]] += p
                ctxs[(x[:i], x[j:])] += p
    ctxs.pop(ROOT, None)
    outsides = [ROOT, *_ranked(ctxs, max(n_outsides - 1, 0), lambda c: len(c[0]) + len(c[1]))]
    longer = Counter({x: c for x, c in subs.items() if len(x) > 1})
    return outsides, [(s,) for s in range(d)] + _ranked(longer, max(n_insides - d, 0), len)


def _splits(x: String) -> list[tuple[String, String]]:
    return [(x[:k], x[k:]) for k in range(1, len(x))]


def basis_yields(
    probs: dict[String, float], outsides: Sequence[Context], insides: Sequence[String]
) -> list[String]:
    """The observed strings the basis generates (section 5.3): ``x y z`` with ``<x; z>`` in
    ``P`` and ``y`` in ``S`` or ``y = y1 y2`` with ``y1, y2`` in ``S`` (the inside
    completion)."""
    s_set = set(insides)
    out = []
    for w in probs:
        for x, z in outsides:
            if len(x) + len(z) >= len(w) or w[: len(x)] != x or w[len(w) - len(z) :] != z:
                continue
            y = w[len(x) : len(w) - len(z)]
            if y in s_set or any(a in s_set and b in s_set for a, b in _splits(y)):
                out.append(w)
                break
    return sorted(out, key=lambda w: (len(w), w))


def close_basis(
    outsides: Sequence[Context], insides: Sequence[String], yields: Iterable[String]
) -> tuple[list[Outside], list[Inside]]:
    """The closed inside-outside basis of section 4.1 grown from a basis ``(P, S)`` and the
    strings it generates (5.3).

    Seeds: ``O1 = P`` plus every context ``<x; z>`` of a single-constituent cut ``x y z`` of
    each yield; ``I1 = S`` plus the yields; ``I2 = S x S`` (the inside completion Lemma 1's
    ``H_A`` needs). Then the six rules: ``(x) => (x1, x2)``; ``(x1, x2) => (x1), (x2)``;
    ``<x; z> => <x1, x2; z>, <x; z1, z2>``; ``<x1, x2; z> => (x2)``; ``<x; z1, z2> => (z1)``.
    Order: O1 (root first, then P, then the rest), O2; I1 (S first), I2 (S x S first).

    With ``P = {<eps; eps>}`` and ``S`` the ``d`` symbols the yields are the ``k1 + k2``
    observed strings of length 1 and 2, and ``H`` has ``1 + 2 (f + s)`` rows (``f``, ``s``:
    distinct first and second symbols of the pairs) and ``d + k2 + d^2`` columns: the
    paper's "1 x 11" row (39 x 159, 34 observations) fits this with ``k1 = 7``,
    ``k2 = 27``, ``f + s = 19``.
    """
    yields = list(dict.fromkeys(tuple(w) for w in yields))
    o1: dict[Context, None] = dict.fromkeys([ROOT, *outsides])
    for w in yields:
        length = len(w)
        for i in range(length):
            for j in range(i + 1, length + 1):
                o1.setdefault((w[:i], w[j:]))
    o2: dict[Outside, None] = {}
    for x, z in o1:
        for k in range(len(x)):  # rule 3: x = x1 x2 with x2 non-empty
            o2.setdefault(Outside(x[:k], z, x[k:], 1))
        for k in range(1, len(z) + 1):  # rule 4: z = z1 z2 with z1 non-empty
            o2.setdefault(Outside(x, z[k:], z[:k], 2))
    seeds = [*insides, *yields, *(o.sibling for o in o2)]  # rules 5 and 6
    i1: dict[String, None] = dict.fromkeys(insides)
    for w in seeds:  # rules 1 and 2 close I1 under substrings
        length = len(w)
        for i in range(length):
            for j in range(i + 1, length + 1):
                i1.setdefault(w[i:j])
    i2: dict[Inside, None] = {(a, b): None for a in insides for b in insides}
    for w in i1:
        for a, b in _splits(w):
            i2.setdefault((a, b))
    first = set(outsides)
    o1_list = [ROOT] + [c for c in outsides if c != ROOT]
    o1_list += [c for c in o1 if c not in first and c != ROOT]
    outs = [Outside(x, z) for x, z in o1_list] + list(o2)
    ins: list[Inside] = [(w,) for w in i1] + list(i2)
    return outs, ins


def closed_sizes(
    probs: dict[String, float],
    n_outsides: int,
    n_insides: int,
    *,
    d: int | None = None,
    unseen_zero: bool = True,
) -> ProblemSizes:
    """Table 1's sizes for a basis without building the matrix (cheap for large bases)."""
    P, S = string_basis(probs, n_outsides, n_insides, d)
    outs, ins = close_basis(P, S, basis_yields(probs, P, S))
    n1 = [t[0] for t in ins if len(t) == 1]
    o1 = sum(o.side == 0 for o in outs)
    seen = sum(x in probs for x in n1)
    return ProblemSizes(
        rows=len(outs),
        cols=len(ins),
        observations=len(n1) if unseen_zero else seen,
        inside_constraints=len(outs) * sum(len(x) >= 2 for x in n1),
        outside_constraints=(o1 - 1) * len(ins),
        zero_observations=len(n1) - seen if unseen_zero else 0,
    )


def closed_problem(
    probs: dict[String, float],
    n_outsides: int,
    n_insides: int,
    *,
    d: int | None = None,
    unseen_zero: bool = True,
) -> CompletionProblem:
    """The completion problem of section 4.1 over the closed basis of section 5.3.

    ``probs`` are the observed string probabilities (``string_probabilities``). Observation
    constraints (24) are set for every inside string of the closed basis that was observed
    (the paper's "sentences we train from") and, with ``unseen_zero``, ``p(x) = 0`` for the
    others, as section 5.1 does: the empirical distribution is 0 there. The zeros lower
    the L1 on the Dyck language and change little on WSJ10 (docs/learners/wcfg.md, Choices
    the paper leaves open, and deviations)."""
    d = _alphabet(probs, d)
    P, S = string_basis(probs, n_outsides, n_insides, d)
    outs, ins = close_basis(P, S, basis_yields(probs, P, S))
    var, n_vars = _entry_keys(outs, ins)
    K, n_in, n_out = _structural_constraints(outs, ins, var, n_vars)
    obs, z, seen = _observations(var, ins, probs, unseen_zero, n_vars)
    zeros = sum(x not in probs for x in seen)
    sizes = ProblemSizes(len(outs), len(ins), len(z), n_in, n_out, 0, var.size - n_vars, zeros)
    block_rows = np.array([r for r, o in enumerate(outs) if o.side == 0])
    return CompletionProblem(outs, ins, var, K, obs, z, d, block_rows, list(S), sizes, seen)


# ---- simplified problem (section 5.1)


def simplified_problem(probs: dict[String, float], d: int | None = None) -> CompletionProblem:
    """The matrix and constraints of section 5.1: rows ``<eps; eps>``, ``<x; eps>``,
    ``<eps; x>``, columns ``(y)`` and ``(y, z)`` for symbols ``x, y, z``;

    K: ``H(x; y; eps) = H(eps; x; y)``, ``H(eps; x; y) = H(eps; x, y; eps)``,
       ``H(x; y; eps) = H(eps; x, y; eps)``;
    O: ``H(eps; x; eps) = p(x)``, ``H(eps; x; y) = p(xy)``,
       ``H(x; y, z; eps) + H(eps; x, y; z) = p(xyz)``,

    with ``p`` the observed probabilities (0 for strings not in ``probs``), so only strings
    up to length 3 are used. ``H(x; y; z)`` is the entry of row ``<x; z>`` and column
    ``(y)``."""
    d = _alphabet(probs, d)
    sym = range(d)
    outs = [Outside((), ())] + [Outside((x,), ()) for x in sym] + [Outside((), (x,)) for x in sym]
    ins: list[Inside] = [((y,),) for y in sym] + [((y,), (z,)) for y in sym for z in sym]
    var, n_vars = _entry_keys(outs, ins)
    row_left = {x: 1 + x for x in sym}  # <x; eps>
    row_right = {x: 1 + d + x for x in sym}  # <eps; x>
    col_pair = {(y, z): d + y * d + z for y in sym for z in sym}

    def e(row: int, col: int) -> int:
        return int(var[row, col])

    k_pairs = []
    for x in sym:
        for y in sym:
            a = e(row_left[x], y)  # H(x; y; eps)
            b = e(row_right[y], x)  # H(eps; x; y)
            c = e(0, col_pair[x, y])  # H(eps; x, y; eps)
            k_pairs += [(a, b), (b, c), (a, c)]
    kp = np.array(k_pairs)
    K = sp.csr_matrix(
        (np.tile([1.0, -1.0], len(kp)), (np.repeat(np.arange(len(kp)), 2), kp.ravel())),
        shape=(len(kp), n_vars),
    )
    o_rows: list[list[int]] = []
    z: list[float] = []
    seen: list[String] = []
    for x in sym:
        o_rows.append([e(0, x)])
        z.append(probs.get((x,), 0.0))
        seen.append((x,))
    for x in sym:
        for y in sym:
            o_rows.append([e(row_right[y], x)])
            z.append(probs.get((x, y), 0.0))
            seen.append((x, y))
    for x in sym:
        for y in sym:
            for w in sym:
                o_rows.append([e(row_left[x], col_pair[y, w]), e(row_right[w], col_pair[x, y])])
                z.append(probs.get((x, y, w), 0.0))
                seen.append((x, y, w))
    obs = sp.csr_matrix(
        (
            np.ones(sum(map(len, o_rows))),
            (np.repeat(np.arange(len(o_rows)), [len(r) for r in o_rows]), np.concatenate(o_rows)),
        ),
        shape=(len(o_rows), n_vars),
    )
    sizes = ProblemSizes(len(outs), len(ins), len(z), 0, 0, len(kp), var.size - n_vars)
    return CompletionProblem(
        outs,
        ins,
        var,
        K,
        obs,
        np.array(z),
        d,
        np.arange(len(outs)),
        [(y,) for y in sym],
        sizes,
        seen,
    )


# ------------------------------------------------------------------ a WCFG's Hankel


def hankel_values(problem: CompletionProblem, w: WCFG) -> np.ndarray:
    """The variables of ``w``'s true Hankel: every entry is ``gamma(o)^T beta(i)`` with the
    outside vector of a composed context ``gamma(x; z)^T A (beta(x') (x) I)`` (side 1) or
    ``gamma(x; z)^T A (I (x) beta(z'))`` (side 2) and the inside vector of ``(y1, y2)``
    ``A (beta(y1) (x) beta(y2))``. Checks the constraint generation (a true Hankel satisfies
    them all)."""
    beta: dict[String, np.ndarray] = {}

    def b(y: String) -> np.ndarray:
        if y not in beta:
            beta[y] = w.inside(y)
        return beta[y]

    gam = []
    for o in problem.outsides:
        g = w.outside(o.left, o.right)
        if o.side == 1:
            g = np.einsum("i,ijk,j->k", g, w.binary, b(o.sibling))
        elif o.side == 2:
            g = np.einsum("i,ijk,k->j", g, w.binary, b(o.sibling))
        gam.append(g)
    ins = [
        b(t[0]) if len(t) == 1 else w.compose(b(t[0])[None], b(t[1])[None])[0]
        for t in problem.insides
    ]
    H = np.stack(gam) @ np.stack(ins).T
    return problem.variables(H)


# ------------------------------------------------------------------ projection on C


class _Projector:
    """Exact projection, in the Frobenius norm of ``H``, onto
    ``C = {v : K v = 0, ||obs v - z||_2 <= mu}``.

    In ``u = sqrt(c) v`` (``c`` = entries per variable) the norm is Euclidean. An affine
    set ``{A u = b}`` is projected on with one sparse LU of ``A A^T + delta I`` and iterated
    Tikhonov refinement, exact also for a rank-deficient ``A`` ((26) and (27) repeat each
    other on the O1 x I1 entries with ``|y| >= 2``). For ``mu = 0``, ``A = [K~; O~]``. For
    ``mu > 0``, ``A = K~`` (projector ``Pi``) and the observations are handled exactly
    through ``G = O~ Pi O~^T`` (q x q, eigendecomposed once): ``u = Pi u0 - Pi O~^T w``,
    ``w = lambda (I + lambda G)^-1 r0``, ``lambda`` the root of ``||residual|| = mu``
    (least squares if even ``lambda = inf`` leaves more than ``mu``)."""

    def __init__(self, problem: CompletionProblem, mu: float = 0.0, chunk: int = 2**24):
        if mu < 0:
            raise ValueError(f"mu must be >= 0, got {mu}")
        self.mu = float(mu)
        self.scale = np.sqrt(problem.var_count.astype(np.float64))
        inv = sp.diags(1.0 / self.scale)
        Kt = sp.csr_matrix(problem.K @ inv)
        Ot = sp.csr_matrix(problem.obs @ inv)
        self.z = problem.z
        if self.mu == 0:
            self.A = sp.csr_matrix(sp.vstack([Kt, Ot]))
            self.b = np.concatenate([np.zeros(Kt.shape[0]), self.z])
            self.Ot = sp.csr_matrix((0, Kt.shape[1]))
        else:
            self.A, self.b, self.Ot = Kt, np.zeros(Kt.shape[0]), Ot
        self._lu = None
        if self.A.shape[0]:
            M = sp.csc_matrix(self.A @ self.A.T)
            delta = 1e-10 * float(M.diagonal().max())
            self._lu = spla.splu(
                M + delta * sp.identity(M.shape[0], format="csc"),
                permc_spec="MMD_AT_PLUS_A",
                options={"SymmetricMode": True},
            )
        q = self.Ot.shape[0]
        G = np.zeros((q, q))
        OtT = self.Ot.T.tocsc()
        step = max(1, chunk // max(self.A.shape[1], 1))
        for lo in range(0, q, step):
            block = OtT[:, lo : lo + step].toarray()
            G[:, lo : lo + step] = self.Ot @ self._affine(block, np.zeros((len(self.b), 1)))
        g, E = np.linalg.eigh((G + G.T) / 2)
        keep = g > 1e-12 * max(g.max(initial=0.0), 1e-300)
        self.g, self.E = g[keep], E[:, keep]
        self.rounds = 0  # refinement rounds of the last affine projection

    def _affine(self, u: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Orthogonal projection of ``u`` (a vector or columns) onto ``{A u = b}``."""
        if self._lu is None:
            return u
        r = self.A @ u - b
        y = np.zeros_like(r)
        scale = max(np.linalg.norm(r), np.linalg.norm(u), 1e-300)
        rest = r  # A (u - A^T y) - b: what the next round corrects, and the residual
        for k in range(20):
            # One product with A A^T per round serves both the check and the next
            # correction (with two per round the sparse products were a large part of the
            # projections: docs/design-notes.md, Smaller notes).
            y = y + self._lu.solve(rest)
            rest = r - self.A @ (self.A.T @ y)
            res = np.linalg.norm(rest)
            self.rounds = k + 1
            if res <= 1e-14 * scale:
                break
        else:
            warnings.warn(f"affine projection not converged: residual {res:.2e}", stacklevel=2)
        return u - self.A.T @ y

    def __call__(self, v: np.ndarray) -> np.ndarray:
        a = self._affine(v * self.scale, self.b)
        if self.Ot.shape[0]:
            r0 = self.Ot @ a - self.z
            if np.linalg.norm(r0) > self.mu:
                rho = self.E.T @ r0
                lam = self._multiplier(r0, rho)
                factor = 1.0 / self.g if math.isinf(lam) else lam / (1.0 + lam * self.g)
                w = self.Ot.T @ (self.E @ (factor * rho))
                a = a - self._affine(w, np.zeros_like(self.b))
        return a / self.scale

    def _multiplier(self, r0: np.ndarray, rho: np.ndarray) -> float:
        """``lambda`` with ``||r(lambda)|| = mu``; ``inf`` when only least squares fits."""
        if self.mu <= 0:
            return math.inf
        rest = max(float(r0 @ r0 - rho @ rho), 0.0)  # part of r0 no lambda changes
        if rest >= self.mu**2:
            return math.inf

        def excess(t: float) -> float:
            lam = math.exp(t)
            return float(np.sum((rho / (1 + lam * self.g)) ** 2)) + rest - self.mu**2

        hi = 0.0
        while excess(hi) > 0:
            hi += 5.0
        lo = hi - 5.0
        while excess(lo) < 0 and lo > -200:
            lo -= 5.0
        return math.exp(opt.brentq(excess, lo, hi, xtol=1e-12))


# ------------------------------------------------------------------ the optimiser (29)


@dataclass
class Completion:
    """The completed Hankel (``v``: variables, feasible) and the run's history: per step,
    the nuclear norm of the shrunk iterate ``X_k``, its distance to ``C`` (Frobenius) and
    the threshold used."""

    problem: CompletionProblem
    v: np.ndarray
    nuclear: np.ndarray
    distance: np.ndarray
    tau: np.ndarray

    @property
    def H(self) -> np.ndarray:
        return self.problem.matrix(self.v)

    @property
    def objective(self) -> np.ndarray:
        """Per step, ``1/2 dist(X_k, C)^2 + tau_k ||X_k||_*``: the function FISTA lowers
        when ``tau`` is fixed (with ``tau=None`` the threshold moves each step)."""
        return 0.5 * self.distance**2 + self.tau * self.nuclear


def _top_svd(
    Z: np.ndarray, k: int | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leading ``k`` singular triplets (all when ``k`` is None or not much smaller)."""
    small = min(Z.shape)
    if k is None or k + 1 >= small // 2 or small <= 200:
        U, s, Vt = la.svd(Z, full_matrices=False, lapack_driver="gesdd")
        return (U, s, Vt) if k is None else (U[:, :k], s[:k], Vt[:k])
    U, s, Vt = spla.svds(Z, k=k, rng=rng)
    order = np.argsort(s)[::-1]
    return U[:, order], s[order], Vt[order]


def complete(
    problem: CompletionProblem,
    n: int | None,
    *,
    steps: int = 50,
    tau: float | None = None,
    mu: float = 0.0,
    cap: float = 1.0,
    track: bool = True,
    seed: int = 0,
) -> Completion:
    """Solve (29), ``min ||H||_* s.t. ||O vec(H) - z|| <= mu, K vec(H) = 0, ||H||_2 <= 1``,
    as section 5.1 does: FISTA (Beck & Teboulle 2009) on ``1/2 dist(H, C)^2 + tau ||H||_*``
    under ``||H||_2 <= cap``, whose step is a hard projection on the constraints followed
    by the shrinkage of the singular values ``sigma -> min(max(sigma - tau, 0), cap)``,
    keeping the target dimension ``n`` (the top ``n``; ``None``: all).

    ``tau=None`` shrinks by ``sigma_{n+1}`` of the projected point (the threshold "for the
    target dimension" of 5.1; scale-free, needs ``n``); ``tau=0`` is a plain rank-``n``
    projection. The start is the feasible point nearest to 0 (``steps=0`` returns it), and
    the result is the projection on ``C`` of the last iterate, so it is feasible.
    ``track`` records each iterate's distance to ``C`` (one more projection per step);
    ``seed`` drives the sparse SVD (ARPACK) used for the top ``n + 1`` triplets of large
    matrices."""
    if n is None and tau is None:
        raise ValueError("give a target dimension n or a fixed shrinkage tau")
    rng = np.random.default_rng(seed)
    project = problem.projector(mu)

    def proj_matrix(M: np.ndarray) -> np.ndarray:
        return problem.matrix(project(problem.variables(M)))

    X = proj_matrix(np.zeros(problem.shape))
    Y, t = X, 1.0
    nuclear, distance, taus = [], [], []
    k = None if n is None else n + 1
    for _ in range(steps):
        Z = proj_matrix(Y)
        U, s, Vt = _top_svd(Z, k, rng)
        if tau is None:
            thr = float(s[n]) if len(s) > n else 0.0
        else:
            thr = float(tau)
        keep = len(s) if n is None else min(n, len(s))
        shrunk = np.minimum(np.maximum(s[:keep] - thr, 0.0), cap)
        X_new = (U[:, :keep] * shrunk) @ Vt[:keep]
        t_new = (1.0 + math.sqrt(1.0 + 4.0 * t * t)) / 2.0
        Y = X_new + ((t - 1.0) / t_new) * (X_new - X)
        X, t = X_new, t_new
        taus.append(thr)
        nuclear.append(float(shrunk.sum()))
        distance.append(float(np.linalg.norm(X - proj_matrix(X))) if track else math.nan)
    v = project(problem.variables(X))
    return Completion(problem, v, np.array(nuclear), np.array(distance), np.array(taus))


# ------------------------------------------------------------------ spectral step


def completed_blocks(problem: CompletionProblem, v: np.ndarray) -> HankelBlocks:
    """The blocks Lemma 1 reads from completed variables ``v``: ``P`` = the O1 rows
    (root first), ``S`` = the basis insides, ``H_A`` over ``S x S``."""
    col = {t: c for c, t in enumerate(problem.insides)}
    rows = problem.block_rows
    S = problem.block_insides
    single = np.array([col[(x,)] for x in S])
    pair = np.array([[col[(a, b)] for b in S] for a in S])
    H = v[problem.entry_var[np.ix_(rows, single)]]
    H_A = v[problem.entry_var[rows][:, pair]]
    outs = problem.outsides
    P = [(outs[r].left, outs[r].right) for r in rows]
    return HankelBlocks(P, list(S), H, H_A, problem.d)


def unsupervised_problem(
    strings: Iterable[Sequence[int]],
    counts: Iterable[float] | None,
    *,
    basis: str = "simplified",
    n_outsides: int = 6,
    n_insides: int = 14,
    unseen_zero: bool = True,
    d: int | None = None,
) -> CompletionProblem:
    """The completion problem of a sample (section 4): its empirical string statistics
    over ``basis`` (``"simplified"``: section 5.1, strings up to length 3; ``"closed"``: the
    closed basis of 5.3 with ``n_outsides`` contexts counting ``<eps; eps>`` and
    ``n_insides`` insides counting the ``d`` symbols). It does not depend on the number of
    states: build it once and call ``learn_from_problem`` for each (building was about half
    of each fit of a state search: docs/design-notes.md, Smaller notes)."""
    probs = string_probabilities(strings, counts)
    if basis == "simplified":
        return simplified_problem(probs, d)
    if basis == "closed":
        return closed_problem(probs, n_outsides, n_insides, d=d, unseen_zero=unseen_zero)
    raise ValueError(f"unknown basis {basis!r}: 'simplified' or 'closed'")


def learn_from_problem(
    problem: CompletionProblem,
    n: int,
    *,
    steps: int = 50,
    tau: float | None = None,
    mu: float = 0.0,
    seed: int = 0,
) -> WCFG:
    """A WCFG with ``n`` states from a completion problem: the optimiser (29) (``steps``,
    ``tau``, ``mu``, ``seed``: see ``complete``), then Lemma 1 on the completed blocks
    (``ValueError`` if their rank is below ``n``)."""
    done = complete(problem, n, steps=steps, tau=tau, mu=mu, track=False, seed=seed)
    return from_hankel(completed_blocks(problem, done.v), n)


def learn_unsupervised(
    strings: Iterable[Sequence[int]],
    counts: Iterable[float] | None,
    n: int,
    *,
    basis: str = "simplified",
    n_outsides: int = 6,
    n_insides: int = 14,
    unseen_zero: bool = True,
    d: int | None = None,
    steps: int = 50,
    tau: float | None = None,
    mu: float = 0.0,
    seed: int = 0,
) -> WCFG:
    """A WCFG with ``n`` states learned from strings alone (section 4):
    ``unsupervised_problem`` then ``learn_from_problem``."""
    problem = unsupervised_problem(
        strings,
        counts,
        basis=basis,
        n_outsides=n_outsides,
        n_insides=n_insides,
        unseen_zero=unseen_zero,
        d=d,
    )
    return learn_from_problem(problem, n, steps=steps, tau=tau, mu=mu, seed=seed)
