"""EM for latent-variable PCFGs (Matsuzaki, Miyao & Tsujii 2005).

Every symbol gets ``m`` latent states; the training trees are observed without them and EM
maximises the likelihood of the skeletal trees.

- Initialisation: the treebank PCFG split into ``m`` states with a seeded relative random
  perturbation, renormalised (``learners.split.split_model``), or an existing model (``init``).
- E-step: inside-outside over the fixed training trees on the chart engine the parser uses
  (``engine.trees``: the nodes of all trees are the items of one chart, so every span length
  of the whole treebank is one batch of matrix products), in double precision; spans carry
  log scales, so long trees neither underflow nor overflow.
- M-step: expected counts normalised per (symbol, state).
- Smoothing (optional, on by default): each rule's distribution for a state is pulled
  toward the average over the parent's states by ``smoothing`` (Petrov et al. 2006), and
  every lexical distribution is interpolated with the treebank PCFG's tied lexicon by
  ``lexicon_smoothing``, so that words (and unary-chain pre-terminals) seen rarely in
  training keep a usable probability. Both keep every distribution normalised.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.engine.grammars import LatentGrammar
from lpcfg_cli.engine.trees import TreeCharts, expected_counts, log_probabilities
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar import CompiledTreebank, Grammar
from lpcfg_cli.learners.pcfg import train_pcfg
from lpcfg_cli.learners.split import split_model
from lpcfg_cli.model import LPCFG


@dataclass
class Params:
    """Dense parameters with a uniform number of states ``m``."""

    binary: np.ndarray  # (R, m, m*m): t(a -> b c, h2, h3 | a, h1)
    lexical: np.ndarray  # (L, m)
    root: np.ndarray  # (N, m)

    @classmethod
    def from_model(cls, model: LPCFG) -> Params:
        m = int(model.states[0])
        if (model.states != m).any():
            raise LpcfgError("EM needs the same number of states for every symbol")
        g = model.grammar
        return cls(
            model.binary.reshape(g.n_binary, m, m * m).copy(),
            model.lexical.reshape(g.n_lexical, m).copy(),
            model.root.reshape(g.n_symbols, m).copy(),
        )

    def to_model(self, grammar: Grammar, coarse: Any, meta: dict[str, Any]) -> LPCFG:
        m = self.lexical.shape[1]
        return LPCFG(
            grammar, np.full(grammar.n_symbols, m), self.binary.ravel().copy(),
            self.lexical.ravel().copy(), self.root.ravel().copy(), coarse, "probabilistic",
            meta,
        )  # fmt: skip


@dataclass
class _EStep:
    loglik: float
    binary: np.ndarray | None = None  # expected counts, shaped like Params
    lexical: np.ndarray | None = None
    root: np.ndarray | None = None


class Trees:
    """A compiled treebank prepared once for every E-step: its chart items and the rule
    layout of the engine (parameters change every iteration, the layout does not)."""

    def __init__(self, grammar: Grammar, bank: CompiledTreebank, m: int):
        self.bank = bank
        self.charts = TreeCharts.build(bank, grammar.n_symbols)
        zeros = np.zeros((grammar.n_binary, m, m * m))
        self.layout = LatentGrammar.from_arrays(
            grammar.n_symbols, grammar.binary, zeros, np.zeros((grammar.n_lexical, m)),
            grammar.lexical[:, 0], np.zeros((grammar.n_symbols, m)),
        )  # fmt: skip

    def grammar(self, params: Params) -> LatentGrammar:
        return self.layout.with_parameters(params.binary, params.lexical, params.root)


def e_step(params: Params, trees: Trees, counts: bool = True) -> _EStep:
    """Log-likelihood of the trees and (optionally) expected counts."""
    g = trees.grammar(params)
    if not counts:
        return _EStep(float(log_probabilities(g, trees.charts)[0].sum()))
    try:
        c = expected_counts(g, trees.charts)
    except ValueError as exc:
        raise LpcfgError(str(exc)) from None
    return _EStep(c.loglik, c.binary, c.lexical, c.root)


def m_step(
    grammar: Grammar,
    counts: _EStep,
    n_trees: int,
    smoothing: float,
    lexicon_prior: np.ndarray | None,
    lexicon_smoothing: float,
) -> Params:
    """Normalised expected counts, smoothed."""
    m = counts.lexical.shape[1]
    n_sym = grammar.n_symbols
    total = np.zeros((n_sym, m))
    np.add.at(total, grammar.binary[:, 0], counts.binary.sum(axis=2))
    np.add.at(total, grammar.lexical[:, 0], counts.lexical)
    total[total <= 0] = 1.0
    binary = counts.binary / total[grammar.binary[:, 0]][:, :, None]
    lexical = counts.lexical / total[grammar.lexical[:, 0]]
    if smoothing > 0:
        binary = (1 - smoothing) * binary + smoothing * binary.mean(axis=1, keepdims=True)
        lexical = (1 - smoothing) * lexical + smoothing * lexical.mean(axis=1, keepdims=True)
    if lexicon_prior is not None and lexicon_smoothing > 0:
        # The prior is a per-symbol distribution over its words; mix only pre-terminal mass.
        lexical = (1 - lexicon_smoothing) * lexical + lexicon_smoothing * (
            lexicon_prior[:, None] * _lexical_mass(grammar, lexical)
        )
    root = counts.root / max(n_trees, 1)
    return Params(binary, lexical, root)


def _lexical_mass(grammar: Grammar, lexical: np.ndarray) -> np.ndarray:
    """(L, m): the total lexical probability of each rule's symbol and state."""
    mass = np.zeros((grammar.n_symbols, lexical.shape[1]))
    np.add.at(mass, grammar.lexical[:, 0], lexical)
    return mass[grammar.lexical[:, 0]]


def train_em(
    grammar: Grammar,
    bank: CompiledTreebank,
    *,
    states: int = 8,
    iterations: int = 20,
    seed: int = 0,
    init: LPCFG | None = None,
    noise: float = 0.1,
    tol: float = 1e-5,
    smoothing: float = 0.01,
    lexicon_smoothing: float = 0.05,
    dev_bank: CompiledTreebank | None = None,
    dev_f1: Callable[[LPCFG], float] | None = None,
    dev_f1_every: int = 5,
    patience: int = 2,
    callback: Callable[[dict[str, Any]], None] | None = None,
    meta: dict[str, Any] | None = None,
) -> LPCFG:
    """EM from the split treebank PCFG (or ``init``); returns the selected model.

    With ``dev_f1`` the model with the best dev F1 (evaluated every ``dev_f1_every``
    iterations and at the end) is kept, and training stops after ``patience`` evaluations
    without improvement; otherwise the best dev log-likelihood (with ``dev_bank``) or the
    last iteration. Training also stops when the relative change of the training
    log-likelihood falls below ``tol``.
    """
    pcfg = train_pcfg(grammar, bank, {})
    coarse = pcfg.coarse
    if init is not None:
        if init.grammar.symbols != grammar.symbols or not np.array_equal(
            init.grammar.binary, grammar.binary
        ):
            raise LpcfgError("--init model was trained on a different grammar")
        if init.form != "probabilistic":
            raise LpcfgError("--init needs a probabilistic model (not a spectral one)")
        start = init
    else:
        start = split_model(pcfg, states, noise=noise, seed=seed)
    params = Params.from_model(start)
    m = int(params.lexical.shape[1])
    plan = Trees(grammar, bank, m)
    dev_plan = Trees(grammar, dev_bank, m) if dev_bank is not None and dev_bank.n_trees else None
    # The tied PCFG lexicon, as a per-symbol distribution over its words.
    prior = pcfg.lexical.copy()
    mass = np.bincount(grammar.lexical[:, 0], prior, minlength=grammar.n_symbols)
    prior = prior / np.where(mass > 0, mass, 1.0)[grammar.lexical[:, 0]]
    options = {"states": int(params.lexical.shape[1]), "iterations": iterations, "seed": seed,
               "noise": noise, "tol": tol, "smoothing": smoothing,
               "lexicon_smoothing": lexicon_smoothing, "dev_f1_every": dev_f1_every,
               "patience": patience, "init": init is not None}  # fmt: skip
    base_meta = {**(meta or {}), "method": "em", "em": options}
    history: list[dict[str, Any]] = []
    best: tuple[float, int, Params] | None = None
    previous = None
    stale = 0
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        stats = e_step(params, plan)
        params = m_step(grammar, stats, bank.n_trees, smoothing, prior, lexicon_smoothing)
        record: dict[str, Any] = {"iteration": it, "train_loglik": stats.loglik}
        if dev_plan is not None:
            record["dev_loglik"] = e_step(params, dev_plan, counts=False).loglik
        last = it == iterations
        converged = previous is not None and abs(stats.loglik - previous) <= tol * abs(previous)
        record["dev_f1"] = None
        if dev_f1 is not None and (it % dev_f1_every == 0 or last or converged):
            model = params.to_model(grammar, coarse, dict(base_meta))
            record["dev_f1"] = float(dev_f1(model))
        record["seconds"] = round(time.perf_counter() - t0, 3)
        history.append(record)
        if callback:
            callback(record)
        score = record["dev_f1"] if dev_f1 is not None else record.get("dev_loglik")
        if score is not None:
            if best is None or score > best[0]:
                best, stale = (score, it, params), 0
            else:
                stale += 1
        if converged or (dev_f1 is not None and stale >= patience):
            break
        previous = stats.loglik
    chosen, selected = (best[2], best[1]) if best is not None else (params, len(history))
    final_meta = {**base_meta, "history": history, "selected_iteration": selected}
    return chosen.to_model(grammar, coarse, final_meta)
