"""Compiled rule kernels of the latent pass (numba, cached on disk).

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

``T_q`` is rule ``q``'s ``(M, M * M)`` block of the stacked rule tensors. The rule products are
compiled loops, applied only to the rows that have the rule's parent item, not BLAS calls:
the chunks are sparse (on the test split with the EM m = 16 model a pair has 5 rows per
length on average and a rule 4), and small matrix products through numba's ``np.dot`` paid
for the call, for packing the tensor block and for rows without a parent item. Measured on
the test split, one process, alternating with the BLAS version in the same run: the latent
pass replayed alone on the parser's charts took 2.54 s against 3.09 (2.73 against 3.87 while
other jobs loaded the machine), but inside the parser (``bench_parse.py --efficiency-only``,
the coarse pass evicting the caches between batches) 2.47 against 2.52, within noise. It is
bound by memory: every (pair, length) streams its rules' 16 KB tensors (7 GB per pass over
the test split), and these loops reach 33 GFLOP/s on tensors in cache but 10-20 streaming
them. Most tensor entries are zero: 86 % for the EM m = 16 model (values flushed below
``FLUSH``: EM makes the tensors sparse; every symbol has 16 states) and 99 % for a
split-merge model (padding as well). Looping over each rule's real states only (split-merge)
cut the counted work from 28.4 to 22.7 GFLOP but made the pass 5x slower (loop bounds known
only at run time defeat vectorisation); sparse tensors are the open opportunity.
"""

from __future__ import annotations

import numba as nb
import numpy as np

# The rule products no longer call BLAS, but parsing still loads scipy's BLAS on first use
# (checked with threadpool_info: scipy.linalg's OpenBLAS appears during the first parse).
# Loading it here, at import, lets threadpoolctl hold it to one thread in every parsing
# process: threadpool_limits only limits libraries already loaded, and one loaded inside the
# limit ran two threads per process (tests/test_streaming.py checks it).
import scipy.linalg.cython_blas  # noqa: F401

from lpcfg_cli.engine.scaling import normalise_span, split_weight


@nb.njit(cache=True, nogil=True)
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


@nb.njit(cache=True, nogil=True)
def _grow(a: np.ndarray, n: int) -> np.ndarray:
    if n < len(a):
        return a
    b = np.empty(2 * len(a) + 16, dtype=a.dtype)
    b[: len(a)] = a
    return b


@nb.njit(cache=True, nogil=True)
def enumerate_rows(
    p0,
    p1,
    length,
    base,
    span_sent,
    span_start,
    span_first,
    item_sym,
    sc,
    n_sym,
    pair_group,
    group_ptr,
    rule_parent,
    stamp,
    valid,
    rowidx,
    prune,
):
    """Rows ``(parent span, pair)`` of parents ``p0:p1`` (all of one ``length``) and their
    entries ``(row, left item, right item, sc[left] + sc[right])``.

    A pair is a row if some split has both children items (with ``prune``: with a finite
    scale) and some rule of the pair has its parent item at the span. Also returns the
    largest ``sc[left] + sc[right]`` per parent span. ``stamp``, ``valid`` and ``rowidx`` are
    per-pair scratch arrays (``stamp`` all < ``p0`` on entry). Without ``prune`` the rows
    and entries depend on the items only (``PlanCache``); an entry whose pair scale is -inf
    then gets weight 0 (``split_weight``).
    """
    row_p = np.empty(256, dtype=np.int64)
    row_g = np.empty(256, dtype=np.int64)
    ent_row = np.empty(1024, dtype=np.int32)
    ent_x = np.empty(1024, dtype=np.int64)
    ent_y = np.empty(1024, dtype=np.int64)
    ent_pair = np.empty(1024, dtype=np.float64)
    n = 0
    e = 0
    best = np.full(p1 - p0, -np.inf)
    for p in range(p0, p1):
        plo, phi = span_first[p], span_first[p + 1]
        if plo == phi:
            continue
        s, i = span_sent[p], span_start[p]
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
                            if find_item(item_sym, plo, phi, rule_parent[q]) >= 0:
                                ok = True
                                break
                        valid[g] = ok
                        if ok:
                            row_p = _grow(row_p, n)
                            row_g = _grow(row_g, n)
                            row_p[n] = p
                            row_g[n] = g
                            rowidx[g] = n
                            n += 1
                    if valid[g]:
                        if e >= len(ent_x):
                            ent_row = _grow(ent_row, e)
                            ent_x = _grow(ent_x, e)
                            ent_y = _grow(ent_y, e)
                            ent_pair = _grow(ent_pair, e)
                        ent_row[e] = rowidx[g]
                        ent_x[e] = x
                        ent_y[e] = y
                        ent_pair[e] = pair
                        e += 1
                        if pair > top:
                            top = pair
        best[p - p0] = top
    return row_p[:n], row_g[:n], best, ent_row[:e], ent_x[:e], ent_y[:e], ent_pair[:e]


@nb.njit(cache=True, nogil=True)
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


@nb.njit(cache=True, nogil=True)
def plan_chunk(
    p0,
    p1,
    length,
    base,
    span_sent,
    span_start,
    span_first,
    item_sym,
    sc,
    n_sym,
    pair_group,
    group_ptr,
    rule_parent,
    stamp,
    valid,
    rowidx,
    prune,
):
    """Rows and entries of a chunk, both grouped by children pair (``prune``: see
    ``enumerate_rows``).

    Returns (span of each slot, first slot of each pair, first entry of each pair, best pair
    scale per parent span, entry slots, entry left items, entry right items, entry pair
    scales). Working pair by pair keeps each pair's split sums in cache.
    """
    row_p, row_g, best, ent_row, ent_x, ent_y, ent_pair = enumerate_rows(
        p0,
        p1,
        length,
        base,
        span_sent,
        span_start,
        span_first,
        item_sym,
        sc,
        n_sym,
        pair_group,
        group_ptr,
        rule_parent,
        stamp,
        valid,
        rowidx,
        prune,
    )
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
    return slot_p, gstart, estart, best, e_slot, e_x, e_y, e_pair


@nb.njit(cache=True, nogil=True)
def refresh_plan(p0, p1, n_groups, groups, gend, eend, slot_p, e_slot, e_x, e_y, item_span, sc):
    """A cached chunk plan's dense parts and its numbers under the current scales: (first
    slot of each pair, first entry of each pair, best pair scale per parent span, entry pair
    scales), from the pairs with rows (``groups``, ascending) and their slot and entry ends.

    The same sums and maxima as ``enumerate_rows`` (``sc[left] + sc[right]``, max per parent
    over its entries, -inf for none), so a pass from a cached plan is bit-identical to one
    planned afresh without pruning.
    """
    gstart = np.zeros(n_groups + 1, dtype=np.int64)
    estart = np.zeros(n_groups + 1, dtype=np.int64)
    j, slot, entry = 0, 0, 0
    for g in range(n_groups):
        if j < len(groups) and groups[j] == g:
            slot, entry = gend[j], eend[j]
            j += 1
        gstart[g + 1] = slot
        estart[g + 1] = entry
    best = np.full(p1 - p0, -np.inf)
    e_pair = np.empty(len(e_slot))
    for e in range(len(e_slot)):
        pair = sc[item_span[e_x[e]]] + sc[item_span[e_y[e]]]
        e_pair[e] = pair
        q = slot_p[e_slot[e]] - p0
        if pair > best[q]:
            best[q] = pair
    return gstart, estart, best, e_pair


@nb.njit(cache=True, nogil=True, fastmath=True)
def _outer_sums(z, lo, e0, e1, alpha, e_slot, e_x, e_y, weight, flush):
    """``z[slot - lo] += w alpha_x (x) alpha_y`` for entries ``e0:e1`` (arrays' precision)."""
    m = alpha.shape[1]
    wbuf = np.empty(1, dtype=alpha.dtype)
    for e in range(e0, e1):
        w = weight[e]
        if w == 0.0 or w < flush:
            continue
        wbuf[0] = w
        wv = wbuf[0]
        zr = z[e_slot[e] - lo]
        ax = alpha[e_x[e]]
        ay = alpha[e_y[e]]
        for h2 in range(m):
            v = wv * ax[h2]
            off = h2 * m
            for h3 in range(m):
                zr[off + h3] += v * ay[h3]


@nb.njit(cache=True, nogil=True, fastmath=True)
def _outside_entries(beta, alpha, wmat, lo, e0, e1, e_slot, e_x, e_y, weight):
    """``beta_x += w W alpha_y`` and ``beta_y += w W^T alpha_x``, ``W = wmat[slot - lo]``."""
    m = alpha.shape[1]
    wbuf = np.empty(1, dtype=alpha.dtype)
    for e in range(e0, e1):
        w = weight[e]
        if w == 0.0:
            continue
        wbuf[0] = w
        wv = wbuf[0]
        wm = wmat[e_slot[e] - lo]
        x, y = e_x[e], e_y[e]
        ax, ay, bx, by = alpha[x], alpha[y], beta[x], beta[y]
        for h2 in range(m):
            off = h2 * m
            acc = wv - wv
            for h3 in range(m):
                acc += wm[off + h3] * ay[h3]
            bx[h2] += wv * acc
        for h2 in range(m):
            v = wv * ax[h2]
            off = h2 * m
            for h3 in range(m):
                by[h3] += v * wm[off + h3]


@nb.njit(cache=True, nogil=True)
def _weights(e_slot, e_pair, slot_p, ref, offset):
    """``exp(pair - ref[parent span - offset])`` per entry (0 where either is -inf)."""
    w = np.empty(len(e_slot))
    for e in range(len(e_slot)):
        w[e] = split_weight(e_pair[e], ref[slot_p[e_slot[e]] - offset])
    return w


@nb.njit(cache=True, nogil=True)
def _largest_group(gstart, group_ptr):
    rows, rules = 0, 0
    for g in range(len(gstart) - 1):
        if gstart[g + 1] > gstart[g]:
            rows = max(rows, gstart[g + 1] - gstart[g])
            rules = max(rules, group_ptr[g + 1] - group_ptr[g])
    return rows, rules


@nb.njit(cache=True, nogil=True)
def _parent_items(pit, lo, hi, q0, q1, slot_p, span_first, item_sym, rule_parent):
    """``pit[r - lo, q - q0]`` = parent item of rule ``q`` at the span of slot ``r`` (or -1)."""
    for r in range(lo, hi):
        p = slot_p[r]
        plo, phi = span_first[p], span_first[p + 1]
        for q in range(q0, q1):
            pit[r - lo, q - q0] = find_item(item_sym, plo, phi, rule_parent[q])


@nb.njit(cache=True, nogil=True, fastmath=True)
def _rule_inside(alpha, z, items, t):
    """``alpha[items[r]] += t z_r`` for the rows whose parent item exists; returns how many."""
    m, mm = t.shape
    done = 0
    for r in range(len(items)):
        it = items[r]
        if it < 0:
            continue
        done += 1
        zr = z[r]
        for h in range(m):
            th = t[h]
            acc = zr[0] * th[0]
            for u in range(1, mm):
                acc += zr[u] * th[u]
            alpha[it, h] += acc
    return done


@nb.njit(cache=True, nogil=True, fastmath=True)
def _rule_outside(wmat, beta, z, counts, want_counts, items, t):
    """``W_r += beta[items[r]] t`` (and ``C += beta[items[r]] (x) z_r``) for the rows whose
    parent item has outside mass; returns how many."""
    m, mm = t.shape
    done = 0
    for r in range(len(items)):
        it = items[r]
        if it < 0:
            continue
        b = beta[it]
        nonzero = False
        for h in range(m):
            if b[h] != 0.0:
                nonzero = True
        if not nonzero:
            continue
        done += 1
        wr = wmat[r]
        for h in range(m):
            bv = b[h]
            th = t[h]
            for u in range(mm):
                wr[u] += bv * th[u]
        if want_counts:
            zr = z[r]
            for h in range(m):
                bv = b[h]
                ch = counts[h]
                for u in range(mm):
                    ch[u] += bv * zr[u]
    return done


@nb.njit(cache=True, nogil=True)
def inside_chunk(
    p0,
    p1,
    span_first,
    item_sym,
    sc,
    group_ptr,
    rule_parent,
    stacked,
    alpha,
    flush,
    slot_p,
    gstart,
    estart,
    best,
    e_slot,
    e_x,
    e_y,
    e_pair,
):
    """Inside vectors and scales of the items of parent spans ``p0:p1``; returns flops."""
    m = alpha.shape[1]
    mm = m * m
    n_groups = len(group_ptr) - 1
    weight = _weights(e_slot, e_pair, slot_p, best, p0)
    rows, rules = _largest_group(gstart, group_ptr)
    zbuf = np.empty(rows * mm, dtype=alpha.dtype)
    pbuf = np.empty(rows * rules, dtype=np.int64)
    products = 0
    for g in range(n_groups):
        lo, hi = gstart[g], gstart[g + 1]
        if lo == hi:
            continue
        n = hi - lo
        q0, q1 = group_ptr[g], group_ptr[g + 1]
        k = q1 - q0
        z = zbuf[: n * mm].reshape((n, mm))
        z[:] = 0.0
        _outer_sums(z, lo, estart[g], estart[g + 1], alpha, e_slot, e_x, e_y, weight, flush)
        pit = pbuf[: n * k].reshape((n, k))
        _parent_items(pit, lo, hi, q0, q1, slot_p, span_first, item_sym, rule_parent)
        for j in range(k):
            q = q0 + j
            products += _rule_inside(alpha, z, pit[:, j], stacked[q * m : (q + 1) * m])
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
    return 2 * products * m**3 + 2 * len(e_slot) * mm


@nb.njit(cache=True, nogil=True)
def outside_chunk(
    span_first,
    item_sym,
    sc,
    group_ptr,
    rule_parent,
    stacked,
    alpha,
    beta,
    counts,
    want_counts,
    slot_p,
    gstart,
    estart,
    e_slot,
    e_x,
    e_y,
    e_pair,
):
    """Outside vectors of the children of a chunk's parent spans (whose outside vectors are
    complete); with ``want_counts`` adds ``beta_a (x) z`` per rule and row to ``counts``
    ((R M, M M), grouped order). Returns flops."""
    m = alpha.shape[1]
    mm = m * m
    n_groups = len(group_ptr) - 1
    weight = _weights(e_slot, e_pair, slot_p, sc, 0)
    rows, rules = _largest_group(gstart, group_ptr)
    wbuf = np.empty(rows * mm, dtype=alpha.dtype)
    zbuf = np.empty(rows * mm if want_counts else 0, dtype=alpha.dtype)
    pbuf = np.empty(rows * rules, dtype=np.int64)
    products = 0
    for g in range(n_groups):
        lo, hi = gstart[g], gstart[g + 1]
        if lo == hi:
            continue
        n = hi - lo
        q0, q1 = group_ptr[g], group_ptr[g + 1]
        k = q1 - q0
        pit = pbuf[: n * k].reshape((n, k))
        _parent_items(pit, lo, hi, q0, q1, slot_p, span_first, item_sym, rule_parent)
        z = zbuf[: n * mm].reshape((n, mm)) if want_counts else zbuf[:0].reshape((0, mm))
        if want_counts:
            z[:] = 0.0
            _outer_sums(z, lo, estart[g], estart[g + 1], alpha, e_slot, e_x, e_y, weight, 0.0)
        wmat = wbuf[: n * mm].reshape((n, mm))
        wmat[:] = 0.0
        done = 0
        for j in range(k):
            q = q0 + j
            done += _rule_outside(
                wmat,
                beta,
                z,
                counts[q * m : (q + 1) * m],
                want_counts,
                pit[:, j],
                stacked[q * m : (q + 1) * m],
            )
        if done == 0:
            continue
        products += done
        _outside_entries(beta, alpha, wmat, lo, estart[g], estart[g + 1], e_slot, e_x, e_y, weight)
    return 2 * products * m**3 + 4 * len(e_slot) * mm


@nb.njit(cache=True, nogil=True)
def normalise_spans(values, sc, span_first, s0, s1, flush):
    """Normalise the items of spans ``s0:s1`` (scale added to ``sc``)."""
    for s in range(s0, s1):
        lo, hi = span_first[s], span_first[s + 1]
        if lo < hi:
            sc[s] += normalise_span(values, lo, hi, flush)


@nb.njit(cache=True, nogil=True)
def rule_posteriors_chunk(
    span_first,
    item_sym,
    sc,
    group_ptr,
    rule_parent,
    stacked,
    alpha,
    beta,
    slot_p,
    gstart,
    estart,
    e_slot,
    e_x,
    e_y,
    e_pair,
):
    """Posterior of every anchored rule of a chunk (after the outside pass):
    ``w beta_a T_q (alpha_x (x) alpha_y)`` per rule ``q = a -> b c`` whose parent item ``a``
    exists at the row's span and split entry ``(x, y)``, with ``w`` the entry's scale
    factor (``engine.scaling``: the same as the outside pass's). Returns the parent items,
    left items, right items and posteriors (float64) of the non-zero ones."""
    m = alpha.shape[1]
    mm = m * m
    n_groups = len(group_ptr) - 1
    weight = _weights(e_slot, e_pair, slot_p, sc, 0)
    rows, rules = _largest_group(gstart, group_ptr)
    pbuf = np.empty(rows * rules, dtype=np.int64)
    v = np.empty(mm, dtype=np.float64)
    out_it = np.empty(256, dtype=np.int64)
    out_x = np.empty(256, dtype=np.int64)
    out_y = np.empty(256, dtype=np.int64)
    out_post = np.empty(256, dtype=np.float64)
    n = 0
    for g in range(n_groups):
        lo, hi = gstart[g], gstart[g + 1]
        if lo == hi:
            continue
        q0, q1 = group_ptr[g], group_ptr[g + 1]
        k = q1 - q0
        pit = pbuf[: (hi - lo) * k].reshape((hi - lo, k))
        _parent_items(pit, lo, hi, q0, q1, slot_p, span_first, item_sym, rule_parent)
        for j in range(k):
            t = stacked[(q0 + j) * m : (q0 + j + 1) * m]
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
                    for u in range(mm):
                        v[u] = 0.0
                    for h in range(m):
                        bh = b[h]
                        if bh != 0.0:
                            th = t[h]
                            for u in range(mm):
                                v[u] += bh * th[u]
                ax, ay = alpha[e_x[e]], alpha[e_y[e]]
                total = 0.0
                for h2 in range(m):
                    a2 = ax[h2]
                    if a2 == 0.0:
                        continue
                    off = h2 * m
                    acc = 0.0
                    for h3 in range(m):
                        acc += v[off + h3] * ay[h3]
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
