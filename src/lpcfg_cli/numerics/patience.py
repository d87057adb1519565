"""Early stopping on a held-out score, shared by every iterative learner (EM and split-merge
on dev F1 or likelihood, the language models on dev perplexity)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Patience(Generic[T]):
    """The best of a sequence of scored candidates; ``stop`` after ``patience`` scores in a
    row without improvement (higher is better; ties keep the earlier candidate)."""

    patience: int
    best: T | None = None
    best_score: float = float("-inf")
    best_index: int = 0
    stale: int = 0
    seen: int = 0

    def offer(self, score: float, candidate: T) -> bool:
        """Record a candidate; True when it is the best so far."""
        self.seen += 1
        if self.best is None or score > self.best_score:
            self.best, self.best_score, self.best_index, self.stale = (
                candidate,
                score,
                self.seen,
                0,
            )
            return True
        self.stale += 1
        return False

    @property
    def stop(self) -> bool:
        return self.stale >= self.patience
