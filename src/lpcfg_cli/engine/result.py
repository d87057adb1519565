"""The one result type of the chart passes, and what the latent pass's phases hand on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.layout import SpanLayout


@dataclass
class ChunkPlans:
    """What the outside phases need of an inside pass (``latent.inside_pass``): its span layout,
    the plan of every chunk, and the root items' values (kept on the chart as ``plans``).

    The plans are those the inside pass used (``kernels.plan_chunk``: rows, split entries and
    the rows' parent items, grouped by children pair): the outside walk and the rule
    posteriors reuse them instead of planning again.
    """

    layout: SpanLayout
    chunks: list[tuple[int, tuple[np.ndarray, ...]]]  # (span length, plan), bottom-up
    root_item: np.ndarray  # every item of a whole-sentence span
    root_sent: np.ndarray  # its sentence
    root_vec: np.ndarray  # its symbol's root vector
    z: np.ndarray  # per sentence, sum over its root items of alpha . root (scaled)


@dataclass
class Chart:
    """Items (span, symbol) of a chart with their scaled inside and outside vectors.

    ``keys`` are sorted ``span * N + symbol``; items of span ``s`` are
    ``span_first[s]:span_first[s + 1]``; ``alpha``/``beta`` follow ``engine.scaling`` (the
    posterior of an item is ``alpha . beta``); ``log_z`` is each sentence's log probability
    (-inf where it has none; for a tensor-form model, the log of the absolute value).
    """

    keys: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray | None
    sc: np.ndarray
    log_z: np.ndarray
    span_first: np.ndarray
    flops: int = 0
    rule_counts: np.ndarray | None = None  # (R, M, M * M) expected counts, rule order
    # anchored binary rules: (parent item, left item, right item, posterior)
    rules: tuple[np.ndarray, ...] | None = None
    # the inside pass's chunk plans, for the outside phases (``latent.inside_pass``)
    plans: ChunkPlans | None = None

    def marginals(self) -> np.ndarray:
        """mu of every item (may be negative for tensor-form models)."""
        if self.beta is None:
            raise ValueError("the chart has no outside pass")
        return np.einsum("ih,ih->i", self.alpha, self.beta, dtype=np.float64)
