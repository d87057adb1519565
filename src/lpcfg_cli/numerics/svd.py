"""Truncated SVD of sparse cross-covariance matrices, guarded against spurious directions.

The spectral estimator inverts the singular values it keeps (``z = diag(1/s) V^T psi``), so a
tiny singular value that is numerical noise (``scipy.sparse.linalg.svds`` returns such values
when asked for more directions than the matrix's rank) multiplies noise by a huge factor and
wrecks the model. ``truncated_svd`` therefore keeps a direction only if its singular value
is above an absolute floor *and* a relative floor, and it is exact for the directions it keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

DENSE_LIMIT = 250_000  # matrices with at most this many entries use a dense SVD


@dataclass
class SVD:
    """``omega ~ u @ diag(s) @ v.T`` with ``k`` kept directions (``s`` descending)."""

    u: np.ndarray  # (d, k)
    s: np.ndarray  # (k,)
    v: np.ndarray  # (d', k)

    @property
    def k(self) -> int:
        return len(self.s)


def truncated_svd(
    omega: sp.spmatrix | np.ndarray,
    k: int,
    *,
    min_value: float = 0.01,
    rel_value: float = 1e-7,
    oversample: int = 16,
    power: int = 4,
    seed: int = 0,
) -> SVD:
    """The top ``<= k`` singular triplets of ``omega`` whose values pass both floors.

    A singular value ``s_i`` is kept if ``s_i > min_value`` and ``s_i > rel_value * s_1``
    (at least one direction is kept when ``s_1 > 0``). Small matrices get an exact dense SVD;
    large ones a randomized range finder (Halko, Martinsson & Tropp 2011) with ``power``
    subspace iterations, seeded, followed by an exact SVD of the projected matrix, so
    ``u.T @ omega @ v == diag(s)`` holds to rounding either way.
    """
    d1, d2 = omega.shape
    if k < 1 or d1 == 0 or d2 == 0:
        return SVD(np.zeros((d1, 0)), np.zeros(0), np.zeros((d2, 0)))
    if d1 * d2 <= DENSE_LIMIT or min(d1, d2) <= k + oversample:
        dense = omega.toarray() if sp.issparse(omega) else np.asarray(omega, dtype=float)
        u, s, vt = np.linalg.svd(dense, full_matrices=False)
    else:
        u, s, vt = _randomized(sp.csr_matrix(omega), k + oversample, power, seed)
    keep = min(k, len(s))
    if keep and s[0] > 0:
        ok = (s[:keep] > min_value) & (s[:keep] > rel_value * s[0])  # a prefix: s descends
        keep = max(1, int(ok.sum()))
    else:
        keep = 0
    return SVD(u[:, :keep].copy(), s[:keep].copy(), vt[:keep].T.copy())


def _randomized(
    omega: sp.csr_matrix, width: int, power: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    omega_t = omega.T.tocsr()
    q = np.linalg.qr(omega @ rng.standard_normal((omega.shape[1], width)))[0]
    for _ in range(power):
        q = np.linalg.qr(omega_t @ q)[0]
        q = np.linalg.qr(omega @ q)[0]
    b = (omega_t @ q).T  # (width, d2) = q.T @ omega
    ub, s, vt = np.linalg.svd(b, full_matrices=False)
    return q @ ub, s, vt
