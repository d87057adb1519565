"""EM, splitting and merging for latent PCFGs with unary rules (``model.chain_params``).

The learners of the EM family (``em``, ``splitmerge``) train, with ``unaries`` on, the base
grammar of ``grammar.unary_chains.UnaryChains`` (latent binary, unary and lexical rules, as the
Berkeley parser's grammars are) instead of one latent symbol per collapsed unary chain, and
write the model compiled into the collapsed grammar (``ChainModel.to_model``).

- E-step: ``engine.chain_counts`` (one latent pass over the trees with the compiled model).
- M-step: expected counts normalised per base ``(symbol, state)`` over its binary, unary and
  lexical rules; smoothing toward the average over the symbol's states (Petrov et al. 2006,
  section 2.3) for every kind of rule; lexicon smoothing toward the treebank's base lexicon
  (as ``latent_pcfg.em``).
- Split (Petrov et al. 2006, section 2.1) and merge (section 2.2) on the base symbols: a
  merge's loss is summed over every occurrence of the symbol, chain levels included, from
  the occurrence's inside and outside vectors (``engine.chain_counts.Occurrences``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.engine.chain_counts import ChainCounts, Occurrences, chain_expected_counts
from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.latent import PlanCache
from lpcfg_cli.engine.tree_charts import TreeCharts
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.unary_chains import UnaryChains
from lpcfg_cli.latent_pcfg.split import merge_losses, merge_maps, split_maps
from lpcfg_cli.model.chain_params import (
    ChainParams,
    normalised,
    pushed,
    symbol_totals,
    treebank_counts,
)
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams


@dataclass
class ChainTrees:
    """A compiled treebank prepared once for every E-step of a model over ``chains``: its
    charts, the engine's rule layout for ``m`` states and the plans kept across passes."""

    chains: UnaryChains
    grammar: Grammar
    bank: CompiledTreebank
    m: int
    weights: np.ndarray | None = None
    charts: TreeCharts = field(init=False)
    layout: LatentGrammar = field(init=False)
    cache: PlanCache = field(init=False)

    def __post_init__(self) -> None:
        g, m = self.grammar, self.m
        self.charts = TreeCharts.build(self.bank, g.n_symbols)
        self.layout = LatentGrammar.from_arrays(
            g.n_symbols,
            g.binary,
            np.zeros((g.n_binary, m, m * m)),
            np.zeros((g.n_lexical, m)),
            g.lexical[:, 0],
            np.zeros((g.n_symbols, m)),
        )
        self.cache = PlanCache()

    @property
    def n_trees(self) -> float:
        return float(self.bank.n_trees if self.weights is None else np.sum(self.weights))

    def expected(self, params: ChainParams, occurrences: bool = False) -> ChainCounts:
        """The E-step of ``params`` (``engine.chain_counts``)."""
        if params.m != self.m:
            raise ValueError(f"a {params.m}-state model on a plan for {self.m} states")
        try:
            return chain_expected_counts(
                params,
                self.chains,
                self.grammar,
                self.bank,
                self.charts,
                self.layout,
                weights=self.weights,
                cache=self.cache,
                occurrences=occurrences,
            )
        except ValueError as exc:
            raise LpcfgError(str(exc)) from None

    def loglik(self, params: ChainParams) -> float:
        """Log-likelihood of the trees under ``params``."""
        return self.expected(params).loglik


def lexicon_prior(
    chains: UnaryChains,
    grammar: Grammar,
    bank: CompiledTreebank,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """(Lb,) the treebank's base lexicon: each tag's relative frequencies of its words
    (tree ``t`` counted ``weights[t]`` times)."""
    _, _, lexical, _ = treebank_counts(chains, grammar, bank, weights)
    mass = np.bincount(chains.lexical[:, 0], lexical, minlength=chains.n_symbols)
    return lexical / np.where(mass > 0, mass, 1.0)[chains.lexical[:, 0]]


def m_step(
    chains: UnaryChains,
    params: ChainParams,
    counts: ChainCounts,
    n_trees: float,
    smoothing: float,
    prior: np.ndarray | None,
    lexicon_smoothing: float,
) -> ChainParams:
    """Normalised expected counts, smoothed (see the module docstring); ``params`` gives the
    state counts."""
    new = normalised(
        chains, params.states, counts.binary, counts.unary, counts.lexical, counts.root, n_trees
    )
    m = params.m
    if smoothing > 0:
        valid = (np.arange(m)[None, :] < params.states[:, None]).astype(float)
        k = np.maximum(params.states, 1).astype(float)

        def smooth(x: np.ndarray, parent: np.ndarray) -> np.ndarray:
            v = valid[parent].reshape(valid[parent].shape + (1,) * (x.ndim - 2))
            mean = x.sum(axis=1, keepdims=True) / k[parent].reshape((-1,) + (1,) * (x.ndim - 1))
            return v * ((1 - smoothing) * x + smoothing * mean)

        new.binary = smooth(new.binary, chains.binary[:, 0])
        new.unary = smooth(new.unary, chains.unary[:, 0])
        new.lexical = smooth(new.lexical, chains.lexical[:, 0])
    if prior is not None and lexicon_smoothing > 0:
        mass = np.zeros((chains.n_symbols, m))
        np.add.at(mass, chains.lexical[:, 0], new.lexical)
        new.lexical = (1 - lexicon_smoothing) * new.lexical + lexicon_smoothing * (
            prior[:, None] * mass[chains.lexical[:, 0]]
        )
    return new


def to_model(
    chains: UnaryChains,
    grammar: Grammar,
    params: ChainParams,
    coarse: PCFGParams,
    meta: dict[str, Any],
) -> LPCFG:
    """``params`` compiled into the collapsed grammar and renormalised by weight pushing
    (``model.chain_params``): an ordinary probabilistic model file."""
    states, binary, lexical, root = params.compile(chains, grammar)
    binary, lexical, root = pushed(grammar, states, binary, lexical, root)
    return LPCFG.from_padded(
        grammar, states, binary, lexical, root, coarse, "probabilistic", dict(meta)
    )


@dataclass
class ChainModel:
    """A base model with what writing it needs (the state an EM step hands on)."""

    chains: UnaryChains
    params: ChainParams

    def to_model(self, grammar: Grammar, coarse: PCFGParams, meta: dict[str, Any]) -> LPCFG:
        return to_model(self.chains, grammar, self.params, coarse, meta)


def em_steps(
    plan: ChainTrees,
    params: ChainParams,
    iterations: int,
    smoothing: float,
    prior: np.ndarray | None,
    lexicon_smoothing: float,
) -> Iterator[tuple[ChainParams, float]]:
    """``iterations`` EM steps from ``params``: after each, the new parameters and the
    training log-likelihood of the parameters before it."""
    for _ in range(iterations):
        counts = plan.expected(params)
        params = m_step(
            plan.chains, params, counts, plan.n_trees, smoothing, prior, lexicon_smoothing
        )
        yield params, counts.loglik


# --- split and merge ----------------------------------------------------------------------


def split(
    params: ChainParams,
    chains: UnaryChains,
    max_states: int,
    noise: float,
    rng: np.random.Generator,
) -> tuple[ChainParams, np.ndarray]:
    """Every state of every base symbol with at most ``max_states / 2`` states split in two
    (as ``latent_pcfg.splitmerge.split_states``); returns the new parameters and ``halves``
    ``(Nb, M')``, True at the first state of each split pair."""
    new, to, halves = split_maps(params.states, max_states)
    m_new = int(new.max())
    child = to / np.maximum(to.sum(axis=2, keepdims=True), 1.0)
    out = _transform(params, chains, to, child, m_new)
    out.states = new
    out.binary *= 1.0 + noise * rng.uniform(-1, 1, size=out.binary.shape)
    out.unary *= 1.0 + noise * rng.uniform(-1, 1, size=out.unary.shape)
    out.lexical *= 1.0 + noise * rng.uniform(-1, 1, size=out.lexical.shape)
    total = symbol_totals(chains, m_new, out.binary, out.unary, out.lexical)
    total[total <= 0] = 1.0
    out.binary /= total[chains.binary[:, 0]][:, :, None]
    out.unary /= total[chains.unary[:, 0]][:, :, None]
    out.lexical /= total[chains.lexical[:, 0]]
    return out, halves


def merge_loss(
    occ: Occurrences, n_symbols: int, halves: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(loss, freq)`` ``(Nb, M)``: the approximate loss of training log-likelihood of
    merging each split pair back (Petrov et al. 2006, section 2.2, summed over every
    occurrence of the symbol) and each state's expected count."""
    return merge_losses(occ.symbol, occ.inside, occ.outside, n_symbols, halves)


def merge(
    params: ChainParams,
    chains: UnaryChains,
    halves: np.ndarray,
    loss: np.ndarray,
    freq: np.ndarray,
    fraction: float,
) -> ChainParams:
    """Merge back the ``fraction`` of split pairs whose merge loses least likelihood; a
    merged state's distributions are the halves' mixed by their expected counts."""
    new, parent, child = merge_maps(params.states, halves, loss, freq, fraction)
    m_new = int(new.max())
    out = _transform(params, chains, parent, child, m_new)
    out.states = new
    return out


def _transform(
    params: ChainParams, chains: UnaryChains, parent: np.ndarray, child: np.ndarray, m_new: int
) -> ChainParams:
    """Parameters under per-symbol state maps: ``parent[a]`` ``(M, M')`` mixes parent
    states (its columns' weights), ``child[a]`` maps child states (sums)."""
    m = params.m
    t = params.binary.reshape(len(chains.binary), m, m, m)
    a, b, c = chains.binary[:, 0], chains.binary[:, 1], chains.binary[:, 2]
    t = np.einsum("rhij,rhx->rxij", t, parent[a], optimize=True)
    t = np.einsum("rxij,riy->rxyj", t, child[b], optimize=True)
    t = np.einsum("rxyj,rjz->rxyz", t, child[c], optimize=True)
    ua, ub = chains.unary[:, 0], chains.unary[:, 1]
    u = np.einsum("uhs,uhx->uxs", params.unary, parent[ua], optimize=True)
    u = np.einsum("uxs,usy->uxy", u, child[ub], optimize=True)
    lexical = np.einsum("lh,lhx->lx", params.lexical, parent[chains.lexical[:, 0]])
    root = np.einsum("ah,ahx->ax", params.root, child)
    return ChainParams(
        params.states.copy(), t.reshape(len(chains.binary), m_new, m_new * m_new), u, lexical, root
    )
