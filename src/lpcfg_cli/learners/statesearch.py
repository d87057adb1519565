"""Per-nonterminal state counts chosen on dev F1 for the spectral and pivot learners
(``--state-search``), in the spirit of Narayan & Cohen (2016, "Optimizing spectral learning
of latent-variable PCFGs"): their search tunes each nonterminal's number of latent states
against dev F1 instead of giving every nonterminal the same ``m``.

Both learners build a model for any vector of per-symbol counts from one decomposition
(spectral: the leading directions of each symbol's SVD; pivot: each symbol's step 1 with
its own cap, then the shared rule step), so a search costs one model and one dev parse per
count tried. The search itself is ``selection.search_states`` (coordinate ascent); this
module holds the options both learners share and what they do around it: which symbols
(the most frequent), which counts (bounded by what the symbol can have), and the record in
the model's metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.hyperparams import hyper
from lpcfg_cli.learners.protocol import Progress
from lpcfg_cli.learners.selection import DevSet, search_states
from lpcfg_cli.model.lpcfg import LPCFG


def state_search_field() -> Any:
    return hyper(
        0,
        "Spectral, pivot with --dev: rounds of choosing each frequent nonterminal's state "
        "count on dev F1, one nonterminal at a time (0: off).",
        min=0,
    )


def search_states_field() -> Any:
    return hyper(
        (8, 16, 24, 32),
        "Spectral, pivot: the state counts --state-search tries for each nonterminal, "
        "comma-separated (pivot: those up to --states).",
        min=1,
    )


def search_symbols_field() -> Any:
    return hyper(
        20,
        "Spectral, pivot: how many of the most frequent nonterminals --state-search tunes.",
        min=1,
    )


SEARCH_INERT = {name: "without --state-search" for name in ("search_states", "search_symbols")}


def check_search(options: Any, dev: bool) -> None:
    """A search chooses on dev F1: refuse ``--state-search`` without ``--dev``."""
    if options.state_search and not dev:
        raise LpcfgError("--state-search needs --dev to choose the state counts")


def tune_states(
    build: Callable[[np.ndarray], LPCFG],
    start: np.ndarray,
    grammar: Grammar,
    counts: np.ndarray,
    bounds: np.ndarray,
    options: Any,
    dev: DevSet,
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
