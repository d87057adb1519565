"""EM's E-step for a latent PCFG with unary rules (``model.chain_params``) over observed trees.

The model is compiled into the collapsed grammar and one latent pass runs over the trees'
nodes (``tree_charts``), exactly as for any model; its inside and outside vectors then give
the base model's expected counts:

- a node whose symbol is no chain counts its rule as the pass does (its states are its base
  symbol's);
- a chain node ``A_1+...+A_k`` carries the chain's top states; its outside vector is passed
  down the chain, ``o_{l+1} = U_l^T o_l``, and the inside vector of its bottom (``e(T -> w)``
  for a pre-terminal, ``sum_ij t(A_k -> B C)[s, i, j] alpha_B[i] alpha_C[j]`` otherwise) up
  it, ``i_l = U_l i_{l+1}``; the unary rule between levels ``l`` and ``l + 1`` is counted
  ``o_l U_l i_{l+1}`` and the bottom's rule ``o_k (x) its inside terms``, each scaled so
  that the node's counts add up to its posterior (scale-free: the pass's span scales cancel).

The same vectors give every occurrence of a base symbol (a node, or a level of a chain
node) its inside and outside vectors, from which split-merge scores its merges
(``latent_pcfg.splitmerge.merge_loss``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.latent import PlanCache
from lpcfg_cli.engine.tree_charts import TreeCharts
from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.unary_chains import UnaryChains
from lpcfg_cli.model.chain_params import ChainParams

# Chain nodes handled per block (bounds the (nodes, M, M, M) arrays of a block).
BLOCK_NODES = 512


@dataclass
class Occurrences:
    """Every occurrence of a base symbol in the trees: its symbol, and its inside and
    outside vectors scaled so that their dot product is the occurrence's posterior."""

    symbol: np.ndarray  # (K,)
    inside: np.ndarray  # (K, M)
    outside: np.ndarray  # (K, M)


@dataclass
class ChainCounts:
    """Log-likelihood of the trees and the base model's expected counts (padded)."""

    loglik: float
    binary: np.ndarray  # (Rb, M, M * M)
    unary: np.ndarray  # (U, M, M)
    lexical: np.ndarray  # (Lb, M)
    root: np.ndarray  # (Nb, M)
    occurrences: Occurrences | None = None


def _scatter_rows(index: np.ndarray, n_out: int, rows: np.ndarray) -> np.ndarray:
    """``out[index[i]] += rows[i]`` for 2-D ``rows``, as one sparse product."""
    mat = sp.csr_matrix(
        (np.ones(len(index)), (np.asarray(index, dtype=np.int64), np.arange(len(index)))),
        shape=(n_out, len(index)),
    )
    return np.asarray(mat @ rows)


def chain_expected_counts(
    params: ChainParams,
    chains: UnaryChains,
    grammar: Grammar,
    bank: CompiledTreebank,
    charts: TreeCharts,
    layout: LatentGrammar,
    *,
    weights: np.ndarray | None = None,
    cache: PlanCache | None = None,
    occurrences: bool = False,
) -> ChainCounts:
    """The E-step of ``params`` over the compiled treebank ``bank`` (see the module
    docstring); ``layout`` is the engine's arrangement of the collapsed grammar (its
    parameters are replaced), ``weights`` count tree ``t`` ``weights[t]`` times."""
    m = params.m
    p = params.chain_matrices(chains)
    _, binary_c, lexical_c, root_c = params.compile(chains, grammar, p)
    g = layout.with_parameters(binary_c, lexical_c, root_c)
    chart = charts.outside(g, counts=True, weights=weights, cache=cache)
    used = np.ones(len(chart.log_z), dtype=bool) if weights is None else np.asarray(weights) != 0
    if np.any(~np.isfinite(chart.log_z) & used):
        raise ValueError("a training tree has probability zero under the model")
    loglik = float(
        chart.log_z.sum() if weights is None else np.asarray(weights)[used] @ chart.log_z[used]
    )
    alpha, beta = chart.alpha, chart.beta
    item = charts.node_item
    sym = bank.symbol
    depth = chains.depth
    post_node = np.einsum("nh,nh->n", alpha[item], beta[item])

    # Rules of nodes whose symbol is no chain: the pass's counts, summed by base rule.
    single_rule = depth[grammar.binary[:, 0]] == 1
    rc = chart.rule_counts.reshape(grammar.n_binary, m * m * m)
    binary = _scatter_rows(
        chains.binary_of[single_rule], len(chains.binary), rc[single_rule]
    ).reshape(len(chains.binary), m, m * m)
    pre = np.flatnonzero((bank.lex >= 0) & (depth[sym] == 1))
    lexical = _scatter_rows(
        chains.lexical_of[bank.lex[pre]], len(chains.lexical), alpha[item[pre]] * beta[item[pre]]
    )
    unary = np.zeros((len(chains.unary), m, m))
    root = np.zeros((chains.n_symbols, m))
    np.add.at(
        root, chains.top[charts.root_symbols], alpha[charts.root_items] * beta[charts.root_items]
    )
    occ: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    if occurrences:
        single = np.flatnonzero(depth[sym] == 1)
        occ.append((chains.top[sym[single]], alpha[item[single]], beta[item[single]]))

    chain_nodes = np.flatnonzero(depth[sym] > 1)
    order = chain_nodes[np.argsort(sym[chain_nodes], kind="stable")]
    # Runs of one chain symbol (none at all in a treebank without unary chains).
    bounds = (
        np.flatnonzero(np.r_[True, np.diff(sym[order]) != 0, True])
        if order.size
        else np.zeros(0, dtype=np.intp)
    )
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        a = int(sym[order[lo]])
        rules = chains.chain_rules(a)
        mats = params.unary[rules]
        levels = chains.chain(a)
        for start in range(lo, hi, BLOCK_NODES):
            nodes = order[start : min(hi, start + BLOCK_NODES)]
            outs = [beta[item[nodes]]]
            for u in mats:
                outs.append(outs[-1] @ u)
            bottom_out = outs[-1]
            if bank.lex[nodes[0]] >= 0:
                base = chains.lexical_of[bank.lex[nodes]]
                inner = params.lexical[base]
                w = _weights(post_node[nodes], bottom_out, inner)
                lexical += _scatter_rows(
                    base, len(chains.lexical), (w[:, None] * bottom_out) * inner
                )
            else:
                base = chains.binary_of[bank.rule[nodes]]
                t = params.binary[base].reshape(len(nodes), m, m, m)
                al = alpha[item[bank.left[nodes]]]
                ar = alpha[item[bank.right[nodes]]]
                inner = np.einsum("nsij,ni,nj->ns", t, al, ar, optimize=True)
                w = _weights(post_node[nodes], bottom_out, inner)
                d = t * (
                    (w[:, None] * bottom_out)[:, :, None, None]
                    * al[:, None, :, None]
                    * ar[:, None, None, :]
                )
                binary += _scatter_rows(
                    base, len(chains.binary), d.reshape(len(nodes), -1)
                ).reshape(binary.shape)
            ins = [inner]
            for u in mats[::-1]:
                ins.append(ins[-1] @ u.T)
            ins = ins[::-1]  # ins[l]: inside vector of level l
            for level, (r, u) in enumerate(zip(rules, mats, strict=True)):
                unary[r] += u * np.einsum("n,nh,ns->hs", w, outs[level], ins[level + 1])
            if occurrences:
                for level, base_symbol in enumerate(levels):
                    occ.append(
                        (
                            np.full(len(nodes), base_symbol, dtype=np.int64),
                            w[:, None] * ins[level],
                            outs[level],
                        )
                    )
    found = None
    if occurrences:
        found = Occurrences(
            np.concatenate([o[0] for o in occ]),
            np.concatenate([o[1] for o in occ]),
            np.concatenate([o[2] for o in occ]),
        )
    return ChainCounts(loglik, binary, unary, lexical, root, found)


def _weights(post: np.ndarray, outside: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Per node, the factor that makes ``outside . inside`` its posterior ``post``."""
    total = np.einsum("nh,nh->n", outside, inside)
    return np.divide(post, total, out=np.zeros_like(post), where=total > 0)
