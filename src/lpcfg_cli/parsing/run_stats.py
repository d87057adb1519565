"""What parsing and scoring runs count, as totals that add up.

``ParseStats`` (a block's or a stream's parsing) and ``ScoreStats`` (scoring) share
``RunStats``: sentences, seconds, the sentences left without a parse or a score by reason, and
``add``, which sums another run's counts field by field
and its counts by reason key by key, so that a ``Parser``'s totals are the sum of its runs
and a stream's the sum of its blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Self

import numpy as np


@dataclass
class RunStats:
    """Sentences and seconds of a run, and the sentences it gave no parse (a fallback tree)
    or no score, by reason; subclasses add their own counts."""

    sentences: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)

    def add(self, other: Self, *, seconds: bool = True) -> None:
        """Add ``other``'s counts to these (its seconds too unless ``seconds`` is False: a
        stream's seconds are its own wall-clock time, not the sum of its blocks')."""
        for f in fields(self):
            if f.name == "seconds" and not seconds:
                continue
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, dict):
                for key, count in theirs.items():
                    mine[key] = mine.get(key, 0) + count
            else:
                setattr(self, f.name, mine + theirs)


@dataclass
class ParseStats(RunStats):
    """Totals of parsing: sentences given fallback trees (their reasons in ``reasons``),
    parsed by a coarser grammar (``backoffs``), by the smoothed grammar (tier 2) or glued
    from pieces (tier 3); retries after running out of memory; the latent pass's
    multiply-adds and the two passes' seconds."""

    fallbacks: int = 0
    backoffs: int = 0
    smoothed: int = 0
    glued: int = 0
    retries: int = 0
    latent_flops: int = 0
    coarse_seconds: float = 0.0
    latent_seconds: float = 0.0


@dataclass
class ScoreStats(RunStats):
    """Totals of scoring: sentences with a positive probability (``scored``) and their words
    and summed log-probability, those with a value of zero or below (``nonpositive``); those
    not scored are in ``reasons``."""

    scored: int = 0
    words: int = 0
    log_prob: float = 0.0
    nonpositive: int = 0

    @property
    def perplexity(self) -> float:
        """Per word over the sentences with a positive probability (nan without any)."""
        return float(np.exp(-self.log_prob / self.words)) if self.words else float("nan")
