"""Inside-outside over sentence charts, batched over spans, split points, rules and sentences.

Two engines share one span layout (``chart.SpanLayout``) and one scaling scheme:

- ``coarse_marginals``: the plain PCFG (one state per symbol) over the *full* chart, as dense
  ``(spans, symbols)`` arrays; the sum over split points is a batched matrix product.
  Its posteriors decide which items the latent model may use (coarse-to-fine pruning).
- ``latent_marginals``: an L-PCFG (probabilistic or tensor form) over the surviving items
  only, with the rule tensors applied per rule to the split-summed outer products of the
  children's inside vectors.

Scaling: every span ``s`` has a log scale ``sc[s]``; inside vectors are stored divided by
``exp(sc[s])`` (their largest absolute entry is 1), so 271-word sentences neither underflow
nor overflow. Outside vectors use the scale ``logZ - sc[s]``; with that choice the factor
applied to a (parent, left, right) triple is the same in both passes and the marginal of an
item is simply ``alpha_scaled . beta_scaled`` -- no scale bookkeeping in the outside pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.chart import SpanLayout

# In single precision, values this small (relative to 1, or to the largest outside value)
# are flushed to zero: products of such values are subnormal numbers, which the processor
# handles dozens of times more slowly.
_FLUSH = 1e-10

# Largest number of floats a temporary block may hold before a length is processed in chunks.
_CHUNK_FLOATS = 6_000_000


def ragged_ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expand ``[starts[i], starts[i] + counts[i])`` for all i: (source i, value) arrays."""
    counts = np.asarray(counts, dtype=np.int64)
    src = np.repeat(np.arange(len(counts)), counts)
    ends = np.cumsum(counts)
    values = np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - counts, counts)
    return src, np.asarray(starts, dtype=np.int64)[src] + values


def _rescale(block: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalise each row of ``block`` to max |entry| 1; returns (rows, new log scales).

    An all-zero row gets scale -inf, so it never dominates the scale of a split sum.
    """
    mx = np.abs(block).max(axis=1) if block.shape[1] else np.zeros(len(block))
    zero = mx == 0
    mx[zero] = 1.0
    return block / mx[:, None], np.where(zero, -np.inf, base + np.log(mx))


def _split_weights(pair: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``exp(pair - base)``, with 0 where either is -inf (empty children or parent)."""
    with np.errstate(invalid="ignore"):
        diff = pair - base
    ok = np.isfinite(diff)
    w = np.zeros(diff.shape)
    w[ok] = np.exp(diff[ok])
    return w


@dataclass
class RuleBlock:
    """The binary rules of a PCFG whose children have given kinds (pre-/in-terminal)."""

    prob: np.ndarray  # (R,)
    parent: np.ndarray  # (R,)
    left: np.ndarray  # (R,) left child symbol
    right: np.ndarray
    left_syms: np.ndarray  # distinct left children
    right_syms: np.ndarray
    cell: np.ndarray  # (R,) left position * len(right_syms) + right position
    to_parent: sp.csr_matrix  # (N, R)
    to_left: sp.csr_matrix  # (R, N): rule values summed into left-child symbols
    to_right: sp.csr_matrix  # (R, N)
    pair_index: sp.csr_matrix  # (R, NB * NC)

    @classmethod
    def build(cls, n_symbols: int, rules: np.ndarray, prob: np.ndarray) -> RuleBlock:
        left_syms, left_pos = np.unique(rules[:, 1], return_inverse=True)
        right_syms, right_pos = np.unique(rules[:, 2], return_inverse=True)
        n, idx = len(rules), np.arange(len(rules))
        ones = np.ones(n)
        cell = left_pos * len(right_syms) + right_pos

        def onehot(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
            return sp.csr_matrix((ones, (rows, cols)), shape)

        return cls(
            np.asarray(prob, dtype=np.float64), rules[:, 0], rules[:, 1], rules[:, 2],
            left_syms, right_syms, cell,
            onehot(rules[:, 0], idx, (n_symbols, n)),
            onehot(idx, rules[:, 1], (n, n_symbols)),
            onehot(idx, rules[:, 2], (n, n_symbols)),
            onehot(idx, cell, (n, len(left_syms) * len(right_syms))),
        )  # fmt: skip


@dataclass
class CoarseGrammar:
    """A PCFG prepared for dense chart passes.

    In the strict normal form a one-word span holds only pre-terminals and a longer span
    only in-terminals, so the child kinds of a split are known from its position: the first
    split has a one-word left child, the last a one-word right child, and only the middle
    splits combine two in-terminals. The rules are split into four blocks accordingly
    (``pp``, ``pi``, ``ip``, ``ii``); the edge splits are single products per rule and the
    middle splits a batched matrix product over the small in-terminal x in-terminal block.
    """

    n_symbols: int
    pp: RuleBlock
    pi: RuleBlock
    ip: RuleBlock
    ii: RuleBlock

    @classmethod
    def build(cls, n_symbols: int, rules: np.ndarray, prob: np.ndarray) -> CoarseGrammar:
        prob = np.asarray(prob, dtype=np.float64)
        pre = np.zeros(n_symbols, dtype=bool)
        inter = np.zeros(n_symbols, dtype=bool)
        inter[rules[:, 0]] = True
        pre[~inter] = True  # symbols without binary rules can only be pre-terminals
        lp, rp = pre[rules[:, 1]], pre[rules[:, 2]]
        blocks = {}
        for name, sel in (("pp", lp & rp), ("pi", lp & ~rp), ("ip", ~lp & rp), ("ii", ~lp & ~rp)):
            blocks[name] = RuleBlock.build(n_symbols, rules[sel], prob[sel])
        return cls(n_symbols, **blocks)


def _chunks(n: int, per_row: int) -> list[slice]:
    step = max(1, _CHUNK_FLOATS // max(per_row, 1))
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


def _edge_inside(blk: RuleBlock, left: np.ndarray, right: np.ndarray, w: np.ndarray):
    """Parent scores (S, N) from one split whose children's vectors are ``left``/``right``."""
    v = left[:, blk.left] * right[:, blk.right] * (blk.prob * w[:, None])
    return (blk.to_parent @ v.T).T


def coarse_marginals(
    g: CoarseGrammar,
    layout: SpanLayout,
    lexical_scores: np.ndarray,
    root: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior of every (span, symbol) item under the PCFG.

    ``lexical_scores``: ``(spans of length 1, N)`` pre-terminal scores; ``root``: ``(N,)``.
    Returns ``(mu (n_spans, N), log Z per sentence)``; a sentence without parse has
    ``log Z = -inf`` and all-zero posteriors.
    """
    n_sym = g.n_symbols
    alpha = np.zeros((layout.n_spans, n_sym))
    sc = np.zeros(layout.n_spans)
    if layout.max_length == 0:
        return alpha, np.full(len(layout.lengths), -np.inf)
    blk1 = layout.block(1)
    alpha[blk1], sc[blk1] = _rescale(np.asarray(lexical_scores, dtype=np.float64), sc[blk1])
    ii = g.ii
    nb, nc = len(ii.left_syms), len(ii.right_syms)
    for length in range(2, layout.max_length + 1):
        parents, left, right = layout.splits(length)
        k = length - 1
        for ch in _chunks(len(parents), k * (nb + nc) + nb * nc):
            p, lft, rgt = parents[ch], left[ch], right[ch]
            pair = sc[lft] + sc[rgt]
            base = pair.max(axis=1)
            w = _split_weights(pair, base[:, None])
            base[~np.isfinite(base)] = 0.0
            if length == 2:
                new = _edge_inside(g.pp, alpha[lft[:, 0]], alpha[rgt[:, 0]], w[:, 0])
            else:
                new = _edge_inside(g.pi, alpha[lft[:, 0]], alpha[rgt[:, 0]], w[:, 0])
                new += _edge_inside(g.ip, alpha[lft[:, -1]], alpha[rgt[:, -1]], w[:, -1])
            if length >= 4 and len(ii.prob):
                mid = slice(1, k - 1)
                al = alpha[lft[:, mid]][:, :, ii.left_syms] * w[:, mid, None]  # (S, K', NB)
                ar = alpha[rgt[:, mid]][:, :, ii.right_syms]  # (S, K', NC)
                # Contiguous operands keep the batched product on the BLAS path.
                sums = np.matmul(np.ascontiguousarray(al.transpose(0, 2, 1)), ar)
                scores = np.take(sums.reshape(len(p), -1), ii.cell, axis=1) * ii.prob
                new += (ii.to_parent @ scores.T).T
            alpha[p], sc[p] = _rescale(np.asarray(new), base)

    roots = layout.root_spans()
    z = alpha[roots] @ root
    with np.errstate(divide="ignore"):
        log_z = np.where(z > 0, sc[roots] + np.log(np.where(z > 0, z, 1.0)), -np.inf)
    beta = np.zeros_like(alpha)
    ok = z > 0
    beta[roots[ok]] = root[None, :] / z[ok, None]
    for length in range(layout.max_length, 1, -1):
        parents, left, right = layout.splits(length)
        k = length - 1
        for ch in _chunks(len(parents), k * (nb + nc) + nb * nc):
            p, lft, rgt = parents[ch], left[ch], right[ch]
            bp = beta[p]
            if not bp.any():
                continue
            w = _split_weights(sc[lft] + sc[rgt], sc[p][:, None])
            edges = [(g.pp, 0)] if length == 2 else [(g.pi, 0), (g.ip, k - 1)]
            for blk, col in edges:
                rb = bp[:, blk.parent] * (blk.prob * w[:, col, None])  # (S, R)
                lv, rv = alpha[lft[:, col]], alpha[rgt[:, col]]
                # Within one split column every parent has its own children: plain +=.
                beta[lft[:, col]] += (blk.to_left.T @ (rb * rv[:, blk.right]).T).T
                beta[rgt[:, col]] += (blk.to_right.T @ (rb * lv[:, blk.left]).T).T
            if length >= 4 and len(ii.prob):
                mid = slice(1, k - 1)
                rule_beta = bp[:, ii.parent] * ii.prob
                cells = (ii.pair_index.T @ rule_beta.T).T.reshape(len(p), nb, nc)
                al = alpha[lft[:, mid]][:, :, ii.left_syms] * w[:, mid, None]
                ar = alpha[rgt[:, mid]][:, :, ii.right_syms] * w[:, mid, None]
                to_left = np.matmul(ar, np.ascontiguousarray(cells.transpose(0, 2, 1)))
                to_right = np.matmul(al, cells)
                _scatter_rows(beta, lft[:, mid].ravel(), ii.left_syms, to_left.reshape(-1, nb))
                _scatter_rows(beta, rgt[:, mid].ravel(), ii.right_syms, to_right.reshape(-1, nc))
    return alpha * beta, log_z


def _scatter_rows(target: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray):
    """``target[rows[i], cols] += values[i]`` with repeated rows summed."""
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    summed = np.add.reduceat(values[order], starts, axis=0)
    target[np.ix_(rows[starts], cols)] += summed


@dataclass
class LatentGrammar:
    """An L-PCFG's parameters arranged for the latent chart passes."""

    n_symbols: int
    states: np.ndarray
    rules: np.ndarray  # (R, 3)
    tensors: np.ndarray  # (R, M, M * M) rule tensors, zero-padded to M = max states
    lexical: np.ndarray  # (L, M) padded
    lexical_parent: np.ndarray  # (L,) symbol of each lexical rule
    root: np.ndarray  # (N, M) padded
    pair_keys: np.ndarray  # sorted b * N + c keys that have rules
    pair_ptr: np.ndarray  # CSR pointer into pair_rules
    pair_rules: np.ndarray

    @property
    def max_states(self) -> int:
        return int(self.states.max())

    @classmethod
    def from_model(cls, model, dtype: type = np.float64) -> LatentGrammar:  # noqa: ANN001
        """Arrange ``model``'s parameters; ``dtype`` float32 halves memory traffic (tiny
        values are then flushed to zero during the passes, see ``_FLUSH``)."""
        g = model.grammar
        rules = g.binary
        m = model.max_states
        tensors = np.zeros((g.n_binary, m, m, m))
        for r in range(g.n_binary):
            t = model.binary_tensor(r)
            tensors[r, : t.shape[0], : t.shape[1], : t.shape[2]] = t
        tensors = tensors.reshape(g.n_binary, m, m * m)
        if dtype == np.float32:
            tensors[np.abs(tensors) < _FLUSH] = 0.0  # keep products out of subnormal range
        tensors = tensors.astype(dtype)
        n = g.n_symbols
        keys = rules[:, 1] * n + rules[:, 2]
        order = np.argsort(keys, kind="stable")
        uniq, starts = np.unique(keys[order], return_index=True)
        ptr = np.append(starts, len(order))
        return cls(
            n, model.states, rules, tensors, model.padded_lexical(), g.lexical[:, 0],
            model.padded_root(), uniq, ptr, order,
        )  # fmt: skip


@dataclass
class LatentChart:
    """Items (span, symbol) of a pruned chart with their scaled inside/outside vectors."""

    keys: np.ndarray  # sorted span * N + symbol
    alpha: np.ndarray  # (items, M)
    beta: np.ndarray
    sc: np.ndarray  # (spans,)
    log_z: np.ndarray  # (sentences,)
    flops: int = 0

    def marginals(self) -> np.ndarray:
        """mu of every item (may be negative for tensor-form models)."""
        return np.einsum("ih,ih->i", self.alpha, self.beta)


def latent_marginals(
    g: LatentGrammar,
    layout: SpanLayout,
    allowed: np.ndarray,
    lexical_pairs: tuple[np.ndarray, np.ndarray],
) -> LatentChart:
    """Inside-outside of an L-PCFG restricted to the ``allowed`` (spans, N) items.

    ``lexical_pairs``: (span ids of length 1, lexical rule ids, weights) whose weighted
    scores feed the pre-terminal items (several rules of one symbol on one word are summed).
    """
    n_sym, m_max = g.n_symbols, g.max_states
    keys = np.flatnonzero(allowed.ravel())  # row-major: sorted by span then symbol
    n_items = len(keys)
    item_span, item_sym = keys // n_sym, keys % n_sym
    span_first = np.searchsorted(item_span, np.arange(layout.n_spans + 1))
    dtype = g.tensors.dtype
    alpha = np.zeros((n_items, m_max), dtype=dtype)
    sc = np.zeros(layout.n_spans)
    flops = 0

    def find(span: np.ndarray, sym: np.ndarray) -> np.ndarray:
        want = span * n_sym + sym
        pos = np.searchsorted(keys, want)
        pos = np.minimum(pos, max(n_items - 1, 0))
        return np.where((n_items > 0) & (keys[pos] == want), pos, -1)

    # Pre-terminal items.
    lex_span, lex_rule, lex_weight = lexical_pairs
    if len(lex_rule):
        from_lex = (g.lexical[lex_rule] * np.asarray(lex_weight)[:, None]).astype(dtype)
        lex_item = find(lex_span, g.lexical_parent[lex_rule])
        ok = lex_item >= 0
        np.add.at(alpha, lex_item[ok], from_lex[ok])
    _normalise_spans(alpha, sc, span_first, layout.block(1))

    triples_by_length: dict[int, tuple[np.ndarray, ...]] = {}
    for length in range(2, layout.max_length + 1):
        parents, left, right = layout.splits(length)
        trip = _enumerate_triples(g, parents, left, right, span_first, item_sym, find)
        if trip is None:
            continue
        p_item, rule, l_item, r_item, l_span, r_span, p_span = trip
        pair = sc[l_span] + sc[r_span]
        base = np.full(layout.n_spans, -np.inf)
        np.maximum.at(base, p_span, pair)
        w = _split_weights(pair, base[p_span])
        if dtype == np.float32:
            w[w < _FLUSH] = 0.0
        flops += _inside_rules(g, alpha, p_item, rule, l_item, r_item, w)
        blk = layout.block(length)
        sc[blk] = np.where(np.isfinite(base[blk]), base[blk], 0.0)
        _normalise_spans(alpha, sc, span_first, blk)
        if dtype == np.float32:
            lo, hi = span_first[blk.start], span_first[blk.stop]
            block = alpha[lo:hi]
            block[np.abs(block) < _FLUSH] = 0.0
        triples_by_length[length] = trip

    roots = layout.root_spans()
    beta = np.zeros_like(alpha)
    log_z = np.full(len(roots), -np.inf)
    for s, span in enumerate(roots):
        if span < 0:
            continue
        lo, hi = span_first[span], span_first[span + 1]
        if hi == lo:
            continue
        syms = item_sym[lo:hi]
        z = float(np.einsum("ih,ih->", alpha[lo:hi], g.root[syms]))
        if z == 0.0 or not np.isfinite(z):
            continue
        log_z[s] = sc[span] + np.log(abs(z))
        beta[lo:hi] = g.root[syms] / z

    for length in range(layout.max_length, 1, -1):
        trip = triples_by_length.get(length)
        if trip is None:
            continue
        p_item, rule, l_item, r_item, l_span, r_span, p_span = trip
        w = _split_weights(sc[l_span] + sc[r_span], sc[p_span])
        if dtype == np.float32:
            w[w < _FLUSH] = 0.0
        flops += _outside_rules(g, alpha, beta, p_item, rule, l_item, r_item, w)
        if dtype == np.float32:
            top = np.abs(beta).max()
            beta[np.abs(beta) < _FLUSH * top] = 0.0
    return LatentChart(keys, alpha, beta, sc, log_z, flops)


def _normalise_spans(alpha: np.ndarray, sc: np.ndarray, span_first: np.ndarray, blk: slice):
    """Rescale the items of the spans in ``blk`` to max |entry| 1 per span."""
    lo, hi = span_first[blk.start], span_first[blk.stop]
    if hi == lo:
        return
    rows = np.abs(alpha[lo:hi]).max(axis=1)
    starts = span_first[blk.start : blk.stop] - lo
    nonempty = np.flatnonzero(np.diff(np.append(starts, hi - lo)) > 0)
    mx = np.maximum.reduceat(rows, starts[nonempty])
    zero = mx == 0
    mx[zero] = 1.0
    counts = np.diff(np.append(starts[nonempty], hi - lo))
    alpha[lo:hi] /= np.repeat(mx, counts)[:, None]
    sc[blk.start + nonempty] += np.where(zero, -np.inf, np.log(mx))


def _enumerate_triples(g, parents, left, right, span_first, item_sym, find):  # noqa: ANN001
    """All (parent item, rule, left item, right item) of one span length, children-first."""
    k = left.shape[1]
    p_span = np.repeat(parents, k)
    l_span, r_span = left.ravel(), right.ravel()
    n_l = span_first[l_span + 1] - span_first[l_span]
    n_r = span_first[r_span + 1] - span_first[r_span]
    # left items x right items per (span, split)
    src, l_item = ragged_ranges(span_first[l_span], n_l)
    reps = n_r[src]
    src2, r_item = ragged_ranges(span_first[r_span][src], reps)
    l_item = l_item[src2]
    src = src[src2]
    if len(src) == 0:
        return None
    n = g.n_symbols
    bc = item_sym[l_item] * n + item_sym[r_item]
    pos = np.searchsorted(g.pair_keys, bc)
    pos = np.minimum(pos, len(g.pair_keys) - 1)
    hit = g.pair_keys[pos] == bc
    src, l_item, r_item, pos = src[hit], l_item[hit], r_item[hit], pos[hit]
    cnt = g.pair_ptr[pos + 1] - g.pair_ptr[pos]
    src3, ridx = ragged_ranges(g.pair_ptr[pos], cnt)
    rule = g.pair_rules[ridx]
    src, l_item, r_item = src[src3], l_item[src3], r_item[src3]
    p_item = find(p_span[src], g.rules[rule, 0])
    ok = p_item >= 0
    if not ok.any():
        return None
    src = src[ok]
    return (
        p_item[ok], rule[ok], l_item[ok], r_item[ok], l_span[src], r_span[src], p_span[src],
    )  # fmt: skip


# Rules with more (parent, rule) pairs than this get a matrix product of their own; the
# others are batched in buckets of similar size (one batched product per bucket).
_OWN_PRODUCT = 48


def _pairs(rule: np.ndarray, p_item: np.ndarray) -> tuple[np.ndarray, ...]:
    """Triples ordered by (rule, parent) and their distinct (rule, parent) pairs.

    Returns (order, pair start in order, pair of each ordered triple, pair rule, pair
    parent).
    """
    order = np.lexsort((p_item, rule))
    r, p = rule[order], p_item[order]
    new = np.r_[True, (r[1:] != r[:-1]) | (p[1:] != p[:-1])]
    starts = np.flatnonzero(new)
    return order, starts, np.cumsum(new) - 1, r[starts], p[starts]


def buckets(group: np.ndarray, own: int = _OWN_PRODUCT):
    """Yield (element indices, group ids, row of each element, slot of each element, cap).

    ``group`` is sorted. Groups with more than ``own`` elements come one at a time; the
    others in buckets of groups with similar sizes (capacity = a power of two), so that
    one padded batched matrix product serves a whole bucket.
    """
    bounds = np.flatnonzero(np.r_[True, group[1:] != group[:-1], True])
    first, counts = bounds[:-1], np.diff(bounds)
    slot = np.arange(len(group)) - np.repeat(first, counts)
    big = counts > own
    for i in np.flatnonzero(big):
        idx = np.arange(first[i], first[i] + counts[i])
        yield idx, group[first[i : i + 1]], np.zeros(len(idx), np.int64), slot[idx], counts[i]
    cap_of = (2 ** np.ceil(np.log2(np.maximum(counts, 1)))).astype(np.int64)
    for cap in np.unique(cap_of[~big]):
        here = np.flatnonzero(~big & (cap_of == cap))
        row_of = np.full(len(counts), -1)
        row_of[here] = np.arange(len(here))
        idx = _ranges(first[here], counts[here])
        yield idx, group[first[here]], np.repeat(row_of[here], counts[here]), slot[idx], int(cap)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return ragged_ranges(starts, counts)[1]


def _segment_sum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of the row runs beginning at ``starts`` (a sparse product: np.add.reduceat
    over rows of a 2-D array is several times slower)."""
    n = len(values)
    seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    agg = sp.csr_matrix((np.ones(n), (seg, np.arange(n))), shape=(len(starts), n))
    return agg @ values


def _add_rows(target: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """``target[rows[i]] += values[i]`` with repeated rows summed (sort + reduceat)."""
    if len(rows) == 0:
        return
    uniq, inv = np.unique(rows, return_inverse=True)
    agg = sp.csr_matrix((np.ones(len(rows)), (inv, np.arange(len(rows)))),
                        shape=(len(uniq), len(rows)))  # fmt: skip
    target[uniq] += agg @ values


def apply_rules(tensors: np.ndarray, rule: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``T[rule[i]] @ z[i]`` for every i: (n, M) from (n, M*M); ``rule`` must be sorted.

    ``tensors`` is (R, M, M*M). Rules with similar numbers of elements share one padded
    batched matrix product.
    """
    m = tensors.shape[1]
    out = np.empty((len(rule), m), dtype=z.dtype)
    for idx, rules, rows, slots, cap in buckets(rule):
        zt = np.zeros((len(rules), m * m, cap), dtype=z.dtype)
        zt[rows, :, slots] = z[idx]
        out[idx] = np.matmul(tensors[rules], zt)[rows, :, slots]  # (rules, M, cap)
    return out


def accumulate_outer(target: np.ndarray, rule: np.ndarray, b: np.ndarray, z: np.ndarray) -> None:
    """``target[r] += sum over i with rule[i] == r of outer(b[i], z[i])``; ``rule`` sorted."""
    bounds = np.flatnonzero(np.r_[True, rule[1:] != rule[:-1], True])
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        target[rule[lo]] += b[lo:hi].T @ z[lo:hi]


def rules_times(tensors: np.ndarray, rule: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``b[i] @ T[rule[i]]`` for every i: (n, M*M) from (n, M); ``rule`` must be sorted."""
    m = tensors.shape[1]
    out = np.empty((len(rule), m * m), dtype=b.dtype)
    for idx, rules, rows, slots, cap in buckets(rule):
        bt = np.zeros((len(rules), cap, m), dtype=b.dtype)
        bt[rows, slots] = b[idx]
        out[idx] = np.matmul(bt, tensors[rules])[rows, slots]  # (rules, cap, M * M)
    return out


def _inside_rules(g, alpha, p_item, rule, l_item, r_item, w) -> int:  # noqa: ANN001
    """Add every rule's contribution to its parents' inside vectors; returns flops.

    Per (rule, parent) pair: z = sum over its splits of left (x) right inside vectors
    (batched products over pairs with similar numbers of splits), then T_rule z
    (batched products over rules with similar numbers of pairs).
    """
    m, dt = g.max_states, alpha.dtype
    w = w.astype(dt)
    order, _, pair_of, pair_rule, pair_parent = _pairs(rule, p_item)
    x = alpha[l_item[order]] * w[order, None]
    y = alpha[r_item[order]]
    z = np.empty((len(pair_rule), m, m), dtype=dt)
    for idx, pairs, rows, slots, cap in buckets(pair_of, own=1 << 30):
        if cap == 1:
            z[pairs] = x[idx, :, None] * y[idx, None, :]
            continue
        xs = np.zeros((len(pairs), m, cap), dtype=dt)
        ys = np.zeros((len(pairs), cap, m), dtype=dt)
        xs[rows, :, slots] = x[idx]
        ys[rows, slots] = y[idx]
        z[pairs] = np.matmul(xs, ys)
    out = apply_rules(g.tensors, pair_rule, z.reshape(len(pair_rule), m * m))
    _add_rows(alpha, pair_parent, out)
    return 2 * len(pair_rule) * m**3 + 2 * len(order) * m * m


def _outside_rules(g, alpha, beta, p_item, rule, l_item, r_item, w) -> int:  # noqa: ANN001
    """Add every rule's contribution to its children's outside vectors; returns flops.

    Per (rule, parent) pair: W = beta_parent T_rule (an M x M matrix, batched over rules),
    then per split W alpha_right to the left child and W' alpha_left to the right child
    (batched over pairs with similar numbers of splits).
    """
    m, dt = g.max_states, alpha.dtype
    w = w.astype(dt)
    order, _, pair_of, pair_rule, pair_parent = _pairs(rule, p_item)
    wpair = rules_times(g.tensors, pair_rule, beta[pair_parent])
    wpair = wpair.reshape(-1, m, m)
    li, ri = l_item[order], r_item[order]
    xl = alpha[li] * w[order, None]
    xr = alpha[ri] * w[order, None]
    to_left = np.empty((len(order), m), dtype=dt)
    to_right = np.empty((len(order), m), dtype=dt)
    for idx, pairs, rows, slots, cap in buckets(pair_of, own=1 << 30):
        wp = wpair[pairs]
        if cap == 1:
            to_left[idx] = np.einsum("nbc,nc->nb", wp, xr[idx])
            to_right[idx] = np.einsum("nbc,nb->nc", wp, xl[idx])
            continue
        a = np.zeros((len(pairs), m, cap), dtype=dt)
        a[rows, :, slots] = xr[idx]
        to_left[idx] = np.matmul(wp, a)[rows, :, slots]
        b = np.zeros((len(pairs), cap, m), dtype=dt)
        b[rows, slots] = xl[idx]
        to_right[idx] = np.matmul(b, wp)[rows, slots]
    _add_rows(beta, li, to_left)
    _add_rows(beta, ri, to_right)
    return 2 * len(pair_rule) * m**3 + 4 * len(order) * m * m


@dataclass
class TreeBatches:
    """The nodes of fixed (observed) trees grouped for batching, computed once per treebank."""

    levels: list[tuple[np.ndarray, np.ndarray]]  # per height >= 2: nodes sorted by rule, rules
    pre: np.ndarray  # pre-terminal nodes
    roots: np.ndarray
    n_nodes: int


def tree_batches(bank) -> TreeBatches:  # noqa: ANN001
    """Group ``bank``'s nodes by height, each height sorted by rule (for ``apply_rules``)."""
    levels = []
    for nodes in bank.levels()[1:]:
        nodes = nodes[np.argsort(bank.rule[nodes], kind="stable")]
        levels.append((nodes, bank.rule[nodes]))
    return TreeBatches(levels, np.flatnonzero(bank.lex >= 0), bank.roots, bank.n_nodes)


def tree_inside(
    tensors: np.ndarray,
    lexical: np.ndarray,
    bank,
    batches: TreeBatches,  # noqa: ANN001
) -> tuple[np.ndarray, np.ndarray]:
    """Inside vectors of every node of fixed trees, ``(alpha, log scale)``.

    ``tensors`` is (R, M, M*M) and ``lexical`` (L, M). Each node's vector is divided by its
    largest absolute entry and the log of that factor is carried up, so deep trees neither
    underflow nor overflow (and negative tensor-form values keep their sign).
    """
    m = lexical.shape[1]
    alpha = np.zeros((batches.n_nodes, m))
    ls = np.zeros(batches.n_nodes)
    alpha[batches.pre] = lexical[bank.lex[batches.pre]]
    _rescale_nodes(alpha, ls, batches.pre)
    for nodes, rules in batches.levels:
        left, right = bank.left[nodes], bank.right[nodes]
        z = (alpha[left][:, :, None] * alpha[right][:, None, :]).reshape(len(nodes), m * m)
        alpha[nodes] = apply_rules(tensors, rules, z)
        ls[nodes] = ls[left] + ls[right]
        _rescale_nodes(alpha, ls, nodes)
    return alpha, ls


def _rescale_nodes(alpha: np.ndarray, ls: np.ndarray, nodes: np.ndarray) -> None:
    mx = np.abs(alpha[nodes]).max(axis=1)
    mx[mx == 0] = 1.0
    alpha[nodes] /= mx[:, None]
    ls[nodes] += np.log(mx)


def tree_scores(model, bank) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """``(log |p|, sign p)`` of every (skeletal) tree of ``bank`` under ``model``.

    The latent states are summed out by ``tree_inside``. Works for both model forms (a
    tensor-form model may give a tree a negative value). ``bank`` must be compiled against
    ``model.grammar``.
    """
    g = LatentGrammar.from_model(model)
    alpha, ls = tree_inside(g.tensors, g.lexical, bank, tree_batches(bank))
    roots = bank.roots
    value = np.einsum("nh,nh->n", alpha[roots], g.root[bank.symbol[roots]])
    with np.errstate(divide="ignore"):
        return ls[roots] + np.log(np.abs(value)), np.sign(value)
