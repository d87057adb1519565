"""`lpcfg evaluate`: EVALB (COLLINS.prm) figures, identical to the original, plus strict F1."""

from __future__ import annotations

import click

from lpcfg_cli.commands.options import output_option
from lpcfg_cli.config import config_option
from lpcfg_cli.errors import CheckFailed, LpcfgError
from lpcfg_cli.evalb import PARAMS, convention_warning, evaluate_lines, format_report
from lpcfg_cli.fileio import atomic_output, read_text


def _lines(path: str) -> list[str]:
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


@click.command(name="evaluate")
@config_option
@click.argument("gold", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("test", type=click.Path(dir_okay=False, allow_dash=True))
@output_option("report")
@click.option(
    "--cutoff",
    type=click.IntRange(min=0),
    default=40,
    show_default=True,
    help="Length cut-off of the second summary block.",
)
@click.option("--per-sentence", is_flag=True, help="EVALB's per-sentence table first.")
@click.option("--labels", is_flag=True, help="Per-label recall/precision/F1 table.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary (JSON).")
@click.option(
    "--strict", is_flag=True, help="Exit with status 1 if any sentence was skipped or an error."
)
@click.option("--param", type=click.Choice(sorted(PARAMS)), default="collins",
              show_default=True,
              help="collins: COLLINS.prm; none: delete only TOP and -NONE-, no label "
                   "equivalences, no error limit.")  # fmt: skip
def command(
    gold: str,
    test: str,
    output: str,
    cutoff: int,
    per_sentence: bool,
    labels: bool,
    as_json: bool,
    strict: bool,
    param: str,
) -> None:
    """Score TEST trees against GOLD trees (one tree per line) exactly as EVALB does.

    Prints EVALB's summary block (all sentences and length <= CUTOFF), then strict
    F-measures that count every skipped or error sentence as all wrong: EVALB leaves such
    sentences out of its totals, which flatters a parser that fails. Error messages of the
    original program (word or length mismatches, with the sentence number) go to stderr.

    \b
    Example:
      lpcfg evaluate data/test.mrg test.parsed --labels
    """
    if gold == "-" and test == "-":
        raise LpcfgError("GOLD and TEST cannot both be stdin")
    gold_lines, test_lines = _lines(gold), _lines(test)
    warning = convention_warning(gold_lines, test_lines)
    if warning:
        click.echo(f"lpcfg: warning: {warning}", err=True)
    result = evaluate_lines(gold_lines, test_lines, PARAMS[param], cutoff)
    for message in result.messages:
        click.echo(message, err=True)
    with atomic_output(output) as fh:
        if as_json:
            fh.write(result.to_json() + "\n")
        else:
            fh.write(format_report(result, per_sentence=per_sentence, labels=labels))
    if result.aborted:
        raise LpcfgError(
            f"evaluation stopped after more than {PARAMS[param].max_error} errors, as EVALB "
            "does (no summary); check that GOLD and TEST hold the same sentences"
        )
    if strict and result.not_scored:
        raise CheckFailed(
            f"{result.not_scored} of {result.all.sentences + result.unscored_gold_lines} "
            "sentences were skipped or errors (--strict)"
        )
