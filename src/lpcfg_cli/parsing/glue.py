"""Glue: the parser's third tier, for a sentence even the smoothed grammar cannot derive
(``parsing.tiers``; docs/parsing.md, Sentences the grammar cannot derive).

Such a sentence (``( . . . )``, or a sequence of tags no binary rule of the treebank
combines) is cut into the fewest pieces the smoothed grammar (``parsing.smoothed``) derives,
the most probable such cut; each piece is parsed as a sentence of its own and the pieces are
joined under one node. That is a parse under the grammar and one glue rule, ``X -> P P ...
P``, each ``P`` a piece.

The cut comes from one pass of the chart engine's coarse kernel over the grammar with two
symbols added (``GlueGrammar``):

- a piece ``P``, whose rules are the non-intermediate symbols' rules weighted by each one's
  smoothed root weight: ``q(P -> b c) = sum_a r(a) q(a -> b c)`` and likewise per word, so
  that the inside score of ``P`` over a span is the probability of that span as a sentence
  of its own under the smoothed grammar (in one symbol, so that gluing costs two rules, not
  one per pair of symbols);
- the glue ``G -> P P | G P``, each rule of weight ``PIECE``, the root with ``P``.

``P`` is the child of no other rule, so its posterior over a span is the probability that
the span is a piece of the glued sentence. ``segment`` then picks the cut: the fewest
pieces, then the largest sum of the pieces' log posteriors (a dynamic program over the
sentence's ends, one piece at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.chart_grammars import CoarseGrammar
from lpcfg_cli.engine.layout import SpanLayout

# Weight of each glue rule, so of each piece after the first. Tiny, so that the posteriors
# come from the cuts with the fewest pieces (``segment`` counts pieces first in any case):
# larger pieces keep more of the sentence's structure inside a parse.
PIECE = 1e-10


@dataclass
class GlueGrammar:
    """The coarse grammar with a piece symbol ``piece`` (``N``) and a glue symbol ``glue``
    (``N + 1``) added, its roots ``root`` ``(N + 2,)``, and ``weight`` ``(N,)``: the weight
    of each symbol as a piece (its smoothed root weight; 0 for an intermediate symbol)."""

    coarse: CoarseGrammar
    root: np.ndarray
    weight: np.ndarray

    @property
    def piece(self) -> int:
        return len(self.weight)

    @property
    def glue(self) -> int:
        return len(self.weight) + 1

    @classmethod
    def build(
        cls,
        rules: np.ndarray,
        prob: np.ndarray,
        weight: np.ndarray,
        penalty: float = PIECE,
    ) -> GlueGrammar:
        """From the binary ``rules`` ``(R, 3)`` and their probabilities ``prob`` of the
        treebank PCFG over ``N = len(weight)`` symbols, ``weight`` the smoothed root weight of
        each symbol that may head a piece (0 for the others)."""
        n = len(weight)
        rules = np.asarray(rules, dtype=np.int64).reshape(-1, 3)
        prob = np.asarray(prob, dtype=np.float64)
        heads = (weight[rules[:, 0]] > 0) & (prob > 0)
        pairs, inverse = np.unique(rules[heads, 1:], axis=0, return_inverse=True)
        piece_prob = np.bincount(
            inverse.ravel(), weights=prob[heads] * weight[rules[heads, 0]], minlength=len(pairs)
        )
        piece, glue = n, n + 1
        added = np.array([[glue, piece, piece], [glue, glue, piece]], dtype=np.int64)
        all_rules = np.concatenate(
            [rules, np.column_stack([np.full(len(pairs), piece), pairs]), added]
        )
        all_prob = np.concatenate([prob, piece_prob, [penalty, penalty]])
        root = np.zeros(n + 2)
        root[[piece, glue]] = 1.0
        # No root given: the glue pass runs without the coarse beam, whose prior it is.
        coarse = CoarseGrammar.build(n + 2, all_rules, all_prob)
        return cls(coarse, root, np.asarray(weight, dtype=np.float64))

    def lexical(self, scores: np.ndarray) -> np.ndarray:
        """The ``(words, N + 2)`` pre-terminal scores of the glue pass from the smoothed
        grammar's ``(words, N)``: the piece over a word scores ``sum_a r(a) s(a)``."""
        out = np.zeros((scores.shape[0], scores.shape[1] + 2))
        out[:, : scores.shape[1]] = scores
        out[:, self.piece] = scores @ self.weight
        return out

    def word_symbols(self, scores: np.ndarray) -> np.ndarray:
        """For each word of ``scores`` (the smoothed grammar's ``(words, N)``), the symbol
        most probable as the whole of a one-word sentence (``argmax_a r(a) s(a)``), the
        pre-terminal of a one-word piece."""
        return np.argmax(scores * self.weight, axis=1)


def segment(
    layout: SpanLayout, keys: np.ndarray, mu: np.ndarray, n_symbols: int, piece: int
) -> list[list[tuple[int, int]] | None]:
    """The pieces ``(start, end)`` of each sentence of ``layout`` from the glue pass's items
    ``keys`` (``span * n_symbols + symbol``) and posteriors ``mu``: the fewest pieces whose
    spans are items of symbol ``piece``, then the largest sum of their log posteriors; None
    for a sentence with no such cut."""
    is_piece = keys % n_symbols == piece
    span = keys[is_piece] // n_symbols
    sent, start, length = layout.span_sent[span], layout.span_start[span], layout.span_len[span]
    log_mu = np.log(mu[is_piece])
    out: list[list[tuple[int, int]] | None] = []
    for s, n in enumerate(layout.lengths.tolist()):
        mine = np.flatnonzero(sent == s)
        by_end: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
        for t in mine.tolist():
            by_end[int(start[t] + length[t])].append((int(start[t]), float(log_mu[t])))
        # best[j]: (pieces, -score) of the best cut of the first j words; back[j]: its last
        # piece's start.
        best: list[tuple[int, float] | None] = [None] * (n + 1)
        back = [-1] * (n + 1)
        best[0] = (0, 0.0)
        for j in range(1, n + 1):
            for i, value in by_end[j]:
                prev = best[i]
                if prev is None:
                    continue
                cand = (prev[0] + 1, prev[1] - value)
                cur = best[j]
                if cur is None or cand < cur:
                    best[j], back[j] = cand, i
        if n == 0 or best[n] is None:
            out.append(None)
            continue
        pieces = []
        j = n
        while j > 0:
            pieces.append((back[j], j))
            j = back[j]
        out.append(pieces[::-1])
    return out
