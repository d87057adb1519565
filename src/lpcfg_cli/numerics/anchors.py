"""Separable non-negative matrix decomposition: the steps of section 5.2 of Cohen & Collins
(2014) after Arora et al. (2013), shared by the pivot L-PCFG learner and the pivot language
model (``lm.aggregate``).

For ``Q[f, g] = sum_h p(h) p(f | h) p(g | h)`` with an anchor ("pivot") row ``f`` per state
(``p(h | f) = 1``): every ``v_f = E[phi(g) | f]`` is a convex combination
``sum_h p(h | f) w_h`` of one vertex per state, and the anchors sit on the vertices.
``cca_vectors`` gives ``v_f`` with the CCA representation ``phi`` (rank ``k``),
``fast_anchor_words`` finds the vertices, ``simplex_weights`` (Frank-Wolfe) the convex
weights ``q(h | f)`` of every row.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.numerics.svd import truncated_svd


def cca_vectors(
    omega: sp.spmatrix,
    p_in: np.ndarray,
    p_out: np.ndarray,
    k: int,
    min_singular: float,
    seed: int,
    ridge: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(v_in, v_out)``: ``v_f = E[phi(g) | f]`` for the rows and, symmetrically,
    ``E[phi(f) | g]`` for the columns of ``omega`` (joint probabilities with marginals
    ``p_in``, ``p_out``), where ``phi`` is the CCA projection of rank ``<= k`` (directions
    whose scaled singular value is below ``min_singular`` are dropped).

    ``ridge`` > 0 gives ridge-regularised CCA (Vinod 1976): the one-hot features'
    covariances ``diag(p)`` become ``diag(p + ridge)`` before the scaling. Without it a pair
    of rare words that always occur together (a collocation) has a canonical correlation of
    nearly one, so on a large sparse matrix the top ``k`` directions are such pairs, with
    singular values too close to separate (Brown bigrams: the top 256 all 0.996-1.0, so the
    randomized SVD's seed chose them) and no weight on the frequent words whose vectors the
    anchors are picked from. ``v_f`` stays ``E[phi(g) | f]`` for the ridge's ``phi``, so the
    convex-combination structure the anchors rely on holds for any ``ridge``.
    """
    a, b = p_in + ridge, p_out + ridge
    scaled = sp.diags(1 / np.sqrt(a)) @ omega @ sp.diags(1 / np.sqrt(b))
    svd = truncated_svd(scaled, k, min_value=min_singular, seed=seed)
    # E[phi(g) | f] = (1 / p_f) sum_g omega[f, g] v_g / sqrt(b_g) = u_f s sqrt(a_f) / p_f.
    v_in = svd.u * svd.s * (np.sqrt(a) / p_in)[:, None]
    v_out = svd.v * svd.s * (np.sqrt(b) / p_out)[:, None]
    return v_in, v_out


def anchor_posteriors(
    vectors: np.ndarray, counts: np.ndarray, k: int, min_count: float, iterations: int
) -> np.ndarray:
    """``q(h | f)`` ``(d, k)``: ``k`` anchors among the rows seen at least ``min_count`` times
    (rare rows are too noisy to be vertices; the ``k`` most frequent if too few are), then
    every row's convex weights over them."""
    candidates = np.flatnonzero(counts >= min_count)
    if len(candidates) < k:
        candidates = np.argsort(-counts)[: max(k, 1)]
    anchors = candidates[fast_anchor_words(vectors[candidates], k)]
    return simplex_weights(vectors[anchors], vectors, iterations)


def fast_anchor_words(points: np.ndarray, k: int) -> np.ndarray:
    """Indices of ``k`` rows of ``points`` picked greedily as far as possible from the affine
    span of those already picked (FastAnchorWords, Arora et al. 2013)."""
    n = len(points)
    k = min(k, n)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    first = int(np.argmax(((points - points.mean(axis=0)) ** 2).sum(axis=1)))
    picked = [first]
    resid = points - points[first]
    for _ in range(k - 1):
        norms = (resid**2).sum(axis=1)
        nxt = int(np.argmax(norms))
        if norms[nxt] <= 1e-24:
            break
        direction = resid[nxt] / np.sqrt(norms[nxt])
        resid = resid - np.outer(resid @ direction, direction)
        picked.append(nxt)
    return np.array(picked, dtype=np.int64)


def simplex_weights(anchors: np.ndarray, points: np.ndarray, iterations: int) -> np.ndarray:
    """``argmin_g ||g @ anchors - p||^2`` over the simplex, for every row ``p`` of ``points``,
    by Frank-Wolfe with exact line search (vectorised over the rows)."""
    n, k = len(points), len(anchors)
    gram = anchors @ anchors.T  # (k, k)
    target = points @ anchors.T  # (n, k)
    # Start at the nearest anchor: exact for pivot features, a good start for the rest.
    dist = (anchors**2).sum(1)[None, :] - 2 * target
    gamma = np.zeros((n, k))
    gamma[np.arange(n), dist.argmin(axis=1)] = 1.0
    rows = np.arange(n)
    diag = np.diag(gram)
    for _ in range(iterations):
        gg = gamma @ gram
        grad = gg - target  # half the gradient
        vertex = grad.argmin(axis=1)
        # Direction d = e_vertex - gamma: <grad, d> and d' G d without forming d.
        num = (grad * gamma).sum(axis=1) - grad[rows, vertex]
        den = diag[vertex] - 2 * gg[rows, vertex] + (gg * gamma).sum(axis=1)
        step = np.clip(np.divide(num, den, out=np.zeros(n), where=den > 1e-30), 0.0, 1.0)
        if step.max(initial=0.0) < 1e-6:
            break
        gamma *= (1 - step)[:, None]
        gamma[rows, vertex] += step
    np.clip(gamma, 0.0, None, out=gamma)
    return gamma / np.maximum(gamma.sum(axis=1, keepdims=True), 1e-300)
