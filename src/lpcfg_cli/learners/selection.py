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
- ``OptionGrid`` around learners of one method that differ in options given several values
  (``hyperparams.Spec.grid``: ``--smoothing 0.1,0.3 --merge 0.5,0.75``): one model per
  combination, the best on dev F1 kept.
- ``best_of``: the best of a finite set of candidates.

Dev F1 comes from ``grammar.heldout.DevTrees.f1``, whose scorer the caller handed in with the
dev trees: nothing here parses.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.hyperparams import Checked, hyper, to_dict
from lpcfg_cli.learners import statesearch
from lpcfg_cli.learners.statesearch import SearchOptions
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import (
    MAX_STATES,
    STATES_HELP,
    Decomposable,
    Iterative,
    Learner,
    Progress,
    best_of,
    follow,
    run_steps,
    scores_f1,
)


@dataclass(frozen=True)
class StoppingOptions(Checked):
    """How ``EarlyStopping`` scores and when it stops."""

    dev_f1_every: int = hyper(
        5, "With --dev: parse and score the dev set every N EM iterations.", min=1
    )
    patience: int = hyper(
        2,
        "With --dev: stop after this many dev F1 scores without improvement (em, pivot+em).",
        min=1,
    )


class EarlyStopping(Learner):
    """``inner``'s best step on dev data (see ``run_steps``)."""

    Options = StoppingOptions

    def __init__(self, inner: Iterative, options: StoppingOptions | None = None) -> None:
        self.inner = inner
        self.options = options or StoppingOptions()
        follow(self, inner)

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


# --- grids of options --------------------------------------------------------------------


class OptionGrid(Learner):
    """The best on dev F1 of ``members``: learners of one method, each built with one
    combination of the values of its grid options (``chosen``, name -> value), fitted in
    turn. The model records every combination's dev F1 (``option_grid``)."""

    def __init__(self, members: list[tuple[dict[str, Any], Learner]]) -> None:
        if not members:
            raise ValueError("OptionGrid needs at least one member")
        self.members = members
        self.names = tuple(members[0][0])  # the grid's options, in the members' order
        self.options = members[0][1].options
        follow(self, members[0][1])

    def option_values(self) -> list[Any]:
        return self.members[0][1].option_values()

    def check(self, dev: bool) -> None:
        if not dev:
            raise ParameterError(
                "several values of {" + self.names[0] + "} need {dev} to choose among them"
            )
        for _, learner in self.members:
            learner.check(dev)

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        return self.members[0][1].inert(dev, start)

    def _shown(self, record: dict[str, Any]) -> str:
        return ", ".join(f"{name} {record[name]:g}" for name in self.names)

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        if not scores_f1(dev):
            name = self.names[0]
            raise ParameterError("several values of {" + name + "} need dev trees to score")

        def candidates() -> Iterator[tuple[dict[str, Any], LPCFG]]:
            for chosen, learner in self.members:
                progress.report(f"{self._shown(chosen)}:")
                t0 = time.perf_counter()
                model = learner.fit(data, dev, start, progress)
                yield {**chosen, "seconds": round(time.perf_counter() - t0, 3)}, model

        def line(record: dict[str, Any]) -> None:
            progress.report(f"{self._shown(record)}: dev F1 {record['dev_f1']:.2f}")

        best, history = best_of(candidates(), dev, line)
        best.meta["option_grid"] = history
        # best_of keeps the first of a tie, as max does
        progress.report(f"selected {self._shown(max(history, key=lambda r: r['dev_f1']))}")
        return best


# --- state grids and state search --------------------------------------------------------


@dataclass(frozen=True)
class GridOptions(Checked):
    """The states ``StateSelection`` tries."""

    states: tuple[int, ...] = hyper((8,), STATES_HELP, min=1, max=MAX_STATES)


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
        follow(self, inner, ("method", "decode", "takes_start"))

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
    "EarlyStopping",
    "GridOptions",
    "OptionGrid",
    "StateSelection",
    "StoppingOptions",
    "option_fields",
]
