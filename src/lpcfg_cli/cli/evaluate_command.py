"""`lpcfg evaluate`: EVALB (COLLINS.prm) figures, identical to the original, plus strict F1.

The options come from the library's dataclasses, with its defaults: ``evalb.params.
EvaluateOptions`` (--cutoff, --param), ``evalb.report.ReportOptions`` (--per-sentence,
--labels) and ``evalb.compare.CompareOptions`` (--samples, --seed, with --against)."""

from __future__ import annotations

from dataclasses import fields
from json import dumps
from typing import Any

import click

from lpcfg_cli.analysis.error_kinds import classify_errors, compare_kinds, format_kinds
from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import conventions_from, conventions_options, given, hyper_options
from lpcfg_cli.cli.paths import encoding_option, input_path, output_option
from lpcfg_cli.errors import CheckFailed, LpcfgError
from lpcfg_cli.evalb import (
    EvalbParams,
    EvalResult,
    convention_warning,
    evaluate_lines,
    format_report,
)
from lpcfg_cli.evalb.compare import CompareOptions, compare, format_comparison
from lpcfg_cli.evalb.params import EvaluateOptions
from lpcfg_cli.evalb.report import ReportOptions
from lpcfg_cli.files.streams import atomic_output, display_name, read_lines
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.evaluation import convention_lines
from lpcfg_cli.treebank.ptb import read_treebank
from lpcfg_cli.treebank.tree import Tree


def _options(cls: type, values: dict[str, Any]) -> Any:
    """An options object of ``cls`` from the command's values of its fields."""
    return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


def _trees(path: str, encoding: str) -> list[Tree | None]:
    """The trees of a file in any layout (a Penn-Helsinki ``.psd`` file pretty-prints
    them), ``()`` as None: one per tree, as EVALB would read one per line."""
    return [rec.tree if len(rec.tree) else None for rec in read_treebank([path], encoding=encoding)]


def _described(conventions: Conventions) -> str:
    """``penn-historical``, or a custom set's rules."""
    if conventions.name != "custom":
        return conventions.name
    rules = conventions.to_dict()
    rules.pop("name")
    return "custom (" + ", ".join(f"{k} {v!r}" for k, v in rules.items()) + ")"


def _score(
    gold_lines: list[str], lines: list[str], params: EvalbParams, cutoff: int, prefix: str = ""
) -> EvalResult:
    """``evaluate_lines`` with its messages and warnings on stderr, each after ``prefix``
    ("FILE: " for the --against file)."""
    warning = convention_warning(gold_lines, lines, params)
    if warning:
        click.echo(f"lpcfg: warning: {prefix}{warning}", err=True)
    result = evaluate_lines(gold_lines, lines, params, cutoff)
    for message in result.messages:
        click.echo(prefix + message, err=True)
    for message in result.warnings:
        click.echo(f"lpcfg: warning: {prefix}{message}", err=True)
    return result


def _write(
    output: str,
    encoding: str,
    json: bool,
    shown: ReportOptions,
    result: EvalResult,
    other: EvalResult | None,
    comparison: Any,
    conventions: Conventions,
    lines: tuple[list[str], list[str], list[str] | None],
    names: tuple[str, str | None],
) -> None:
    """The report (text or JSON) to ``output``: EVALB's, errors by kind with --errors, the
    comparison with --against."""
    gold_lines, test_lines, other_lines = lines
    test, against = names
    params = result.params
    extras = {"per_sentence": shown.per_sentence, "labels": shown.labels}
    kinds = kinds_other = None
    if shown.errors and not result.aborted:
        kinds = classify_errors(gold_lines, test_lines, params)
        if other_lines is not None and other is not None and not other.aborted:
            kinds_other = classify_errors(gold_lines, other_lines, params)
    with atomic_output(output, encoding=encoding) as fh:
        if json and not result.aborted:
            out = result.to_dict(**extras)
            out["conventions"] = conventions.to_dict()
            if kinds is not None:
                out["errors"] = kinds.to_dict(per_sentence=shown.per_sentence)
            if kinds_other is not None:
                out["errors_against"] = kinds_other.to_dict(per_sentence=shown.per_sentence)
            if comparison is not None:
                out["comparison"] = {"test": test, "against": against, **comparison.to_dict()}
            fh.write(dumps(out, indent=2) + "\n")
        elif not json:
            fh.write(format_report(result, **extras))
            if kinds is not None:
                fh.write("\n" + format_kinds(kinds))
            if kinds_other is not None:
                assert against is not None and kinds is not None
                fh.write("\n" + compare_kinds(kinds_other, kinds, against, test))
            if comparison is not None:
                assert against is not None
                fh.write(format_comparison(comparison, test, against))


@click.command(name="evaluate")
@config_option
@click.argument("gold", type=input_path(allow_dash=True))
@click.argument("test", type=input_path(allow_dash=True))
@output_option("report")
@hyper_options([("evaluate", EvaluateOptions, {})])
@hyper_options([("report", ReportOptions, {})])
@click.option(
    "--json",
    is_flag=True,
    help="JSON on stdout instead of text: every figure of both blocks, strict "
    "figures, counts, EVALB's messages (with --per-sentence/--labels: those "
    "too).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit with status 1 after the report if any sentence was skipped or an "
    "error, or the files' line counts differ.",
)
@click.option(
    "--against",
    type=input_path(allow_dash=True),
    default=None,
    metavar="FILE",
    help="Also score FILE (another parser's trees of the same sentences) and test the "
    "difference of the strict F-measures: paired bootstrap interval and approximate "
    "randomization p-value, printed after the report (JSON: 'comparison').",
)
@hyper_options([("compare", CompareOptions, {})])
@conventions_options
@encoding_option
@click.pass_context
def command(
    ctx: click.Context,
    gold: str,
    test: str,
    output: str,
    json: bool,
    strict: bool,
    against: str | None,
    encoding: str,
    **values: Any,
) -> None:
    """Score TEST trees against GOLD trees (one tree per line) exactly as EVALB does.

    Prints EVALB's summary (all sentences, and length <= CUTOFF), identical to
    `evalb -p COLLINS.prm GOLD TEST`; EVALB's messages (word or length mismatches,
    unbalanced brackets, with the line number) go to stderr as it prints them.

    Then two lines of strict figures. EVALB leaves skipped sentences (empty or failed
    parses) and error sentences out of its totals, which flatters a parser that fails.
    The strict F-measure counts each of them as all wrong: its gold brackets join the
    recall denominator and its test brackets the precision denominator, with nothing
    matched (a gold line with no test line counts as skipped).

    With --conventions other than ptb (the default, which EVALB's parameters apply
    themselves), GOLD and TEST are read as treebanks in any layout, both normalised by the
    conventions (a parse of the treebank's own tokens or of `lpcfg parse`'s words alike),
    and a line on stderr says which were used.

    Like EVALB, stops without a summary after more than 10 errors (exit status 2).
    A warning is given when GOLD and TEST wrap their roots differently, e.g.
    '( (S ..) )' vs '(TOP (S ..))': EVALB deletes only TOP, so that costs every sentence.

    \b
    Examples:
      lpcfg evaluate data/test.mrg test.parsed
      lpcfg evaluate --per-sentence --labels gold.mrg test.mrg -o report.txt
      lpcfg parse m.model test.txt | lpcfg evaluate --json data/test.mrg -
      lpcfg evaluate data/dev.mrg new.parsed --against old.parsed
      lpcfg evaluate --errors data/test.mrg sm.parsed --against em.parsed

    With --against, is TEST's strict F-measure really different from FILE's? Both
    are scored, then each sentence's two parses are kept together: a paired bootstrap
    over sentences gives the spread of the difference and its 95% interval, and
    approximate randomization (swapping each sentence's pair at random, as Bikel's
    comparator does) its two-sided p-value. The report above the comparison is TEST's;
    EVALB's messages about FILE go to stderr prefixed 'FILE: '.

    With --errors, each parse is repaired into its gold tree step by step (move a
    misattached phrase, add a missing bracket, remove an extra one, relabel), each step
    classified by kind as Kummerfeld et al. (2012) do, on EVALB's brackets: the table
    gives each kind's repairs and the brackets it costs, which add up to EVALB's
    (gold - matched) + (test - matched). With --against, a second table shows which
    kinds TEST fixes (negative change) and which it introduces, next to FILE.
    """
    if gold == "-" and test == "-":
        raise click.UsageError("GOLD and TEST cannot both be '-' (stdin)")
    if against == "-" and "-" in (gold, test):
        raise click.UsageError("--against cannot be '-' (stdin) when GOLD or TEST is")
    if against is None and any(given(ctx, name) is not None for name in ("samples", "seed")):
        raise click.UsageError("--samples and --seed need --against")
    conventions = conventions_from(values)
    scoring: EvaluateOptions = _options(EvaluateOptions, values)
    shown: ReportOptions = _options(ReportOptions, values)
    params, cutoff = scoring.params, scoring.cutoff
    gold_lines, test_lines = read_lines(gold, encoding), read_lines(test, encoding)
    if not gold_lines:  # EVALB would print a summary of nothing, its F-measure "-nan"
        raise LpcfgError(f"GOLD {display_name(gold)} holds no trees: nothing to score")
    other_lines = read_lines(against, encoding) if against else None
    if conventions != PTB:  # EVALB's parameters apply the Penn Treebank's themselves
        gold_trees = _trees(gold, encoding)
        gold_lines, test_lines = convention_lines(gold_trees, _trees(test, encoding), conventions)
        if against:
            _, other_lines = convention_lines(gold_trees, _trees(against, encoding), conventions)
        click.echo(f"lpcfg: scored with conventions {_described(conventions)}", err=True)
    result = _score(gold_lines, test_lines, params, cutoff)
    other = (
        _score(gold_lines, other_lines, params, cutoff, "FILE: ")
        if other_lines is not None
        else None
    )
    comparison = None
    if other is not None and not (result.aborted or other.aborted):
        comparison = compare(result, other, _options(CompareOptions, values))
    _write(output, encoding, json, shown, result, other, comparison, conventions,
           (gold_lines, test_lines, other_lines), (test, against))  # fmt: skip
    for res, what, name in (
        (result, "evaluation", "TEST"),
        (other, "evaluation of --against FILE", "FILE"),
    ):
        if res is not None and res.aborted:
            raise LpcfgError(
                f"{what} stopped after more than {params.max_error} errors, as EVALB does "
                f"(no summary); check that GOLD and {name} hold the same sentences and tokens"
            )
    if strict:
        problems = []
        if result.not_scored:
            problems.append(
                f"{result.not_scored} of {result.all.sentences + result.all.missing} "
                "sentences skipped or in error"
            )
        if result.gold_lines != result.test_lines:
            problems.append(f"{result.gold_lines} gold lines but {result.test_lines} test lines")
        if problems:
            raise CheckFailed("; ".join(problems) + " (--strict)")
