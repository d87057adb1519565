"""What the parser is told: ``ParserOptions`` (``lpcfg parse``'s options, and those of
dev scoring during training) and how the ``auto`` decoder is resolved for a model.

The decoder a model wants is recorded in its model file by the learner that made it
(``meta["decode"]``, see ``learners.registry``); the parser reads it and knows no learner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lpcfg_cli.engine.batching import spans
from lpcfg_cli.hyperparams import Checked, hyper

DECODERS = ("max-marginal", "max-bracket", "max-rule-product", "variational")

# The default ``max_length`` keeps the coarse chart of one sentence within this many
# (span, symbol) items: the coarse pass holds about six float64 arrays of that shape, so
# 4.5e7 items are about 2 GB. Derived from the model alone, it gives the same parses on every
# machine (the lengths it gives for the PTB's grammars: docs/parsing.md, Long sentences and
# memory).
CHART_ITEMS = 45_000_000


def chart_length_limit(n_symbols: int, items: int = CHART_ITEMS) -> int:
    """The longest sentence whose chart of ``n_symbols`` symbols per span holds at most
    ``items`` items (at least 1)."""
    n = int((2 * items / max(n_symbols, 1)) ** 0.5)
    while n > 1 and spans(n) * n_symbols > items:
        n -= 1
    return max(n, 1)


# Default coarse-posterior threshold, chosen on the dev split (wsj_0150-0174) with the m = 16
# models of `make demo`: no loss of F1 down to this threshold, while the latent pass does a
# fraction of the work it does at 1e-5 (docs/parsing.md, Coarse-to-fine).
PRUNE = 3e-4


# The coarse pass's beam (``engine.coarse.inside_chart``), chosen on dev with the m = 16 em,
# pivot+em and spectral models, a split-merge grammar and configs/best.toml: the largest value
# tried (3e-4, 5e-4, 1e-3, 2e-3, 3e-3) whose strict dev F1 stays within 0.05 of no beam for
# all five (docs/parsing.md, The coarse beam).
COARSE_BEAM = 3e-4


# The outside passes' cut, as a fraction of the posterior threshold (``engine.coarse.
# outside_chart``, ``engine.latent.outside_pass``), chosen on dev with the five models of the
# coarse beam: the largest value tried (0.1, 0.3, 1) whose strict dev F1 stays within 0.05 of
# no cut for all five (docs/parsing.md, The outside cut).
OUTSIDE_CUT = 0.1


# A product's first member prunes the items of the others' latent passes at this posterior,
# chosen on dev with configs/best.toml: the largest threshold tried whose dev F1 stays
# within 0.05 of no such pruning; the six-model product parses about 1.5 times as fast
# (docs/parsing.md, Ensembles and products of grammars).
PRODUCT_PRUNE = 1e-5


@dataclass(frozen=True)
class ParserOptions(Checked):
    """How ``Parser`` prunes and which sentences it leaves unparsed (``lpcfg parse``'s
    options, and those of dev scoring during training)."""

    prune: float = hyper(
        PRUNE, "Coarse-to-fine posterior threshold (0 = no pruning).", min=0.0, max=1.0
    )
    coarse_beam: float = hyper(
        COARSE_BEAM,
        "Before a latent pass, the coarse pass drops an item whose inside score times its "
        "symbol's prior is below this times the best of its span; a sentence left without "
        "a parse is parsed again without it (0 = no beam).",
        min=0.0,
        max=1.0,
    )
    outside_cut: float = hyper(
        OUTSIDE_CUT,
        "In the outside passes (coarse and latent) before decoding a latent model, an item "
        "whose posterior is below this times --prune passes nothing down; a sentence left "
        "without a parse is parsed again without it (0 = exact posteriors).",
        min=0.0,
        max=1.0,
    )
    max_length: int | None = hyper(
        None,
        "Longer sentences get a flat fallback tree instead of a parse [default: the longest "
        "whose chart fits in about 2 GB for the model's grammar, 660 words for a "
        "PTB grammar].",
        min=1,
        kind="int",
    )
    # The product (Petrov's combination) is the default: on dev it scored above the mean or
    # within noise of it (docs/parsing.md, Ensembles and products of grammars).
    combine: str = hyper(
        "product",
        "How the models of an ensemble (lpcfg bundle) vote: the "
        "product of their posteriors, or their mean.",
        choices=("product", "mean"),
    )
    product_prune: float = hyper(
        PRODUCT_PRUNE,
        "With --combine product: the ensemble's first model runs over the items the coarse "
        "pass kept, the others only over those whose posterior under the first is at least "
        "this (0 = all of them).",
        min=0.0,
        max=1.0,
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


def resolve_decoder(
    options: ParserOptions, decoders: Sequence[str], hint: str | None = None
) -> str:
    """The decoder ``options.decode`` names, ``auto`` resolved for a model whose ensemble's
    models record ``decoders`` (``LPCFG.decoders``; one for a single model): max-marginal
    for an ensemble combined by product (its scores are geometric means of the members'
    posteriors, not posteriors, so pooling them against a threshold means nothing), else
    ``hint`` (the decoder of the learner still fitting the model), else the decoder the
    models record (every member's, when they agree; max-marginal otherwise)."""
    if options.decode != "auto":
        return options.decode
    if len(decoders) > 1 and options.combine == "product":
        return "max-marginal"
    if hint:
        return hint
    wanted = set(decoders)
    return wanted.pop() if len(wanted) == 1 else "max-marginal"
