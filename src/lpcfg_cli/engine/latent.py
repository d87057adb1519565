"""The latent pass: inside-outside of an L-PCFG over the allowed items of a chart.

Items ``(span, symbol)`` are given by the caller (the coarse pass's survivors when parsing,
the nodes of observed trees for EM and tree scores). Span lengths are processed bottom-up
(inside) and top-down (outside), each length in chunks of parent spans by the compiled
kernels (``kernels``), which put nearly all multiply-adds into one matrix product per
children pair and chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine import kernels as k
from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.result import Chart
from lpcfg_cli.engine.scaling import flush_rows, log_value
from lpcfg_cli.model.lpcfg import ragged_ranges

# Parent spans per kernel call: bounds the split-sum buffer (rows x M * M floats).
CHUNK_SPANS = 2048

# Bytes of plans kept by default (about 40 million split entries), over all the caches
# sharing a budget.
PLAN_CACHE_BYTES = 1 << 30


@dataclass
class PlanBudget:
    """Bytes the ``PlanCache`` objects sharing it may hold, and how many they hold."""

    max_bytes: int = PLAN_CACHE_BYTES
    nbytes: int = 0


class PlanCache:
    """The structural plan of every chunk of one chart, kept across latent passes over the
    same items with new parameters (EM: the training trees or strings every iteration).

    Planning a chunk (``kernels.plan_chunk``: rows, split entries, grouped by children pair)
    took 57 % of an E-step from strings (2 states, 738K splits); it depends on the items
    only, except for the pair scales and each parent's best one, which ``kernels.
    refresh_plan`` recomputes from the current scales. Measured, alternating in one process:
    that E-step 0.137 -> 0.040 s (18 MB of plans); treebank EM (m = 16, 3,253 trees)
    0.47 -> 0.41 s per iteration (3 MB), where the rule products dominate.

    Plans are built without the pruning of splits whose child span has no mass (those
    entries get weight 0), so that a later pass where the span has mass again is still
    exact; rows depend on the parent's items only, which do not change. Plans are kept while
    the ``budget`` (shared by the caches of several charts, e.g. the blocks of
    ``engine.strings``) allows (24 bytes per split entry); chunks beyond it are planned every
    pass as without a cache. One cache serves one chart (one set of items and one rule
    layout); the caller owns it.
    """

    def __init__(self, budget: PlanBudget | None = None) -> None:
        self.budget = budget if budget is not None else PlanBudget()
        self.chunks: dict[int, tuple[np.ndarray, ...]] = {}  # first parent span -> plan
        self.uncached: set[int] = set()  # chunks that did not fit
        self.shape: tuple[int, int, int] | None = None  # (items, spans, pairs) it serves

    def check(self, shape: tuple[int, int, int]) -> None:
        """Refuse a chart other than the one the cache was filled from."""
        if self.shape is None:
            self.shape = shape
        elif self.shape != shape:
            raise ValueError(f"a PlanCache of a chart {self.shape} used for {shape}")

    def store(self, p0: int, plan: tuple[np.ndarray, ...]) -> None:
        """Keep the structure of chunk ``p0``'s unpruned plan if the budget allows: the
        pairs with rows and their slot and entry ends (not the dense per-pair starts, which
        would take 16 bytes per pair of the grammar and chunk), the slots' spans and the
        entries."""
        slot_p, gstart, estart, _, e_slot, e_x, e_y, _ = plan
        groups = np.flatnonzero(gstart[1:] != gstart[:-1])
        kept = (groups, gstart[groups + 1], estart[groups + 1], slot_p, e_slot, e_x, e_y)
        size = sum(a.nbytes for a in kept)
        if self.budget.nbytes + size > self.budget.max_bytes:
            self.uncached.add(p0)
            return
        self.chunks[p0] = kept
        self.budget.nbytes += size


def latent_pass(
    g: LatentGrammar,
    layout: SpanLayout,
    keys: np.ndarray,
    lexical: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    outside: bool = True,
    counts: bool = False,
    rules: bool = False,
    weights: np.ndarray | None = None,
    cache: PlanCache | None = None,
) -> Chart:
    """Inside (and outside) vectors of the items ``keys`` (sorted ``span * N + symbol``).

    ``lexical``: (item index, lexical rule, weight) triples; the weighted lexical vectors are
    summed into the pre-terminal items. With ``counts`` the chart also holds expected rule
    counts ``(R, M, M * M)`` in the grammar's rule order (EM's E-step; they need ``outside``).
    With ``rules`` the chart also holds every anchored binary rule's posterior
    (``Chart.rules``: parent, left and right items and posterior; for the rule-product
    decoding; needs ``outside``). ``weights`` (one per sentence) start sentence ``s``'s
    outside pass from ``weights[s]`` times the usual root vector, so that its outside
    vectors, posteriors and expected counts count it that many times (a sentence seen
    ``weights[s]`` times; EM from strings, ``engine.strings``). ``cache`` keeps the chunks'
    plans for the next pass over the same items (``PlanCache``); results are the same as
    without it, except the flop count (which then includes splits of weight 0).
    """
    n_sym, m = g.n_symbols, g.m
    keys = np.asarray(keys, dtype=np.int64)
    item_span, item_sym = keys // n_sym, keys % n_sym
    # Items are sorted by span: the running count of items per span gives each span's first.
    span_first = np.zeros(layout.n_spans + 1, dtype=np.int64)
    np.cumsum(np.bincount(item_span, minlength=layout.n_spans), out=span_first[1:])
    dtype, flush = g.dtype, g.flush
    alpha = np.zeros((len(keys), m), dtype=dtype)
    sc = np.zeros(layout.n_spans)
    item, rule, weight = lexical
    if len(rule):
        np.add.at(alpha, item, (g.lexical[rule] * np.asarray(weight)[:, None]).astype(dtype))
    if layout.max_length:
        blk = layout.block(1)
        k.normalise_spans(alpha, sc, span_first, blk.start, blk.stop, flush)
    n_groups = len(g.group_ptr) - 1
    if cache is not None:
        cache.check((len(keys), layout.n_spans, n_groups))
    # The grammar's arrays every rule kernel reads.
    rule_arrays = (
        g.group_ptr,
        g.rule_parent,
        g.a_ptr,
        g.a_idx,
        g.b_ptr,
        g.b_idx,
        g.c_ptr,
        g.c_idx,
        g.t_ptr,
        g.packed,
    )
    stamp = np.full(n_groups, -1, dtype=np.int64)
    valid = np.zeros(n_groups, dtype=np.bool_)
    rowidx = np.zeros(n_groups, dtype=np.int64)
    flops = 0
    plans = []  # per chunk, kept for the outside pass
    for length in range(2, layout.max_length + 1):
        blk = layout.block(length)
        for p0 in range(blk.start, blk.stop, CHUNK_SPANS):
            p1 = min(blk.stop, p0 + CHUNK_SPANS)
            kept = None if cache is None else cache.chunks.get(p0)
            if kept is not None:
                groups, gend, eend, slot_p, e_slot, e_x, e_y = kept
                gstart, estart, best, e_pair = k.refresh_plan(
                    p0, p1, n_groups, groups, gend, eend, slot_p, e_slot, e_x, e_y, item_span, sc
                )
                plan = (slot_p, gstart, estart, best, e_slot, e_x, e_y, e_pair)
            else:
                keep = cache is not None and p0 not in cache.uncached
                plan = k.plan_chunk(
                    p0,
                    p1,
                    length,
                    layout.base,
                    layout.span_sent,
                    layout.span_start,
                    span_first,
                    item_sym,
                    sc,
                    n_sym,
                    g.pair_group,
                    g.group_ptr,
                    g.rule_parent,
                    stamp,
                    valid,
                    rowidx,
                    not keep,
                )
                if keep:
                    cache.store(p0, plan)
            flops += k.inside_chunk(
                p0, p1, span_first, item_sym, sc, *rule_arrays, alpha, flush, *plan
            )
            if outside:
                plans.append((length, plan))

    roots = layout.root_spans()
    log_z = np.full(len(roots), -np.inf)
    # Every root item and its sentence, as flat arrays: a Python loop over the sentences
    # took 19 of the 29 s of supervised EM on 10^5 trees (scripts/wcfg_random.py).
    ok = roots >= 0
    first = span_first[roots[ok]]
    sizes = span_first[roots[ok] + 1] - first
    root_item = ragged_ranges(first, sizes)
    root_sent = np.repeat(np.flatnonzero(ok), sizes)
    root_vec = g.root[item_sym[root_item]]
    per_item = np.einsum("ih,ih->i", alpha[root_item], root_vec, dtype=np.float64)
    z = np.bincount(root_sent, weights=per_item, minlength=len(roots))
    log_z[ok] = log_value(z[ok], sc[roots[ok]])
    chart = Chart(keys, alpha, None, sc, log_z, span_first, flops=flops)
    if not outside:
        return chart

    beta = np.zeros_like(alpha)
    live = np.isfinite(log_z[root_sent])
    start = (root_vec[live] / z[root_sent[live], None]).astype(beta.dtype)
    if weights is not None:
        start = start * np.asarray(weights, dtype=np.float64)[root_sent[live], None]
    beta[root_item[live]] = start
    top = float(np.abs(beta).max(initial=0.0))
    rule_counts = np.zeros(len(g.packed) if counts else 0, dtype=dtype)
    flushed = layout.max_length + 1
    anchored: list[tuple[np.ndarray, ...]] = []
    # The arrays every outside-side kernel reads, then each chunk's plan without ``best``.
    shared = (span_first, item_sym, sc, *rule_arrays, alpha, beta)
    for length, (slot_p, gstart, estart, _, *entries) in reversed(plans):
        if flush and length < flushed:
            blk = layout.block(length)
            flush_rows(beta, span_first[blk.start], span_first[blk.stop], flush * top)
            flushed = length
        plan = (slot_p, gstart, estart, *entries)
        if rules:  # beta is complete at this length: the chunk's parents are done
            anchored.append(k.rule_posteriors_chunk(*shared, *plan))
        flops += k.outside_chunk(*shared, rule_counts, counts, *plan)
    chart.beta = beta
    chart.flops = flops
    if rules:
        empty = (np.zeros(0, np.int64),) * 3 + (np.zeros(0),)
        chart.rules = tuple(np.concatenate(parts) for parts in zip(*anchored, empty, strict=True))
    if counts:
        chart.rule_counts = g.unpack(rule_counts * g.packed)
    return chart


def lexical_items(
    g: LatentGrammar, layout: SpanLayout, keys: np.ndarray, lexical: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(span, lexical rule, weight) triples -> (item, rule, weight), dropping rules whose
    pre-terminal item is not in ``keys``."""
    span, rule, weight = lexical
    want = np.asarray(span, dtype=np.int64) * g.n_symbols + g.lexical_parent[rule]
    pos = np.searchsorted(keys, want)
    pos = np.minimum(pos, max(len(keys) - 1, 0))
    ok = (len(keys) > 0) & (keys[pos] == want) if len(keys) else np.zeros(len(want), bool)
    return pos[ok], np.asarray(rule)[ok], np.asarray(weight)[ok]


class ItemChart:
    """Chart items fixed once and run many times (observed trees, all trees of sentences):
    a class with ``layout``, ``keys`` and ``lexical`` (``latent_pass``'s arguments) gets
    ``run``."""

    layout: SpanLayout
    keys: np.ndarray
    lexical: tuple[np.ndarray, np.ndarray, np.ndarray]

    def run(
        self,
        g: LatentGrammar,
        *,
        outside: bool = False,
        counts: bool = False,
        weights: np.ndarray | None = None,
        cache: PlanCache | None = None,
    ) -> Chart:
        return latent_pass(
            g,
            self.layout,
            self.keys,
            self.lexical,
            outside=outside,
            counts=counts,
            weights=weights,
            cache=cache,
        )
