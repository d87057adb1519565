"""Model selection on dev data, as wrappers around a learner.

A learner fits one model; choosing among its candidates is a wrapper's job, the same for
every learner it wraps:

- ``EarlyStopping`` around an ``Iterative`` learner (EM's iterations, split-merge's
  cycles): dev F1 every ``dev_f1_every`` iterates (or a held-out log-likelihood where there
  is no F1), the best kept, training stopped after ``patience`` scores without improvement
  (``numerics.patience.Patience``).
- ``StateSelection`` around a ``Decomposable`` learner (spectral, pivot: one decomposition
  gives a model for any number of states): the best of a ``states`` grid on dev F1, then
  optionally per-nonterminal counts by coordinate ascent (``learners.statesearch``).
- ``best_of``: the best of a finite set of candidates.

Dev F1 comes from ``grammar.heldout.DevTrees.f1``, whose scorer the caller handed in with the
dev trees: nothing here parses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.hyperparams import check, hyper, to_dict
from lpcfg_cli.learners import statesearch
from lpcfg_cli.learners.protocol import MAX_STATES, STATES_HELP, Learner, Progress
from lpcfg_cli.learners.statesearch import SearchOptions
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.numerics.patience import Patience


def best_of(
    candidates: Iterable[tuple[dict[str, Any], LPCFG]],
    dev: DevTrees | None,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[LPCFG, list[dict[str, Any]]]:
    """The candidate model with the best dev F1 (the first one without ``dev``).

    ``candidates`` yields ``(record, model)``, built lazily so that only one model of a grid
    is in memory at a time besides the best; each record gets its ``dev_f1`` and is passed
    to ``report``. Returns the chosen model and every record.
    """
    best: LPCFG | None = None
    best_f1 = float("-inf")
    history: list[dict[str, Any]] = []
    for record, model in candidates:
        if dev is not None:
            t0 = time.perf_counter()
            record["dev_f1"] = round(dev.f1(model), 2)
            record["dev_seconds"] = round(time.perf_counter() - t0, 3)
        history.append(record)
        if report:
            report(record)
        if record.get("dev_f1", 0.0) > best_f1:  # ties keep the earlier candidate
            best, best_f1 = model, record.get("dev_f1", 0.0)
        if dev is None:
            break
    if best is None:
        raise ValueError("best_of needs at least one candidate")
    return best, history


def scores_f1(dev: Any) -> bool:
    """Whether ``dev`` can score a model's parses (dev trees with a scorer)."""
    return isinstance(dev, DevTrees) and dev.scores_f1


# --- early stopping ----------------------------------------------------------------------


@dataclass
class Iterate:
    """One step of an ``Iterative`` learner: its ``record`` for the model's history, the
    model after it (built only when asked: ``model()``), what the learner needs to finish
    from it (``state``), and what early stopping reads."""

    index: int
    record: dict[str, Any]
    model: Callable[[], LPCFG]
    state: Any
    started: float  # time.perf_counter() when the step began
    heldout: float | None = None  # a held-out log-likelihood, where F1 is not scored
    converged: bool = False
    last: bool = False


class Iterative(Learner):
    """A learner that improves one model step by step (``iterates``) and makes the model of
    a chosen step (``finish``). On its own it keeps the last step; ``EarlyStopping`` chooses
    among them."""

    unit: ClassVar[str]  # "iteration" or "cycle", in the records and the report
    seconds_digits: ClassVar[int] = 3
    f1_digits: ClassVar[int | None] = None  # dev F1 rounded to this many digits (None: not)

    def iterates(self, data: Any, dev: Any, start: Any, progress: Progress) -> Iterator[Iterate]:
        raise NotImplementedError

    def finish(
        self, data: Any, chosen: Iterate, history: list[dict[str, Any]], extra: dict[str, Any]
    ) -> LPCFG:
        """The model of step ``chosen``, its metadata holding ``history`` and ``extra``."""
        raise NotImplementedError

    def line(self, record: dict[str, Any]) -> str:
        """The progress line of one step's record."""
        raise NotImplementedError

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        """Every step, the last kept (no selection)."""
        return run_steps(self, data, dev, start, progress, every=0, patience=None)


@dataclass(frozen=True)
class StoppingOptions:
    """How ``EarlyStopping`` scores and when it stops."""

    dev_f1_every: int = hyper(
        5, "With --dev: parse and score the dev set every N EM iterations.", min=1
    )
    patience: int = hyper(
        2,
        "With --dev: stop after this many dev F1 scores without improvement (em, pivot+em).",
        min=1,
    )

    def __post_init__(self) -> None:
        check(self)


def run_steps(
    inner: Iterative,
    data: Any,
    dev: Any,
    start: Any,
    progress: Progress,
    every: int,
    patience: int | None,
) -> LPCFG:
    """The steps of ``inner``; with ``patience`` the best by dev F1 (scored every ``every``
    steps, and at the last or converged one) or else by held-out log-likelihood, stopping
    after ``patience`` scores without improvement; without, the last step."""
    f1 = patience is not None and scores_f1(dev)
    keep: Patience[Iterate] = Patience(patience or 1)
    history: list[dict[str, Any]] = []
    step: Iterate | None = None
    for step in inner.iterates(data, dev, start, progress):
        if f1 and (step.index % every == 0 or step.last or step.converged):
            score = float(dev.f1(step.model()))
            digits = inner.f1_digits
            step.record["dev_f1"] = round(score, digits) if digits is not None else score
        step.record["seconds"] = round(time.perf_counter() - step.started, inner.seconds_digits)
        history.append(step.record)
        progress.report(inner.line(step.record))
        progress.record({"method": inner.method, **step.record})
        score = step.record.get("dev_f1") if f1 else step.heldout
        if patience is not None and score is not None:
            keep.offer(score, step)
        if step.converged or (patience is not None and dev is not None and keep.stop):
            break
    if step is None:
        raise LpcfgError(f"{inner.method} made no {inner.unit}: nothing to choose from")
    chosen = keep.best if keep.best is not None else step
    progress.report(f"selected {inner.unit} {chosen.index} of {len(history)}")
    return inner.finish(data, chosen, history, {})


class EarlyStopping(Learner):
    """``inner``'s best step on dev data (see ``run_steps``)."""

    Options = StoppingOptions

    def __init__(self, inner: Iterative, options: StoppingOptions | None = None) -> None:
        self.inner = inner
        self.options = options or StoppingOptions()
        self.method = inner.method  # type: ignore[misc]
        self.decode = inner.decode  # type: ignore[misc]
        self.takes_dev = inner.takes_dev  # type: ignore[misc]
        self.takes_start = inner.takes_start  # type: ignore[misc]
        self.takes_text = inner.takes_text  # type: ignore[misc]
        self.takes_weights = inner.takes_weights  # type: ignore[misc]

    def option_values(self) -> list[Any]:
        return [self.options, *self.inner.option_values()]

    def check(self, dev: bool) -> None:
        self.inner.check(dev)

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        out = self.inner.inert(dev, start)
        if not dev:
            out["dev_f1_every"] = "without {dev} (it sets how often dev F1 is computed)"
        return out

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        opts = self.options
        model = run_steps(self.inner, data, dev, start, progress, opts.dev_f1_every, opts.patience)
        record = model.meta.get(self.inner.method)
        if isinstance(record, dict):  # the options of the fit, selection's included
            record.update(to_dict(opts))
        return model


# --- state grids and state search --------------------------------------------------------


class Decomposable(Learner):
    """A learner whose one decomposition of the training data gives a model for any number
    of states (spectral: the leading directions of each symbol's SVD; pivot: each symbol's
    step 1 with its own cap): ``estimator`` decomposes, ``model`` and ``model_for`` build."""

    def estimator(self, data: Any, largest: int, progress: Progress) -> Any:
        raise NotImplementedError

    def model(self, est: Any, m: int, data: Any, progress: Progress) -> LPCFG:
        """The model with at most ``m`` states per symbol."""
        raise NotImplementedError

    def model_for(self, est: Any, states: np.ndarray, data: Any) -> LPCFG:
        """The model with (at most) ``states[a]`` states for symbol ``a``."""
        raise NotImplementedError

    def search_bounds(self, est: Any, m: int) -> np.ndarray:
        """The most states the search may give each symbol, from a start of ``m``."""
        raise NotImplementedError

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        """The model with the options' ``states`` (no selection)."""
        states = int(self.options.states)
        return self.model(self.estimator(data, states, progress), states, data, progress)


@dataclass(frozen=True)
class GridOptions:
    """The states ``StateSelection`` tries."""

    states: tuple[int, ...] = hyper((8,), STATES_HELP, min=1, max=MAX_STATES)

    def __post_init__(self) -> None:
        check(self)


class StateSelection(Learner):
    """``inner``'s best model over the ``states`` grid on dev F1 (one decomposition serves
    the whole grid), then with ``state_search`` per-nonterminal counts from there."""

    Options = GridOptions

    def __init__(
        self,
        inner: Decomposable,
        grid: GridOptions | None = None,
        search: SearchOptions | None = None,
    ) -> None:
        self.inner = inner
        self.options = grid or GridOptions()
        self.search = search or SearchOptions()
        self.method = inner.method  # type: ignore[misc]
        self.decode = inner.decode  # type: ignore[misc]
        self.takes_start = inner.takes_start  # type: ignore[misc]

    def option_values(self) -> list[Any]:
        return [self.options, self.search, *self.inner.option_values()]

    def check(self, dev: bool) -> None:
        if len(self.options.states) > 1 and not dev:
            raise ParameterError("a {states} grid needs {dev} to choose among its values")
        statesearch.check_search(self.search, dev)
        self.inner.check(dev)

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        out = self.inner.inert(dev, start)
        if not self.search.state_search:
            out.update(statesearch.SEARCH_INERT)
        return out

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        grid, search = self.options.states, self.search
        largest = max(grid + (search.search_states if search.state_search else ()))
        est = self.inner.estimator(data, largest, progress)
        scored = dev if scores_f1(dev) else None

        def candidates() -> Iterator[tuple[dict[str, Any], LPCFG]]:
            for m in grid:
                t0 = time.perf_counter()
                model = self.inner.model(est, m, data, progress)
                model.meta["states_requested"] = m
                seconds = round(time.perf_counter() - t0, 3)
                yield (
                    {"states": m, "total_states": int(model.states.sum()), "seconds": seconds},
                    model,
                )

        def line(rec: dict[str, Any]) -> None:
            text = f"states {rec['states']}: {rec['total_states']} in all ({rec['seconds']:.1f} s)"
            if "dev_f1" in rec:
                text += f", dev F1 {rec['dev_f1']:.2f} ({rec['dev_seconds']:.1f} s)"
            progress.report(text)

        best, history = best_of(candidates(), scored, line)
        best.meta["dev_grid"] = history
        if len(grid) > 1:
            progress.report(f"selected states {best.meta['states_requested']}")
        elif "dev_f1" in history[0]:
            best.meta["dev_f1"] = history[0]["dev_f1"]
        if search.state_search and scored is not None:
            best = self._search(est, best, history, scored, data, progress)
        return best

    def _search(
        self,
        est: Any,
        start: LPCFG,
        history: list[dict[str, Any]],
        dev: DevTrees,
        data: Any,
        progress: Progress,
    ) -> LPCFG:
        """``state_search`` from the grid's best model, each count bounded by what the
        learner says the symbol can have (``search_bounds``)."""
        kept = {k: start.meta[k] for k in ("dev_grid", "states_requested") if k in start.meta}
        m = int(start.meta["states_requested"])
        best = statesearch.tune_states(
            lambda states: self.inner.model_for(est, states, data),
            start.states,
            est.grammar,
            est.counts,
            self.inner.search_bounds(est, m),
            self.search,
            dev,
            progress,
            scored=(start, max(r["dev_f1"] for r in history)),
        )
        best.meta.update(kept)
        best.meta["dev_f1"] = max(r["dev_f1"] for r in best.meta["state_search"])
        return best


def option_fields(learner: Learner) -> set[str]:
    """The names of every hyper-parameter ``learner`` (and what it wraps) takes."""
    return {f.name for options in learner.option_values() for f in fields(options)}


__all__ = [
    "Decomposable",
    "EarlyStopping",
    "GridOptions",
    "Iterate",
    "Iterative",
    "StateSelection",
    "StoppingOptions",
    "best_of",
    "option_fields",
    "run_steps",
    "scores_f1",
]
