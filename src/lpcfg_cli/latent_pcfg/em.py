"""EM for latent-variable PCFGs (Matsuzaki, Miyao & Tsujii 2005).

Every symbol gets ``m`` latent states; the training trees are observed without them and EM
maximises the likelihood of the skeletal trees.

- Initialisation: the treebank PCFG split into ``m`` states with a seeded relative random
  perturbation, renormalised (``latent_pcfg.split.split_model``), or a start model (``--init``,
  or the previous learner of a chain such as pivot+em). Symbols may have different state
  counts (a start model's are kept): parameters are padded to the largest and the padding
  stays exactly zero.
- E-step: inside-outside over the fixed training trees on the chart engine the parser uses
  (``engine.tree_charts``: the nodes of all trees are the items of one chart, so every span length
  of the whole treebank is one batch of matrix products), in double precision; spans carry
  log scales, so long trees neither underflow nor overflow. The charts' plans are built
  once and reused every iteration (``engine.latent.PlanCache``). Merged identical trees
  (``TrainingData.weights``) count as often as they were seen.
- M-step: expected counts normalised per (symbol, state).
- Selection: each iteration is a step of ``model.protocol.Iterative``; alone, EM keeps the last.
  Wrapped in ``selection.EarlyStopping`` (the ``em`` method), the iteration with the best dev
  F1 (scored every ``dev_f1_every`` iterations and at the end) is kept, or from text the
  best dev log-likelihood, and training stops after ``patience`` scores without
  improvement.
- Smoothing (optional, on by default): each rule's distribution for a state is pulled
  toward the average over the parent's states by ``smoothing`` (Petrov et al. 2006), and
  every lexical distribution is interpolated with the treebank PCFG's tied lexicon by
  ``lexicon_smoothing``, so that words (and unary-chain pre-terminals) seen rarely in
  training keep a usable probability. Both keep every distribution normalised.

From text (``TrainingData.text``: sentences without trees, on the single-symbol grammar),
EM is the inside-outside algorithm of Baker (1979) and Lari & Young (1990): the E-step sums
over every tree of each distinct sentence (``engine.string_charts``), counted as often as the
sentence was seen; EM starts from seeded random parameters (``split.random_model``) around
the string PCFG (``model.treebank_pcfg.string_pcfg``, whose lexicon, the unigram
distribution, is the one lexicon smoothing pulls toward); with dev sentences (``DevText``,
or the words of dev trees) the iteration with the best dev log-likelihood is kept and
training stops after ``patience`` of them without improvement. M-step and smoothing are the
same.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.engine import string_charts as strings
from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.latent import PlanCache
from lpcfg_cli.engine.string_charts import StringCharts
from lpcfg_cli.engine.tree_charts import (
    ExpectedCounts,
    TreeCharts,
    expected_counts,
    log_probabilities,
)
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.heldout import DevText, DevTrees
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.grammar.unary_chains import UnaryChains
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper, to_dict
from lpcfg_cli.latent_pcfg.chain_em import ChainModel, ChainTrees, em_steps, lexicon_prior
from lpcfg_cli.latent_pcfg.split import random_model, split_model
from lpcfg_cli.model.chain_params import split_params, treebank_params
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.model.protocol import MAX_STATES, STATES_HELP, Iterate, Iterative, Progress
from lpcfg_cli.model.treebank_pcfg import string_pcfg, train_pcfg

# Help of the options EM and split-merge EM share (one wording for one flag).
TOL_HELP = "EM stops when the relative log-likelihood change is below this."
SMOOTHING_HELP = "EM: weight pulling each state's rule distribution to the state average."
NOISE_HELP = "EM: relative random perturbation of the split PCFG it starts from."
UNARIES_HELP = (
    "EM: train unary chains as latent unary rules (their symbols share the rules they "
    "stand for, as in the Berkeley parser) instead of one latent symbol per chain."
)


@dataclass(frozen=True)
class EMOptions(Checked):
    """Hyper-parameters of EM (defaults: the `make demo` runs; see the module docstring)."""

    states: int = hyper(8, STATES_HELP, min=1, max=MAX_STATES)
    iterations: int = hyper(20, "EM iterations.", min=1)
    seed: int = hyper(0, SEED_HELP, min=0)
    tol: float = hyper(1e-5, TOL_HELP, min=0.0)
    smoothing: float = hyper(0.01, SMOOTHING_HELP, min=0.0, max=1.0, grid=True)
    noise: float = hyper(0.1, NOISE_HELP, min=0.0)
    unaries: bool = hyper(True, UNARIES_HELP)
    lexicon_smoothing: float = 0.05  # weight of the treebank lexicon in every emission


@dataclass
class Params:
    """Parameters padded to the largest state count ``M``; entries beyond a symbol's
    ``states`` are zero and stay zero."""

    states: np.ndarray  # (N,)
    binary: np.ndarray  # (R, M, M*M): t(a -> b c, h2, h3 | a, h1)
    lexical: np.ndarray  # (L, M)
    root: np.ndarray  # (N, M)

    @classmethod
    def from_model(cls, model: LPCFG) -> Params:
        return cls(
            model.states.copy(),
            model.padded_binary().copy(),
            model.padded_lexical(),
            model.padded_root(),
        )

    def to_model(self, grammar: Grammar, coarse: Any, meta: dict[str, Any]) -> LPCFG:
        return LPCFG.from_padded(
            grammar,
            self.states,
            self.binary,
            self.lexical,
            self.root,
            coarse,
            "probabilistic",
            meta,
        )


@dataclass
class _EStep:
    loglik: float
    binary: np.ndarray | None = None  # expected counts, shaped like Params
    lexical: np.ndarray | None = None
    root: np.ndarray | None = None


class _Plan:
    """Training data prepared once for every E-step: its chart items and the rule layout
    of the engine (parameters change every iteration, the layout does not)."""

    def __init__(self, grammar: Grammar, m: int):
        zeros = np.zeros((grammar.n_binary, m, m * m))
        self.layout = LatentGrammar.from_arrays(
            grammar.n_symbols,
            grammar.binary,
            zeros,
            np.zeros((grammar.n_lexical, m)),
            grammar.lexical[:, 0],
            np.zeros((grammar.n_symbols, m)),
        )

    def grammar(self, params: Params) -> LatentGrammar:
        return self.layout.with_parameters(params.binary, params.lexical, params.root)

    def expected(self, g: LatentGrammar) -> ExpectedCounts:
        raise NotImplementedError

    def loglik(self, g: LatentGrammar) -> float:
        raise NotImplementedError


class Trees(_Plan):
    """A compiled treebank: each tree's nodes are its chart's items (``engine.tree_charts``);
    with ``weights`` tree ``t`` counts ``weights[t]`` times (merged identical trees). The
    chart's plans are kept across iterations (``latent.PlanCache``)."""

    def __init__(
        self,
        grammar: Grammar,
        bank: CompiledTreebank,
        m: int,
        weights: np.ndarray | None = None,
    ):
        self.bank = bank
        self.charts = TreeCharts.build(bank, grammar.n_symbols)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.cache: PlanCache | None = PlanCache()  # None: plan every pass afresh
        super().__init__(grammar, m)

    def expected(self, g: LatentGrammar) -> ExpectedCounts:
        return expected_counts(g, self.charts, self.weights, self.cache)

    def loglik(self, g: LatentGrammar) -> float:
        log_p = log_probabilities(g, self.charts, self.cache)[0]
        return float(log_p.sum() if self.weights is None else self.weights @ log_p)


class Strings(_Plan):
    """Distinct sentences over all their trees (``engine.string_charts``), each counted
    ``weights[s]`` times; the charts' plans are kept across iterations."""

    def __init__(self, grammar: Grammar, charts: StringCharts, weights: np.ndarray, m: int):
        self.charts = charts
        self.weights = np.asarray(weights, dtype=np.float64)
        self.caches: list[PlanCache] | None = charts.plan_caches()
        super().__init__(grammar, m)

    def expected(self, g: LatentGrammar) -> ExpectedCounts:
        return strings.expected_counts(g, self.charts, self.weights, self.caches)

    def loglik(self, g: LatentGrammar) -> float:
        log_p = strings.log_probabilities(g, self.charts, self.caches)[0]
        return float(self.weights @ log_p)


def e_step(params: Params, plan: _Plan, counts: bool = True) -> _EStep:
    """Log-likelihood of the training data and (optionally) expected counts."""
    g = plan.grammar(params)
    if not counts:
        return _EStep(plan.loglik(g))
    try:
        c = plan.expected(g)
    except ValueError as exc:
        raise LpcfgError(str(exc)) from None
    return _EStep(c.loglik, c.binary, c.lexical, c.root)


def m_step(
    grammar: Grammar,
    params: Params,
    counts: _EStep,
    n_trees: float,
    smoothing: float,
    lexicon_prior: np.ndarray | None,
    lexicon_smoothing: float,
) -> Params:
    """Normalised expected counts, smoothed; ``params`` gives the state counts and
    ``n_trees`` the total weight of the training trees or sentences (the root counts' sum),
    not the number of distinct ones."""
    m = counts.lexical.shape[1]
    n_sym = grammar.n_symbols
    valid = (np.arange(m)[None, :] < params.states[:, None]).astype(float)  # (N, M)
    total = np.zeros((n_sym, m))
    np.add.at(total, grammar.binary[:, 0], counts.binary.sum(axis=2))
    np.add.at(total, grammar.lexical[:, 0], counts.lexical)
    total[total <= 0] = 1.0
    binary = counts.binary / total[grammar.binary[:, 0]][:, :, None]
    lexical = counts.lexical / total[grammar.lexical[:, 0]]
    if smoothing > 0:
        # Toward the average over the parent's own states (padding excluded and kept zero).
        vb, vl = valid[grammar.binary[:, 0]], valid[grammar.lexical[:, 0]]
        k = np.maximum(params.states, 1).astype(float)
        binary = vb[:, :, None] * (
            (1 - smoothing) * binary
            + smoothing * (binary.sum(axis=1, keepdims=True) / k[grammar.binary[:, 0], None, None])
        )
        lexical = vl * (
            (1 - smoothing) * lexical
            + smoothing * (lexical.sum(axis=1, keepdims=True) / k[grammar.lexical[:, 0], None])
        )
    if lexicon_prior is not None and lexicon_smoothing > 0:
        # The prior is a per-symbol distribution over its words; mix only pre-terminal mass.
        lexical = (1 - lexicon_smoothing) * lexical + lexicon_smoothing * (
            lexicon_prior[:, None] * _lexical_mass(grammar, lexical)
        )
    root = counts.root / (n_trees if n_trees > 0 else 1)
    return Params(params.states, binary, lexical, root)


def _lexical_mass(grammar: Grammar, lexical: np.ndarray) -> np.ndarray:
    """(L, m): the total lexical probability of each rule's symbol and state."""
    mass = np.zeros((grammar.n_symbols, lexical.shape[1]))
    np.add.at(mass, grammar.lexical[:, 0], lexical)
    return mass[grammar.lexical[:, 0]]


class EMLearner(Iterative):
    """EM from the split treebank PCFG or from a start model (see the module docstring):
    each step one iteration; alone it keeps the last, ``selection.EarlyStopping`` the best
    on dev data."""

    method = "em"
    Options = EMOptions
    decode = "max-bracket"
    takes_start = True
    takes_text = True
    takes_weights = True
    unit = "iteration"

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        out = {}
        if start:
            out["states"] = "with {start} (the start model's states are kept)"
            out["noise"] = "with {start} (it perturbs the split PCFG EM starts from otherwise)"
            out["seed"] = "with {start} (it only perturbs the split PCFG)"
            out["unaries"] = "with {start} (EM continues on the start model's grammar)"
        return out

    def iterates(
        self,
        data: TrainingData,
        dev: DevTrees | DevText | None,
        start: LPCFG | None,
        progress: Progress,
    ) -> Iterator[Iterate]:
        """EM iterations on ``data``'s trees or sentences, each a step with the dev
        log-likelihood as its held-out score."""
        opts, grammar, text = self.options, data.grammar, data.text
        if opts.unaries and text is None and start is None:
            yield from self._chain_iterates(data, dev, progress)
            return
        pcfg = (
            string_pcfg(grammar, text)
            if text is not None
            else train_pcfg(grammar, data.bank, {}, data.weights)
        )
        coarse = pcfg.coarse
        if start is not None:
            _check_start(start, grammar)
        elif text is not None:
            start = random_model(pcfg, opts.states, seed=opts.seed)
        else:
            start = split_model(pcfg, opts.states, noise=opts.noise, seed=opts.seed)
        params = Params.from_model(start)
        m = int(params.lexical.shape[1])
        if text is not None:
            plan: _Plan = Strings(grammar, StringCharts.from_ids(grammar, text.ids), text.counts, m)
            dev_plan = _dev_strings(grammar, coarse, dev, m, progress) if dev is not None else None
            n_roots = text.total
        else:
            plan = Trees(grammar, data.bank, m, data.weights)
            dev_plan = _dev_trees(grammar, dev, m, progress) if dev is not None else None
            n_roots = data.bank.n_trees if data.weights is None else float(data.weights.sum())
        # The tied PCFG lexicon, as a per-symbol distribution over its words.
        prior = pcfg.lexical.copy()
        mass = np.bincount(grammar.lexical[:, 0], prior, minlength=grammar.n_symbols)
        prior = prior / np.where(mass > 0, mass, 1.0)[grammar.lexical[:, 0]]
        options = {**to_dict(opts), "states": m, "init": start.meta.get("method", "split pcfg")}

        def steps(params: Params) -> Iterator[tuple[Params, float]]:
            while True:
                stats = e_step(params, plan)
                params = m_step(
                    grammar, params, stats, n_roots, opts.smoothing, prior, opts.lexicon_smoothing
                )
                yield params, stats.loglik

        dev_loglik = None
        if dev_plan is not None:
            dev_loglik = lambda params: e_step(params, dev_plan, counts=False).loglik  # noqa: E731
        made = (grammar, coarse, options)
        yield from _em_iterates(opts, steps(params), dev_loglik, made, text is None, progress)

    def _chain_iterates(
        self, data: TrainingData, dev: DevTrees | DevText | None, progress: Progress
    ) -> Iterator[Iterate]:
        """EM iterations of the model with unary rules (``latent_pcfg.chain_em``), from the
        treebank (a start model keeps its own grammar: ``inert``)."""
        opts, grammar = self.options, data.grammar
        coarse = train_pcfg(grammar, data.bank, {}, data.weights).coarse
        chains = UnaryChains.of(grammar)
        base = treebank_params(chains, grammar, data.bank, data.weights)
        params = split_params(base, chains, opts.states, opts.noise, opts.seed)
        plan = ChainTrees(chains, grammar, data.bank, opts.states, data.weights)
        dev_bank = _dev_bank(grammar, dev, progress) if dev is not None else None
        dev_plan = None if dev_bank is None else ChainTrees(chains, grammar, dev_bank, opts.states)
        prior = lexicon_prior(chains, grammar, data.bank, data.weights)
        options = {**to_dict(opts), "init": "split pcfg"}
        steps = (
            (ChainModel(chains, params), loglik)
            for params, loglik in em_steps(
                plan, params, opts.iterations, opts.smoothing, prior, opts.lexicon_smoothing
            )
        )
        dev_loglik = None
        if dev_plan is not None:
            dev_loglik = lambda state: dev_plan.loglik(state.params)  # noqa: E731
        made = (grammar, coarse, options)
        yield from _em_iterates(opts, steps, dev_loglik, made, True, progress)

    def finish(
        self, data: TrainingData, chosen: Iterate, history: list[dict[str, Any]], extra: dict
    ) -> LPCFG:
        params, grammar, coarse, options = chosen.state
        meta = {
            **data.meta(),
            "method": "em",
            "em": options,
            "history": history,
            "selected_iteration": chosen.index,
            **extra,
        }
        return params.to_model(grammar, coarse, meta)

    def line(self, record: dict[str, Any]) -> str:
        return _iteration_line(record)


def _check_start(start: LPCFG, grammar: Grammar) -> None:
    """Refuse a start model EM cannot continue on ``grammar``."""
    same = (
        start.grammar.symbols == grammar.symbols
        and np.array_equal(start.grammar.binary, grammar.binary)
        and start.grammar.words == grammar.words
        and np.array_equal(start.grammar.lexical, grammar.lexical)
    )
    if not same:
        raise LpcfgError("the start model was trained on a different grammar")
    if start.form != "probabilistic":
        raise LpcfgError("EM needs a probabilistic start model (not a spectral one)")


def _dev_trees(
    grammar: Grammar, dev: DevTrees | DevText, m: int, progress: Progress
) -> Trees | None:
    """The dev trees compiled against ``grammar`` (those using unseen rules left out)."""
    bank = _dev_bank(grammar, dev, progress)
    return Trees(grammar, bank, m) if bank is not None else None


def _em_iterates(
    opts: EMOptions,
    steps: Iterator[tuple[Any, float]],
    dev_loglik: Callable[[Any], float] | None,
    made: tuple[Grammar, PCFGParams, dict[str, Any]],
    f1_slot: bool,
    progress: Progress,
) -> Iterator[Iterate]:
    """``opts.iterations`` of EM as ``Iterate`` steps: ``steps`` gives each iteration's
    model state (its ``to_model``) and the training log-likelihood before it; ``dev_loglik``
    the state's held-out score; ``made`` = (grammar, coarse PCFG, options) for the model
    file. With ``f1_slot`` each record has a ``dev_f1`` for model selection to fill (trees;
    a model of strings is not scored by F1)."""
    grammar, coarse, _ = made
    previous = None
    with progress.bar(total=opts.iterations, desc="em", unit="it") as bar:
        for it in range(1, opts.iterations + 1):
            t0 = time.perf_counter()
            state, loglik = next(steps)
            record: dict[str, Any] = {"iteration": it, "train_loglik": loglik}
            heldout = None
            if dev_loglik is not None:
                heldout = record["dev_loglik"] = dev_loglik(state)
            if f1_slot:
                record["dev_f1"] = None
            bar.update(1)
            yield Iterate(
                it,
                record,
                lambda state=state: state.to_model(grammar, coarse, {}),
                (state, *made),
                t0,
                heldout,
                converged_at(loglik, previous, opts.tol),
                it == opts.iterations,
            )
            previous = loglik


def converged_at(loglik: float, previous: float | None, tol: float) -> bool:
    """True when the log-likelihood moved by at most ``tol`` of its previous value (EM's
    stopping rule, ``--tol``)."""
    return previous is not None and abs(loglik - previous) <= tol * abs(previous)


def _dev_bank(
    grammar: Grammar, dev: DevTrees | DevText, progress: Progress
) -> CompiledTreebank | None:
    """The dev trees compiled against ``grammar``, those using rules unseen in training
    left out (and said so); None if none is left."""
    if not isinstance(dev, DevTrees):
        raise LpcfgError("dev sentences without trees need training sentences without trees")
    dev_bank, dropped = dev.compiled(grammar)
    if dropped:
        progress.report(
            f"{dropped} dev trees use rules unseen in training: left out of "
            "the dev log-likelihood (still parsed for dev F1)"
        )
    return dev_bank if dev_bank.n_trees else None


def _dev_strings(
    grammar: Grammar, coarse: PCFGParams, dev: DevTrees | DevText, m: int, progress: Progress
) -> Strings | None:
    """The distinct dev sentences (words of dev trees, or dev text) with their counts,
    looked up as ``lpcfg score`` looks them up; those with a word the lexicon cannot score
    (unseen in training, and no signatures) are left out."""
    seen = Counter(tuple(s) for s in dev.sentences if s)
    lexicon = grammar.lexicon
    usable = [s for s in seen if all(lexicon.lookup_weighted(w, t) for t, w in enumerate(s))]
    left = sum(seen.values()) - sum(seen[s] for s in usable)
    if left:
        progress.report(
            f"{left} dev sentences have words unseen in training (and no unknown-word "
            "signature): left out of the dev log-likelihood"
        )
    if not usable:
        return None
    charts = StringCharts.from_tokens(grammar, usable, coarse)
    return Strings(grammar, charts, np.array([seen[s] for s in usable], dtype=np.float64), m)


def _iteration_line(rec: dict[str, Any]) -> str:
    parts = [f"iteration {rec['iteration']:3d}", f"train loglik {rec['train_loglik']:.1f}"]
    if rec.get("dev_loglik") is not None:
        parts.append(f"dev loglik {rec['dev_loglik']:.1f}")
    if rec.get("dev_f1") is not None:
        parts.append(f"dev F1 {rec['dev_f1']:.2f}")
    parts.append(f"{rec['seconds']:.1f} s")
    return ", ".join(parts)
