"""The coarse pass: inside-outside of the treebank PCFG over the full chart of a sentence.

Its posteriors decide which items the latent pass may use (coarse-to-fine pruning). The inside
chart is kept twice, start-major (row ``(i, b)``: the spans ``[i, j)`` of symbol ``b`` over
their ends ``j``) and end-major (row ``(j, c)``: over their starts ``i``), so that for a span
``[i, j)`` and a children pair ``(b, c)`` the sum over splits ``k`` is one contiguous dot
product of ``alpha_b(i, k) w(k)`` with ``alpha_c(k, j)`` (``w``: the span's split weights,
``engine.scaling``), which LLVM vectorises; each rule of the pair then adds ``prob * z`` to its
parent. The outside pass is the mirror: per pair, ``x = sum prob * beta(parent)``, then two
``axpy`` updates of the outside charts of the left children (start-major) and the right
children (end-major); an item's outside is the sum of its two layouts' entries. Only the
symbols present in the left child's span range are visited, and for each of them only its
pairs (``CoarseGrammar`` indexes the rules by left child), each over the range of splits where
both children have mass (per-row extents, as in the Berkeley parser): a grammar of thousands
of symbols stays cheap where its symbols are rare.

Measured on the 249-word sentence of the PTB sample with the EM model's coarse grammar (206
symbols, 1,502 pairs, 2,492 rules): 7.6-8.1 s for the pass before (a walk over the rules of
the left child's symbols with a random look-up of the right child, 1.2 G rule visits at
170 M/s), 1.7 s now, and the test split's 345 sentences take 1.6 s instead of 2.2-2.4. Double
precision, one sentence at a time, compiled with numba.
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


# The loops below run on slices (indices from 0): indexed as ``x[offset + t]``, numba's
# negative-index wrap-around made LLVM vectorise them with gathers and scatters, and the pass
# took 6.4 s on the 249-word sentence instead of 2.4. They are inlined into the kernel, whose
# fastmath flags (reassociation, fused multiply-add) let the reductions vectorise: as calls,
# the test split took 2.15 s instead of 1.6.
@nb.njit(cache=True, nogil=True, inline="always")
def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """``x . y``."""
    z = 0.0
    for t in range(len(x)):
        z += x[t] * y[t]
    return z


@nb.njit(cache=True, nogil=True, inline="always")
def _axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    """``y += a * x``."""
    for t in range(len(x)):
        y[t] += a * x[t]


@nb.njit(cache=True, nogil=True, inline="always")
def _times(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """``out = x * w``."""
    for t in range(len(x)):
        out[t] = x[t] * w[t]


@nb.njit(cache=True, nogil=True, inline="always")
def _weighted(chart, base, stride, shift, lo_ext, hi_ext, i, j, w, out):
    """``out[b, k - i - 1] = chart[base + b * stride + k + shift] * w[k - i - 1]`` for the
    splits ``k`` of ``[i, j)`` where symbol ``b``'s row has mass (``lo_ext..hi_ext``)."""
    for b in range(len(lo_ext)):
        lo, hi = max(lo_ext[b], i + 1), min(hi_ext[b], j - 1)
        if lo <= hi:
            row = base + b * stride + shift
            _times(chart[row + lo : row + hi + 1], w[lo - i - 1 : hi - i],
                   out[b, lo - i - 1 : hi - i])  # fmt: skip


@nb.njit(cache=True, nogil=True)
def _bases(n: int, n_sym: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of the packed charts: start-major row ``(i, b)`` (ends ``i+1..n``, length
    ``n - i``) at ``sbase[i] + b * (n - i)``; end-major row ``(j, c)`` (starts ``0..j-1``,
    length ``j``) at ``ebase[j] + c * j``."""
    sbase = np.zeros(n + 1, dtype=np.int64)
    ebase = np.zeros(n + 2, dtype=np.int64)
    for i in range(n):
        sbase[i + 1] = sbase[i] + n_sym * (n - i)
    for j in range(n + 1):
        ebase[j + 1] = ebase[j] + n_sym * j
    return sbase, ebase


@nb.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def sentence_posteriors(lex, root, left_ptr, pair_right, pair_ptr, parent, prob):
    """Posterior of every (span, symbol) of one sentence; ``lex`` is ``(n, N)``.

    Returns ``(mu (spans, N) in local span order, log Z)`` (``-inf`` and zeros without a
    parse).

    Spans go by end ``j``, then start ``i`` from right to left (outside: the reverse), not by
    length: the end-major rows of ``j`` that every span of the column reads stay in cache
    (2.4 s -> 1.7 s on the 249-word sentence). The charts are packed (row ``(i, b)`` holds
    the ``n - i`` ends after ``i``): four of ``N n (n + 1) / 2`` doubles, 51 MB each for that
    sentence; the pass's peak rose from 145 MB to 195 MB (pages never written stay
    unmapped), below the latent pass's: the parse's peak stays at 504 MB.
    """
    n, n_sym = lex.shape
    sbase, ebase = _bases(n, n_sym)
    size = sbase[n]
    ins_s = np.zeros(size)  # inside, start-major: (i, b) -> ends
    ins_e = np.zeros(size)  # inside, end-major: (j, c) -> starts
    sc = np.full((n + 1, n + 1), -np.inf)
    # Extents: ends of start i where b has inside mass lie in [lo_end, hi_end]; starts of
    # end j where c has mass in [lo_start, hi_start] (empty: lo > hi).
    lo_end = np.full((n, n_sym), n + 1, dtype=np.int64)
    hi_end = np.full((n, n_sym), -1, dtype=np.int64)
    lo_start = np.full((n + 1, n_sym), n + 1, dtype=np.int64)
    hi_start = np.full((n + 1, n_sym), -1, dtype=np.int64)
    acc = np.zeros((1, n_sym))
    w = np.zeros(n)
    lw = np.zeros((n_sym, n))  # left operand times the split weight, index k - i - 1
    for j in range(1, n + 1):
        for i in range(j - 1, -1, -1):
            length = j - i
            acc[0, :] = 0.0
            top = 0.0
            if length == 1:
                acc[0, :] = lex[i]
            else:
                top = -np.inf
                for k in range(i + 1, j):
                    top = max(top, sc[i, k] + sc[k, j])
                if top == -np.inf:
                    continue
                for k in range(i + 1, j):
                    w[k - i - 1] = split_weight(sc[i, k] + sc[k, j], top)
                _weighted(ins_s, sbase[i], n - i, -i - 1, lo_end[i], hi_end[i], i, j, w, lw)
                erow = ebase[j]
                for b in range(n_sym):
                    blo, bhi = max(lo_end[i, b], i + 1), min(hi_end[i, b], j - 1)
                    if blo > bhi:
                        continue
                    for q in range(left_ptr[b], left_ptr[b + 1]):
                        c = pair_right[q]
                        lo, hi = max(blo, lo_start[j, c]), min(bhi, hi_start[j, c])
                        if lo > hi:
                            continue
                        e = erow + c * j
                        z = _dot(lw[b, lo - i - 1 : hi - i], ins_e[e + lo : e + hi + 1])
                        if z == 0.0:
                            continue
                        for r in range(pair_ptr[q], pair_ptr[q + 1]):
                            acc[0, parent[r]] += prob[r] * z
            scale = normalise_span(acc, 0, 1, 0.0)
            if scale == -np.inf:
                continue
            sc[i, j] = top + scale
            for a in range(n_sym):
                v = acc[0, a]
                if v != 0.0:
                    ins_s[sbase[i] + a * (n - i) + j - i - 1] = v
                    ins_e[ebase[j] + a * j + i] = v
                    lo_end[i, a] = min(lo_end[i, a], j)
                    hi_end[i, a] = j
                    lo_start[j, a] = i
                    hi_start[j, a] = max(hi_start[j, a], i)
    z = 0.0
    for a in range(n_sym):
        z += ins_s[sbase[0] + a * n + n - 1] * root[a]
    n_spans = n * (n + 1) // 2
    if z <= 0.0 or sc[0, n] == -np.inf:
        return np.zeros((n_spans, n_sym)), -np.inf
    out_s = np.zeros(size)  # outside of left children, start-major
    out_e = np.zeros(size)  # outside of right children, end-major
    for a in range(n_sym):
        out_s[sbase[0] + a * n + n - 1] = root[a] / z
    beta = np.zeros(n_sym)
    rw = np.zeros((n_sym, n))  # right operand times the split weight, index k - i - 1
    for j in range(n, 1, -1):
        for i in range(j - 1):
            if sc[i, j] == -np.inf:
                continue
            for a in range(n_sym):
                beta[a] = out_s[sbase[i] + a * (n - i) + j - i - 1] + out_e[ebase[j] + a * j + i]
            for k in range(i + 1, j):
                w[k - i - 1] = split_weight(sc[i, k] + sc[k, j], sc[i, j])
            _weighted(ins_s, sbase[i], n - i, -i - 1, lo_end[i], hi_end[i], i, j, w, lw)
            _weighted(ins_e, ebase[j], j, 0, lo_start[j], hi_start[j], i, j, w, rw)
            for b in range(n_sym):
                blo, bhi = max(lo_end[i, b], i + 1), min(hi_end[i, b], j - 1)
                if blo > bhi:
                    continue
                row = sbase[i] + b * (n - i) - i - 1
                for q in range(left_ptr[b], left_ptr[b + 1]):
                    c = pair_right[q]
                    lo, hi = max(blo, lo_start[j, c]), min(bhi, hi_start[j, c])
                    if lo > hi:
                        continue
                    x = 0.0
                    for r in range(pair_ptr[q], pair_ptr[q + 1]):
                        x += prob[r] * beta[parent[r]]
                    if x == 0.0:
                        continue
                    e = ebase[j] + c * j
                    _axpy(x, rw[c, lo - i - 1 : hi - i], out_s[row + lo : row + hi + 1])
                    _axpy(x, lw[b, lo - i - 1 : hi - i], out_e[e + lo : e + hi + 1])
    mu = np.zeros((n_spans, n_sym))
    for length in range(1, n + 1):
        for i in range(n - length + 1):
            j = i + length
            if sc[i, j] == -np.inf:
                continue
            s = _local(n, i, length)
            for a in range(n_sym):
                p = sbase[i] + a * (n - i) + j - i - 1
                v = ins_s[p]
                if v != 0.0:
                    mu[s, a] = v * (out_s[p] + out_e[ebase[j] + a * j + i])
    return mu, sc[0, n] + np.log(z)


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
