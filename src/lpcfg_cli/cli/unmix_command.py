"""`lpcfg unmix`: learn a PCFG-IE or DEP-IES model from sentences by unmixing their moments
(Hsu, Kakade & Liang 2012, section 5; ``topology_models.unmix``)."""

from __future__ import annotations

import time
from typing import Any

import click
import numpy as np

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import (
    encoding_option,
    input_path,
    model_output_option,
    report,
    seed_option,
    unused,
)
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import display_name, iter_lines
from lpcfg_cli.topology_models import topology_file as modelfile
from lpcfg_cli.topology_models.samples import (
    exact_pair_moments,
    exact_triple_moments,
    from_lines,
    triples,
)
from lpcfg_cli.topology_models.unmix import (
    ROW_SPACE_TOLERANCE,
    check_row_space,
    unmix_dep_ies,
    unmix_pcfg_ie,
)

MODELS = ("pcfg-ie", "dep-ies")
_EXACT_LIMIT = 5 * 10**7  # exact triple moments: n_triples * d^3 floats at most


def _per_length(counts: np.ndarray) -> str:
    return ", ".join(f"{n}:{int(c)}" for n, c in enumerate(counts) if c)


@click.command(name="unmix")
@config_option
@click.argument("sentences", required=False, type=input_path(allow_dash=True))
@click.option(
    "--model",
    "family",
    type=click.Choice(MODELS),
    required=True,
    help="pcfg-ie: constituency model with B = T (x)_C T (section 5.2); dep-ies: dependency "
    "model with A = left = right and pi = A pi (section 5.3).",
)
@click.option(
    "--length-max",
    type=click.IntRange(min=3),
    default=10,
    show_default=True,
    help="Longest sentence used (longer lines are skipped); pcfg-ie's mixing matrix covers "
    "lengths 3..L.",
)
@click.option(
    "--states",
    type=click.IntRange(min=2),
    help="pcfg-ie: latent states k (at most the number of word types). Default with "
    "--exact-moments: the model's.",
)
@click.option(
    "--taus",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="pcfg-ie: random slicing vectors tau drawn from --seed; the one that best separates "
    "DECOMPOSE's eigenvalues is used (1: the paper's single tau).",
)
@click.option(
    "--exact-moments",
    "exact",
    type=input_path(allow_dash=True),
    help="Instead of SENTENCES: unmix the exact moments (infinite data) of this topology "
    "model file.",
)
@seed_option
@model_output_option("Topology model file")
@encoding_option
@click.pass_context
def command(
    ctx: click.Context,
    sentences: str | None,
    family: str,
    length_max: int,
    states: int | None,
    taus: int,
    exact: str | None,
    seed: int,
    output: str,
    encoding: str,
) -> None:
    """Learn a --model pcfg-ie or dep-ies from SENTENCES (one per line, tokens separated by
    whitespace; '-' for stdin) by unmixing their moments, and write it to -o MODEL.

    The vocabulary is the distinct tokens (most frequent first); empty lines and lines
    longer than --length-max are skipped. pcfg-ie unmixes the eta-sliced triple moments of
    lengths 3..--length-max through the mixing matrix (Proposition 1) and decomposes the
    compound parameter Psi2 (section 5.2); dep-ies solves AA + A from the pair moments of
    lengths 2 and 3 (section 5.3). Estimates are projected onto the probability simplex.
    The model file keeps the vocabulary and the lengths seen, for `lpcfg sample`.

    \b
    Examples:
      lpcfg unmix --model pcfg-ie --states 3 sentences.txt -o learned.npz
      lpcfg unmix --model dep-ies --exact-moments truth.npz -o learned.npz
    """
    if (sentences is None) == (exact is None):
        raise click.UsageError(
            "give SENTENCES or --exact-moments MODEL (one of them, not both)"
            if sentences is None
            else f"give SENTENCES or --exact-moments MODEL, not both ({sentences} and {exact})",
            ctx,
        )
    if family == "dep-ies":
        for name in ("states", "taus"):
            unused(ctx, name, "with --model dep-ies (its states are the words)")
    elif states is None and exact is None:
        raise click.UsageError("--model pcfg-ie needs --states K", ctx)
    rng = np.random.default_rng(seed)
    meta: dict[str, Any] = {"learner": "unmix", "length_max": length_max, "seed": seed}
    if sentences is not None:
        corpus = from_lines(iter_lines(sentences, encoding), length_max)
        source = display_name(sentences)
        kept = int(corpus.length_counts.sum())
        report(
            f"read {kept} sentences from {source} (skipped {corpus.empty} empty, "
            f"{corpus.too_long} longer than {length_max} words); per length: "
            f"{_per_length(corpus.length_counts) or 'none'}"
        )
        if not kept:
            raise LpcfgError("no sentences to learn from", source=source)
        vocab, data, lengths = corpus.vocab, corpus.data, corpus.length_counts
        d = len(vocab)
        meta["sentences"] = {str(n): int(c) for n, c in enumerate(lengths) if c}
    else:
        assert exact is not None
        unused(ctx, "encoding", "with --exact-moments (no text is read)", refuse=False)
        truth = modelfile.load(exact)
        source = display_name(exact)
        if truth.family != family:
            raise LpcfgError(
                f"a {truth.family} model: --model {family} unmixes {family} moments only",
                source=source,
            )
        vocab, lengths, d = truth.vocab, truth.length_counts, truth.d
        if states is None:
            states = truth.k
        if family == "pcfg-ie":
            if len(triples(length_max)) * d**3 > _EXACT_LIMIT:
                raise LpcfgError(
                    f"exact triple moments of d = {d} words up to length {length_max} are too "
                    "large; lower --length-max (3 is enough: longer sentences do not change "
                    "the estimate)",
                    source=source,
                )
            data = exact_triple_moments(truth.params, length_max)  # type: ignore[arg-type]
        else:
            data = exact_pair_moments(truth.params)  # type: ignore[arg-type]
        meta["exact_moments"] = source
        used = f"lengths 3..{length_max}" if family == "pcfg-ie" else "lengths 2 and 3"
        report(f"exact moments of {source} ({family}, {used})")
    start = time.perf_counter()
    if family == "pcfg-ie":
        assert states is not None
        if d < states:
            raise LpcfgError(
                f"pcfg-ie needs at least as many word types as states: d = {d} < k = {states} "
                "(lower --states)"
            )
        report(f"d = {d} word types, k = {states} states")
        observed = tuple(n for n in range(3, length_max + 1) if n < len(lengths) and lengths[n])
        if exact is not None:
            observed = tuple(range(3, length_max + 1))
        check = check_row_space(length_max, observed)
        if check["residual"] > ROW_SPACE_TOLERANCE:
            raise LpcfgError(
                "pcfg-ie needs sentences of length 3: without them Psi2 is not in the row "
                f"space of the mixing matrix (residual {check['residual']:.2g})"
            )
        report(
            f"Psi2 is in the row space of the mixing matrix ({check['rows']} x "
            f"{check['columns']}, rank {check['rank']}): residual {check['residual']:.1e}; "
            f"pinv(M) weighs lengths {', '.join(map(str, check['uses']))}"
        )
        tau = rng.uniform(size=(taus, d))
        params = unmix_pcfg_ie(data, d, states, length_max, tau)
        meta.update({"states": states, "taus": taus})
    else:
        report(f"d = {d} word types (the states)")
        try:
            params = unmix_dep_ies(data, d)
        except ValueError as exc:  # no sentences of length 2 or 3
            raise LpcfgError(f"dep-ies: {exc}") from None
    seconds = time.perf_counter() - start  # not in meta: one seed, one file
    model = modelfile.TopologyModel(family, params, list(vocab), np.asarray(lengths), meta)
    modelfile.save(output, model)
    report(f"unmixed in {seconds:.2f} s; wrote {family} model to {display_name(output)}")
