"""`lpcfg draw`: trees drawn as text, one SVG document or one HTML page
(``analysis.drawing``)."""

from __future__ import annotations

import codecs
import re

import click

import lpcfg_cli
from lpcfg_cli.analysis.drawing import (
    DrawOptions,
    check_drawable,
    tree_svg,
    tree_text,
    trees_html,
    trees_svg,
)
from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import hyper_options
from lpcfg_cli.cli.paths import encoding_option, input_path, output_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output, display_name
from lpcfg_cli.treebank.ptb import read_treebank
from lpcfg_cli.treebank.sentences import read_sentences
from lpcfg_cli.treebank.tree import Tree, words

FORMATS = ("text", "svg", "html")
_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def _ranges(ctx: click.Context, param: click.Parameter, value: str | None) -> list[range] | None:
    """``3,7-9`` as the ranges of 1-based numbers it names."""
    if value is None:
        return None
    out = []
    for piece in value.split(","):
        match = _RANGE.fullmatch(piece)
        if not match:
            raise click.BadParameter(
                f"{value!r}: expected numbers and ranges such as 3,7-9", ctx, param
            )
        first = int(match[1])
        last = int(match[2]) if match[2] else first
        if first < 1 or last < first:
            raise click.BadParameter(
                f"{value!r}: {piece.strip()} is not a range of trees (they are numbered from 1)",
                ctx,
                param,
            )
        out.append(range(first, last + 1))
    return out


def _selected(ranges: list[range] | None, count: int, what: str) -> list[int]:
    """The 1-based numbers ``--select`` names, in order, each once (all without it)."""
    if ranges is None:
        return list(range(1, count + 1))
    beyond = max(r[-1] for r in ranges)
    if beyond > count:
        raise LpcfgError(f"--select names {what} {beyond}, but the input holds {count}")
    return sorted({n for r in ranges for n in r})


def _format(form: str | None, output: str) -> str:
    """--format, or the one OUT's suffix says (.svg, .html or .htm; text otherwise)."""
    if form is not None:
        return form
    suffix = output.lower().rsplit(".", 1)[-1] if "." in output else ""
    return {"svg": "svg", "html": "html", "htm": "html"}.get(suffix, "text")


def _trees(
    path: str, encoding: str, select: list[range] | None
) -> tuple[list[Tree], list[int], list[tuple[str, int]]]:
    """The selected trees of ``path``, their numbers and where each was read (source,
    line)."""
    records = read_treebank([path], encoding=encoding)
    numbers = _selected(select, len(records), "tree")
    chosen = [records[n - 1] for n in numbers]
    return [rec.tree for rec in chosen], numbers, [(rec.source, rec.line) for rec in chosen]


def _parsed(
    path: str, model: str, encoding: str, select: list[range] | None
) -> tuple[list[Tree], list[int], list[tuple[str, int]], list[str]]:
    """The selected sentences of ``path`` parsed with ``model`` (an empty sentence: the
    empty tree), their numbers, where each was read, and the sentences."""
    sentences = list(read_sentences(path, encoding))
    if not sentences:
        raise LpcfgError("no sentences to parse (empty input)", source=display_name(path))
    numbers = _selected(select, len(sentences), "sentence")
    chosen = [sentences[n - 1] for n in numbers]
    trees = [t if t is not None else Tree("") for t in lpcfg_cli.parse(model, chosen)]
    places = [(display_name(path), n) for n in numbers]
    return trees, numbers, places, [" ".join(s) for s in chosen]


@click.command(name="draw")
@config_option
@click.argument("trees", metavar="[TREES]", default="-", type=input_path(allow_dash=True))
@output_option("drawings")
@click.option(
    "--format",
    "form",
    type=click.Choice(FORMATS),
    default=None,
    help="text: drawn with box-drawing lines, trees separated by a blank line; svg: one "
    "SVG document, the trees one under another; html: one page (no network needed). "
    "Default: from OUT's suffix (.svg, .html), else text.",
)
@hyper_options([("draw", DrawOptions, {})])
@click.option(
    "--select",
    callback=_ranges,
    default=None,
    metavar="RANGE",
    help="Draw only these trees (numbered from 1), e.g. 3,7-9.",
)
@click.option(
    "--model",
    type=input_path(),
    default=None,
    metavar="MODEL",
    help="TREES holds sentences (one per line, tokens separated by spaces): parse each "
    "with MODEL, then draw its tree.",
)
@click.option("--ascii", is_flag=True, help="Text drawings with ASCII lines, not Unicode.")
@encoding_option
def command(
    trees: str,
    output: str,
    form: str | None,
    max_depth: int | None,
    select: list[range] | None,
    model: str | None,
    ascii: bool,
    encoding: str,
) -> None:
    """Draw the trees of TREES (default stdin; any layout, one per line or pretty-printed).

    Text goes to stdout by default, one drawing after another; --format svg or html (or
    an OUT ending in .svg or .html) draws the trees as SVG: one SVG document with the
    trees stacked under their numbers, or one self-contained HTML page with each tree in
    a box that scrolls sideways under its number and sentence. An empty tree `()` (a failed
    parse) is drawn as "(no parse)". Very large trees stay readable with --max-depth.

    With --model, TREES holds sentences instead: each is parsed with MODEL (as `lpcfg
    parse` would) and its tree drawn (an empty line: "(no parse)").

    \b
    Examples:
      lpcfg draw data/test.mrg --select 1-3
      lpcfg draw data/test.mrg --select 12 -o tree12.svg
      lpcfg draw test.parsed --max-depth 4 -o parses.html
      echo "the cat sat" | lpcfg draw --model model.npz
    """
    form = _format(form, output)
    if model is not None:
        drawn, numbers, places, captions = _parsed(trees, model, encoding, select)
    else:
        drawn, numbers, places = _trees(trees, encoding, select)
        captions = [" ".join(words(t)) for t in drawn]
    for tree, (source, line) in zip(drawn, places, strict=True):
        try:
            check_drawable(tree, max_depth=max_depth)
        except LpcfgError as err:
            err.source, err.line = source, line
            raise
    if form == "text":
        page = "\n".join(tree_text(t, unicode=not ascii, max_depth=max_depth) for t in drawn)
    elif form == "svg" and len(drawn) == 1:
        page = tree_svg(drawn[0], max_depth=max_depth, title=captions[0]) + "\n"
    elif form == "svg":
        page = trees_svg(drawn, numbers=numbers, max_depth=max_depth) + "\n"
    else:
        title = f"lpcfg draw: {display_name(trees)}"
        page = trees_html(
            drawn,
            captions=captions,
            numbers=numbers,
            max_depth=max_depth,
            title=title,
            charset=codecs.lookup(encoding).name,
        )
    if form != "text":  # characters the encoding lacks, as character references
        page = page.encode(encoding, "xmlcharrefreplace").decode(encoding)
    with atomic_output(output, encoding=encoding) as fh:
        fh.write(page)
