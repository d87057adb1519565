"""Span layout of a batch of sentences, shared by every chart computation.

All spans of all sentences of a batch get one integer id, ordered by span length, then by
sentence, then by start position, so that the spans of one length (the unit of work of the
inside and outside passes) form one contiguous block across the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class SpanLayout:
    """Ids of the spans ``[i, i + length)`` of sentences of lengths ``lengths``."""

    def __init__(self, lengths: Sequence[int]):
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.max_length = int(self.lengths.max()) if len(self.lengths) else 0
        ell = np.arange(self.max_length + 1)[:, None]
        counts = np.maximum(self.lengths[None, :] - ell + 1, 0)
        counts[0] = 0
        flat = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts.ravel(), out=flat[1:])
        # base[l, s]: id of span (s, 0, l); len_start[l]: first id of length l.
        self.base = flat[:-1].reshape(counts.shape)
        self.len_start = np.append(self.base[:, 0], flat[-1]) if len(self.lengths) else flat
        self.n_spans = int(flat[-1])
        sent = np.repeat(np.tile(np.arange(len(self.lengths)), self.max_length + 1), counts.ravel())
        self.span_sent = sent
        self.span_start = (
            np.arange(self.n_spans)
            - self.base.ravel()[np.repeat(np.arange(counts.size), counts.ravel())]
        )
        self.span_len = np.repeat(
            np.repeat(np.arange(self.max_length + 1), len(self.lengths)), counts.ravel()
        )

    def block(self, length: int) -> slice:
        """Ids of all spans of ``length`` as a slice."""
        return slice(int(self.len_start[length]), int(self.len_start[length + 1]))

    def root_spans(self) -> np.ndarray:
        """Id of the whole-sentence span of every sentence (-1 for an empty sentence)."""
        out = np.full(len(self.lengths), -1, dtype=np.int64)
        ok = self.lengths > 0
        out[ok] = self.base[self.lengths[ok], np.flatnonzero(ok)]
        return out

    def splits(self, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the spans of ``length``: (parent ids (S,), left ids (S, K), right ids (S, K)),
        K = length - 1 split points, left child ``[i, i + m)``, right ``[i + m, i + length)``."""
        blk = self.block(length)
        parents = np.arange(blk.start, blk.stop)
        sent = self.span_sent[blk][:, None]
        start = self.span_start[blk][:, None]
        m = np.arange(1, length)[None, :]
        left = self.base[m, sent] + start
        right = self.base[length - m, sent] + start + m
        return parents, left, right
