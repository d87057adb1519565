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
of symbols stays cheap where its symbols are rare. The right children whose extents meet the
left child's are found as bit sets (``ChartIndex.pre``, ``suf``: the symbols over spans ending
at ``j``, by start), not tested one by one: a third of the pairs tested before were dropped
by the extents, most of them on a branch the processor could not predict.

The pass it replaced walked the rules of the left child's symbols with a random look-up of
the right child, several times slower on a long sentence. Double precision, one sentence at
a time, compiled with numba.

A child's row times the split weights (``_weigh``) is formed only once one of its pairs
applies in the span, and the sentences of a batch share one set of charts, each sentence
zeroing what it wrote (``clear_charts``, by the rows' extents) instead of taking fresh zeroed
memory, whose page faults cost grammars of thousands of symbols much system time; same
outputs. The measurements behind these choices are in docs/design-notes.md (The coarse pass).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lpcfg_cli.engine.chart_grammars import CoarseGrammar
from lpcfg_cli.engine.dispatch import float64s, kernel
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.scaling import normalise_span, split_weight


# The loops below run on slices (indices from 0): indexed as ``x[offset + t]``, numba's
# negative-index wrap-around made LLVM vectorise them with gathers and scatters, which made
# the pass several times slower. They are inlined into the phases, whose fastmath flags
# (reassociation, fused multiply-add) let the reductions vectorise, which they did not as
# calls.
@kernel(nogil=True, inline="always")
def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """``x . y``."""
    z = 0.0
    for t in range(len(x)):
        z += x[t] * y[t]
    return z


@kernel(nogil=True, inline="always")
def _axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    """``y += a * x``."""
    for t in range(len(x)):
        y[t] += a * x[t]


@kernel(nogil=True, inline="always")
def _times(x: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """``out = x * w``."""
    for t in range(len(x)):
        out[t] = x[t] * w[t]


@kernel(nogil=True, inline="always")
def _weigh(chart, row, lo, hi, i, w, out):
    """``out[k - i - 1] = chart[row + k] * w[k - i - 1]`` for the splits ``lo <= k <= hi``
    of a span starting at ``i``: one child row times the span's split weights."""
    _times(chart[row + lo : row + hi + 1], w[lo - i - 1 : hi - i], out[lo - i - 1 : hi - i])


@kernel(nogil=True, inline="always")
def _beam(vals: np.ndarray, syms: np.ndarray, prior: np.ndarray, beam: float) -> None:
    """The coarse beam in one span: zero ``vals[t]`` (the inside value of symbol
    ``syms[t]``) where ``vals[t] * prior[syms[t]]`` is below ``beam`` times the largest such
    product, as if that item had no inside mass.

    ``prior`` (``chart_grammars.symbol_prior``) stands for the items' outside values: a
    figure-of-merit beam in the manner of Caraballo & Charniak (1998), rather than the
    Berkeley parser's posterior pruning by coarser grammars: it costs nothing to compute,
    and the latent pass's posterior threshold (``ParserOptions.prune``) after it already
    prunes as the Berkeley parser does.
    """
    best = 0.0
    for t in range(len(vals)):
        best = max(best, vals[t] * prior[syms[t]])
    for t in range(len(vals)):
        if vals[t] * prior[syms[t]] < beam * best:
            vals[t] = 0.0


@kernel(nogil=True)
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


@kernel(nogil=True)
def _doubled(buf: np.ndarray) -> np.ndarray:
    """A copy of ``buf`` with twice the room."""
    grown = np.empty(2 * len(buf), dtype=buf.dtype)
    grown[: len(buf)] = buf
    return grown


# Bit sets of symbols, 64 to a uint64 word (``CoarseGrammar.right_bits``). Every constant is
# a uint64: numba types uint64 mixed with int64 as float64.
_U0, _U1, _U2, _U4, _U56, _U58 = (np.uint64(k) for k in (0, 1, 2, 4, 56, 58))
_M1, _M2, _M4, _H01 = (
    np.uint64(k)
    for k in (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101)
)
# A de Bruijn sequence B(2, 6): the top 6 bits of ``2**k * _DE_BRUIJN`` are distinct for
# the 64 values of ``k``, so they index ``_LOW_BIT``, the table of ``k``.
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_LOW_BIT = np.zeros(64, dtype=np.int64)
for _k in range(64):
    _LOW_BIT[((1 << _k) * int(_DE_BRUIJN) % (1 << 64)) >> 58] = _k
assert len(set(_LOW_BIT.tolist())) == 64


@kernel(nogil=True, inline="always")
def _bit_index(low):
    """``k`` of a uint64 ``low == 2**k``."""
    return _LOW_BIT[np.int64((low * _DE_BRUIJN) >> _U58)]


@kernel(nogil=True, inline="always")
def _popcount(x):
    """Set bits of a uint64 (the SWAR sum of bit counts)."""
    x = x - ((x >> _U1) & _M1)
    x = (x & _M2) + ((x >> _U2) & _M2)
    x = (x + (x >> _U4)) & _M4
    return np.int64((x * _H01) >> _U56)


# The kernels' flags: reassociation and fused multiply-add let the split sums (``_dot``) and
# the outside updates (``_axpy``) vectorise.
FAST = {"reassoc", "contract"}

# The phases of ``sentence_posteriors`` are functions of their own (tests call them), inlined
# into it (``inline="always"``) so that it compiles to the one kernel it was before the split.
# As calls, a phase gets the chart index's arrays as arguments, which LLVM cannot tell apart
# from the charts the phase writes, and both phases ran slower so.


class CoarseRules(NamedTuple):
    """A ``CoarseGrammar``'s binary rules as the phases read them (its fields of the same
    names): the pairs of each left child, their right children as bit sets and ranks, and
    each pair's rules (parents and probabilities)."""

    left_ptr: np.ndarray
    right_bits: np.ndarray
    right_rank: np.ndarray
    pair_ptr: np.ndarray
    parent: np.ndarray
    prob: np.ndarray

    @classmethod
    def of(cls, g: CoarseGrammar) -> CoarseRules:
        return cls(g.left_ptr, g.right_bits, g.right_rank, g.pair_ptr, g.parent, g.prob)


class ChartIndex(NamedTuple):
    """Where one sentence's items are: built by the inside phase, read by the others.

    Spans are ``(i, j)``, ``0 <= i < j <= n``. Nothing loops over all ``N`` symbols per span:
    the symbols present at a start, at an end and in a span are listed as they appear (with
    the ``--vertical 2 --horizontal 2`` grammar, 2,664 symbols, loops over all of them made
    the pass slower than the old kernel).
    """

    n: int
    n_sym: int
    sbase: np.ndarray  # start-major row (i, b) at sbase[i] + b * (n - i) (``_bases``)
    ebase: np.ndarray  # end-major row (j, c) at ebase[j] + c * j
    sc: np.ndarray  # (n + 1, n + 1) log scale of each span, -inf: no item
    # Extents: ends of start i where b has inside mass lie in [lo_end, hi_end]; starts of
    # end j where c has mass in [lo_start, hi_start] (empty: lo > hi).
    lo_end: np.ndarray  # (n, N)
    hi_end: np.ndarray
    lo_start: np.ndarray  # (n + 1, N)
    hi_start: np.ndarray
    # Symbols with mass at start i (s_syms[i, :s_cnt[i]]) and at end j.
    s_syms: np.ndarray
    s_cnt: np.ndarray
    e_syms: np.ndarray
    e_cnt: np.ndarray
    # The symbols with mass over spans ending at j as bit sets, by start: ``pre[j, k]`` holds
    # those with an item (k', j) for some k' <= k, ``suf[j, k]`` for some k' >= k (both
    # (n + 1, n + 1, W) uint64). A right child over splits lo..hi has an item in that range
    # only if it is in ``pre[j, hi] & suf[j, lo]``: the extents' test as one AND per word.
    pre: np.ndarray
    suf: np.ndarray
    # Symbols with mass in span (i, j): items[first[i, j]:first[i, j] + count[i, j]].
    items: np.ndarray
    first: np.ndarray
    count: np.ndarray


@kernel(nogil=True)
def _no_extents(n, n_sym):
    """``ChartIndex``'s extents of a chart with no item yet: ``(lo_end, hi_end, lo_start,
    hi_start)``, every range empty."""
    lo_end = np.full((n, n_sym), n + 1, dtype=np.int64)
    hi_end = np.full((n, n_sym), -1, dtype=np.int64)
    lo_start = np.full((n + 1, n_sym), n + 1, dtype=np.int64)
    hi_start = np.full((n + 1, n_sym), -1, dtype=np.int64)
    return lo_end, hi_end, lo_start, hi_start


@kernel(nogil=True)
def _no_symbols(n, n_sym, n_words):
    """``ChartIndex``'s symbol lists of a chart with no item yet: ``(s_syms, s_cnt, e_syms,
    e_cnt, pre, suf)``."""
    s_syms = np.empty((n, n_sym), dtype=np.int32)
    e_syms = np.empty((n + 1, n_sym), dtype=np.int32)
    s_cnt, e_cnt = np.zeros(n, dtype=np.int64), np.zeros(n + 1, dtype=np.int64)
    pre = np.zeros((n + 1, n + 1, n_words), dtype=np.uint64)
    return s_syms, s_cnt, e_syms, e_cnt, pre, pre.copy()


@kernel(nogil=True, inline="always")
def _add_cell(pre, suf, cell, i, j):
    """Span ``(i, j)``'s symbols (bit set ``cell``) into ``ChartIndex.pre`` and ``suf``;
    ``cell`` is left empty."""
    for k in range(i, j):
        for wd in range(len(cell)):
            pre[j, k, wd] |= cell[wd]
    for k in range(i + 1):
        for wd in range(len(cell)):
            suf[j, k, wd] |= cell[wd]
    cell[:] = _U0


@kernel(nogil=True)
def _span_scratch(n, n_sym):
    """``inside_chart``'s per-span scratch: the parents' sums (``acc``), the parents given
    mass (``touched``, ``mark``), their values, the split weights ``w`` and each left
    child's row times them (``lw``, index ``k - i - 1``)."""
    acc, vals = np.zeros(n_sym), np.zeros((1, n_sym))
    touched, mark = np.empty(n_sym, dtype=np.int64), np.zeros(n_sym, dtype=np.bool_)
    return acc, touched, mark, vals, np.zeros(n), np.zeros((n_sym, n))


@kernel(nogil=True, fastmath=FAST, inline="always")
def inside_chart(
    lex: np.ndarray, rules: CoarseRules, charts: np.ndarray, prior: np.ndarray, beam: float
) -> ChartIndex:
    """The inside phase: the scaled inside values of every item, written to ``charts[0]``
    (start-major) and ``charts[1]`` (end-major); returns the ``ChartIndex`` of the items.

    Spans go by end ``j``, then start ``i`` from right to left, not by length: the end-major
    rows of ``j`` that every span of the column reads stay in cache. A child's row times the
    split weights (``_weigh``) is formed only once one of its pairs applies in the span.
    With ``beam > 0`` every span but the whole sentence is pruned by the coarse beam
    (``_beam``); the phases after see the pruned chart.
    """
    left_ptr, right_bits, right_rank, pair_ptr, parent, prob = rules
    n, n_sym = lex.shape
    ins_s, ins_e = charts[0], charts[1]
    sbase, ebase = _bases(n, n_sym)
    sc = np.full((n + 1, n + 1), -np.inf)
    lo_end, hi_end, lo_start, hi_start = _no_extents(n, n_sym)
    n_words = right_bits.shape[1]
    s_syms, s_cnt, e_syms, e_cnt, pre, suf = _no_symbols(n, n_sym, n_words)
    cell = np.zeros(n_words, dtype=np.uint64)  # the symbols of the span being built
    items = np.empty(max(16, 4 * n_sym), dtype=np.int32)
    n_items = 0
    first = np.zeros((n + 1, n + 1), dtype=np.int64)
    count = np.zeros((n + 1, n + 1), dtype=np.int64)
    acc, touched, mark, vals, w, lw = _span_scratch(n, n_sym)  # see _span_scratch
    for j in range(1, n + 1):
        for i in range(j - 1, -1, -1):
            n_t = 0
            top = 0.0
            if j - i == 1:
                for a in range(n_sym):
                    if lex[i, a] != 0.0:
                        acc[a] = lex[i, a]
                        touched[n_t] = a
                        n_t += 1
            else:
                top = -np.inf
                for k in range(i + 1, j):
                    top = max(top, sc[i, k] + sc[k, j])
                if top == -np.inf:
                    continue
                for k in range(i + 1, j):
                    w[k - i - 1] = split_weight(sc[i, k] + sc[k, j], top)
                erow = ebase[j]
                for t in range(s_cnt[i]):
                    b = s_syms[i, t]
                    blo, bhi = max(lo_end[i, b], i + 1), min(hi_end[i, b], j - 1)
                    if blo > bhi:
                        continue
                    weighed = False  # lw[b] for this span: only once a pair of b applies
                    for wd in range(n_words):  # right children of b over splits blo..bhi
                        word = right_bits[b, wd]
                        x = word & pre[j, bhi, wd] & suf[j, blo, wd]
                        while x != _U0:
                            low = x & (_U0 - x)
                            x ^= low
                            c = 64 * wd + _bit_index(low)
                            lo, hi = max(blo, lo_start[j, c]), min(bhi, hi_start[j, c])
                            if not weighed:
                                row = sbase[i] + b * (n - i) - i - 1
                                _weigh(ins_s, row, blo, bhi, i, w, lw[b])
                                weighed = True
                            e = erow + c * j
                            z = _dot(lw[b, lo - i - 1 : hi - i], ins_e[e + lo : e + hi + 1])
                            if z == 0.0:
                                continue
                            q = left_ptr[b] + right_rank[b, wd] + _popcount(word & (low - _U1))
                            for r in range(pair_ptr[q], pair_ptr[q + 1]):
                                a = parent[r]
                                if not mark[a]:
                                    mark[a] = True
                                    touched[n_t] = a
                                    n_t += 1
                                acc[a] += prob[r] * z
            for t in range(n_t):
                a = touched[t]
                vals[0, t] = acc[a]
                acc[a] = 0.0
                mark[a] = False
            scale = normalise_span(vals[:, :n_t], 0, 1, 0.0)
            if scale == -np.inf:
                continue
            sc[i, j] = top + scale
            first[i, j] = n_items
            if beam > 0.0 and j - i < n:
                _beam(vals[0, :n_t], touched[:n_t], prior, beam)
            for t in range(n_t):
                a, v = touched[t], vals[0, t]
                if v == 0.0:
                    continue
                if n_items == len(items):  # a call only then: each call counts references
                    items = _doubled(items)
                items[n_items] = a
                n_items += 1
                ins_s[sbase[i] + a * (n - i) + j - i - 1] = v
                ins_e[ebase[j] + a * j + i] = v
                if hi_end[i, a] < 0:
                    s_syms[i, s_cnt[i]] = a
                    s_cnt[i] += 1
                    lo_end[i, a] = j
                hi_end[i, a] = j
                if hi_start[j, a] < 0:
                    e_syms[j, e_cnt[j]] = a
                    e_cnt[j] += 1
                    hi_start[j, a] = i
                lo_start[j, a] = i
                cell[a // 64] |= _U1 << np.uint64(a % 64)
            count[i, j] = n_items - first[i, j]
            _add_cell(pre, suf, cell, i, j)
    extents = (lo_end, hi_end, lo_start, hi_start, s_syms, s_cnt, e_syms, e_cnt, pre, suf)
    return ChartIndex(n, n_sym, sbase, ebase, sc, *extents, items[:n_items], first, count)


@kernel(nogil=True, fastmath=FAST, inline="always")
def root_inside(charts: np.ndarray, root: np.ndarray, ix: ChartIndex) -> float:
    """``sum_a root[a] * inside(0, n, a)`` on the scaled chart: the sentence's probability
    is this times ``exp(ix.sc[0, n])``, and it normalises the outside values."""
    n = ix.n
    z = 0.0
    for a in range(ix.n_sym):
        z += charts[0, ix.sbase[0] + a * n + n - 1] * root[a]
    return z


@kernel(nogil=True)
def _parents_of_left(n_sym, n_words, left_ptr, pair_ptr, parent):
    """``(N, W)`` bit sets: bit ``a`` of row ``b`` is set if a rule ``a -> b c`` exists."""
    bits = np.zeros((n_sym, n_words), dtype=np.uint64)
    for b in range(n_sym):
        for r in range(pair_ptr[left_ptr[b]], pair_ptr[left_ptr[b + 1]]):
            a = parent[r]
            bits[b, a // 64] |= _U1 << np.uint64(a % 64)
    return bits


@kernel(nogil=True, fastmath=FAST, inline="always")
def outside_chart(
    root: np.ndarray, z: float, rules: CoarseRules, charts: np.ndarray, ix: ChartIndex, cut: float
) -> None:
    """The outside phase, after ``inside_chart`` (``ix``) and ``root_inside`` (``z > 0``):
    the outside values divided by the sentence's scaled probability, of the left children in
    ``charts[2]`` (start-major) and the right children in ``charts[3]`` (end-major); an
    item's outside is the sum of its two entries.

    Spans in the reverse order of the inside phase; per pair, ``x = sum prob * beta(parent)``,
    then two ``axpy`` updates, each over the splits where both children have mass. A left
    child none of whose rules has a parent with outside mass in the span is passed over at
    once (``_parents_of_left`` against the span's bit set of such parents), its pairs
    unvisited: with the cut below, most spans have few such parents.

    The cut: an item whose posterior (its inside times its outside, complete once the longer
    spans are done) is below ``cut`` passes nothing down, as if it had no outside mass, and a
    span with no such item is skipped. Its children's posteriors then count only what comes
    through the items kept, so they are at most the exact ones; ``cut`` 0 keeps them exact.
    The latent pass keeps the items above a threshold ``cut`` is a fraction of
    (``ParserOptions.outside_cut``): an item of the latent pass whose parents all fall below
    ``cut`` would have no outside mass there either. It prunes by posterior, as the Berkeley
    parser does after its passes, but while the outside values are formed, so that the cut
    items' descendants lose what came through them.
    """
    left_ptr, right_bits, right_rank, pair_ptr, parent, prob = rules
    n, n_sym, sc, items = ix.n, ix.n_sym, ix.sc, ix.items
    ins_s, ins_e, out_s, out_e = charts[0], charts[1], charts[2], charts[3]
    sbase, ebase, first, count = ix.sbase, ix.ebase, ix.first, ix.count
    lo_end, hi_end, lo_start, hi_start = ix.lo_end, ix.hi_end, ix.lo_start, ix.hi_start
    s_syms, s_cnt, pre, suf = ix.s_syms, ix.s_cnt, ix.pre, ix.suf
    n_words = right_bits.shape[1]
    for a in range(n_sym):
        out_s[sbase[0] + a * n + n - 1] = root[a] / z
    beta = np.zeros(n_sym)  # the span's outside; zero for the symbols absent from it
    w = np.zeros(n)
    lw = np.zeros((n_sym, n))  # left operand times the split weight, index k - i - 1
    rw = np.zeros((n_sym, n))  # right operand times the split weight, index k - i - 1
    rw_span = np.full(n_sym, -1, dtype=np.int64)  # the span rw[c] was last weighed for
    parents_of = _parents_of_left(n_sym, n_words, left_ptr, pair_ptr, parent)
    live = np.zeros(n_words, dtype=np.uint64)  # the span's symbols with outside mass
    span = 0
    for j in range(n, 1, -1):
        for i in range(j - 1):
            if sc[i, j] == -np.inf:
                continue
            span_items = items[first[i, j] : first[i, j] + count[i, j]]
            any_live = False
            for a in span_items:
                p = sbase[i] + a * (n - i) + j - i - 1
                v = out_s[p] + out_e[ebase[j] + a * j + i]
                if v != 0.0 and ins_s[p] * v >= cut:
                    beta[a] = v
                    live[a // 64] |= _U1 << np.uint64(a % 64)
                    any_live = True
            if not any_live:  # no parent here passes anything down
                continue
            for k in range(i + 1, j):
                w[k - i - 1] = split_weight(sc[i, k] + sc[k, j], sc[i, j])
            span += 1
            for t in range(s_cnt[i]):
                b = s_syms[i, t]
                blo, bhi = max(lo_end[i, b], i + 1), min(hi_end[i, b], j - 1)
                if blo > bhi:
                    continue
                feeds = False  # b is the left child of a rule whose parent has mass here
                for wd in range(n_words):
                    if parents_of[b, wd] & live[wd] != _U0:
                        feeds = True
                        break
                if not feeds:
                    continue
                row = sbase[i] + b * (n - i) - i - 1
                weighed = False
                for wd in range(n_words):  # right children of b over splits blo..bhi
                    word = right_bits[b, wd]
                    bits = word & pre[j, bhi, wd] & suf[j, blo, wd]
                    while bits != _U0:
                        low = bits & (_U0 - bits)
                        bits ^= low
                        c = 64 * wd + _bit_index(low)
                        lo, hi = max(blo, lo_start[j, c]), min(bhi, hi_start[j, c])
                        q = left_ptr[b] + right_rank[b, wd] + _popcount(word & (low - _U1))
                        x = 0.0
                        for r in range(pair_ptr[q], pair_ptr[q + 1]):
                            x += prob[r] * beta[parent[r]]
                        if x == 0.0:
                            continue
                        if not weighed:
                            _weigh(ins_s, row, blo, bhi, i, w, lw[b])
                            weighed = True
                        e = ebase[j] + c * j
                        if rw_span[c] != span:  # rw[c] for this span, over c's splits in it
                            clo, chi = max(lo_start[j, c], i + 1), min(hi_start[j, c], j - 1)
                            _weigh(ins_e, e, clo, chi, i, w, rw[c])
                            rw_span[c] = span
                        _axpy(x, rw[c, lo - i - 1 : hi - i], out_s[row + lo : row + hi + 1])
                        _axpy(x, lw[b, lo - i - 1 : hi - i], out_e[e + lo : e + hi + 1])
            for a in span_items:
                beta[a] = 0.0
            live[:] = _U0


@kernel(nogil=True, fastmath=FAST, inline="always")
def item_posteriors(
    charts: np.ndarray, ix: ChartIndex, cut: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The posteriors phase, after ``outside_chart``: ``(start, end, symbol, posterior)``
    of the items with a nonzero posterior (inside times outside) of at least ``cut`` (the
    outside phase's), by start, then end."""
    n, sbase, ebase, items = ix.n, ix.sbase, ix.ebase, ix.items
    ins_s, out_s, out_e = charts[0], charts[2], charts[3]
    starts = np.empty(len(items), dtype=np.int64)
    ends = np.empty(len(items), dtype=np.int64)
    syms = np.empty(len(items), dtype=np.int64)
    post = np.empty(len(items))
    m = 0
    for i in range(n):
        for j in range(i + 1, n + 1):
            for t in range(ix.first[i, j], ix.first[i, j] + ix.count[i, j]):
                a = items[t]
                p = sbase[i] + a * (n - i) + j - i - 1
                v = ins_s[p] * (out_s[p] + out_e[ebase[j] + a * j + i])
                if v != 0.0 and v >= cut:
                    starts[m], ends[m], syms[m], post[m] = i, j, a, v
                    m += 1
    return starts[:m], ends[:m], syms[:m], post[:m]


@kernel(nogil=True)
def clear_charts(charts: np.ndarray, ix: ChartIndex) -> None:
    """Zero what a sentence wrote in ``charts``: every entry it set lies in a row's extent
    (start-major rows ``(i, b)``: ends ``lo_end..hi_end``; end-major rows ``(j, c)``: starts
    ``lo_start..hi_start``), and the root's outside entries."""
    n = ix.n
    for i in range(n):
        for t in range(ix.s_cnt[i]):
            b = ix.s_syms[i, t]
            row = ix.sbase[i] + b * (n - i) - i - 1
            charts[0, row + ix.lo_end[i, b] : row + ix.hi_end[i, b] + 1] = 0.0
            charts[2, row + ix.lo_end[i, b] : row + ix.hi_end[i, b] + 1] = 0.0
    for j in range(1, n + 1):
        for t in range(ix.e_cnt[j]):
            c = ix.e_syms[j, t]
            row = ix.ebase[j] + c * j
            charts[1, row + ix.lo_start[j, c] : row + ix.hi_start[j, c] + 1] = 0.0
            charts[3, row + ix.lo_start[j, c] : row + ix.hi_start[j, c] + 1] = 0.0
    for a in range(ix.n_sym):
        charts[2, ix.sbase[0] + a * n + n - 1] = 0.0


@kernel(nogil=True, fastmath=FAST)
def sentence_posteriors(
    lex: np.ndarray,
    root: np.ndarray,
    rules: CoarseRules,
    charts: np.ndarray,
    prior: np.ndarray,
    beam: float,
    cut: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Posteriors of one sentence's items; ``lex`` is ``(n, N)``; ``charts``: ``(4, >=
    chart_size(n, N))`` zeros, the packed inside and outside charts, left zero on return.

    Returns ``(start, end, symbol, posterior)`` of the items with a nonzero posterior, and
    log Z (``-inf`` and no items without a parse). ``prior``, ``beam``: the coarse beam
    (``inside_chart``; ``beam`` 0: none); ``cut``: the outside phase's (``outside_chart``; 0:
    none, exact posteriors). The phases, in order: ``inside_chart``,
    ``root_inside``, ``outside_chart``, ``item_posteriors``, ``clear_charts``.

    The charts are packed (row ``(i, b)`` holds the ``n - i`` ends after ``i``): four of
    ``N n (n + 1) / 2`` doubles (pages never written stay unmapped; what they cost a long
    sentence: docs/design-notes.md, The coarse pass).
    """
    ix = inside_chart(lex, rules, charts, prior, beam)
    z = root_inside(charts, root, ix)
    if z <= 0.0 or ix.sc[0, ix.n] == -np.inf:
        clear_charts(charts, ix)
        none = np.zeros(0, dtype=np.int64)
        return none, none, none, np.zeros(0), -np.inf
    outside_chart(root, z, rules, charts, ix, cut)
    starts, ends, syms, post = item_posteriors(charts, ix, cut)
    clear_charts(charts, ix)
    return starts, ends, syms, post, ix.sc[0, ix.n] + np.log(z)


def chart_size(n: int, n_symbols: int) -> int:
    """Entries of one packed chart of a sentence of ``n`` words (``N n (n + 1) / 2``)."""
    return n_symbols * n * (n + 1) // 2


def coarse_posteriors(
    g: CoarseGrammar,
    layout: SpanLayout,
    lexical_scores: np.ndarray,
    root: np.ndarray,
    beam: float = 0.0,
    cut: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items with a positive posterior in every sentence of ``layout``.

    ``lexical_scores``: ``(spans of length 1, N)`` pre-terminal scores in layout order.
    ``beam``: the coarse beam (``inside_chart``; 0: none, exact posteriors); a sentence it
    leaves without a parse is parsed again without it. ``cut``: the outside phase's
    (``outside_chart``; 0: none); the posteriors below it are left out. Returns ``(keys =
    span * N + symbol (sorted), posteriors, log Z per sentence)``.
    """
    n_sym = g.n_symbols
    first = layout.block(1).start if layout.max_length else 0
    # One set of charts for the batch, sized for its longest sentence and cleared by each
    # sentence of what it wrote: fresh zeroed charts per sentence cost a page fault per 4 KB
    # touched, much system time with a grammar of thousands of symbols.
    longest = int(max(layout.lengths, default=0))
    charts = np.zeros((4, chart_size(longest, n_sym)))
    keys, values, log_z = batch_posteriors(
        float64s(lexical_scores),
        layout.base,
        layout.lengths,
        first,
        np.asarray(root, dtype=np.float64),
        CoarseRules.of(g),
        charts,
        g.prior,
        beam,
        cut,
    )
    order = np.argsort(keys, kind="stable")
    return keys[order], values[order], log_z


@kernel(interruptible=True, nogil=True)
def batch_posteriors(lex_all, base, lengths, first, root, rules, charts, prior, beam, cut):
    """``coarse_posteriors`` of every sentence of a batch, in one call: ``(keys, posteriors,
    log Z per sentence)``, the keys in sentence order (not sorted). A sentence the beam
    leaves without a parse is parsed again without it."""
    n_sym = lex_all.shape[1]
    log_z = np.full(len(lengths), -np.inf)
    keys = np.empty(1024, dtype=np.int64)
    values = np.empty(1024)
    used = 0
    for s in range(len(lengths)):
        n = lengths[s]
        if n == 0:
            continue
        row = base[1, s] - first
        lex = lex_all[row : row + n]
        start, end, sym, mu, z = sentence_posteriors(lex, root, rules, charts, prior, beam, cut)
        if z == -np.inf and beam > 0.0:  # the beam left no parse: again without it
            start, end, sym, mu, z = sentence_posteriors(lex, root, rules, charts, prior, 0.0, cut)
        log_z[s] = z
        while used + len(mu) > len(keys):
            keys, values = _doubled(keys), _doubled(values)
        for t in range(len(mu)):
            keys[used + t] = (base[end[t] - start[t], s] + start[t]) * n_sym + sym[t]
            values[used + t] = mu[t]
        used += len(mu)
    return keys[:used], values[:used], log_z
