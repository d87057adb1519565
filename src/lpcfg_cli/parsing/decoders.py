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

from lpcfg_cli.engine.dispatch import kernel
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
    """Every span's item of largest ``value`` (then of largest ``tie``): its value and
    symbol (-inf and -1 where a span has no item). At a whole-sentence span, symbols that
    may not be roots rank below every symbol that may."""
    span_score = np.full(layout.n_spans, -np.inf)
    span_label = np.full(layout.n_spans, -1, dtype=np.int64)
    if len(item_span) == 0:
        return span_score, span_label
    roots = layout.root_spans()
    is_root = np.zeros(layout.n_spans, dtype=bool)
    is_root[roots[roots >= 0]] = True
    key = value + np.where(is_root[item_span] & ~root_ok[item_sym], -1e6, 0.0)
    order = np.lexsort((-tie, -key, item_span))
    first = order[np.r_[True, item_span[order][1:] != item_span[order][:-1]]]
    span_score[item_span[first]] = value[first]
    span_label[item_span[first]] = item_sym[first]
    return span_score, span_label


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
    if len(item_span) == 0:
        return _best_per_span(layout, item_span, item_sym, score, score, root_ok)
    mass = np.abs(score)
    per_item = np.diff(brackets.ptr)[item_sym]
    owner = np.repeat(np.arange(len(item_sym)), per_item)  # one row per (item, bracket)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(per_item) - per_item, per_item)
    label = brackets.ids[brackets.ptr[item_sym][owner] + offset]
    _, where = np.unique(item_span[owner] * brackets.n_labels + label, return_inverse=True)
    pooled = np.bincount(where, weights=mass[owner])  # P(X over the span)
    gain = np.bincount(owner, weights=pooled[where] - threshold, minlength=len(item_sym))
    return _best_per_span(layout, item_span, item_sym, gain, mass, root_ok)


def goodman_trees(
    layout: SpanLayout,
    span_score: np.ndarray,
    span_label: np.ndarray,
    symbols: Sequence[str],
    sentences: Sequence[Sequence[str]],
) -> list[Tree | None]:
    """The max-marginal binarized tree of every sentence (None where no tree exists)."""
    best = np.where(span_label >= 0, span_score, -np.inf)
    split = np.zeros(layout.n_spans, dtype=np.int64)
    for length in range(2, layout.max_length + 1):
        parents, left, right = layout.splits(length)
        total = best[left] + best[right]
        k = np.argmax(total, axis=1)
        best[parents] = np.where(
            span_label[parents] >= 0,
            total[np.arange(len(parents)), k] + span_score[parents],
            -np.inf,
        )
        split[parents] = k + 1
    trees: list[Tree | None] = []
    for s, span in enumerate(layout.root_spans()):
        if span < 0 or not np.isfinite(best[span]):
            trees.append(None)
            continue
        trees.append(
            _build(layout, s, int(layout.lengths[s]), split, span_label, symbols, sentences[s])
        )
    return trees


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
