"""The coarse pass: inside-outside of the treebank PCFG over the full chart of a sentence.

Its posteriors decide which items the latent pass may use (coarse-to-fine pruning). The cost
grows with the rules that can apply, not with the square of the number of symbols: for every
split, only the symbols present in the left child's span are visited, and for each of them only
its rules (``CoarseGrammar`` indexes the rules by left child). A grammar of thousands of
symbols (other treebanks, markovized or parent-annotated binarizations) stays fast. Scaling
follows ``engine.scaling`` in double precision, one sentence at a time (its chart is
``spans x symbols``), compiled with numba.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from lpcfg_cli.engine.grammars import CoarseGrammar
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.scaling import normalise_span, split_weight


@nb.njit(cache=True, nogil=True)
def _local(n: int, i: int, length: int) -> int:
    """Id of span ``[i, i + length)`` of an ``n``-word sentence (length-major)."""
    return (length - 1) * n - (length - 1) * (length - 2) // 2 + i


@nb.njit(cache=True, nogil=True)
def _active(row: np.ndarray, out: np.ndarray) -> int:
    k = 0
    for a in range(len(row)):
        if row[a] != 0.0:
            out[k] = a
            k += 1
    return k


@nb.njit(cache=True, nogil=True)
def sentence_posteriors(lex, root, left_ptr, pair_right, pair_ptr, parent, prob):  # noqa: ANN001
    """Posterior of every (span, symbol) of one sentence; ``lex`` is ``(n, N)``.

    Returns ``(mu (spans, N) in local span order, log Z)`` (``-inf`` and zeros without a
    parse).
    """
    n, n_sym = lex.shape
    n_spans = n * (n + 1) // 2
    alpha = np.zeros((n_spans, n_sym))
    sc = np.full(n_spans, -np.inf)
    act = np.zeros((n_spans, n_sym), dtype=np.int32)
    n_act = np.zeros(n_spans, dtype=np.int64)
    for i in range(n):
        s = _local(n, i, 1)
        alpha[s] = lex[i]
        sc[s] = normalise_span(alpha, s, s + 1, 0.0)
        if sc[s] > -np.inf:
            n_act[s] = _active(alpha[s], act[s])
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            s = _local(n, i, length)
            top = -np.inf
            for k in range(1, length):
                top = max(top, sc[_local(n, i, k)] + sc[_local(n, i + k, length - k)])
            if top == -np.inf:
                continue
            acc = alpha[s]
            for k in range(1, length):
                ls, rs = _local(n, i, k), _local(n, i + k, length - k)
                w = split_weight(sc[ls] + sc[rs], top)
                if w == 0.0:
                    continue
                al, ar = alpha[ls], alpha[rs]
                for t in range(n_act[ls]):
                    b = act[ls, t]
                    vb = w * al[b]
                    for q in range(left_ptr[b], left_ptr[b + 1]):
                        vc = ar[pair_right[q]]
                        if vc == 0.0:
                            continue
                        x = vb * vc
                        for r in range(pair_ptr[q], pair_ptr[q + 1]):
                            acc[parent[r]] += prob[r] * x
            scale = normalise_span(alpha, s, s + 1, 0.0)
            if scale > -np.inf:
                sc[s] = top + scale
                n_act[s] = _active(acc, act[s])
    beta = np.zeros((n_spans, n_sym))
    whole = _local(n, 0, n)
    z = 0.0
    for a in range(n_sym):
        z += alpha[whole, a] * root[a]
    if z <= 0.0 or sc[whole] == -np.inf:
        return np.zeros((n_spans, n_sym)), -np.inf
    beta[whole] = root / z
    for length in range(n, 1, -1):
        for i in range(n - length + 1):
            s = _local(n, i, length)
            bp = beta[s]
            for k in range(1, length):
                ls, rs = _local(n, i, k), _local(n, i + k, length - k)
                w = split_weight(sc[ls] + sc[rs], sc[s])
                if w == 0.0:
                    continue
                al, ar = alpha[ls], alpha[rs]
                bl, br = beta[ls], beta[rs]
                for t in range(n_act[ls]):
                    b = act[ls, t]
                    vb = al[b]
                    accl = 0.0
                    for q in range(left_ptr[b], left_ptr[b + 1]):
                        c = pair_right[q]
                        vc = ar[c]
                        if vc == 0.0:
                            continue  # exact: then no rule a -> b c adds to any posterior
                        x = 0.0
                        for r in range(pair_ptr[q], pair_ptr[q + 1]):
                            x += prob[r] * bp[parent[r]]
                        x *= w
                        accl += x * vc
                        br[c] += x * vb
                    bl[b] += accl
    return alpha * beta, sc[whole] + np.log(z)


def coarse_posteriors(
    g: CoarseGrammar,
    layout: SpanLayout,
    lexical_scores: np.ndarray,
    root: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items with a positive posterior in every sentence of ``layout``.

    ``lexical_scores``: ``(spans of length 1, N)`` pre-terminal scores in layout order.
    Returns ``(keys = span * N + symbol (sorted), posteriors, log Z per sentence)``.
    """
    n_sym = g.n_symbols
    keys, values = [], []
    log_z = np.full(len(layout.lengths), -np.inf)
    first = layout.block(1).start if layout.max_length else 0
    root = np.asarray(root, dtype=np.float64)
    for s, n in enumerate(layout.lengths):
        n = int(n)
        if n == 0:
            continue
        rows = layout.base[1, s] + np.arange(n) - first
        lex = np.ascontiguousarray(lexical_scores[rows], dtype=np.float64)
        mu, log_z[s] = sentence_posteriors(lex, root, g.left_ptr, g.pair_right, g.pair_ptr,
                                           g.parent, g.prob)  # fmt: skip
        if not np.isfinite(log_z[s]):
            continue
        span, sym = np.nonzero(mu)
        starts = _local_starts(n)
        length = np.searchsorted(starts, span, side="right")
        start = span - starts[length - 1]
        keys.append((layout.base[length, s] + start) * n_sym + sym)
        values.append(mu[span, sym])
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0), log_z
    keys_a, values_a = np.concatenate(keys), np.concatenate(values)
    order = np.argsort(keys_a, kind="stable")
    return keys_a[order], values_a[order], log_z


def _local_starts(n: int) -> np.ndarray:
    """First local id of each length 1..n (``_local(n, 0, length)``)."""
    length = np.arange(1, n + 1)
    return (length - 1) * n - (length - 1) * (length - 2) // 2
