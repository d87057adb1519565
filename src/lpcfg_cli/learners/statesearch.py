"""Per-nonterminal state counts chosen on dev F1 for the spectral and pivot learners
(``--state-search``), in the spirit of Narayan & Cohen (2016, "Optimizing spectral learning
of latent-variable PCFGs"): their search tunes each nonterminal's number of latent states
against dev F1 instead of giving every nonterminal the same ``m``.

Both learners build a model for any vector of per-symbol counts from one decomposition
(spectral: the leading directions of each symbol's SVD; pivot: each symbol's step 1 with
its own cap, then the shared rule step), so a search costs one model and one dev parse per
count tried. The search itself is ``search_states`` (coordinate ascent); around it,
``tune_states`` chooses which symbols (the most frequent) and which counts (bounded by what
the symbol can have) and records the search in the model's metadata. The wrapper that runs
it after a state grid is ``learners.selection.StateSelection``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.hyperparams import Checked, hyper
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import Progress


@dataclass(frozen=True)
class SearchOptions(Checked):
    """``--state-search``: which symbols, which counts, how many rounds."""

    state_search: int = hyper(
        0,
        "Spectral, pivot with --dev: rounds of choosing each frequent nonterminal's state "
        "count on dev F1, one nonterminal at a time (0: off).",
        min=0,
    )
    search_states: tuple[int, ...] = hyper(
        (8, 16, 24, 32),
        "Spectral, pivot: the state counts --state-search tries for each nonterminal, "
        "comma-separated (pivot: those up to --states).",
        min=1,
    )
    search_symbols: int = hyper(
        20,
        "Spectral, pivot: how many of the most frequent nonterminals --state-search tunes.",
        min=1,
    )


SEARCH_INERT = {name: "without {state_search}" for name in ("search_states", "search_symbols")}


def check_search(options: SearchOptions, dev: bool) -> None:
    """A search chooses on dev F1: refuse ``state_search`` without dev trees."""
    if options.state_search and not dev:
        raise ParameterError("{state_search} needs {dev} to choose the state counts")


def tune_states(
    build: Callable[[np.ndarray], LPCFG],
    start: np.ndarray,
    grammar: Grammar,
    counts: np.ndarray,
    bounds: np.ndarray,
    options: SearchOptions,
    dev: DevTrees,
    progress: Progress,
    scored: tuple[LPCFG, float] | None = None,
) -> LPCFG:
    """The best model of ``search_states`` from the counts ``start`` over the
    ``options.search_symbols`` symbols with the most training nodes (``counts``), each
    trying ``options.search_states`` capped by ``bounds`` (what the learner's estimator says
    the symbol can have), for ``options.state_search`` rounds. The chosen model's metadata gets
    ``state_search`` (every count tried, by symbol name, and its dev F1) and
    ``searched_states`` (the counts of the symbols that moved)."""
    order = [int(a) for a in np.argsort(-counts, kind="stable") if counts[a] > 0]
    symbols = order[: options.search_symbols]
    values = [sorted({min(int(v), int(bounds[a])) for v in options.search_states}) for a in symbols]

    def line(rec: dict[str, Any]) -> None:
        sym = rec["symbol"]
        what = "start" if sym is None else f"{grammar.symbols[sym]}={rec['states']}"
        progress.report(
            f"state search {what}: {rec['total_states']} states, dev F1 "
            f"{rec['dev_f1']:.2f} ({rec['seconds']:.1f} s)"
        )

    best, states, history = search_states(
        build, start, symbols, values, dev, options.state_search, line, scored
    )
    for record in history:
        if record["symbol"] is not None:
            record["symbol"] = grammar.symbols[record["symbol"]]
    moved = {grammar.symbols[a]: int(states[a]) for a in symbols if states[a] != start[a]}
    best.meta["state_search"] = history
    best.meta["searched_states"] = moved
    progress.report(
        "state search kept "
        + (", ".join(f"{k}={v}" for k, v in moved.items()) or "the starting counts")
        + f" (dev F1 {max(r['dev_f1'] for r in history):.2f})"
    )
    return best


def search_states(
    build: Callable[[np.ndarray], LPCFG],
    start: np.ndarray,
    symbols: Sequence[int],
    values: Sequence[Sequence[int]],
    dev: DevTrees,
    passes: int = 1,
    report: Callable[[dict[str, Any]], None] | None = None,
    scored: tuple[LPCFG, float] | None = None,
) -> tuple[LPCFG, np.ndarray, list[dict[str, Any]]]:
    """Per-nonterminal state counts chosen on dev F1 by coordinate ascent, in the spirit of
    Narayan & Cohen (2016, "Optimizing spectral learning of latent-variable PCFGs"): from
    ``start``, for each symbol of ``symbols`` in turn (most frequent first is the caller's
    order) every count of ``values[i]`` is tried with the others fixed, and the best dev F1
    is kept (a tie keeps the current count); ``passes`` rounds, stopping early after a round
    that changed nothing. ``build(states)`` makes the model of a state-count vector. A vector
    is scored once, however often the search reaches it; ``scored``: the start's model and
    dev F1 when the caller has them (a grid's best), so it is not parsed again.

    Returns the best model, its counts and one record per model scored (``symbol``: the
    index tried, ``None`` for the start; ``states``: its count; ``dev_f1``; ``kept``)."""
    if len(symbols) != len(values):
        raise ValueError("one list of candidate counts per symbol")
    states = np.asarray(start, dtype=np.int64).copy()
    seen: dict[tuple[int, ...], float] = {}
    history: list[dict[str, Any]] = []

    def score(vector: np.ndarray, symbol: int | None) -> tuple[float, LPCFG]:
        t0 = time.perf_counter()
        model = build(vector)
        f1 = round(dev.f1(model), 2)
        seen[tuple(vector.tolist())] = f1
        record = {
            "symbol": symbol,
            "states": int(vector[symbol]) if symbol is not None else None,
            "total_states": int(vector.sum()),
            "dev_f1": f1,
            "seconds": round(time.perf_counter() - t0, 3),
        }
        history.append(record)
        if report:
            report(record)
        return f1, model

    if scored is None:
        best_f1, best = score(states, None)
    else:
        best, best_f1 = scored
        seen[tuple(states.tolist())] = best_f1
        history.append(
            {"symbol": None, "states": None, "total_states": int(states.sum()), "dev_f1": best_f1}
        )
    kept = len(history) - 1  # the record of the best so far
    for _ in range(passes):
        changed = False
        for a, options in zip(symbols, values, strict=True):
            for v in options:
                trial = states.copy()
                trial[a] = v
                if tuple(trial.tolist()) in seen:
                    continue
                f1, model = score(trial, a)
                if f1 > best_f1:
                    best_f1, best, states, changed = f1, model, trial, True
                    kept = len(history) - 1
                del model
        if not changed:
            break
    for i, record in enumerate(history):
        record["kept"] = i == kept
    return best, states, history
