"""The PCFG-IE mixing matrix of Hsu, Kakade & Liang (2012), section 5.1 eq. (4) and 5.2.

Observed moments: for a sentence length ``L``, three positions ``p1 < p2 < p3`` and one of
them "sliced" by a vector ``eta``, the ``d x d`` matrix ``E[x_row (x) x_col (eta^T x_slice)]``
whose row and column are the other two positions in position order (section 5.2's
``mu123eta``, ``mu132eta``, ``mu231eta`` for ``L = 3``). One such (L, positions, slice) is a
row of the mixing matrix ``M``.

Compound parameters (the paper's Appendix C.2 is not in the text; this design is ours).
Under PCFG-IE (``B = T (x)_C T``) the two children of a node are independent draws from the
same column of ``T``, so given a topology the words at three leaves form a latent tree with
``T`` on every edge and ``O`` at the leaves; left and right do not matter. The three leaves'
induced subtree has a root-LCA ``u`` at depth ``delta0`` below the root, a "cherry" of two
leaves whose LCA ``v`` is ``delta1 >= 1`` below ``u``, and a lone leaf ``delta_lone >= 1``
below ``u``; the cherry leaves are ``delta >= 1`` below ``v``. The conditional moment is

    sum_{u, v} (T^delta0 pi)_u (O T^delta_lone e_u) (x) (T^delta1)_{v u}
               (O T^delta_a e_v) (x) (O T^delta_b e_v)

arranged by the leaves' roles (row, column, slice), so it depends only on ``Key``: the lone
leaf's role, ``delta0``, ``delta1``, ``delta_lone`` and the unordered pair of the cherry
leaves' (role, delta). Section 5.2's three parameters are the ``L = 3`` keys with every
delta 1 and ``delta0 = 0``: ``Psi1`` (lone = slice), ``Psi2`` (lone = row), ``Psi3`` (lone =
column).

Column count. For ``L_max = 10`` this key gives ``N_COLUMNS_10 = 2376`` columns for the 990
rows: the paper's 990 x 2376 (section 5.2), so this is presumably its definition too. It is
exact (equal keys give the same matrix for every model; the tests check ``M @ Psi == mu``
against ``moments.moment``) and no coarser key is: for a random d = 4, k = 3 model the 2376
matrices all differ (smallest distance 4e-5). A finer key (which cherry leaf comes first in
the sentence, left from right children, as PCFG-I with ``T1 != T2`` needs) would split
columns. ``M`` has rank 974 < 990 for ``L_max = 10`` (14 of 15 for ``L_max = 4``), but the
16-dimensional null space of ``M^T`` has no ``L = 3`` component, and ``pinv(M)``'s Psi2 row
is ``mu123 + mu132 - mu231`` of the ``L = 3`` rows alone (see ``unmix``).

``M[row, key]`` is the fraction of the ``Catalan(L - 1)`` bracketings whose induced
signature for that row is ``key``, counted by a dynamic program over spans memoised on
(span length, marked offsets and their labels) that returns a Counter of partial signatures
(below); ``L_max = 10`` takes about a second.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import combinations
from typing import NamedTuple

import numpy as np

from lpcfg_cli.topology_models.families import Constituency
from lpcfg_cli.topology_models.moments import catalan

ROW, COL, SLICE = 0, 1, 2
ROLE_NAMES = ("row", "col", "slice")
N_COLUMNS_10 = 2376  # len(keys(10)), checked by the tests


class Key(NamedTuple):
    """A compound parameter (see the module docstring); deltas count tree edges."""

    lone: int  # role of the lone leaf: ROW, COL or SLICE
    delta0: int  # root -> u
    delta1: int  # u -> v (cherry LCA)
    delta_lone: int  # u -> lone leaf
    cherry: tuple[tuple[int, int], tuple[int, int]]  # sorted ((role, delta below v), ...)

    def label(self) -> str:
        (ra, da), (rb, db) = self.cherry
        return (
            f"lone={ROLE_NAMES[self.lone]}:{self.delta_lone} d0={self.delta0} "
            f"d1={self.delta1} cherry={ROLE_NAMES[ra]}:{da},{ROLE_NAMES[rb]}:{db}"
        )


PSI1 = Key(SLICE, 0, 1, 1, ((ROW, 1), (COL, 1)))
PSI2 = Key(ROW, 0, 1, 1, ((COL, 1), (SLICE, 1)))
PSI3 = Key(COL, 0, 1, 1, ((ROW, 1), (SLICE, 1)))


class Row(NamedTuple):
    """An observed moment: ``E[x_row (x) x_col (eta^T x_slice)]`` over length-``length``
    sentences; ``positions`` 0-based increasing, ``sliced`` an index into them."""

    length: int
    positions: tuple[int, int, int]
    sliced: int

    def roles(self) -> tuple[int, int, int]:
        """The role of each position in order: the unsliced ones are row then column."""
        out, free = [], iter((ROW, COL))
        for i in range(3):
            out.append(SLICE if i == self.sliced else next(free))
        return tuple(out)  # type: ignore[return-value]


def rows(length_max: int, length_min: int = 3) -> list[Row]:
    """Mixing-matrix rows in order: by length, then positions (lexicographic), then the
    sliced position; ``3 * sum_L C(L, 3)`` of them (990 for ``L_max = 10``)."""
    return [
        Row(n, pos, s)
        for n in range(length_min, length_max + 1)
        for pos in combinations(range(n), 3)
        for s in range(3)
    ]


# Partial signatures of a span's marked leaves, seen from the span's root:
#   1 mark:  (role, depth)
#   2 marks: (lca depth, sorted ((role, depth below lca), ...))
#   3 marks: Key (delta0 = depth of u below the span root)
# A span without marks has the signature None.


def _deepen(sig, n_marks: int):
    """The signature one edge further down (a parent added above the span's root)."""
    if n_marks == 1:
        return (sig[0], sig[1] + 1)
    if n_marks == 2:
        return (sig[0] + 1, sig[1])
    if n_marks == 3:  # a Key as a plain tuple (NamedTuple._replace is slow here)
        return (sig[0], sig[1] + 1, *sig[2:])
    return None


def _join(left, n_left: int, right, n_right: int):
    """Signature of a node whose children have these signatures (each one edge below)."""
    if n_left == 0 or n_right == 0:
        return _deepen(left if n_right == 0 else right, n_left + n_right)
    if n_left == 1 and n_right == 1:
        return (0, tuple(sorted([(left[0], left[1] + 1), (right[0], right[1] + 1)])))
    one, two = (left, right) if n_left == 1 else (right, left)
    # the lone leaf and a cherry meet here: u is this node (delta0 = 0)
    return (one[0], 0, two[0] + 1, one[1] + 1, two[1])


@cache
def _signatures(length: int, marks: tuple[tuple[int, int], ...]) -> Counter:
    """Counter {signature: number of bracketings} of a span of ``length`` leaves whose
    leaves at the given offsets carry the given roles: ``marks = ((offset, role), ...)``."""
    if not marks:
        return Counter({None: catalan(length - 1)})
    if length == 1:
        return Counter({(marks[0][1], 0): 1})
    out: Counter = Counter()
    n = len(marks)
    for m in range(1, length):
        lm = tuple((q, r) for q, r in marks if q < m)
        rm = tuple((q - m, r) for q, r in marks if q >= m)
        left, right = _signatures(m, lm), _signatures(length - m, rm)
        for ls, lc in left.items():
            for rs, rc in right.items():
                out[_join(ls, len(lm), rs, n - len(lm))] += lc * rc
    return out


def _relabel(key: tuple, roles: tuple[int, int, int]) -> tuple:
    """A 3-mark signature of leaves labelled 0, 1, 2 (position order), leaf ``i`` given
    role ``roles[i]``."""
    lone, delta0, delta1, delta_lone, ((a, da), (b, db)) = key
    ca, cb = (roles[a], da), (roles[b], db)
    return (roles[lone], delta0, delta1, delta_lone, (ca, cb) if ca < cb else (cb, ca))


def _row_counts(row: Row) -> Counter:
    """``row_signatures`` with plain tuples. The bracketings' shapes do not depend on
    which leaf is sliced: they are counted once per triple of positions (leaves labelled
    by position order) and relabelled."""
    by_position = _signatures(row.length, tuple((q, i) for i, q in enumerate(row.positions)))
    roles = row.roles()
    return Counter({_relabel(k, roles): n for k, n in by_position.items()})


def row_signatures(row: Row) -> Counter:
    """Counter {Key: number of bracketings of ``row.length`` leaves giving it}."""
    return Counter({Key(*k): n for k, n in _row_counts(row).items()})


@cache
def _matrix(length_max: int) -> tuple[tuple[Row, ...], tuple[Key, ...], np.ndarray]:
    rs = rows(length_max)
    counts = [_row_counts(r) for r in rs]
    ks = sorted({k for c in counts for k in c})
    index = {k: i for i, k in enumerate(ks)}
    ks = [Key(*k) for k in ks]
    m = np.zeros((len(rs), len(ks)))
    for i, (r, c) in enumerate(zip(rs, counts, strict=True)):
        total = catalan(r.length - 1)
        for k, n in c.items():
            m[i, index[k]] = n / total
    m.setflags(write=False)
    return tuple(rs), tuple(ks), m


def mixing_matrix(length_max: int) -> tuple[list[Row], list[Key], np.ndarray]:
    """``(rows, keys, M)`` for lengths ``3..length_max`` (eq. 4): ``M[i, j]`` is the
    probability that a uniform topology gives row ``i``'s moment compound parameter
    ``keys[j]``. Memoised; ``M`` is read-only."""
    if length_max < 3:
        raise ValueError(f"the mixing matrix needs length_max >= 3, not {length_max}")
    rs, ks, m = _matrix(length_max)
    return list(rs), list(ks), m


def keys(length_max: int) -> list[Key]:
    """The compound parameters (columns) of ``mixing_matrix(length_max)``."""
    return mixing_matrix(length_max)[1]


def _powers(t: np.ndarray, top: int) -> list[np.ndarray]:
    out = [np.eye(t.shape[0])]
    for _ in range(top):
        out.append(t @ out[-1])
    return out


def compound_parameters(params: Constituency, ks: list[Key], eta: np.ndarray) -> np.ndarray:
    """The exact ``Psi_key;eta`` (``(len(ks), d, d)``, row role x column role) of a PCFG-IE
    model: the formula of the module docstring, the slice role contracted with ``eta``."""
    t, o, pi = np.asarray(params.t1), np.asarray(params.o), np.asarray(params.pi)
    top = max(max(k.delta0, k.delta1, k.delta_lone, *(d for _, d in k.cherry)) for k in ks)
    tp = _powers(t, top)
    words = [o @ p for p in tp]  # words[delta][w, s] = P(word w, delta edges below s)
    out = np.empty((len(ks), o.shape[0], o.shape[0]))
    for i, k in enumerate(ks):
        (ra, da), (rb, db) = k.cherry
        q = tp[k.delta0] @ pi  # state of u
        # joint over (lone word, cherry word a, cherry word b)
        cherry = np.einsum("vu,av,bv->uab", tp[k.delta1], words[da], words[db])
        joint = np.einsum("u,lu,uab->lab", q, words[k.delta_lone], cherry)
        by_role = np.moveaxis(joint, (0, 1, 2), (k.lone, ra, rb))  # axes (row, col, slice)
        out[i] = by_role @ eta
    return out
