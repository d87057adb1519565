"""Jacobians of observed moments by the complex step, and the numerical rank decision.

CHECKIDENTIFIABILITY (Hsu et al. 2012, section 4.2) needs the Jacobian ``J`` of the moment
map ``mu(theta)`` at a random point. Every moment is a polynomial in ``theta`` (rational
for DEP-IES), so the complex step ``J e_j = Im mu(theta + i h e_j) / h`` is exact to
rounding for any tiny ``h``: no difference is taken, so unlike finite differences there is
no cancellation, and the rank decision sees rounding-level zeros (about 1e-16 of the
largest singular value) where the Jacobian is singular. The ``n`` perturbed points run as
one batch through the moments' dynamic programs (the paper adapts the E-step's programs to
gradients; one batched pass of the same programs gives all columns here), in chunks that
bound memory.

Rank: the columns are scaled to unit norm (rank is unchanged; parameters of different
scales no longer hide one another), then the singular values ``s`` of ``J`` are computed
and every one above ``tolerance * s[0]`` counts. The verdict reports the gap at the cut,
``s[r - 1] / s[r]``. Over the checks of the paper's whole Figure 2 grid (d in 2..8, k in
2..d, L in 2..9) the values counted as zero and the kept ones lie far apart, and the
default tolerance, 1e-12, sits near the middle of that gap in log scale (the extremes:
docs/learners/unmixing.md, The identifiability checker). A verdict is reported uncertain
when the gap is under 1e3 or a singular value lies within 10x of the cut on either side.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import NamedTuple

import numpy as np

from lpcfg_cli.topology_models import families, moments
from lpcfg_cli.topology_models.observations import Block, apply

STEP = 1e-30  # complex step: any tiny value is exact; this keeps h^2 terms far below 1e-16
TOLERANCE = 1e-12  # singular values below this fraction of the largest count as zero
UNCERTAIN_GAP = 1e3
NEAR_CUT = 10.0  # a singular value this close to the cut makes the verdict uncertain
# Complex entries of all memoised span tables of one chunk of perturbed points (512 MB).
# The memo holds about 4 * sum_l C(l, r) tables with r marks for a dependency model: for
# phi*** of 9 words over d = 8, 250 tables of d^2 * d^3 entries a point. Chunks are sized
# by the whole memo, not by one table: one batch of all the points of a large check did not
# fit in memory (docs/design-notes.md, Smaller notes).
MEMO_ENTRIES = 1 << 25


class MomentMap(NamedTuple):
    """The map from a model's parameters ``theta`` to its observed moments: the model
    ``family`` over ``d`` words with ``k`` states (None: the family's own), sentences of
    ``length`` words, the observed ``blocks`` and their random projection ``eta``."""

    family: str
    d: int
    k: int | None
    length: int
    blocks: list[Block]
    eta: np.ndarray


def moment_rows(mm: MomentMap, theta: np.ndarray) -> np.ndarray:
    """The observed moments ``mu(theta)`` (..., m) of ``blocks``, batch axes of ``theta``."""
    params = families.unpack(mm.family, theta, mm.d, mm.k)
    dp = moments.tables(params)
    parts = [
        apply(b, moments.moment(params, mm.length, b.positions, dp), mm.eta) for b in mm.blocks
    ]
    return np.concatenate(parts, axis=-1)


def jacobian(mm: MomentMap, theta: np.ndarray) -> np.ndarray:
    """``J = d mu / d theta`` (m, n) at ``theta`` by the complex step, ``n`` points batched."""
    n, d = len(theta), mm.d
    states = d if mm.family in families.DEPENDENCY else mm.k
    widest = max(len(b.positions) for b in mm.blocks)
    n_tables = 4 * sum(comb(span, widest) for span in range(1, mm.length + 1))
    per_point = states * states * d**widest * n_tables
    chunk = max(1, min(n, MEMO_ENTRIES // per_point))
    cols = []
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        points = np.tile(theta.astype(complex), (hi - lo, 1))
        points[np.arange(hi - lo), np.arange(lo, hi)] += 1j * STEP
        rows = moment_rows(mm, points)
        cols.append(rows.imag / STEP)
    return np.concatenate(cols, axis=0).T


@dataclass(frozen=True)
class Rank:
    """The numerical rank of a Jacobian and how clear the decision was."""

    rank: int
    columns: int
    singular_values: np.ndarray  # of the column-scaled Jacobian, descending
    tolerance: float

    @property
    def gap(self) -> float:
        """``s[r - 1] / s[r]`` at the cut (inf when nothing or everything was cut)."""
        s = self.singular_values
        if self.rank == 0 or self.rank >= len(s) or s[self.rank] == 0:
            return float("inf")
        return float(s[self.rank - 1] / s[self.rank])

    @property
    def smallest_kept(self) -> float:
        s = self.singular_values
        return float(s[self.rank - 1] / s[0]) if self.rank else 0.0

    @property
    def largest_dropped(self) -> float:
        s = self.singular_values
        return float(s[self.rank] / s[0]) if self.rank < len(s) and s[0] else 0.0

    @property
    def uncertain(self) -> bool:
        """A small gap, or a kept or dropped value within ``NEAR_CUT`` of the cut."""
        near = self.rank and self.smallest_kept < NEAR_CUT * self.tolerance
        return bool(
            self.gap < UNCERTAIN_GAP or near or self.largest_dropped * NEAR_CUT > self.tolerance
        )


def numerical_rank(j: np.ndarray, tolerance: float = TOLERANCE) -> Rank:
    """Rank of ``j`` (m, n) after scaling its columns to unit norm (module docstring)."""
    norms = np.linalg.norm(j, axis=0)
    scaled = j / np.where(norms > 0, norms, 1.0)
    if scaled.shape[0] > 4 * scaled.shape[1]:  # tall: the same singular values from R
        scaled = np.linalg.qr(scaled, mode="r")
    s = np.linalg.svd(scaled, compute_uv=False)
    s = np.concatenate([s, np.zeros(j.shape[1] - len(s))])
    rank = int(np.sum(s > tolerance * s[0])) if len(s) and s[0] > 0 else 0
    return Rank(rank, j.shape[1], s, tolerance)
