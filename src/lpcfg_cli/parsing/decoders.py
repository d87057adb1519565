"""Decoding: Goodman's max-marginal (labelled recall) trees, and max-rule-product trees.

Given the marginal ``mu(a, i, j)`` of every chart item, find the binarized tree maximising the
sum of the marginals of its items (Goodman 1996): each span takes its best label, and a CKY
pass over spans picks the bracketing. Pre-terminal symbols label one-word spans, in-terminals
longer spans; the whole-sentence span prefers a symbol that is not an intermediate (``@``)
symbol of the binarization.

Max-rule-product (Petrov & Klein 2007, the Berkeley parser's default): the binarized tree
maximising the product of the posteriors ``r(e)`` of its anchored rules: every binary rule
``r(a -> b c, i, k, j)``, every lexical rule (its pre-terminal item's marginal, as the
Berkeley parser scores ``TAG -> word``) and the root item's marginal (its ``ROOT -> A``).
Variational (Matsuzaki et al. 2005; the Berkeley parser's ``-variational``): the product of
``q = r(a -> b c, i, k, j) / mu(a, i, j)``, each rule's posterior given its parent's (the
lexical rules' ``q`` is 1), times the root item's marginal: the best tree of the PCFG that
approximates the latent model. (It is not max-rule-product: the Berkeley parser's source,
``CoarseToFineMaxRuleParser``, divides by the parent's posterior only with
``-variational``; lpcfg's earlier max-rule-product was this one, see CHANGELOG.md.) Unlike
max-marginal, every node of either result is expanded by a rule of the grammar.

Max-bracket (``bracket_labels``): the tree maximising the sum, over the brackets EVALB will
score in its debinarized form, of ``P(bracket) - theta``. A span labelled ``S+VP`` gives two
brackets, ``NP+NNP`` over a word one (the tag is not scored), ``@NP`` and a bare tag none;
``P(X over i..j)`` sums the marginals of every symbol whose chain holds ``X`` there, so
``S``, ``S+VP`` and ``S+NP`` all count towards an ``S`` bracket. Goodman's max-marginal
instead scores a span by its one best symbol's marginal, intermediate symbols included,
which counts a collapsed chain as one bracket and lets an ``@`` symbol's mass stand for
brackets the output will not have. Keeping a bracket only when its posterior exceeds
``theta`` maximises (to first order) the expected F1 ``2M / (G + T)``: a bracket of
posterior p adds about ``(2p - F) / (G + T)``, so theta ~ F / 2. theta = 0.4 was chosen on
the dev split, with EM and split-merge models, among values near F / 2 (docs/parsing.md,
Max-bracket). Punctuation that EVALB deletes is not collapsed out of spans here, and labels
count as written (no ADVP = PRT).

Negative marginals: tensor-form (spectral) models can give negative or tiny marginals, since
their parameters are only identified up to linear transforms and estimated with noise. We
score an item by the *absolute value* of its marginal, as the spectral authors' parser does:
a large negative marginal signals a real (if badly estimated) constituent, and ranking by
|mu| is what their reported figures used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.dispatch import check_ids, float64s, int64s, kernel
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.treebank import labels as label_names
from lpcfg_cli.treebank.tree import Tree


def best_labels(
    layout: SpanLayout,
    item_span: np.ndarray,
    item_sym: np.ndarray,
    score: np.ndarray,
    root_ok: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Best label and its score for every span (-inf and -1 where a span has no item).

    ``root_ok[a]``: the symbol may label a whole sentence (non-intermediate symbols).
    """
    mass = np.abs(score)
    return _best_per_span(layout, item_span, item_sym, mass, mass, root_ok)


def _best_per_span(
    layout: SpanLayout,
    item_span: np.ndarray,
    item_sym: np.ndarray,
    value: np.ndarray,
    tie: np.ndarray,
    root_ok: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Every span's item of largest ``value`` (then of largest ``tie``, then the first): its
    value and symbol (-inf and -1 where a span has no item). At a whole-sentence span,
    symbols that may not be roots rank below every symbol that may."""
    check_ids("item_span", item_span, layout.n_spans)
    check_ids("item_sym", item_sym, len(root_ok))
    roots = layout.root_spans()
    is_root = np.zeros(layout.n_spans, dtype=np.bool_)
    is_root[roots[roots >= 0]] = True
    return _span_best(
        layout.n_spans,
        int64s(item_span),
        int64s(item_sym),
        float64s(value),
        float64s(tie),
        is_root,
        np.ascontiguousarray(root_ok, dtype=np.bool_),
    )


@kernel(nogil=True)
def _above(x: float, y: float) -> int:
    """1 if ``x`` ranks above ``y`` (larger; a NaN below every number), -1 if below, 0 if
    they rank equal."""
    if np.isnan(x) or np.isnan(y):
        return int(np.isnan(y)) - int(np.isnan(x))
    return 1 if x > y else (-1 if x < y else 0)


@kernel(interruptible=True, nogil=True)
def _span_best(n_spans, item_span, item_sym, value, tie, is_root, root_ok):
    """``_best_per_span`` in one pass over the items: a span's best so far is replaced by
    an item that ranks above it by key (``value``, 1e6 less for a symbol that may not be a
    root at a whole-sentence span), then by ``tie``; on a full tie the earlier item stays."""
    score = np.full(n_spans, -np.inf)
    label = np.full(n_spans, -1, dtype=np.int64)
    best = np.full(n_spans, -1, dtype=np.int64)
    key = np.empty(len(item_span))
    for t in range(len(item_span)):
        sp = item_span[t]
        key[t] = value[t] - 1e6 if is_root[sp] and not root_ok[item_sym[t]] else value[t]
        b = best[sp]
        if b < 0:
            best[sp] = t
            continue
        order = _above(key[t], key[b])
        if order > 0 or (order == 0 and _above(tie[t], tie[b]) > 0):
            best[sp] = t
    for sp in range(n_spans):
        if best[sp] >= 0:
            score[sp] = value[best[sp]]
            label[sp] = item_sym[best[sp]]
    return score, label


@dataclass(frozen=True)
class Brackets:
    """The labels of the brackets EVALB scores that a node of each symbol gives once
    debinarized: its chain's labels, top first, without a pre-terminal's tag; none for an
    intermediate symbol. Label ids ``ids[ptr[a]:ptr[a + 1]]`` for symbol ``a``."""

    ptr: np.ndarray
    ids: np.ndarray
    n_labels: int

    @classmethod
    def of(cls, symbols: Sequence[str], is_preterminal: np.ndarray) -> Brackets:
        names: dict[str, int] = {}
        per_symbol: list[list[int]] = []
        for a, symbol in enumerate(symbols):
            parts = [] if label_names.is_intermediate(symbol) else label_names.chain_labels(symbol)
            if is_preterminal[a]:
                parts = parts[:-1]
            per_symbol.append([names.setdefault(p, len(names)) for p in parts])
        counts = np.array([len(x) for x in per_symbol], dtype=np.int64)
        ids = np.array([i for x in per_symbol for i in x], dtype=np.int64)
        return cls(np.r_[0, np.cumsum(counts)], ids, len(names))


def bracket_labels(
    layout: SpanLayout,
    item_span: np.ndarray,
    item_sym: np.ndarray,
    score: np.ndarray,
    root_ok: np.ndarray,
    brackets: Brackets,
    threshold: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Best label and its gain for every span under the max-bracket objective (see the
    module): an item's gain is ``sum (P(X over its span) - threshold)`` over the brackets
    ``X`` its symbol gives, where ``P`` pools the absolute marginals of every item of the
    span giving ``X``. Ties (equal bracket sets) go to the larger marginal. The result feeds
    ``goodman_trees``."""
    check_ids("item_sym", item_sym, len(brackets.ptr) - 1)
    mass = np.abs(score)
    if len(item_span) > 1 and (np.diff(item_span) < 0).any():  # the items by span
        order = np.argsort(item_span, kind="stable")
        item_span, item_sym, mass = item_span[order], item_sym[order], mass[order]
    gain = _bracket_gains(
        int64s(item_span),
        int64s(item_sym),
        float64s(mass),
        brackets.ptr,
        brackets.ids,
        brackets.n_labels,
        float(threshold),
    )
    return _best_per_span(layout, item_span, item_sym, gain, mass, root_ok)


@kernel(interruptible=True, nogil=True)
def _bracket_gains(item_span, item_sym, mass, ptr, ids, n_labels, threshold):
    """Each item's max-bracket gain (``bracket_labels``), the items sorted by span: per
    span, ``P(X)`` pools the masses of the span's items giving bracket ``X`` (in item
    order), then an item's gain sums ``P(X) - threshold`` over its brackets."""
    pooled = np.zeros(n_labels)
    gain = np.zeros(len(item_span))
    lo = 0
    while lo < len(item_span):
        hi = lo
        while hi < len(item_span) and item_span[hi] == item_span[lo]:
            hi += 1
        for t in range(lo, hi):
            for u in range(ptr[item_sym[t]], ptr[item_sym[t] + 1]):
                pooled[ids[u]] += mass[t]
        for t in range(lo, hi):
            g = 0.0
            for u in range(ptr[item_sym[t]], ptr[item_sym[t] + 1]):
                g += pooled[ids[u]] - threshold
            gain[t] = g
        for t in range(lo, hi):
            for u in range(ptr[item_sym[t]], ptr[item_sym[t] + 1]):
                pooled[ids[u]] = 0.0
        lo = hi
    return gain


def goodman_trees(
    layout: SpanLayout,
    span_score: np.ndarray,
    span_label: np.ndarray,
    symbols: Sequence[str],
    sentences: Sequence[Sequence[str]],
) -> list[Tree | None]:
    """The max-marginal binarized tree of every sentence (None where no tree exists)."""
    if len(span_score) != layout.n_spans or len(span_label) != layout.n_spans:
        raise ValueError(f"span_score, span_label: one per span of the layout ({layout.n_spans})")
    best, split = _best_splits(
        layout.base,
        layout.len_start,
        layout.span_sent,
        layout.span_start,
        float64s(span_score),
        int64s(span_label),
    )
    trees: list[Tree | None] = []
    for s, span in enumerate(layout.root_spans()):
        if span < 0 or not np.isfinite(best[span]):
            trees.append(None)
            continue
        trees.append(
            _build(layout, s, int(layout.lengths[s]), split, span_label, symbols, sentences[s])
        )
    return trees


@kernel(interruptible=True, nogil=True)
def _best_splits(base, len_start, span_sent, span_start, span_score, span_label):
    """The CKY pass of ``goodman_trees``, by increasing span length: every span's best
    total (its score plus its best split's children's totals; -inf without a label) and
    that split (the left child's length, the first of equal totals)."""
    n_spans = len(span_score)
    best = np.full(n_spans, -np.inf)
    split = np.zeros(n_spans, dtype=np.int64)
    for p in range(len_start[2] if len(len_start) > 2 else 0):  # one-word spans
        if span_label[p] >= 0:
            best[p] = span_score[p]
    for length in range(2, len(len_start) - 1):
        for p in range(len_start[length], len_start[length + 1]):
            s, i = span_sent[p], span_start[p]
            top, k = -np.inf, 1
            for m in range(1, length):
                total = best[base[m, s] + i] + best[base[length - m, s] + i + m]
                if total > top:
                    top, k = total, m
            best[p] = top + span_score[p] if span_label[p] >= 0 else -np.inf
            split[p] = k
    return best, split


def _build(layout, s, length, split, labels, symbols, words) -> Tree:
    """Sentence ``s``'s tree from the best split of every span, built top-down with an
    explicit stack (a long sentence can give a tree as deep as it is long)."""
    base = layout.base
    root = None
    stack: list[tuple[int, int, Tree | None]] = [(0, length, None)]  # start, length, parent
    while stack:
        i, n, parent = stack.pop()
        span = int(base[n, s] + i)
        label = symbols[labels[span]]
        if n == 1:
            node = Tree(label, [words[i]])
        else:
            node = Tree(label, [])
            m = int(split[span])
            stack.append((i + m, n - m, node))  # right child, popped after the left one
            stack.append((i, m, node))
        if parent is None:
            root = node
        else:
            parent.append(node)
    return root


def max_rule_trees(
    layout: SpanLayout,
    keys: np.ndarray,
    n_symbols: int,
    marginals: np.ndarray,
    rules: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    root_ok: np.ndarray,
    symbols: Sequence[str],
    sentences: Sequence[Sequence[str]],
    variational: bool = False,
) -> list[Tree | None]:
    """The max-rule-product (or with ``variational`` the variational) binarized tree of
    every sentence (None where none exists; see the module docstring).

    ``keys``: the chart's items (sorted ``span * n_symbols + symbol``, so that an item's
    children come before it); ``marginals`` their posteriors; ``rules``: the anchored
    binary rules (parent, left, right items, posterior; ``Chart.rules``). Absolute values
    are used, as for max-marginal (see the module docstring)."""
    it, x, y, post = rules
    item_span, item_sym = keys // n_symbols, keys % n_symbols
    mu = np.abs(marginals)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mu = np.log(mu)
        # Both factors are probabilities: at most 1 (log 0). Rounding in single precision
        # can exceed it, and (variational) a parent whose marginal was flushed to zero while
        # a rule below it kept some mass gave +inf (a tree of nothing but such items).
        log_r = np.log(np.abs(post))
        if variational:
            score = np.where(mu[it] > 0, np.minimum(log_r - log_mu[it], 0.0), -np.inf)
        else:
            score = np.minimum(log_r, 0.0)
    order = np.argsort(it, kind="stable")
    leaf = (layout.span_len[item_span] == 1) & (mu > 0)
    leaf_score = np.zeros(len(keys)) if variational else np.minimum(log_mu, 0.0)
    best, back = _best_rules(
        len(keys), it[order], x[order], y[order], score[order], leaf, leaf_score
    )
    # Candidates back in the order of ``rules`` (none at all: every item a leaf, or none).
    found = back >= 0
    back[found] = order[back[found]]
    span_first = np.searchsorted(item_span, np.arange(layout.n_spans + 1))
    trees: list[Tree | None] = []
    for s, span in enumerate(layout.root_spans()):
        if span < 0:
            trees.append(None)
            continue
        lo, hi = span_first[span], span_first[span + 1]
        cand = np.arange(lo, hi)
        total = np.where(root_ok[item_sym[cand]], best[cand] + log_mu[cand], -np.inf)
        if len(cand) == 0 or not np.isfinite(total.max()):
            trees.append(None)
            continue
        top = int(cand[np.argmax(total)])
        trees.append(
            _build_rules(layout, top, item_span, item_sym, back, x, y, symbols, sentences[s])
        )
    return trees


@kernel(nogil=True)
def _best_rules(n_items, it, x, y, score, leaf, leaf_score):
    """Best log score of every item's subtree and the candidate that gives it (a leaf item
    scores ``leaf_score``); candidates sorted by parent item, whose children are earlier
    items (shorter spans)."""
    best = np.full(n_items, -np.inf)
    back = np.full(n_items, -1, dtype=np.int64)
    for i in range(n_items):
        if leaf[i]:
            best[i] = leaf_score[i]
    for c in range(len(it)):
        v = score[c] + best[x[c]] + best[y[c]]
        if v > best[it[c]]:
            best[it[c]] = v
            back[it[c]] = c
    return best, back


def _build_rules(layout, top, item_span, item_sym, back, x, y, symbols, words) -> Tree:
    """A tree from the best candidate of every item, top-down with an explicit stack."""
    root = None
    stack: list[tuple[int, Tree | None]] = [(top, None)]
    while stack:
        item, parent = stack.pop()
        label = symbols[item_sym[item]]
        if back[item] < 0:
            node = Tree(label, [words[int(layout.span_start[item_span[item]])]])
        else:
            node = Tree(label, [])
            c = back[item]
            stack.append((int(y[c]), node))  # right child, popped after the left one
            stack.append((int(x[c]), node))
        if parent is None:
            root = node
        else:
            parent.append(node)
    return root
