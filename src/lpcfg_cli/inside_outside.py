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
    """Normalise each row of ``block`` to max |entry| 1; returns (rows, new log scales)."""
    mx = np.abs(block).max(axis=1) if block.shape[1] else np.zeros(len(block))
    mx[mx == 0] = 1.0
    return block / mx[:, None], base + np.log(mx)


@dataclass
class CoarseGrammar:
    """A PCFG prepared for dense chart passes."""

    n_symbols: int
    prob: np.ndarray  # (R,)
    parent: np.ndarray  # (R,)
    left_syms: np.ndarray  # symbols that occur as left children
    right_syms: np.ndarray
    left_pos: np.ndarray  # (R,) position of the rule's left child in left_syms
    right_pos: np.ndarray
    to_parent: sp.csr_matrix  # (N, R): sums rule scores into parent symbols
    pair_index: sp.csr_matrix  # (R, NB * NC): rule -> (left, right) cell

    @classmethod
    def build(cls, n_symbols: int, rules: np.ndarray, prob: np.ndarray) -> CoarseGrammar:
        left_syms, left_pos = np.unique(rules[:, 1], return_inverse=True)
        right_syms, right_pos = np.unique(rules[:, 2], return_inverse=True)
        n_rules = len(rules)
        ones = np.ones(n_rules)
        to_parent = sp.csr_matrix((ones, (rules[:, 0], np.arange(n_rules))), (n_symbols, n_rules))
        cell = left_pos * len(right_syms) + right_pos
        pair_index = sp.csr_matrix(
            (ones, (np.arange(n_rules), cell)), (n_rules, len(left_syms) * len(right_syms))
        )
        return cls(
            n_symbols, np.asarray(prob, dtype=np.float64), rules[:, 0], left_syms, right_syms,
            left_pos, right_pos, to_parent, pair_index,
        )  # fmt: skip


def _chunks(n: int, per_row: int) -> list[slice]:
    step = max(1, _CHUNK_FLOATS // max(per_row, 1))
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


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
    blk = layout.block(1)
    alpha[blk], sc[blk] = _rescale(np.asarray(lexical_scores, dtype=np.float64), sc[blk])
    nb, nc = len(g.left_syms), len(g.right_syms)
    for length in range(2, layout.max_length + 1):
        parents, left, right = layout.splits(length)
        k = length - 1
        for ch in _chunks(len(parents), k * max(nb, nc) + nb * nc):
            p, lft, rgt = parents[ch], left[ch], right[ch]
            pair = sc[lft] + sc[rgt]
            base = pair.max(axis=1)
            w = np.exp(pair - base[:, None])
            al = alpha[lft][:, :, g.left_syms] * w[:, :, None]  # (S, K, NB)
            ar = alpha[rgt][:, :, g.right_syms]  # (S, K, NC)
            sums = np.matmul(al.transpose(0, 2, 1), ar)  # (S, NB, NC)
            scores = sums[:, g.left_pos, g.right_pos] * g.prob  # (S, R)
            new = (g.to_parent @ scores.T).T
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
        for ch in _chunks(len(parents), k * max(nb, nc) + nb * nc):
            p, lft, rgt = parents[ch], left[ch], right[ch]
            bp = beta[p]
            if not bp.any():
                continue
            w = np.exp(sc[lft] + sc[rgt] - sc[p][:, None])
            rule_beta = bp[:, g.parent] * g.prob  # (S, R)
            cells = (g.pair_index.T @ rule_beta.T).T.reshape(len(p), nb, nc)
            al = alpha[lft][:, :, g.left_syms] * w[:, :, None]
            ar = alpha[rgt][:, :, g.right_syms] * w[:, :, None]
            to_left = np.matmul(ar, cells.transpose(0, 2, 1))  # (S, K, NB)
            to_right = np.matmul(al, cells)  # (S, K, NC)
            _scatter_rows(beta, lft.ravel(), g.left_syms, to_left.reshape(-1, nb))
            _scatter_rows(beta, rgt.ravel(), g.right_syms, to_right.reshape(-1, nc))
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
    tensors: list[np.ndarray]  # per rule (m_a, m_b * m_c)
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
    def from_model(cls, model) -> LatentGrammar:  # noqa: ANN001 (avoid import cycle)
        g = model.grammar
        rules = g.binary
        tensors = []
        for r in range(g.n_binary):
            t = model.binary_tensor(r)
            tensors.append(np.ascontiguousarray(t.reshape(t.shape[0], -1)))
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

    ``lexical_pairs``: (span ids of length 1, lexical rule ids) whose scores feed the
    pre-terminal items (several rules of one symbol on one word are summed).
    """
    n_sym, m_max = g.n_symbols, g.max_states
    keys = np.flatnonzero(allowed.ravel())  # row-major: sorted by span then symbol
    n_items = len(keys)
    item_span, item_sym = keys // n_sym, keys % n_sym
    span_first = np.searchsorted(item_span, np.arange(layout.n_spans + 1))
    alpha = np.zeros((n_items, m_max))
    sc = np.zeros(layout.n_spans)
    flops = 0

    def find(span: np.ndarray, sym: np.ndarray) -> np.ndarray:
        want = span * n_sym + sym
        pos = np.searchsorted(keys, want)
        pos = np.minimum(pos, max(n_items - 1, 0))
        return np.where((n_items > 0) & (keys[pos] == want), pos, -1)

    # Pre-terminal items.
    lex_span, lex_rule = lexical_pairs
    if len(lex_rule):
        from_lex = g.lexical[lex_rule]
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
        w = np.exp(pair - base[p_span])
        flops += _inside_rules(g, alpha, p_item, rule, l_item, r_item, w)
        blk = layout.block(length)
        sc[blk] = np.where(np.isfinite(base[blk]), base[blk], 0.0)
        _normalise_spans(alpha, sc, span_first, blk)
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
        w = np.exp(sc[l_span] + sc[r_span] - sc[p_span])
        flops += _outside_rules(g, alpha, beta, p_item, rule, l_item, r_item, w)
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
    mx[mx == 0] = 1.0
    counts = np.diff(np.append(starts[nonempty], hi - lo))
    alpha[lo:hi] /= np.repeat(mx, counts)[:, None]
    sc[blk.start + nonempty] += np.log(mx)


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


def _groups(rule: np.ndarray, p_item: np.ndarray):
    """Order triples by (rule, parent) and yield per rule: (triple idx, run starts, parents)."""
    order = np.lexsort((p_item, rule))
    r_sorted = rule[order]
    bounds = np.flatnonzero(np.r_[True, r_sorted[1:] != r_sorted[:-1], True])
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        idx = order[a:b]
        pp = p_item[idx]
        starts = np.flatnonzero(np.r_[True, pp[1:] != pp[:-1]])
        yield int(r_sorted[a]), idx, starts, pp[starts]


def _inside_rules(g, alpha, p_item, rule, l_item, r_item, w) -> int:  # noqa: ANN001
    flops = 0
    for r, idx, starts, parents in _groups(rule, p_item):
        a, b, c = g.rules[r]
        ma, mb, mc = g.states[a], g.states[b], g.states[c]
        x = alpha[l_item[idx], :mb] * w[idx, None]
        y = alpha[r_item[idx], :mc]
        outer = (x[:, :, None] * y[:, None, :]).reshape(len(idx), mb * mc)
        z = np.add.reduceat(outer, starts, axis=0) if len(starts) < len(idx) else outer
        alpha[parents, :ma] += z @ g.tensors[r].T
        flops += 2 * len(parents) * ma * mb * mc + len(idx) * mb * mc
    return flops


def _outside_rules(g, alpha, beta, p_item, rule, l_item, r_item, w) -> int:  # noqa: ANN001
    flops = 0
    for r, idx, starts, parents in _groups(rule, p_item):
        a, b, c = g.rules[r]
        ma, mb, mc = g.states[a], g.states[b], g.states[c]
        bp = beta[parents, :ma]
        wmat = (bp @ g.tensors[r]).reshape(len(parents), mb, mc)
        counts = np.diff(np.append(starts, len(idx)))
        wt = np.repeat(wmat, counts, axis=0) * w[idx, None, None]
        x = alpha[l_item[idx], :mb]
        y = alpha[r_item[idx], :mc]
        np.add.at(beta, (l_item[idx][:, None], np.arange(mb)[None, :]),
                  np.einsum("nbc,nc->nb", wt, y))  # fmt: skip
        np.add.at(beta, (r_item[idx][:, None], np.arange(mc)[None, :]),
                  np.einsum("nbc,nb->nc", wt, x))  # fmt: skip
        flops += 2 * len(parents) * ma * mb * mc + 4 * len(idx) * mb * mc
    return flops
