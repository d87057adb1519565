"""`lpcfg report`: one self-contained HTML page of parses (``analysis.html_report``)."""

from __future__ import annotations

import os
from typing import Any

import click

from lpcfg_cli.analysis.drawing import DrawOptions
from lpcfg_cli.analysis.html_report import render_report, score_parses
from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import hyper_options
from lpcfg_cli.cli.paths import encoding_option, input_path, output_option
from lpcfg_cli.cli.stderr import report, warn
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.evalb.params import EvaluateOptions
from lpcfg_cli.files.streams import atomic_output, display_name, read_lines
from lpcfg_cli.treebank.ptb import parse_tree


def _check_gold(path: str, lines: list[str]) -> None:
    """Every gold line must be a tree: the page draws each one as the reference."""
    if not lines:
        raise LpcfgError(f"GOLD {display_name(path)} holds no trees: nothing to report")
    for number, line in enumerate(lines, 1):
        try:
            tree = parse_tree(line)
        except (ValueError, TimeoutError) as exc:
            raise LpcfgError(
                f"malformed gold tree ({exc})", source=display_name(path), line=number
            ) from None
        if not len(tree):
            raise LpcfgError("empty gold tree", source=display_name(path), line=number)


def _names(tests: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    """The parse files' names: --name, else their file names (made unique)."""
    if names and len(names) != len(tests):
        raise click.UsageError(
            f"--name given {len(names)} times for {len(tests)} TEST files: give one per TEST"
        )
    if names:
        return list(names)
    out = [display_name(t) if t == "-" else os.path.basename(t) for t in tests]
    if len(set(out)) < len(out):  # same base names in different folders: the paths
        out = [display_name(t) for t in tests]
    return out


@click.command(name="report")
@config_option
@click.argument("gold", type=input_path(allow_dash=True))
@click.argument(
    "tests", nargs=-1, required=True, metavar="TEST...", type=input_path(allow_dash=True)
)
@output_option("HTML page")
@click.option(
    "--name",
    "names",
    multiple=True,
    metavar="NAME",
    help="What to call each TEST file in the page, once per TEST, in order (default: "
    "their file names).",
)
@hyper_options([("report", DrawOptions, {})])
@click.option("--title", default="lpcfg report", show_default=True, help="The page's title.")
@hyper_options([("evaluate", EvaluateOptions, {})])
@encoding_option
def command(
    gold: str,
    tests: tuple[str, ...],
    output: str,
    names: tuple[str, ...],
    max_depth: int | None,
    title: str,
    encoding: str,
    **values: Any,
) -> None:
    """Write one self-contained HTML page to look at the parses in TEST files of the
    sentences of GOLD (one tree per line, as `lpcfg evaluate` reads them).

    The page holds EVALB's F1 (and the strict F1) of each TEST, its errors by kind
    (Kummerfeld et al. 2012: PP attachment, coordination, unary...), and a card per
    sentence: the gold tree, each parse's tree with its wrong brackets marked and the
    gold brackets it misses marked on the gold tree, its F1 and its repairs. Filters pick
    the parse shown, an error kind, a length range or words; the filter is kept in the
    page's address (`report.html#test=1&kind=PP%20attachment&min=5&max=20`), so that a
    filtered view can be shared as a link. The page needs no network: open it from disk.

    A TEST file with fewer lines than GOLD is scored as EVALB scores it (the sentences
    with no parse line are not scored), with a warning; sentences EVALB does not score
    (failed parses, different words) say so on their card.

    \b
    Examples:
      lpcfg report data/test.mrg sm.parsed -o report.html
      lpcfg report data/test.mrg em.parsed sm.parsed --name EM --name split-merge -o r.html
      lpcfg parse m.npz data/test.txt | lpcfg report data/test.mrg - > report.html
      lpcfg report --max-depth 6 data/dev.mrg dev.parsed -o dev.html
    """
    if gold == "-" and "-" in tests or tests.count("-") > 1:
        raise click.UsageError("only one of GOLD and TEST can be '-' (stdin)")
    labels = _names(tests, names)
    options = EvaluateOptions(**{k: values[k] for k in ("cutoff", "param") if k in values})
    gold_lines = read_lines(gold, encoding)
    _check_gold(gold, gold_lines)
    parses = [(name, read_lines(path, encoding)) for name, path in zip(labels, tests, strict=True)]
    for (_, lines), path in zip(parses, tests, strict=True):
        n, m = len(lines), len(gold_lines)
        if n < m:
            warn(
                f"{display_name(path)}: {n} lines but GOLD has {m}: the last {m - n} gold "
                "sentences have no parse (not scored), as EVALB does"
            )
        elif n > m:
            warn(f"{display_name(path)}: {n} lines but GOLD has {m}: the last {n - m} left out")
    scored = score_parses(gold_lines, parses, options)
    for s, path in zip(scored, tests, strict=True):
        unscored = s.result.all.errors + s.result.all.skips
        if unscored:
            warn(
                f"{display_name(path)}: EVALB does not score {unscored} sentence"
                f"{'s' if unscored != 1 else ''} (failed parses or different words)"
            )
    page = render_report(gold_lines, scored, max_depth=max_depth, title=title, charset=encoding)
    page = page.encode(encoding, "xmlcharrefreplace").decode(encoding)
    with atomic_output(output, encoding=encoding) as fh:
        fh.write(page)
    where = "<stdout>" if output == "-" else output
    files = f"{len(scored)} parse file{'s' if len(scored) != 1 else ''}"
    report(f"wrote {where} ({len(gold_lines)} sentences, {files})")
