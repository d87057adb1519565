"""The one result type of the chart passes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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

    def marginals(self) -> np.ndarray:
        """mu of every item (may be negative for tensor-form models)."""
        if self.beta is None:
            raise ValueError("the chart has no outside pass")
        return np.einsum("ih,ih->i", self.alpha, self.beta, dtype=np.float64)
