"""The latent pass: inside-outside of an L-PCFG over the allowed items of a chart.

Items ``(span, symbol)`` are given by the caller (the coarse pass's survivors when parsing,
the nodes of observed trees for EM and tree scores). Span lengths are processed bottom-up
(inside) and top-down (outside), each length in chunks of parent spans by the compiled
kernels (``kernels``), which put nearly all multiply-adds into one matrix product per
children pair and chunk.

The phases, each a function of its own: ``inside_pass`` (inside vectors and log Z; it keeps
the chunk plans on the chart), then on its chart ``outside_pass`` (outside vectors, item
posteriors) or ``outside_counts`` (the same and EM's expected rule counts), and after either
``anchored_rules`` (the anchored rule posteriors of the rule-product decoders).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine import kernels as k
from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.dispatch import float64s, int64s
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.result import Chart, ChunkPlans
from lpcfg_cli.engine.scaling import log_value
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
    was most of an E-step from strings with few states; it depends on the items only, except
    for the pair scales and each parent's best one, which ``kernels.refresh_plan`` recomputes
    from the current scales. Cached plans make such an E-step several times faster and
    treebank EM, where the rule products dominate, somewhat faster (docs/design-notes.md,
    The latent pass).

    Plans are built without the pruning of splits whose child span has no mass (those
    entries get weight 0), so that a later pass where the span has mass again is still
    exact; rows depend on the parent's items only, which do not change. Plans are kept while
    the ``budget`` (shared by the caches of several charts, e.g. the blocks of
    ``engine.string_charts``) allows (24 bytes per split entry); chunks beyond it are planned every
    pass as without a cache. One cache serves one chart (one set of items and one rule
    layout); the caller owns it.
    """

    def __init__(self, budget: PlanBudget | None = None) -> None:
        self.budget = budget if budget is not None else PlanBudget()
        self.chunks: dict[int, k.KeptPlan] = {}  # first parent span -> plan
        self.uncached: set[int] = set()  # chunks that did not fit
        self.shape: tuple[int, int, int] | None = None  # (items, spans, pairs) it serves

    def check(self, shape: tuple[int, int, int]) -> None:
        """Refuse a chart other than the one the cache was filled from."""
        if self.shape is None:
            self.shape = shape
        elif self.shape != shape:
            raise ValueError(f"a PlanCache of a chart {self.shape} used for {shape}")

    def store(self, p0: int, plan: k.ChunkPlan) -> None:
        """Keep the structure of chunk ``p0``'s unpruned plan if the budget allows: the
        pairs with rows and their slot and entry ends (not the dense per-pair starts, which
        would take 16 bytes per pair of the grammar and chunk), the slots' spans, the
        entries and the rows' parent items."""
        groups = np.flatnonzero(plan.gstart[1:] != plan.gstart[:-1])
        kept = k.KeptPlan(
            groups,
            plan.gstart[groups + 1],
            plan.estart[groups + 1],
            plan.slot_p,
            plan.e_slot,
            plan.e_x,
            plan.e_y,
            plan.pit,
        )
        size = sum(a.nbytes for a in kept)
        if self.budget.nbytes + size > self.budget.max_bytes:
            self.uncached.add(p0)
            return
        self.chunks[p0] = kept
        self.budget.nbytes += size


def _rule_arrays(g: LatentGrammar) -> k.RuleArrays:
    """The grammar's arrays every rule kernel reads."""
    return k.RuleArrays(
        g.group_ptr, g.a_ptr, g.a_idx, g.b_ptr, g.b_idx, g.c_ptr, g.c_idx, g.t_ptr, g.packed
    )


class _Planner:
    """Plans the chunks of one inside pass: ``kernels.plan_chunk``, or ``kernels.
    refresh_plan`` of the structure a ``PlanCache`` kept from an earlier pass."""

    def __init__(
        self,
        g: LatentGrammar,
        layout: SpanLayout,
        span_first: np.ndarray,
        item_span: np.ndarray,
        item_sym: np.ndarray,
        sc: np.ndarray,
        cache: PlanCache | None,
    ) -> None:
        self.g, self.cache, self.item_span, self.sc = g, cache, item_span, sc
        self.n_groups = len(g.group_ptr) - 1
        if cache is not None:
            cache.check((len(item_sym), layout.n_spans, self.n_groups))
        self.spans = k.SpanItems(
            layout.base, layout.span_sent, layout.span_start, span_first, item_sym, sc
        )
        self.pairs = k.PairIndex(g.n_symbols, g.pair_group, g.group_ptr, g.rule_parent)
        self.scratch = k.PairScratch(
            np.full(self.n_groups, -1, dtype=np.int64),
            np.zeros(self.n_groups, dtype=np.bool_),
            np.zeros(self.n_groups, dtype=np.int64),
        )

    def plan(self, p0: int, p1: int, length: int) -> k.ChunkPlan:
        """The plan of parent spans ``p0:p1`` (all of ``length``) under the current scales
        (the shorter spans' ``sc`` are final)."""
        cache = self.cache
        kept = None if cache is None else cache.chunks.get(p0)
        if kept is not None:
            gstart, estart, best, e_pair, poff = k.refresh_plan(
                p0, p1, self.g.group_ptr, kept, self.item_span, self.sc
            )
            return k.ChunkPlan(
                kept.slot_p, gstart, estart, best, kept.e_slot, kept.e_x, kept.e_y, e_pair,
                poff, kept.pit,
            )  # fmt: skip
        keep = cache is not None and p0 not in cache.uncached
        plan = k.ChunkPlan(
            *k.plan_chunk(p0, p1, length, self.spans, self.pairs, self.scratch, not keep)
        )
        if keep:
            cache.store(p0, plan)
        return plan


def _lexical_inside(
    g: LatentGrammar,
    layout: SpanLayout,
    n_items: int,
    span_first: np.ndarray,
    lexical: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha, sc)``: the pre-terminal items' weighted lexical vectors, normalised per
    span; every other item zero."""
    alpha = np.zeros((n_items, g.m), dtype=g.dtype)
    sc = np.zeros(layout.n_spans)
    item, rule, weight = lexical
    if len(rule):
        k.add_lexical(
            alpha,
            int64s(item),
            int64s(rule),
            float64s(weight),
            g.lexical,
        )
    if layout.max_length:
        blk = layout.block(1)
        k.normalise_spans(alpha, sc, span_first, blk.start, blk.stop, g.flush)
    return alpha, sc


def _root_values(
    g: LatentGrammar,
    layout: SpanLayout,
    span_first: np.ndarray,
    item_sym: np.ndarray,
    alpha: np.ndarray,
    sc: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """``(log Z per sentence, root items, their sentences, their root vectors, scaled Z per
    sentence)``. Every root item and its sentence as flat arrays: a Python loop over the
    sentences took most of the time of supervised EM on many small trees
    (scripts/wcfg_random.py; docs/design-notes.md, The latent pass)."""
    roots = layout.root_spans()
    log_z = np.full(len(roots), -np.inf)
    ok = roots >= 0
    first = span_first[roots[ok]]
    sizes = span_first[roots[ok] + 1] - first
    root_item = ragged_ranges(first, sizes)
    root_sent = np.repeat(np.flatnonzero(ok), sizes)
    root_vec = g.root[item_sym[root_item]]
    per_item = np.einsum("ih,ih->i", alpha[root_item], root_vec, dtype=np.float64)
    z = np.bincount(root_sent, weights=per_item, minlength=len(roots))
    log_z[ok] = log_value(z[ok], sc[roots[ok]])
    return log_z, root_item, root_sent, root_vec, z


def inside_pass(
    g: LatentGrammar,
    layout: SpanLayout,
    keys: np.ndarray,
    lexical: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    cache: PlanCache | None = None,
    keep_plans: bool = True,
) -> Chart:
    """Inside vectors, span scales and log Z per sentence of the items ``keys`` (sorted
    ``span * N + symbol``); the chart's ``beta`` is None.

    ``lexical``: (item index, lexical rule, weight) triples; the weighted lexical vectors are
    summed into the pre-terminal items. Span lengths go bottom-up, each in chunks of
    ``CHUNK_SPANS`` parent spans. ``cache`` keeps the chunks' plans for the next pass over the
    same items (``PlanCache``); results are the same as without it, except the flop count
    (which then includes splits of weight 0). With ``keep_plans`` the chart keeps the chunk
    plans (``Chart.plans``) for ``outside_pass``, ``outside_counts`` and ``anchored_rules``;
    without, each plan is dropped once its chunk is done, so that a pass for log Z alone
    holds one chunk's plan at a time.
    """
    n_sym = g.n_symbols
    keys = np.asarray(keys, dtype=np.int64)
    item_span, item_sym = keys // n_sym, keys % n_sym
    # Items are sorted by span: the running count of items per span gives each span's first.
    span_first = np.zeros(layout.n_spans + 1, dtype=np.int64)
    np.cumsum(np.bincount(item_span, minlength=layout.n_spans), out=span_first[1:])
    alpha, sc = _lexical_inside(g, layout, len(keys), span_first, lexical)
    planner = _Planner(g, layout, span_first, item_span, item_sym, sc, cache)
    rule_arrays = _rule_arrays(g)
    flops = 0
    chunks = []
    for length in range(2, layout.max_length + 1):
        blk = layout.block(length)
        for p0 in range(blk.start, blk.stop, CHUNK_SPANS):
            p1 = min(blk.stop, p0 + CHUNK_SPANS)
            plan = planner.plan(p0, p1, length)
            flops += k.inside_chunk(p0, p1, span_first, sc, rule_arrays, alpha, g.flush, plan)
            if keep_plans:
                chunks.append((length, plan))
    log_z, *roots = _root_values(g, layout, span_first, item_sym, alpha, sc)
    chart = Chart(keys, alpha, None, sc, log_z, span_first, flops=flops)
    if keep_plans:
        chart.plans = ChunkPlans(layout, chunks, *roots)
    return chart


def _plans(chart: Chart) -> ChunkPlans:
    if chart.plans is None:
        raise ValueError("the chart has no chunk plans: inside_pass(..., keep_plans=True)")
    return chart.plans


def _outside_start(chart: Chart, weights: np.ndarray | None) -> np.ndarray:
    """The outside vectors before the walk: zero but the root items of the sentences with a
    parse, ``root vector / Z`` (times ``weights[s]`` for sentence ``s``)."""
    plans = _plans(chart)
    root_sent, z = plans.root_sent, plans.z
    beta = np.zeros_like(chart.alpha)
    live = np.isfinite(chart.log_z[root_sent])
    start = (plans.root_vec[live] / z[root_sent[live], None]).astype(beta.dtype)
    if weights is not None:
        start = start * np.asarray(weights, dtype=np.float64)[root_sent[live], None]
    beta[plans.root_item[live]] = start
    return beta


def _outside_walk(
    g: LatentGrammar,
    chart: Chart,
    weights: np.ndarray | None,
    chunk_kernel: Callable[[tuple, k.ChunkPlan], int],
    cut: float = 0.0,
) -> Chart:
    """Outside vectors of every item: the chunks top-down, each by ``chunk_kernel(shared,
    plan)`` (``kernels.outside_chunk`` or ``outside_counts_chunk`` of the arrays every
    outside-side kernel reads and the chunk's ``ChunkPlan``; returns flops), with
    the single-precision flush of each length's rows once they are complete, and the cut
    (``outside_pass``)."""
    plans = _plans(chart)
    layout, span_first = plans.layout, chart.span_first
    beta = _outside_start(chart, weights)
    top = max(float(beta.max(initial=0.0)), -float(beta.min(initial=0.0)))  # no |beta| copy
    flushed = layout.max_length + 1
    # The arrays every outside-side kernel reads before each chunk's plan.
    shared = (chart.sc, _rule_arrays(g), chart.alpha, beta)
    flops = 0
    for length, plan in reversed(plans.chunks):
        if length < flushed:  # complete now: the longer spans are done
            blk = layout.block(length)
            lo, hi = span_first[blk.start], span_first[blk.stop]
            if g.flush or cut > 0:
                k.flush_and_cut(chart.alpha, beta, lo, hi, g.flush * top, cut)
            flushed = length
        flops += chunk_kernel(shared, plan)
    chart.beta = beta
    chart.flops += flops
    return chart


def outside_pass(
    g: LatentGrammar, chart: Chart, *, weights: np.ndarray | None = None, cut: float = 0.0
) -> Chart:
    """The outside vectors of an ``inside_pass`` chart (filled in as ``chart.beta``; item
    posteriors ``Chart.marginals``); returns the chart.

    ``weights`` (one per sentence) start sentence ``s``'s outside pass from ``weights[s]``
    times the usual root vector, so that its outside vectors and posteriors count it that
    many times (a sentence seen ``weights[s]`` times; EM from strings, ``engine.string_charts``).

    ``cut``: once the longer spans are done, an item whose posterior is below ``cut`` in
    absolute value gets outside vector 0, so that it passes nothing down (its row of each
    children pair is skipped, ``kernels._outside_chunk``) and its posterior is 0; the items
    below it then count only what comes through the items kept. The parser's decoders need
    only the items of some mass (``ParserOptions.outside_cut``, as in the coarse pass's
    outside phase, ``engine.coarse.outside_chart``); 0 (EM, scores): exact.
    """
    return _outside_walk(
        g, chart, weights, lambda shared, plan: k.outside_chunk(*shared, plan), cut
    )


def outside_counts(g: LatentGrammar, chart: Chart, *, weights: np.ndarray | None = None) -> Chart:
    """``outside_pass`` and the expected count of every binary rule, ``chart.rule_counts``
    ``(R, M, M * M)`` in the grammar's rule order (EM's E-step; ``weights`` count sentence
    ``s`` ``weights[s]`` times); returns the chart."""
    counts = np.zeros(len(g.packed), dtype=g.dtype)
    _outside_walk(
        g, chart, weights, lambda shared, plan: k.outside_counts_chunk(*shared, counts, plan)
    )
    chart.rule_counts = g.unpack(counts * g.packed)
    return chart


def anchored_rules(g: LatentGrammar, chart: Chart) -> Chart:
    """Every anchored binary rule's posterior, ``chart.rules`` (parent, left and right items,
    posterior), for the rule-product decoders, after ``outside_pass``; returns the chart.

    ``kernels.rule_posteriors_chunk`` reads the chunk's parents' outside vectors, final once
    the outside walk has done their length (it writes only shorter spans), and the inside
    vectors: so it runs after the whole walk, on the same chunks in the same order.
    """
    if chart.beta is None:
        raise ValueError("anchored_rules needs the outside pass (outside_pass) first")
    plans = _plans(chart)
    shared = (chart.sc, _rule_arrays(g), chart.alpha, chart.beta)
    anchored = [k.rule_posteriors_chunk(*shared, plan) for _, plan in reversed(plans.chunks)]
    empty = (np.zeros(0, np.int64),) * 3 + (np.zeros(0),)
    chart.rules = tuple(np.concatenate(parts) for parts in zip(*anchored, empty, strict=True))
    return chart


def lexical_items(
    g: LatentGrammar, layout: SpanLayout, keys: np.ndarray, lexical: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(span, lexical rule, weight) triples -> (item, rule, weight), dropping rules whose
    pre-terminal item is not in ``keys``."""
    span, rule, weight = lexical
    want = np.asarray(span, dtype=np.int64) * g.n_symbols + g.lexical_parent[rule]
    pos = k.find_keys(int64s(keys), want)
    ok = pos >= 0
    return pos[ok], np.asarray(rule)[ok], np.asarray(weight)[ok]


class ItemChart:
    """Chart items fixed once and run many times (observed trees, all trees of sentences):
    a class with ``layout``, ``keys`` and ``lexical`` (``inside_pass``'s arguments) gets
    one method per pass. Their charts keep no chunk plans."""

    layout: SpanLayout
    keys: np.ndarray
    lexical: tuple[np.ndarray, np.ndarray, np.ndarray]

    def inside(self, g: LatentGrammar, *, cache: PlanCache | None = None) -> Chart:
        """``inside_pass`` over the items (log Z and inside vectors)."""
        return inside_pass(g, self.layout, self.keys, self.lexical, cache=cache, keep_plans=False)

    def outside(
        self,
        g: LatentGrammar,
        *,
        counts: bool = False,
        weights: np.ndarray | None = None,
        cache: PlanCache | None = None,
    ) -> Chart:
        """``inside_pass``, then ``outside_pass`` over the items, or with ``counts``
        ``outside_counts`` (EM's E-step); the chart keeps no plans."""
        chart = inside_pass(g, self.layout, self.keys, self.lexical, cache=cache)
        chart = (outside_counts if counts else outside_pass)(g, chart, weights=weights)
        chart.plans = None
        return chart
