"""Compiled rule kernels of the latent pass (``dispatch``: ahead of time, or numba's).

The unit of work is one span length and a chunk of its parent spans. For every parent span
``p`` and children pair ``(b, c)`` that some rule ``a -> b c`` with an allowed parent item at
``p`` uses (a *row*), the split sum ``z = sum_k w_k alpha_b(i, k) (x) alpha_c(k, j)`` is
accumulated once; rows are laid out grouped by children pair, so that each rule's tensor is
read once per chunk for every span of the chunk:

- inside: ``alpha_a += T_q z`` for every rule ``q = a -> b c`` of the pair whose parent item
  exists at the row's span;
- outside: ``W = sum_q beta_a T_q`` per row, then per split ``beta_b += W alpha_c`` and
  ``beta_c += W^T alpha_b``;
- expected rule counts (EM): ``C_q += beta_a (x) z``, times the tensors at the end.

Every array indexed by children states is kept on the group's live states only
(``grammars.LatentGrammar``): ``z`` and ``W`` have ``K_g`` = (live left states) x (live
right states) entries, ``T_q`` is rule ``q``'s packed ``(A_q, K_g)`` block, and the parent
item's vector is read and written at the rule's live parent states. The entries left out
are exact zeros, most of a trained model's tensors, so the passes do much less work with
the same parses (docs/design-notes.md, Packed rule tensors). An earlier attempt to loop over
each rule's real states inside full-size tensors made the pass several times slower: loop
bounds known only at run time defeated vectorisation, which contiguous packed blocks do
not.

The rule products are compiled loops, applied only to the rows that have the rule's parent
item, not BLAS calls: the chunks are sparse (on the test split with the EM m = 16 model a
pair has 5 rows per length on average and a rule 4), and small matrix products through
numba's ``np.dot`` paid for the call, for packing the tensor block and for rows without a
parent item (a BLAS version was no faster in the parser). The inside product takes four
rows and two tensor rows at a time, the outside product four tensor rows at a time, so that
each value loaded serves several multiply-adds. What remains is bound by
memory: streaming the packed tensors of every (pair, length), and the split entries, which
read (and in the outside pass write) the vectors of two items at unrelated places of the
chart (docs/design-notes.md, Where the latent pass spends its time).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lpcfg_cli.engine.dispatch import kernel
from lpcfg_cli.engine.scaling import normalise_span, split_weight

# The kernels take their arrays in named bundles. A bundle reaches a kernel as a tuple (the
# extension module's signatures, ``precompiled_signatures``, spell each as ``Tuple((...))``,
# recorded from the calls) and the kernel unpacks it by position in its first lines, so that
# one compiled function serves a bundle and a plain tuple of the same arrays alike.


class RuleArrays(NamedTuple):
    """A ``chart_grammars.LatentGrammar``'s binary rules as the kernels read them, grouped by
    children pair ``g``: its rules ``q`` are ``group_ptr[g]:group_ptr[g + 1]``; rule ``q``'s
    live parent states ``a_idx[a_ptr[q]:a_ptr[q + 1]]``; the pair's live left and right
    states ``b_idx[b_ptr[g]:b_ptr[g + 1]]`` and ``c_idx[c_ptr[g]:c_ptr[g + 1]]``; rule ``q``'s
    packed ``(A_q, K_g)`` tensor block ``packed[t_ptr[q]:t_ptr[q + 1]]``."""

    group_ptr: np.ndarray
    a_ptr: np.ndarray
    a_idx: np.ndarray
    b_ptr: np.ndarray
    b_idx: np.ndarray
    c_ptr: np.ndarray
    c_idx: np.ndarray
    t_ptr: np.ndarray
    packed: np.ndarray


class ChunkPlan(NamedTuple):
    """A chunk's rows (parent span, children pair) and split entries, both grouped by pair
    (``plan_chunk``)."""

    slot_p: np.ndarray  # parent span of each slot (a row, in pair order)
    gstart: np.ndarray  # first slot of each pair (G + 1)
    estart: np.ndarray  # first entry of each pair (G + 1)
    best: np.ndarray  # largest pair scale per parent span of the chunk
    e_slot: np.ndarray  # each entry's slot
    e_x: np.ndarray  # its left item
    e_y: np.ndarray  # its right item
    e_pair: np.ndarray  # sc[left span] + sc[right span]
    poff: np.ndarray  # first parent item of each pair in ``pit`` (G + 1)
    pit: np.ndarray  # parent item of each (slot, rule of its pair), -1 for none


class KeptPlan(NamedTuple):
    """The structure of a ``ChunkPlan`` that ``latent.PlanCache`` keeps (``refresh_plan``
    rebuilds the rest): the pairs with rows, their slot and entry ends, and the plan's
    slots, entries and parent items."""

    groups: np.ndarray
    gend: np.ndarray
    eend: np.ndarray
    slot_p: np.ndarray
    e_slot: np.ndarray
    e_x: np.ndarray
    e_y: np.ndarray
    pit: np.ndarray


class SpanItems(NamedTuple):
    """A chart's spans and items as ``plan_chunk`` reads them: the layout's span ids
    (``base[length, sentence] + start``), each span's sentence and start, each span's first
    item, each item's symbol, and each span's scale (``engine.scaling``)."""

    base: np.ndarray
    span_sent: np.ndarray
    span_start: np.ndarray
    span_first: np.ndarray
    item_sym: np.ndarray
    sc: np.ndarray


class PairIndex(NamedTuple):
    """Which children pair a rule belongs to: ``pair_group[b * n_sym + c]`` (-1: none),
    the pairs' rules (``RuleArrays.group_ptr``) and each rule's parent symbol."""

    n_sym: int
    pair_group: np.ndarray
    group_ptr: np.ndarray
    rule_parent: np.ndarray


class PairScratch(NamedTuple):
    """Per-pair scratch of ``enumerate_rows`` (``stamp`` all below the chunk's first span)."""

    stamp: np.ndarray
    valid: np.ndarray
    rowidx: np.ndarray


@kernel(nogil=True)
def find_item(item_sym: np.ndarray, lo: int, hi: int, sym: int) -> int:
    """Index of the item with symbol ``sym`` among items ``lo:hi`` (sorted), or -1."""
    while lo < hi:
        mid = (lo + hi) >> 1
        s = item_sym[mid]
        if s < sym:
            lo = mid + 1
        elif s > sym:
            hi = mid
        else:
            return mid
    return -1


@kernel(nogil=True)
def _grow(a: np.ndarray, n: int) -> np.ndarray:
    if n < len(a):
        return a
    b = np.empty(2 * len(a) + 16, dtype=a.dtype)
    b[: len(a)] = a
    return b


@kernel(nogil=True)
def _resized(a: np.ndarray, used: int, size: int) -> np.ndarray:
    """A new array of ``size`` entries holding ``a[:used]``."""
    b = np.empty(size, dtype=a.dtype)
    b[:used] = a[:used]
    return b


@kernel(nogil=True)
def enumerate_rows(p0, p1, length, spans, pairs, scratch, prune):
    """Rows ``(parent span, pair)`` of parents ``p0:p1`` (all of one ``length``) and their
    entries ``(row, left item, right item, sc[left] + sc[right])``, from the chart's
    ``SpanItems`` and the grammar's ``PairIndex``.

    A pair is a row if some split has both children items (with ``prune``: with a finite
    scale) and some rule of the pair has its parent item at the span. Also returns the
    largest ``sc[left] + sc[right]`` per parent span. ``scratch``: ``PairScratch`` (its
    ``stamp`` all < ``p0`` on entry). Without ``prune`` the rows and entries depend on the
    items only (``PlanCache``); an entry whose pair scale is -inf then gets weight 0
    (``split_weight``).
    """
    base, span_sent, span_start, span_first, item_sym, sc = spans
    n_sym, pair_group, group_ptr, rule_parent = pairs
    stamp, valid, rowidx = scratch
    cap = 1024
    row_p = np.empty(cap, dtype=np.int64)
    row_g = np.empty(cap, dtype=np.int64)
    ent_row = np.empty(cap, dtype=np.int32)
    ent_x = np.empty(cap, dtype=np.int64)
    ent_y = np.empty(cap, dtype=np.int64)
    ent_pair = np.empty(cap, dtype=np.float64)
    present = np.zeros(n_sym, dtype=np.bool_)  # the symbols of the parent span's items
    n = 0
    e = 0
    best = np.full(p1 - p0, -np.inf)
    for p in range(p0, p1):
        plo, phi = span_first[p], span_first[p + 1]
        if plo == phi:
            continue
        s, i = span_sent[p], span_start[p]
        # Room for every item pair of the span's splits, made here rather than as entries
        # come: arrays reassigned inside the loops below cost numba reference counting
        # per entry, most of this kernel's time.
        need = 0
        for k in range(1, length):
            lsp = base[k, s] + i
            rsp = base[length - k, s] + i + k
            nl = span_first[lsp + 1] - span_first[lsp]
            need += nl * (span_first[rsp + 1] - span_first[rsp])
        if e + need > cap:
            cap = max(2 * cap, e + need)
            row_p, row_g = _resized(row_p, n, cap), _resized(row_g, n, cap)
            ent_row, ent_x = _resized(ent_row, e, cap), _resized(ent_x, e, cap)
            ent_y, ent_pair = _resized(ent_y, e, cap), _resized(ent_pair, e, cap)
        for x in range(plo, phi):
            present[item_sym[x]] = True
        top = -np.inf
        for k in range(1, length):
            lsp = base[k, s] + i
            rsp = base[length - k, s] + i + k
            pair = sc[lsp] + sc[rsp]
            if prune and pair == -np.inf:
                continue
            llo, lhi = span_first[lsp], span_first[lsp + 1]
            rlo, rhi = span_first[rsp], span_first[rsp + 1]
            for x in range(llo, lhi):
                row = item_sym[x] * n_sym
                for y in range(rlo, rhi):
                    g = pair_group[row + item_sym[y]]
                    if g < 0:
                        continue
                    if stamp[g] != p:
                        stamp[g] = p
                        ok = False
                        for q in range(group_ptr[g], group_ptr[g + 1]):
                            if present[rule_parent[q]]:
                                ok = True
                                break
                        valid[g] = ok
                        if ok:
                            row_p[n] = p
                            row_g[n] = g
                            rowidx[g] = n
                            n += 1
                    if valid[g]:
                        ent_row[e] = rowidx[g]
                        ent_x[e] = x
                        ent_y[e] = y
                        ent_pair[e] = pair
                        e += 1
                        if pair > top:
                            top = pair
        best[p - p0] = top
        for x in range(plo, phi):
            present[item_sym[x]] = False
    return row_p[:n], row_g[:n], best, ent_row[:e], ent_x[:e], ent_y[:e], ent_pair[:e]


@kernel(nogil=True)
def group_slots(row_g: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Counting sort of rows by pair: (slot of each row, first slot of each pair (G + 1))."""
    start = np.zeros(n_groups + 1, dtype=np.int64)
    for g in row_g:
        start[g + 1] += 1
    for g in range(n_groups):
        start[g + 1] += start[g]
    fill = start[:-1].copy()
    slot = np.empty(len(row_g), dtype=np.int64)
    for r in range(len(row_g)):
        g = row_g[r]
        slot[r] = fill[g]
        fill[g] += 1
    return slot, start


@kernel(nogil=True)
def plan_chunk(p0, p1, length, spans, pairs, scratch, prune):
    """Rows and entries of a chunk, both grouped by children pair (arguments: see
    ``enumerate_rows``).

    Returns the fields of a ``ChunkPlan``, in its order. Working pair by pair keeps each
    pair's split sums in cache. The parent items (``parent_items``) depend on the items
    only: found here once, every pass over the chunk reads them.
    """
    row_p, row_g, best, ent_row, ent_x, ent_y, ent_pair = enumerate_rows(
        p0, p1, length, spans, pairs, scratch, prune
    )
    span_first, item_sym = spans[3], spans[4]
    group_ptr, rule_parent = pairs[2], pairs[3]
    n_groups = len(group_ptr) - 1
    row_slot, gstart = group_slots(row_g, n_groups)
    slot_p = np.empty(len(row_p), dtype=np.int64)
    for r in range(len(row_p)):
        slot_p[row_slot[r]] = row_p[r]
    ne = len(ent_row)
    estart = np.zeros(n_groups + 1, dtype=np.int64)
    for e in range(ne):
        estart[row_g[ent_row[e]] + 1] += 1
    for g in range(n_groups):
        estart[g + 1] += estart[g]
    fill = estart[:-1].copy()
    e_slot = np.empty(ne, dtype=np.int64)
    e_x = np.empty(ne, dtype=np.int64)
    e_y = np.empty(ne, dtype=np.int64)
    e_pair = np.empty(ne, dtype=np.float64)
    for e in range(ne):
        r = ent_row[e]
        t = fill[row_g[r]]
        fill[row_g[r]] += 1
        e_slot[t] = row_slot[r]
        e_x[t] = ent_x[e]
        e_y[t] = ent_y[e]
        e_pair[t] = ent_pair[e]
    poff, pit = parent_items(gstart, group_ptr, slot_p, span_first, item_sym, rule_parent)
    return slot_p, gstart, estart, best, e_slot, e_x, e_y, e_pair, poff, pit


@kernel(nogil=True)
def parent_items(gstart, group_ptr, slot_p, span_first, item_sym, rule_parent):
    """``(poff, pit)``: pair ``g``'s rows ``gstart[g]:gstart[g + 1]`` have their parent items
    at ``pit[poff[g]:poff[g + 1]]``, as ``(rows, rules of g)`` (``_parent_items``)."""
    n_groups = len(group_ptr) - 1
    poff = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        rows = gstart[g + 1] - gstart[g]
        poff[g + 1] = poff[g] + rows * (group_ptr[g + 1] - group_ptr[g])
    pit = np.empty(poff[n_groups], dtype=np.int64)
    for g in range(n_groups):
        lo, hi = gstart[g], gstart[g + 1]
        if lo < hi:
            q0, q1 = group_ptr[g], group_ptr[g + 1]
            block = pit[poff[g] : poff[g + 1]].reshape((hi - lo, q1 - q0))
            _parent_items(block, lo, hi, q0, q1, slot_p, span_first, item_sym, rule_parent)
    return poff, pit


@kernel(nogil=True)
def refresh_plan(p0, p1, group_ptr, kept, item_span, sc):
    """A cached chunk plan's dense parts and its numbers under the current scales: (first
    slot of each pair, first entry of each pair, best pair scale per parent span, entry pair
    scales, first parent item of each pair), from a ``KeptPlan`` (the pairs with rows,
    ascending, and their slot and entry ends).

    The same sums and maxima as ``enumerate_rows`` (``sc[left] + sc[right]``, max per parent
    over its entries, -inf for none), so a pass from a cached plan is bit-identical to one
    planned afresh without pruning.
    """
    groups, gend, eend, slot_p, e_slot, e_x, e_y, _ = kept
    n_groups = len(group_ptr) - 1
    gstart = np.zeros(n_groups + 1, dtype=np.int64)
    estart = np.zeros(n_groups + 1, dtype=np.int64)
    poff = np.zeros(n_groups + 1, dtype=np.int64)
    j, slot, entry = 0, 0, 0
    for g in range(n_groups):
        if j < len(groups) and groups[j] == g:
            slot, entry = gend[j], eend[j]
            j += 1
        gstart[g + 1] = slot
        estart[g + 1] = entry
        poff[g + 1] = poff[g] + (gstart[g + 1] - gstart[g]) * (group_ptr[g + 1] - group_ptr[g])
    best = np.full(p1 - p0, -np.inf)
    e_pair = np.empty(len(e_slot))
    for e in range(len(e_slot)):
        pair = sc[item_span[e_x[e]]] + sc[item_span[e_y[e]]]
        e_pair[e] = pair
        q = slot_p[e_slot[e]] - p0
        if pair > best[q]:
            best[q] = pair
    return gstart, estart, best, e_pair, poff


# The per-entry and per-row kernels below index their 2-D arrays (``z[s, u]``) instead of
# taking a row first (``zr = z[s]``): numba counts references to every view it makes, an
# atomic increment and decrement per row per entry, which were a sizeable share of a parse
# when these loops took rows (docs/design-notes.md, The latent pass).
@kernel(nogil=True, fastmath=True)
def _outer_sums(z, g, plan, alpha, weight, flush, bi, ci, ybuf):
    """``z[slot - lo] += w alpha_x[bi] (x) alpha_y[ci]`` for the entries of ``plan``'s pair
    ``g`` (``lo``: its first slot; ``bi``, ``ci``: its live states; arrays' precision)."""
    _, gstart, estart, _, e_slot, e_x, e_y, _, _, _ = plan
    lo = gstart[g]
    nb_, nc = len(bi), len(ci)
    wbuf = np.empty(1, dtype=alpha.dtype)
    for e in range(estart[g], estart[g + 1]):
        w = weight[e]
        if w == 0.0 or w < flush:
            continue
        wbuf[0] = w
        wv = wbuf[0]
        s, x, y = e_slot[e] - lo, e_x[e], e_y[e]
        for j in range(nc):
            ybuf[j] = alpha[y, ci[j]]
        for i in range(nb_):
            v = wv * alpha[x, bi[i]]
            if v == 0.0:
                continue
            off = i * nc
            for j in range(nc):
                z[s, off + j] += v * ybuf[j]


@kernel(nogil=True, fastmath=True)
def _outside_entries(beta, alpha, wmat, live, g, plan, weight, bi, ci, bufs):
    """``beta_x[bi] += w W alpha_y[ci]`` and ``beta_y[ci] += w W^T alpha_x[bi]``, ``W =
    wmat[slot - lo]`` (``(bi, ci)`` blocks), for the entries of ``plan``'s pair ``g`` whose
    row is ``live`` (a row whose parents have no outside mass has ``W = 0``: its entries
    would add nothing). ``bufs``: two scratch vectors of ``M``."""
    _, gstart, estart, _, e_slot, e_x, e_y, _, _, _ = plan
    lo = gstart[g]
    xbuf, ybuf = bufs
    nb_, nc = len(bi), len(ci)
    wbuf = np.empty(1, dtype=alpha.dtype)
    for e in range(estart[g], estart[g + 1]):
        w = weight[e]
        s = e_slot[e] - lo
        if w == 0.0 or not live[s]:
            continue
        wbuf[0] = w
        wv = wbuf[0]
        x, y = e_x[e], e_y[e]
        for j in range(nc):
            ybuf[j] = alpha[y, ci[j]]
        for i in range(nb_):
            xbuf[i] = alpha[x, bi[i]]
        for i in range(nb_):
            off = i * nc
            acc = wv - wv
            for j in range(nc):
                acc += wmat[s, off + j] * ybuf[j]
            beta[x, bi[i]] += wv * acc
        for j in range(nc):
            ybuf[j] = 0.0
        for i in range(nb_):
            v = wv * xbuf[i]
            off = i * nc
            for j in range(nc):
                ybuf[j] += v * wmat[s, off + j]
        for j in range(nc):
            beta[y, ci[j]] += ybuf[j]


@kernel(nogil=True)
def _weights(e_slot, e_pair, slot_p, ref, offset):
    """``exp(pair - ref[parent span - offset])`` per entry (0 where either is -inf)."""
    w = np.empty(len(e_slot))
    for e in range(len(e_slot)):
        w[e] = split_weight(e_pair[e], ref[slot_p[e_slot[e]] - offset])
    return w


@kernel(nogil=True)
def _chunk_pairs(rules, plan, ref, offset):
    """The pairs with rows in the chunk, each entry's weight (``_weights`` against ``ref``),
    and the most rows and live split-sum entries of a pair with rows."""
    group_ptr, _, _, b_ptr, _, c_ptr, _, _, _ = rules
    slot_p, gstart, _, _, e_slot, _, _, e_pair, _, _ = plan
    rows, width, n = 0, 0, 0
    pairs = np.empty(len(group_ptr) - 1, dtype=np.int64)
    for g in range(len(gstart) - 1):
        if gstart[g + 1] > gstart[g]:
            pairs[n] = g
            n += 1
            rows = max(rows, gstart[g + 1] - gstart[g])
            width = max(width, (b_ptr[g + 1] - b_ptr[g]) * (c_ptr[g + 1] - c_ptr[g]))
    return pairs[:n], _weights(e_slot, e_pair, slot_p, ref, offset), rows, width


@kernel(nogil=True)
def _parent_items(pit, lo, hi, q0, q1, slot_p, span_first, item_sym, rule_parent):
    """``pit[r - lo, q - q0]`` = parent item of rule ``q`` at the span of slot ``r`` (or -1)."""
    for r in range(lo, hi):
        p = slot_p[r]
        plo, phi = span_first[p], span_first[p + 1]
        for q in range(q0, q1):
            pit[r - lo, q - q0] = find_item(item_sym, plo, phi, rule_parent[q])


@kernel(nogil=True, inline="always")
def _add_column(alpha, i0, i1, i2, i3, h, a0, a1, a2, a3):
    """``alpha[i_k, h] += a_k`` for the four rows ``_rule_inside`` sums at a time."""
    alpha[i0, h] += a0
    alpha[i1, h] += a1
    alpha[i2, h] += a2
    alpha[i3, h] += a3


@kernel(nogil=True, fastmath=True)
def _rule_inside(alpha, z, items, t, ai, rows):
    """``alpha[items[r], ai] += t z_r`` for the rows whose parent item exists (``t``: the
    rule's ``(A, K)`` block); returns how many rows.

    Four rows and two tensor rows at a time (eight running dot products): each value of
    ``z`` and ``t`` loaded serves two or four multiply-adds instead of one.
    """
    na, kk = t.shape
    n = 0
    for r in range(len(items)):
        if items[r] >= 0:
            rows[n] = r
            n += 1
    i = 0
    while i + 4 <= n:
        r0, r1, r2, r3 = rows[i], rows[i + 1], rows[i + 2], rows[i + 3]
        i0, i1, i2, i3 = items[r0], items[r1], items[r2], items[r3]
        h = 0
        while h + 2 <= na:
            a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = z[r0, 0] - z[r0, 0]
            for u in range(kk):
                x, y = t[h, u], t[h + 1, u]
                a0 += z[r0, u] * x
                a1 += z[r1, u] * x
                a2 += z[r2, u] * x
                a3 += z[r3, u] * x
                b0 += z[r0, u] * y
                b1 += z[r1, u] * y
                b2 += z[r2, u] * y
                b3 += z[r3, u] * y
            _add_column(alpha, i0, i1, i2, i3, ai[h], a0, a1, a2, a3)
            _add_column(alpha, i0, i1, i2, i3, ai[h + 1], b0, b1, b2, b3)
            h += 2
        if h < na:
            a0 = a1 = a2 = a3 = z[r0, 0] - z[r0, 0]
            for u in range(kk):
                x = t[h, u]
                a0 += z[r0, u] * x
                a1 += z[r1, u] * x
                a2 += z[r2, u] * x
                a3 += z[r3, u] * x
            _add_column(alpha, i0, i1, i2, i3, ai[h], a0, a1, a2, a3)
        i += 4
    while i < n:
        r = rows[i]
        it = items[r]
        for h in range(na):
            acc = z[r, 0] - z[r, 0]
            for u in range(kk):
                acc += z[r, u] * t[h, u]
            alpha[it, ai[h]] += acc
        i += 1
    return n


@kernel(nogil=True, fastmath=True, inline="always")
def _rule_outside_rows(wmat, beta, z, counts, want_counts, items, t, ai, bbuf, live):
    """``W_r += beta[items[r], ai] t`` (and with ``want_counts`` ``C += beta[items[r], ai]
    (x) z_r``) for the rows whose parent item has outside mass, each marked in ``live``;
    returns how many rows. Four tensor rows at a time: one load and store of ``W_r`` per four
    multiply-adds.

    Inlined into ``_rule_outside`` and ``_rule_outside_counts``, each of which passes
    ``want_counts`` as a constant, so that each compiles only its own loops."""
    na, kk = t.shape
    done = 0
    for r in range(len(items)):
        it = items[r]
        if it < 0:
            continue
        nonzero = False
        for h in range(na):
            bbuf[h] = beta[it, ai[h]]
            if bbuf[h] != 0.0:
                nonzero = True
        if not nonzero:
            continue
        done += 1
        live[r] = True
        h = 0
        while h + 4 <= na:
            v0, v1, v2, v3 = bbuf[h], bbuf[h + 1], bbuf[h + 2], bbuf[h + 3]
            for u in range(kk):
                wmat[r, u] += v0 * t[h, u] + v1 * t[h + 1, u] + v2 * t[h + 2, u] + v3 * t[h + 3, u]
            h += 4
        while h < na:
            v0 = bbuf[h]
            for u in range(kk):
                wmat[r, u] += v0 * t[h, u]
            h += 1
        if want_counts:
            for h in range(na):
                bv = bbuf[h]
                for u in range(kk):
                    counts[h, u] += bv * z[r, u]
    return done


@kernel(nogil=True, fastmath=True)
def _rule_outside(wmat, beta, items, t, ai, bbuf, live):
    """``W_r += beta[items[r], ai] t`` for the rows whose parent item has outside mass
    (``_rule_outside_rows``); returns how many rows."""
    return _rule_outside_rows(wmat, beta, t, t, False, items, t, ai, bbuf, live)


@kernel(nogil=True, fastmath=True)
def _rule_outside_counts(wmat, beta, z, counts, items, t, ai, bbuf, live):
    """``_rule_outside`` and the rule's expected counts ``C += beta[items[r], ai] (x) z_r``
    (``C``: ``counts``, laid out as ``t``); returns how many rows."""
    return _rule_outside_rows(wmat, beta, z, counts, True, items, t, ai, bbuf, live)


@kernel(nogil=True, inline="always")
def _pair(rules, plan, g):
    """What every chunk kernel reads of pair ``g`` (which has rows): ``(first slot, rows,
    live left states, live right states, K_g, first rule, parent items (rows, rules of g))``."""
    group_ptr, _, _, b_ptr, b_idx, c_ptr, c_idx, _, _ = rules
    gstart, poff, pit = plan[1], plan[8], plan[9]
    lo, n = gstart[g], gstart[g + 1] - gstart[g]
    bi = b_idx[b_ptr[g] : b_ptr[g + 1]]
    ci = c_idx[c_ptr[g] : c_ptr[g + 1]]
    k = group_ptr[g + 1] - group_ptr[g]
    return (
        lo,
        n,
        bi,
        ci,
        len(bi) * len(ci),
        group_ptr[g],
        pit[poff[g] : poff[g + 1]].reshape((n, k)),
    )


@kernel(nogil=True, inline="always")
def _rule_block(rules, q, kk):
    """Rule ``q``'s packed ``(A_q, K_g)`` tensor block and its live parent states."""
    a_ptr, a_idx, t_ptr, packed = rules[1], rules[2], rules[7], rules[8]
    na = a_ptr[q + 1] - a_ptr[q]
    return packed[t_ptr[q] : t_ptr[q + 1]].reshape((na, kk)), a_idx[a_ptr[q] : a_ptr[q + 1]]


@kernel(nogil=True)
def inside_chunk(p0, p1, span_first, sc, rules, alpha, flush, plan):
    """Inside vectors and scales of the items of parent spans ``p0:p1`` (their
    ``ChunkPlan``; the grammar's ``RuleArrays``); returns flops."""
    estart, best = plan[2], plan[3]
    pairs, weight, rows, width = _chunk_pairs(rules, plan, best, p0)
    zbuf = np.empty(rows * width, dtype=alpha.dtype)
    rbuf = np.empty(rows, dtype=np.int64)
    ybuf = np.empty(alpha.shape[1], dtype=alpha.dtype)
    flops = 0
    for g in pairs:
        _, n, bi, ci, kk, q0, pit = _pair(rules, plan, g)
        if kk == 0:
            continue
        z = zbuf[: n * kk].reshape((n, kk))
        z[:] = 0.0
        _outer_sums(z, g, plan, alpha, weight, flush, bi, ci, ybuf)
        flops += 2 * (estart[g + 1] - estart[g]) * kk
        for j in range(pit.shape[1]):
            t, ai = _rule_block(rules, q0 + j, kk)
            if len(ai):
                flops += 2 * len(ai) * kk * _rule_inside(alpha, z, pit[:, j], t, ai, rbuf)
    for p in range(p0, p1):
        plo, phi = span_first[p], span_first[p + 1]
        if plo == phi:
            continue
        top = best[p - p0]
        if top == -np.inf:
            sc[p] = -np.inf
            for it in range(plo, phi):
                alpha[it, :] = 0.0
            continue
        sc[p] = top + normalise_span(alpha, plo, phi, flush)
    return flops


@kernel(nogil=True, inline="always")
def _outside_chunk(sc, rules, alpha, beta, counts, want_counts, plan):
    """Outside vectors of the children of a chunk's parent spans (whose outside vectors are
    complete); with ``want_counts`` adds ``beta_a (x) z`` per rule and row to ``counts``
    (laid out as ``packed``). Returns flops. Inlined into ``outside_chunk`` and
    ``outside_counts_chunk``, each of which passes ``want_counts`` as a constant."""
    estart, t_ptr, m = plan[2], rules[7], alpha.shape[1]
    pairs, weight, rows, width = _chunk_pairs(rules, plan, sc, 0)
    wbuf = np.empty(rows * width, dtype=alpha.dtype)
    zbuf = np.empty(rows * width if want_counts else 0, dtype=alpha.dtype)
    bufs = (np.empty(m, dtype=alpha.dtype), np.empty(m, dtype=alpha.dtype))
    ybuf = np.empty(m, dtype=alpha.dtype)
    bbuf = np.empty(m, dtype=alpha.dtype)
    lbuf = np.empty(rows, dtype=np.bool_)
    flops = 0
    for g in pairs:
        _, n, bi, ci, kk, q0, pit = _pair(rules, plan, g)
        if kk == 0:
            continue
        live = lbuf[:n]
        live[:] = False
        z = zbuf[: n * kk].reshape((n, kk)) if want_counts else zbuf[:0].reshape((0, kk))
        if want_counts:
            z[:] = 0.0
            _outer_sums(z, g, plan, alpha, weight, 0.0, bi, ci, ybuf)
        wmat = wbuf[: n * kk].reshape((n, kk))
        wmat[:] = 0.0
        done = 0
        for j in range(pit.shape[1]):
            q = q0 + j
            t, ai = _rule_block(rules, q, kk)
            na = len(ai)
            if na == 0:
                continue
            if want_counts:
                c = counts[t_ptr[q] : t_ptr[q + 1]].reshape((na, kk))
                rows_done = _rule_outside_counts(wmat, beta, z, c, pit[:, j], t, ai, bbuf, live)
            else:
                rows_done = _rule_outside(wmat, beta, pit[:, j], t, ai, bbuf, live)
            done += rows_done
            flops += 2 * na * kk * rows_done * (2 if want_counts else 1)
        if done == 0:
            continue
        _outside_entries(beta, alpha, wmat, live, g, plan, weight, bi, ci, bufs)
        flops += 4 * (estart[g + 1] - estart[g]) * kk
    return flops


@kernel(nogil=True)
def outside_chunk(sc, rules, alpha, beta, plan):
    """Outside vectors of the children of a chunk's parent spans (whose outside vectors are
    complete). Returns flops."""
    return _outside_chunk(sc, rules, alpha, beta, rules[8][:0], False, plan)


@kernel(nogil=True)
def outside_counts_chunk(sc, rules, alpha, beta, counts, plan):
    """``outside_chunk`` and EM's expected counts: adds ``beta_a (x) z`` per rule and row
    to ``counts`` (laid out as ``packed``). Returns flops."""
    return _outside_chunk(sc, rules, alpha, beta, counts, True, plan)


@kernel(nogil=True)
def flush_and_cut(alpha, beta, lo, hi, threshold, cut):
    """The outside vectors of items ``lo:hi``, once complete: entries below ``threshold``
    in absolute value set to zero (``scaling.FLUSH``), then, with ``cut`` > 0, the
    whole vector of an item whose posterior ``alpha . beta`` (summed in double precision)
    is below ``cut`` in absolute value (``latent.outside_pass``)."""
    for i in range(lo, hi):
        mu = 0.0
        for h in range(beta.shape[1]):
            if abs(beta[i, h]) < threshold:
                beta[i, h] = 0.0
            mu += np.float64(alpha[i, h]) * np.float64(beta[i, h])
        if cut > 0.0 and abs(mu) < cut:
            for h in range(beta.shape[1]):
                beta[i, h] = 0.0


@kernel(nogil=True)
def add_lexical(alpha, item, rule, weight, lexical):
    """``alpha[item[t]] += lexical[rule[t]] * weight[t]`` for every triple in order, each
    product rounded to ``alpha``'s precision before it is added (``np.add.at`` of the
    products cast to it gives the same numbers, several times more slowly)."""
    buf = np.empty(1, dtype=alpha.dtype)
    for t in range(len(item)):
        it, r, w = item[t], rule[t], weight[t]
        for h in range(alpha.shape[1]):
            buf[0] = lexical[r, h] * w
            alpha[it, h] += buf[0]


@kernel(nogil=True)
def find_keys(keys, want):
    """Index of each ``want`` in the sorted ``keys``, -1 where it is not there."""
    out = np.empty(len(want), dtype=np.int64)
    for t in range(len(want)):
        lo, hi, x = 0, len(keys), want[t]
        while lo < hi:
            mid = (lo + hi) >> 1
            if keys[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo if lo < len(keys) and keys[lo] == x else -1
    return out


@kernel(nogil=True)
def normalise_spans(values, sc, span_first, s0, s1, flush):
    """Normalise the items of spans ``s0:s1`` (scale added to ``sc``)."""
    for s in range(s0, s1):
        lo, hi = span_first[s], span_first[s + 1]
        if lo < hi:
            sc[s] += normalise_span(values, lo, hi, flush)


@kernel(nogil=True)
def rule_posteriors_chunk(sc, rules, alpha, beta, plan):
    """Posterior of every anchored rule of a chunk (after the outside pass):
    ``w beta_a T_q (alpha_x (x) alpha_y)`` per rule ``q = a -> b c`` whose parent item ``a``
    exists at the row's span and split entry ``(x, y)``, with ``w`` the entry's scale
    factor (``engine.scaling``: the same as the outside pass's). Returns the parent items,
    left items, right items and posteriors (float64) of the non-zero ones."""
    _, _, estart, _, e_slot, e_x, e_y, _, _, _ = plan
    pairs, weight, _, width = _chunk_pairs(rules, plan, sc, 0)
    v = np.empty(max(width, 1), dtype=np.float64)
    out_it = np.empty(256, dtype=np.int64)
    out_x = np.empty(256, dtype=np.int64)
    out_y = np.empty(256, dtype=np.int64)
    out_post = np.empty(256, dtype=np.float64)
    n = 0
    for g in pairs:
        lo, _, bi, ci, kk, q0, pit = _pair(rules, plan, g)
        nc = len(ci)
        if kk == 0:
            continue
        for j in range(pit.shape[1]):
            t, ai = _rule_block(rules, q0 + j, kk)
            na = len(ai)
            if na == 0:
                continue
            vslot = -1
            for e in range(estart[g], estart[g + 1]):
                it = pit[e_slot[e] - lo, j]
                w = weight[e]
                if it < 0 or w == 0.0:
                    continue
                # Entries of one row are contiguous: v = beta_a T_q once per row.
                if e_slot[e] != vslot:
                    vslot = e_slot[e]
                    b = beta[it]
                    for u in range(kk):
                        v[u] = 0.0
                    for h in range(na):
                        bh = b[ai[h]]
                        if bh != 0.0:
                            th = t[h]
                            for u in range(kk):
                                v[u] += bh * th[u]
                ax, ay = alpha[e_x[e]], alpha[e_y[e]]
                total = 0.0
                for i in range(len(bi)):
                    a2 = ax[bi[i]]
                    if a2 == 0.0:
                        continue
                    off = i * nc
                    acc = 0.0
                    for jj in range(nc):
                        acc += v[off + jj] * ay[ci[jj]]
                    total += a2 * acc
                total *= w
                if total == 0.0:
                    continue
                if n >= len(out_it):
                    out_it = _grow(out_it, n)
                    out_x = _grow(out_x, n)
                    out_y = _grow(out_y, n)
                    out_post = _grow(out_post, n)
                out_it[n] = it
                out_x[n] = e_x[e]
                out_y[n] = e_y[e]
                out_post[n] = total
                n += 1
    return out_it[:n], out_x[:n], out_y[:n], out_post[:n]
