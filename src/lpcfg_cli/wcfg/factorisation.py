"""The WCFG read off a rank factorisation of a Hankel block, and supervised spectral learning
(Bailly et al. 2013, Lemma 1 and section 3.2).

``from_hankel`` is the spectral step shared by both learners: the supervised one below
estimates the blocks from bracketed samples, the unsupervised one (``completion``) from
strings by low-rank completion.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lpcfg_cli.wcfg.algebraic import WCFG
from lpcfg_cli.wcfg.hankel import Basis, Bracketed, HankelBlocks, empirical_blocks, select_basis


def numerical_rank(H: np.ndarray, tol: float | None = None) -> int:
    """The rank of ``H``: its singular values above ``tol`` (default numpy's
    ``matrix_rank`` threshold, ``sigma_max * max(p, s) * eps``)."""
    return _rank(np.linalg.svd(H, compute_uv=False), H.shape, tol)


def _rank(sv: np.ndarray, shape: tuple[int, ...], tol: float | None) -> int:
    if tol is None:
        tol = (sv[0] if len(sv) else 0.0) * max(shape) * np.finfo(np.float64).eps
    return int((sv > tol).sum())


def from_hankel(blocks: HankelBlocks, n: int, tol: float | None = None) -> WCFG:
    """The WCFG of Lemma 1 for the rank-``n`` truncated SVD of ``H_B`` (section 3.2 steps
    3-5): ``H_B ~ P S`` with ``P = U_n Sigma_n``, ``S = V_n^T``, then

        alpha_star^T = h_star^T S^+          (eq. 21)
        beta_sigma   = P^+ h_sigma           (eq. 22)
        A            = P^+ H_A (S (x) S)^+   (eq. 23), with (S (x) S)^+ = S^+ (x) S^+,

    where ``S^+ = V_n`` and ``P^+ = Sigma_n^-1 U_n^T``. ``H_A``'s column ``(y1, y2)`` is
    ``P A (beta(y1) (x) beta(y2))`` (eq. 20), so ``A[i, j, k] = sum_{o, a, b} P^+[i, o]
    H_A[o, a, b] S^+[a, j] S^+[b, k]``: ``j`` is the left child as in ``wcfg.algebraic.WCFG``.
    ``ValueError`` when ``n`` exceeds the rank of ``H_B`` (singular values above ``tol``,
    see ``numerical_rank``): the factorisation would not exist.
    """
    if n < 1:
        raise ValueError(f"a WCFG needs at least one state, got n = {n}")
    H = np.asarray(blocks.H, dtype=np.float64)
    U, sv, Vt = np.linalg.svd(H, full_matrices=False)
    rank = _rank(sv, H.shape, tol)
    if n > rank:
        raise ValueError(
            f"n = {n} states exceed the rank {rank} of the Hankel block H_B "
            f"({H.shape[0]} x {H.shape[1]}): choose n <= {rank} or a larger basis"
        )
    p_pinv = U[:, :n].T / sv[:n, None]  # (n, p) = Sigma_n^-1 U_n^T
    s_pinv = Vt[:n].T  # (s, n) = V_n
    start = blocks.h_star @ s_pinv
    terminals = blocks.h_sigma @ p_pinv.T  # (d, n): row sigma is P^+ h_sigma
    right = np.tensordot(np.asarray(blocks.H_A, dtype=np.float64), s_pinv, axes=(2, 0))
    left = np.tensordot(p_pinv, right, axes=(1, 0))  # (n, s, n): [i, a, k]
    binary = np.einsum("iak,aj->ijk", left, s_pinv)
    return WCFG(start, terminals, binary)


def learn_supervised(
    samples: Sequence[Bracketed],
    n: int,
    basis: Basis | None = None,
    *,
    d: int | None = None,
    factor: float | None = None,
    n_insides: int | None = None,
    n_outsides: int | None = None,
    weights: Sequence[float] | None = None,
) -> WCFG:
    """The supervised spectral WCFG of section 3.2 from bracketed samples: a basis (given,
    or the most frequent observed insides and contexts, ``hankel.select_basis`` with
    ``factor`` or ``n_insides``/``n_outsides``), the empirical blocks, then ``from_hankel``
    with ``n`` states. ``d`` (the alphabet size) defaults to the largest symbol seen + 1."""
    samples = list(samples)
    if not samples:
        raise ValueError("no samples to learn from")
    if d is None:
        d = 1 + max(max(s.words) for s in samples)
    if basis is not None and (factor, n_insides, n_outsides) != (None, None, None):
        raise ValueError("give either a basis or the options that select one, not both")
    if basis is None:
        basis = select_basis(
            samples, d, factor=factor, n_insides=n_insides, n_outsides=n_outsides, weights=weights
        )
    return from_hankel(empirical_blocks(samples, basis, d, weights), n)
