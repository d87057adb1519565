"""Split-merge EM (Petrov, Barrett, Thibaux & Klein 2006, section 2).

Each cycle:

1. Split: every latent state of every symbol becomes two (while a symbol has at most
   ``max_states / 2``): a parent state's rule and word distributions are copied, a child
   state's probability is halved between its two halves, then every entry is perturbed by a
   relative ``noise`` and each distribution renormalised (section 2.1: the noise breaks the
   symmetry EM could not break).
2. EM (``iterations``, on the chart engine, ``latent_pcfg.em``).
3. Merge (section 2.2): the loss in training likelihood of merging each pair of halves back
   is approximated node by node from the inside and outside scores: at a node of ``a``,
   ``P_merged / P = 1 - (a1 b1 + a2 b2) + (p1 a1 + p2 a2)(b1 + b2)`` with ``a``, ``b`` the
   node's inside and outside scores of the two halves (normalised so that the node's
   posterior is one) and ``p1``, ``p2`` the halves' relative frequencies. The ``merge``
   fraction of pairs with the smallest loss are merged: the parent distribution becomes the
   frequency-weighted mixture of the halves', a child's probability the sum of the halves'.
4. EM again (``iterations // 2``), with EM's smoothing toward each parent's state average
   (section 2.3).

Each cycle is a step of ``model.protocol.Iterative``: wrapped in ``selection.EarlyStopping`` (the
``splitmerge`` method: dev F1 after every cycle, patience 1) the best cycle on dev is kept;
without dev trees the last. Models end with per-symbol state counts: frequent
symbols get many states, rare ones few. The engine pads every symbol to the largest count,
so ``max_states`` bounds the cost of parsing like ``--states`` does for EM.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.tree_charts import TreeCharts
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.grammar.unary_chains import UnaryChains
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper, to_dict
from lpcfg_cli.latent_pcfg.chain_em import ChainTrees, em_steps, lexicon_prior
from lpcfg_cli.latent_pcfg.chain_em import merge as chain_merge
from lpcfg_cli.latent_pcfg.chain_em import merge_loss as chain_merge_loss
from lpcfg_cli.latent_pcfg.chain_em import split as chain_split
from lpcfg_cli.latent_pcfg.chain_em import to_model as chain_model
from lpcfg_cli.latent_pcfg.em import (
    NOISE_HELP,
    SMOOTHING_HELP,
    TOL_HELP,
    UNARIES_HELP,
    EMLearner,
    EMOptions,
    converged_at,
)
from lpcfg_cli.latent_pcfg.split import merge_losses, merge_maps, split_maps
from lpcfg_cli.model.chain_params import ChainParams, treebank_params
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import MAX_STATES, Iterate, Iterative, Progress
from lpcfg_cli.model.treebank_pcfg import train_pcfg


@dataclass(frozen=True)
class SplitMergeOptions(Checked):
    """Hyper-parameters of split-merge EM (see the module docstring)."""

    cycles: int = hyper(
        5, "Split-merge: split-merge cycles; with --dev the best cycle is kept.", min=1
    )
    merge: float = hyper(
        0.5,
        "Split-merge: fraction of the splits merged back in each cycle.",
        min=0.0,
        max=1.0,
        grid=True,
    )
    max_states: int = hyper(
        16,
        "Split-merge: most latent states a symbol may reach (the parser pays for the largest).",
        min=1,
        max=MAX_STATES,
    )
    iterations: int = hyper(
        20, "EM iterations (split-merge: after each split; half as many after each merge).", min=0
    )
    noise: float = hyper(0.1, NOISE_HELP, min=0.0)
    # Ten times EM's 0.01: with 0.01 a single model overfits the small treebank after a few
    # cycles and its best cycle scores lower on dev. Bundles prefer the diversity of 0.01
    # (configs/best.toml). Measurements: docs/learners/splitmerge.md.
    smoothing: float = hyper(0.1, SMOOTHING_HELP, min=0.0, max=1.0, grid=True)
    tol: float = hyper(1e-5, TOL_HELP, min=0.0)
    seed: int = hyper(0, SEED_HELP, min=0)
    unaries: bool = hyper(True, UNARIES_HELP)


def _cycle(cycle: int, record: dict[str, Any], model: LPCFG, t0: float, cycles: int) -> Iterate:
    """One cycle's step. Without dev F1 every cycle is the best so far: the last is kept."""
    return Iterate(
        cycle, record, lambda: model, model, t0, heldout=float(cycle), last=cycle == cycles
    )


class SplitMergeLearner(Iterative):
    """Split-merge EM from the treebank PCFG or a start model (see the module docstring):
    each step one cycle; alone it keeps the last, ``selection.EarlyStopping`` the best on
    dev F1."""

    method = "splitmerge"
    Options = SplitMergeOptions
    decode = "max-bracket"
    takes_start = True
    unit = "cycle"
    seconds_digits = 1
    f1_digits = 2

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        if start:
            return {"unaries": "with {start} (the cycles split the start model's grammar)"}
        return {}

    def iterates(
        self, data: TrainingData, dev: Any, start: LPCFG | None, progress: Progress
    ) -> Iterator[Iterate]:
        opts, g = self.options, data.grammar
        if opts.unaries and start is None:
            yield from self._chain_iterates(data)
            return
        rng = np.random.default_rng(opts.seed)
        model = start if start is not None else train_pcfg(g, data.bank, data.meta())
        charts = TreeCharts.build(data.bank, g.n_symbols)
        for cycle in range(1, opts.cycles + 1):
            t0 = time.perf_counter()
            split, halves = split_states(model, opts.max_states, opts.noise, rng)
            model = self._em(data, split, opts.iterations)
            if halves.any():
                loss, freq = merge_loss(model, charts, halves)
                model = merge_states(model, halves, loss, freq, opts.merge)
                model = self._em(data, model, opts.iterations // 2)
            record: dict[str, Any] = {
                "cycle": cycle,
                "states": int(model.states.sum()),
                "max_states": model.max_states,
                "train_loglik": model.meta["history"][-1]["train_loglik"]
                if model.meta.get("history")
                else None,
            }
            yield _cycle(cycle, record, model, t0, opts.cycles)

    def _chain_iterates(self, data: TrainingData) -> Iterator[Iterate]:
        """The cycles on the base grammar with unary rules (``latent_pcfg.chain_em``), from the
        treebank (a start model keeps its own grammar: ``inert``)."""
        opts, g = self.options, data.grammar
        rng = np.random.default_rng(opts.seed)
        coarse = train_pcfg(g, data.bank, {}).coarse
        chains = UnaryChains.of(g)
        params = treebank_params(chains, g, data.bank)
        prior = lexicon_prior(chains, g, data.bank)
        plans: dict[int, ChainTrees] = {}

        def em(params: ChainParams, iterations: int) -> tuple[ChainParams, float | None]:
            plan = plans.get(params.m)
            if plan is None:
                plan = plans[params.m] = ChainTrees(chains, g, data.bank, params.m)
            loglik, previous = None, None
            steps = em_steps(
                plan, params, iterations, opts.smoothing, prior, EMOptions.lexicon_smoothing
            )
            for new, loglik in steps:
                params = new
                if converged_at(loglik, previous, opts.tol):
                    break
                previous = loglik
            return params, loglik

        for cycle in range(1, opts.cycles + 1):
            t0 = time.perf_counter()
            params, halves = chain_split(params, chains, opts.max_states, opts.noise, rng)
            params, loglik = em(params, opts.iterations)
            if halves.any():
                plan = plans[params.m]
                occ = plan.expected(params, occurrences=True).occurrences
                assert occ is not None
                loss, freq = chain_merge_loss(occ, chains.n_symbols, halves)
                params = chain_merge(params, chains, halves, loss, freq, opts.merge)
                params, loglik = em(params, opts.iterations // 2)
            model = chain_model(chains, g, params, coarse, dict(data.meta()))
            record: dict[str, Any] = {
                "cycle": cycle,
                "states": int(model.states.sum()),
                "base_states": int(params.states.sum()),
                "max_states": model.max_states,
                "train_loglik": loglik,
            }
            yield _cycle(cycle, record, model, t0, opts.cycles)

    def finish(
        self, data: TrainingData, chosen: Iterate, history: list[dict[str, Any]], extra: dict
    ) -> LPCFG:
        best = chosen.state
        best.meta.update(
            {
                **data.meta(),
                "method": self.method,
                self.method: to_dict(self.options),
                "cycles": history,
                "selected_cycle": chosen.index,
                **extra,
            }
        )
        return best

    def line(self, record: dict[str, Any]) -> str:
        return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in record.items())

    def _em(self, data: TrainingData, start: LPCFG, iterations: int) -> LPCFG:
        opts = self.options
        em = EMOptions(iterations=iterations, tol=opts.tol, smoothing=opts.smoothing)
        return EMLearner(em).fit(data, start=start)


def split_states(
    model: LPCFG, max_states: int, noise: float, rng: np.random.Generator
) -> tuple[LPCFG, np.ndarray]:
    """Every state of every symbol with at most ``max_states / 2`` states split in two.

    Returns the new model and ``halves`` ``(N, M')``: True at the first state of each split
    pair (states ``h``, ``h + 1``), the candidates for merging back.
    """
    g = model.grammar
    new, to, halves = split_maps(model.states, max_states)
    m_new = int(new.max())
    child = to / np.maximum(to.sum(axis=2, keepdims=True), 1.0)  # halves share the mass
    binary, lexical, root = _transform(model, to, child, m_new)
    valid = np.arange(m_new)[None, :] < new[:, None]
    binary *= 1.0 + noise * rng.uniform(-1, 1, size=binary.shape)
    lexical *= 1.0 + noise * rng.uniform(-1, 1, size=lexical.shape)
    binary, lexical = _normalise(g, binary, lexical, valid)
    return LPCFG.from_padded(
        g, new, binary, lexical, root, model.coarse, model.form, dict(model.meta)
    ), halves


def merge_loss(
    model: LPCFG, charts: TreeCharts, halves: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(loss, freq)``, both ``(N, M)``: the loss in training log-likelihood of merging each
    pair ``(h, h + 1)`` with ``halves[a, h]`` back into one state (Petrov et al. 2006,
    section 2.2), and each state's expected count in the training trees."""
    g = model.grammar
    chart = charts.outside(LatentGrammar.from_model(model, np.float64))
    return merge_losses(charts.keys % g.n_symbols, chart.alpha, chart.beta, g.n_symbols, halves)


def merge_states(
    model: LPCFG, halves: np.ndarray, loss: np.ndarray, freq: np.ndarray, fraction: float
) -> LPCFG:
    """Merge back the ``fraction`` of split pairs whose merge loses least likelihood; a
    merged parent distribution is the halves' mixed by their expected counts ``freq``."""
    g = model.grammar
    new, parent, child = merge_maps(model.states, halves, loss, freq, fraction)
    m_new = int(new.max())
    binary, lexical, root = _transform(model, parent, child, m_new)
    return LPCFG.from_padded(
        g, new, binary, lexical, root, model.coarse, model.form, dict(model.meta)
    )


def _transform(
    model: LPCFG, parent: np.ndarray, child: np.ndarray, m_new: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Padded parameters under per-symbol state maps: ``parent[a]`` ``(M, M')`` mixes parent
    states (its columns' weights), ``child[a]`` maps child states (sums)."""
    g = model.grammar
    m = model.max_states
    t = model.padded_binary().reshape(g.n_binary, m, m, m)
    a, b, c = g.binary[:, 0], g.binary[:, 1], g.binary[:, 2]
    t = np.einsum("rhij,rhx->rxij", t, parent[a], optimize=True)
    t = np.einsum("rxij,riy->rxyj", t, child[b], optimize=True)
    t = np.einsum("rxyj,rjz->rxyz", t, child[c], optimize=True)
    lexical = np.einsum("lh,lhx->lx", model.padded_lexical(), parent[g.lexical[:, 0]])
    root = np.einsum("ah,ahx->ax", model.padded_root(), child)
    return t.reshape(g.n_binary, m_new, m_new * m_new), lexical, root


def _normalise(
    g: Grammar, binary: np.ndarray, lexical: np.ndarray, valid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each (symbol, state)'s rules and words rescaled to sum to one."""
    total = np.zeros(valid.shape)
    np.add.at(total, g.binary[:, 0], binary.sum(axis=2))
    np.add.at(total, g.lexical[:, 0], lexical)
    total = np.where(total > 0, total, 1.0)
    return binary / total[g.binary[:, 0]][:, :, None], lexical / total[g.lexical[:, 0]]
