"""Observed trees as charts: the latent pass over their nodes gives inside and outside
vectors, tree probabilities and EM's expected counts.

A binarized tree in strict normal form has one node per span and one split per node, so the
chart whose items are exactly its nodes admits that tree alone; the latent pass over it sums
out the latent states of the skeletal tree (Matsuzaki et al. 2005, section 3). All trees of a
treebank share one span layout, so a pass over the whole treebank is one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.latent import ItemChart, PlanCache
from lpcfg_cli.engine.layout import SpanLayout


@dataclass
class TreeCharts(ItemChart):
    """The nodes of a compiled treebank as chart items (computed once per treebank)."""

    layout: SpanLayout
    keys: np.ndarray  # sorted span * N + symbol
    lexical: tuple[np.ndarray, np.ndarray, np.ndarray]  # pre-terminals: (item, rule, weight 1)
    root_items: np.ndarray  # (trees,)
    root_symbols: np.ndarray
    node_item: np.ndarray  # (nodes,) the item of each node of the compiled treebank

    @classmethod
    def build(cls, bank, n_symbols: int) -> TreeCharts:
        """Items of every node of ``bank`` (a ``CompiledTreebank``)."""
        roots = bank.roots
        layout = SpanLayout(bank.end[roots] - bank.start[roots])
        tree = np.repeat(np.arange(bank.n_trees), np.diff(bank.tree_start))
        span = layout.base[bank.end - bank.start, tree] + bank.start
        keys = span * n_symbols + bank.symbol
        order = np.argsort(keys, kind="stable")
        if len(keys) > 1 and np.any(np.diff(keys[order]) == 0):
            raise ValueError("two nodes share a span and symbol: trees must be binarized")
        node_item = np.empty(len(keys), dtype=np.int64)
        node_item[order] = np.arange(len(keys))
        pre = np.flatnonzero(bank.lex >= 0)
        lexical = (node_item[pre], bank.lex[pre], np.ones(len(pre)))
        return cls(layout, keys[order], lexical, node_item[roots], bank.symbol[roots], node_item)


@dataclass
class ExpectedCounts:
    """Log-likelihood of the trees and expected counts of every parameter (EM's E-step)."""

    loglik: float
    binary: np.ndarray  # (R, M, M * M)
    lexical: np.ndarray  # (L, M)
    root: np.ndarray  # (N, M)


def expected_counts(
    g: LatentGrammar,
    charts: TreeCharts,
    weights: np.ndarray | None = None,
    cache: PlanCache | None = None,
) -> ExpectedCounts:
    """Inside-outside over the trees: posterior counts of rules, lexical rules and roots,
    and the log-likelihood; with ``weights`` tree ``t`` counts ``weights[t]`` times
    (``sum_t w_t log p_t``; identical trees merged, ``training.bracketed_data``). ``cache``:
    see ``latent.PlanCache``."""
    chart = charts.outside(g, counts=True, weights=weights, cache=cache)
    if weights is None:
        if not np.all(np.isfinite(chart.log_z)):
            raise ValueError("a training tree has probability zero under the model")
        loglik = float(chart.log_z.sum())
    else:
        used = np.asarray(weights) != 0
        if np.any(~np.isfinite(chart.log_z) & used):
            raise ValueError("a training tree has probability zero under the model")
        loglik = float(weights[used] @ chart.log_z[used])
    post = chart.alpha * chart.beta
    lexical = np.zeros(g.lexical.shape, dtype=np.float64)
    items, rules, _ = charts.lexical
    np.add.at(lexical, rules, post[items])
    root = np.zeros(g.root.shape, dtype=np.float64)
    np.add.at(root, charts.root_symbols, post[charts.root_items])
    return ExpectedCounts(loglik, chart.rule_counts, lexical, root)


def log_probabilities(
    g: LatentGrammar, charts: TreeCharts, cache: PlanCache | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(log |p|, sign p)`` of every tree (inside pass only; -inf where p is 0)."""
    chart = charts.inside(g, cache=cache)
    item_sym = charts.keys % g.n_symbols
    z = np.zeros(len(charts.root_items))
    ok = np.isfinite(chart.log_z)
    rows = charts.root_items[ok]
    z[ok] = np.einsum("nh,nh->n", chart.alpha[rows], g.root[item_sym[rows]], dtype=np.float64)
    return chart.log_z, np.sign(z)


def tree_scores(model, bank) -> tuple[np.ndarray, np.ndarray]:
    """``(log |p|, sign p)`` of every (skeletal) tree of ``bank`` under ``model`` (an
    ``LPCFG``; ``bank`` compiled against its grammar), in double precision. Works for both
    model forms (a tensor-form model may give a tree a negative value)."""
    g = LatentGrammar.from_model(model, np.float64)
    return log_probabilities(g, TreeCharts.build(bank, g.n_symbols))
