"""The smoothed grammar: what the parser's second tier parses a sentence with when the
model's grammar cannot derive it (``parsing.tiers``; docs/parsing.md, Sentences the grammar
cannot derive).

Two things leave a real sentence without a derivation, besides a sequence of tags no binary
rule combines (the third tier, ``parsing.glue``):

- a known word is scored only under the pre-terminals it was seen with, so a sentence that
  needs it under another has no parse: the smoothed lexicon lets every token but punctuation
  back off to every signature (``engine.tokens.smoothed_token_rules``);
- the root distribution gives 0 to every symbol never seen at the top of a training tree,
  so a one-word sentence whose chain (``NP+Nhaa``) was never a root, or a fragment, has
  none: the smoothed roots give every non-intermediate symbol ``ROOT_SMOOTHING`` times its
  expected number of occurrences per tree, in the treebank PCFG and in each latent model,
  whose share is spread evenly over the symbol's live states.

The expected counts are those of ``model.backoff.expected_counts`` (``E = r + M^T E``), which
the coarse grammar already holds as the coarse beam's prior (``engine.chart_grammars.
symbol_prior``, the same fixed point, to 1e-9 on the PTB's and the foreign treebanks'
PCFGs): taken from there, the smoothed grammar costs no linear solve, and ``lpcfg parse``
no import of ``scipy.sparse.linalg`` (60 ms).

Built once per parser, when a sentence first needs it: ``SmoothedGrammar.build``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from lpcfg_cli.engine.chart_grammars import LatentGrammar

# Weight of a symbol as a root, per expected occurrence in a tree, beside the model's own
# root distribution (which sums to 1). Proportional to the symbol's frequency, so that a
# constituent the treebank has often (NP) is a likelier whole sentence than a rare one; small,
# so that where a seen root gives a parse of the sentence's words it stays the likelier
# (docs/parsing.md, Sentences the grammar cannot derive).
ROOT_SMOOTHING = 1e-3


@dataclass
class SmoothedGrammar:
    """The smoothed roots of a parser's grammar: ``coarse_root`` ``(N,)`` of the treebank
    PCFG and one latent grammar per model of the ensemble with its root vectors smoothed
    (``latent``; the rest of each shared with the model's). ``root_share`` ``(N,)``: what
    each symbol's root weight gained (0 for intermediate symbols)."""

    coarse_root: np.ndarray
    latent: list[LatentGrammar]
    root_share: np.ndarray

    @classmethod
    def build(
        cls,
        root: np.ndarray,
        expected: np.ndarray,
        latent: Sequence[LatentGrammar],
        heads: np.ndarray,
        smoothing: float = ROOT_SMOOTHING,
    ) -> SmoothedGrammar:
        """The smoothed roots of a grammar whose treebank PCFG has roots ``root`` and expects
        ``expected[a]`` nodes of symbol ``a`` per tree (the coarse grammar's ``prior``: all
        ones where they are not defined, a PCFG whose derivations are not finite), and of its
        latent grammars ``latent``; ``heads``: the symbols that may head a sentence (the
        non-intermediate ones)."""
        root = np.asarray(root, dtype=np.float64)
        share = smoothing * np.where(heads, np.asarray(expected, dtype=np.float64), 0.0)
        coarse_root = np.ascontiguousarray(root + share)
        total = float(np.abs(root).sum()) or 1.0
        return cls(coarse_root, [_smoothed_latent(lg, share / total) for lg in latent], share)


def live_states(g: LatentGrammar) -> np.ndarray:
    """``(N, M)`` bool: the states of each symbol that rewrite to something (some binary
    rule's packed block or some lexical rule has an entry there); padding and states EM
    emptied are not live."""
    live = np.zeros((g.n_symbols, g.m), dtype=bool)
    counts = np.diff(g.a_ptr)
    live[np.repeat(g.rule_parent, counts), g.a_idx] = True
    rows, states = np.nonzero(g.lexical)
    live[g.lexical_parent[rows], states] = True
    return live


def _smoothed_latent(g: LatentGrammar, share: np.ndarray) -> LatentGrammar:
    """``g`` with ``share[a]`` times its root vectors' total (1 for a probabilistic model;
    a tensor-form model's roots are on another scale) added to each symbol's root vector,
    spread evenly over the symbol's live states (``live_states``): a state that rewrites to
    nothing would take a share for no derivation."""
    live = live_states(g)
    per_state = np.divide(share, live.sum(axis=1), out=np.zeros_like(share), where=live.any(axis=1))
    scale = float(np.abs(g.root).sum(dtype=np.float64)) or 1.0
    root = g.root.astype(np.float64) + scale * per_state[:, None] * live
    return replace(g, root=np.ascontiguousarray(root, dtype=g.dtype))
