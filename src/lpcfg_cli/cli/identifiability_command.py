"""`lpcfg identifiability`: CHECKIDENTIFIABILITY of Hsu, Kakade & Liang (2012), section 4.

The options come from the library's ``CheckOptions`` (``topology_models.identifiability``;
``--length`` and ``--words`` take sets of numbers, for ``--table``); ``--table``'s grid
defaults to ``Figure2Options``'."""

from __future__ import annotations

import json as jsonlib
from typing import Any

import click

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import hyper_options, unused
from lpcfg_cli.cli.paths import output_option
from lpcfg_cli.cli.stderr import progress_bar, progress_option, report
from lpcfg_cli.files.streams import atomic_output, check_output
from lpcfg_cli.topology_models.families import DEPENDENCY
from lpcfg_cli.topology_models.identifiability import (
    FIGURE_COLUMNS,
    CheckOptions,
    Figure2Options,
    Verdict,
    check_identifiability,
    figure2,
    figure2_markdown,
    planned_checks,
)

GRID = Figure2Options()  # --table's grid when --words / --length are not given


def _span(values: tuple[int, ...]) -> str:
    """``2-4`` for consecutive values, ``2,3,5`` otherwise."""
    if list(values) == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ",".join(map(str, values))


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
@hyper_options([("check", CheckOptions, {})])
@click.option("--json", "as_json", is_flag=True, help="Write the verdict (or the table) as JSON.")
@click.option(
    "--table",
    is_flag=True,
    help=f"Reproduce the paper's Figure 2 over --words (default {_span(GRID.words)}), k in "
    f"2..d and --length (default {_span(GRID.lengths)}), beside the paper's verdicts.",
)
@output_option("verdict")
@progress_option
@click.pass_context
def command(
    ctx: click.Context,
    length: tuple[int, ...] | None,
    words: tuple[int, ...] | None,
    as_json: bool,
    table: bool,
    output: str,
    **values: Any,
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
        grid = Figure2Options(
            words=words or GRID.words,
            lengths=length or GRID.lengths,
            seed=values["seed"],
            tolerance=values["tolerance"],
        )
        _table(grid, as_json, output)
        return
    missing = [
        flag
        for flag, name, value in (
            ("--model", "model", values["model"]),
            ("--obs", "observation", values["observation"]),
            ("--length", "length", length),
            ("--words", "words", words),
        )
        if value is None
    ]
    if missing:
        raise click.UsageError(f"give {', '.join(missing)} (or --table)", ctx)
    if values["model"] in DEPENDENCY:
        unused(ctx, "states", f"with --model {values['model']} (its states are the words)")
        values["states"] = None
    options = CheckOptions(length=_one(length, "--length"), words=_one(words, "--words"), **values)
    verdict = check_identifiability(options)
    with atomic_output(output) as fh:
        if as_json:
            fh.write(jsonlib.dumps(verdict.to_dict()) + "\n")
        else:
            fh.write(_describe(verdict) + "\n")
    report(f"checked in {verdict.seconds:.2f} s")


def _table(grid: Figure2Options, as_json: bool, output: str) -> None:
    """Run ``figure2`` over ``grid`` with a progress bar; write it as markdown or JSON."""
    bar = progress_bar(desc="checks", unit="check", total=planned_checks(grid.words, grid.lengths))
    cells = figure2(grid, progress=lambda v: bar.update())
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
            table = {
                "words": list(grid.words),
                "lengths": list(grid.lengths),
                "columns": list(FIGURE_COLUMNS),
                "cells": rows,
            }
            fh.write(jsonlib.dumps(table) + "\n")
        else:
            fh.write(figure2_markdown(cells, list(grid.words), list(grid.lengths)))
