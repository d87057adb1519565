"""`lpcfg identifiability`: CHECKIDENTIFIABILITY of Hsu, Kakade & Liang (2012), section 4."""

from __future__ import annotations

import json as jsonlib

import click

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import (
    output_option,
    progress_bar,
    progress_option,
    report,
    seed_option,
    unused,
)
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output, check_output
from lpcfg_cli.topology_models.families import FAMILIES
from lpcfg_cli.topology_models.identifiability import (
    FIGURE_COLUMNS,
    Verdict,
    check,
    figure2,
    figure2_markdown,
    planned_checks,
)
from lpcfg_cli.topology_models.jacobian import TOLERANCE
from lpcfg_cli.topology_models.observations import OBSERVATIONS

# The --table grid when --words / --length are not given: every cell of Figure 2 over the
# sizes that run in about two minutes here (the paper: d in 2..8, k in 2..d, L in 2..9).
TABLE_WORDS = (2, 3, 4)
TABLE_LENGTHS = (2, 3, 4, 5, 6)


class IntSet(click.ParamType):
    """A whole number, a range ``2-8`` or a list ``2,3,5`` (ranges allowed in lists)."""

    name = "N|A-B|A,B,..."

    def convert(self, value, param, ctx):  # type: ignore[override]
        if isinstance(value, tuple):
            return value
        out: list[int] = []
        try:
            for part in str(value).split(","):
                lo, sep, hi = part.strip().partition("-")
                first, last = int(lo), int(hi) if sep else int(lo)
                if last < first:
                    raise ValueError
                out.extend(range(first, last + 1))
        except ValueError:
            self.fail(f"{value!r} is not a whole number, a range A-B or a list A,B,...")
        if not out or min(out) < 1:
            self.fail(f"{value!r}: every value must be at least 1")
        return tuple(dict.fromkeys(out))


def _one(values: tuple[int, ...] | None, option: str) -> int | None:
    if values is None:
        return None
    if len(values) != 1:
        raise click.UsageError(f"{option} takes one value without --table, not {len(values)}")
    return values[0]


def _describe(v: Verdict) -> str:
    sizes = f"d = {v.words} words" + (f", k = {v.states} states" if v.states else "")
    verdict = "identifiable" if v.identifiable else "not identifiable"
    dropped = f"{v.largest_dropped:.1e}" if v.rank < v.parameters else "none"
    gap = "inf" if v.gap == float("inf") else f"{v.gap:.1e}"
    lines = [
        f"{v.model} from {v.observation} (L = {v.length}, {sizes}): {verdict}",
        f"  Jacobian rank {v.rank} of {v.parameters} parameters ({v.moments} moments)",
        f"  singular values / largest: smallest kept {v.smallest_kept:.1e}, largest dropped "
        f"{dropped}; gap at the cut {gap}; tolerance {v.tolerance:g}; seed {v.seed}",
    ]
    if v.uncertain:
        lines.append(
            "  uncertain: a singular value lies within 10x of the cut, or the gap is under 1e3 "
            "(try another --seed)"
        )
    return "\n".join(lines)


@click.command(name="identifiability")
@config_option
@click.option("--model", "model", type=click.Choice(FAMILIES), help="The model family (section 3).")
@click.option(
    "--obs",
    "observation",
    type=click.Choice(tuple(OBSERVATIONS)),
    help="The observation function (section 4.1; quote phi** and phi*** in the shell): "
    + "; ".join(f"{k} = {v[0]}" for k, v in OBSERVATIONS.items())
    + ".",
)
@click.option(
    "--length", "lengths", type=IntSet(), help="Sentence length L (with --table: a range or list)."
)
@click.option(
    "--words", "words", type=IntSet(), help="Word types d (with --table: a range or list)."
)
@click.option("--states", type=click.IntRange(min=2), help="Latent states k (constituency models).")
@click.option(
    "--eta",
    type=click.Choice(("e1", "random")),
    default="e1",
    show_default=True,
    help="The slicing vector of the eta observations (the paper's Figure 2 uses e1).",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
    default=TOLERANCE,
    show_default=True,
    help="Singular values below this fraction of the largest count as zero.",
)
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Write the verdict (or the table) as JSON.")
@click.option(
    "--table",
    is_flag=True,
    help="Reproduce the paper's Figure 2 over --words (default 2-4), k in 2..d and --length "
    "(default 2-6), beside the paper's verdicts.",
)
@output_option("verdict")
@progress_option
@click.pass_context
def command(
    ctx: click.Context,
    model: str | None,
    observation: str | None,
    lengths: tuple[int, ...] | None,
    words: tuple[int, ...] | None,
    states: int | None,
    eta: str,
    tolerance: float,
    seed: int,
    as_json: bool,
    table: bool,
    output: str,
) -> None:
    """Is a parsing model identifiable from the moments of an observation function?

    CHECKIDENTIFIABILITY (Hsu, Kakade & Liang 2012, section 4): draw a random parameter
    point, compute the Jacobian of the observed moments of L-word sentences (dynamic
    programs over every topology, complex-step derivatives) and compare its rank with the
    number of free parameters. Prints the verdict, the rank, the number of parameters and
    the singular-value gap at the rank cut. Exit status 0 for either verdict.

    \b
    Examples:
      lpcfg identifiability --model pcfg-ie --obs phi123 --length 3 --words 4 --states 2
      lpcfg identifiability --model dep-ie --obs phi12 --length 2 --words 3 --json
      lpcfg identifiability --table --words 2-4 --length 2-6 -o figure2.md
    """
    check_output(output)
    if table:
        for name in ("model", "observation", "states", "eta"):
            unused(ctx, name, "with --table (it runs every model and observation, eta = e1)")
        grid_words = words or TABLE_WORDS
        grid_lengths = lengths or TABLE_LENGTHS
        if min(grid_words) < 2:
            raise LpcfgError("--words must be at least 2")
        bar = progress_bar(
            desc="checks", unit="check", total=planned_checks(grid_words, grid_lengths)
        )
        cells = figure2(
            grid_words,
            grid_lengths,
            seed=seed,
            tolerance=tolerance,
            progress=lambda v: bar.update(),
        )
        bar.close()
        with atomic_output(output) as fh:
            if as_json:
                rows = [
                    {
                        "model": c.model,
                        "observation": c.observation,
                        "ours": c.summary(),
                        "identifiable_at": {str(n): y for n, y in c.yes.items()},
                        "uncertain": c.uncertain,
                    }
                    for c in cells
                ]
                fh.write(
                    jsonlib.dumps(
                        {
                            "words": list(grid_words),
                            "lengths": list(grid_lengths),
                            "columns": list(FIGURE_COLUMNS),
                            "cells": rows,
                        }
                    )
                    + "\n"
                )
            else:
                fh.write(figure2_markdown(cells, sorted(grid_words), sorted(grid_lengths)))
        return
    missing = [
        opt
        for opt, val in (
            ("--model", model),
            ("--obs", observation),
            ("--length", lengths),
            ("--words", words),
        )
        if val is None
    ]
    if missing:
        raise click.UsageError(f"give {', '.join(missing)} (or --table)", ctx)
    assert model is not None and observation is not None
    if model.startswith("dep") and states is not None:
        raise click.UsageError(
            f"--states has no effect with --model {model}: its states are the words", ctx
        )
    if not model.startswith("dep") and states is None:
        raise click.UsageError(f"--model {model} needs --states", ctx)
    verdict = check(
        model,
        observation,
        _one(lengths, "--length"),
        _one(words, "--words"),
        states,
        seed=seed,
        eta=eta,
        tolerance=tolerance,
    )
    with atomic_output(output) as fh:
        if as_json:
            fh.write(jsonlib.dumps(verdict.to_dict()) + "\n")
        else:
            fh.write(_describe(verdict) + "\n")
    report(f"checked in {verdict.seconds:.2f} s")
