"""What the parser is told: ``ParserOptions`` (``lpcfg parse``'s options, and those of
dev scoring during training) and how the ``auto`` decoder is resolved for a model.

The decoder a model wants is recorded in its model file by the learner that made it
(``meta["decode"]``, see ``learners.registry``); the parser reads it and knows no learner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lpcfg_cli.hyperparams import check, hyper
from lpcfg_cli.treebank.sentences import spans

DECODERS = ("max-marginal", "max-bracket", "max-rule-product", "variational")

# The default ``max_length`` keeps the coarse chart of one sentence within this many
# (span, symbol) items: the coarse pass holds about six float64 arrays of that shape (peak
# resident memory grows by about 45 bytes per item), so 4.5e7 items are about 2 GB. For the
# PTB's default binarization (206 symbols) that is 660 words; for a grammar binarized with
# --vertical 2 --horizontal 2 (2,664 symbols), 183. Derived from the model alone, it gives
# the same parses on every machine; sentences of that length take tens of seconds.
CHART_ITEMS = 45_000_000


def chart_length_limit(n_symbols: int, items: int = CHART_ITEMS) -> int:
    """The longest sentence whose chart of ``n_symbols`` symbols per span holds at most
    ``items`` items (at least 1)."""
    n = int((2 * items / max(n_symbols, 1)) ** 0.5)
    while n > 1 and spans(n) * n_symbols > items:
        n -= 1
    return max(n, 1)


# Default coarse-posterior threshold, chosen on the dev split (wsj_0150-0174) with the m = 16
# models of `make demo`. Strict dev F1 at 1e-5 / 1e-4 / 3e-4 / 1e-3: em 84.91 / 84.83 /
# 84.99 / 84.80, spectral 84.99 / 84.93 / 84.95 / 84.86, pivot+em 85.81 / 85.82 / 85.92 /
# 85.88, pivot 83.41 / 83.38 / 83.45 / 83.82: no loss down to 3e-4 (differences are within
# +-0.1), while the latent pass of the test split does a quarter of the multiply-adds it does
# at 1e-5 (30 instead of 116 GFLOP for em) and takes a fifth of the time.
PRUNE = 3e-4


@dataclass(frozen=True)
class ParserOptions:
    """How ``Parser`` prunes and which sentences it leaves unparsed (``lpcfg parse``'s
    options, and those of dev scoring during training)."""

    prune: float = hyper(
        PRUNE, "Coarse-to-fine posterior threshold (0 = no pruning).", min=0.0, max=1.0
    )
    max_length: int | None = hyper(
        None,
        "Longer sentences get a flat fallback tree instead of a parse [default: the longest "
        "whose chart fits in about 2 GB for the model's grammar, 660 words for a "
        "PTB grammar].",
        min=1,
        kind="int",
    )
    # Dev split, bundle of 3 split-merge seeds: strict F1 87.79 (product), 87.49 (mean).
    combine: str = hyper(
        "product",
        "How the models of an ensemble (lpcfg bundle) vote: the "
        "product of their posteriors, or their mean.",
        choices=("product", "mean"),
    )

    decode: str = hyper(
        "auto",
        "Tree chosen from the posteriors: max-marginal (Goodman; the spectral papers'), "
        "max-bracket (the sum over its EVALB brackets of posterior minus "
        "--bracket-threshold), max-rule-product (Petrov & Klein 2007; the Berkeley "
        "parser's default) or variational (Matsuzaki et al. 2005; the Berkeley parser's "
        "-variational). auto: the decoder the model's learner chose (recorded in the "
        "model file); max-marginal for an ensemble combined by product.",
        choices=("auto", "max-marginal", "max-bracket", "max-rule-product", "variational"),
    )
    bracket_threshold: float = hyper(
        0.4,
        "max-bracket: a bracket is kept when its posterior exceeds this (about half the "
        "F1 expected; chosen on dev).",
        min=0.0,
        max=1.0,
    )

    def __post_init__(self) -> None:
        check(self)


def resolve_decoder(options: ParserOptions, model: Any, hint: str | None = None) -> str:
    """The decoder ``options.decode`` names, ``auto`` resolved: max-marginal for an
    ensemble combined by product (its scores are geometric means of the members'
    posteriors, not posteriors, so pooling them against a threshold means nothing), else
    ``hint`` (the decoder of the learner still fitting ``model``), else the decoder the
    model's file records (every member's, when they agree; max-marginal otherwise)."""
    if options.decode != "auto":
        return options.decode
    if model.members and options.combine == "product":
        return "max-marginal"
    if hint:
        return hint
    wanted = {m.decoder() for m in (model, *model.members)}
    return wanted.pop() if len(wanted) == 1 else "max-marginal"
