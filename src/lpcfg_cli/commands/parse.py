"""`lpcfg parse`: one sentence per line in, one tree per line out, same order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from lpcfg_cli.commands.options import (
    hyper_options,
    output_option,
    progress_bar,
    progress_option,
    report,
)
from lpcfg_cli.config import config_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import atomic_output, check_output, display_name, iter_lines
from lpcfg_cli.model import LPCFG
from lpcfg_cli.parallel import StreamParser
from lpcfg_cli.parser import ParserOptions
from lpcfg_cli.trees import format_tree, read_treebank, words


def _read_sentences(path: str, kind: str) -> Iterator[list[str]]:
    """Sentences of INPUT, read as they are needed (text) or all at once (trees)."""
    if kind == "trees":
        return iter([words(rec.tree) for rec in read_treebank([path])])
    return (line.split() for line in iter_lines(path))


@click.command(name="parse")
@config_option
@click.argument("model", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("input", default="-", type=click.Path(dir_okay=False, allow_dash=True))
@output_option("trees")
@click.option(
    "--input",
    "input_kind",
    type=click.Choice(["text", "trees"]),
    default="text",
    show_default=True,
    help="`trees`: take the words of PTB trees (e.g. a gold file).",
)
@hyper_options([("parse", ParserOptions, {})])
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes (forked; they share the loaded model). Same output for any N.",
)
@progress_option
def command(
    model: str,
    input: str,
    output: str,
    input_kind: str,
    jobs: int,
    **options: Any,
) -> None:
    """Parse sentences from INPUT (default stdin) with MODEL.

    One sentence per line, tokens separated by spaces; the output has exactly one tree per
    input line, in order, wrapped in (TOP ...). An empty line gives the empty tree ().
    A sentence that cannot be parsed gets a flat fallback tree, counted in the summary; with a
    grammar binarized with --vertical 2 or more or --horizontal 1 or more, such a sentence is
    first parsed with the grammar's projection without those annotations (also counted).

    MODEL may be - to read the model file from stdin (INPUT is then a file).

    Input is read and trees are written as they are parsed (in blocks of sentences), so
    memory stays flat on any input; a file given with -o appears only when complete. For a
    corpus spread over machines, parse pieces made by `split` and `cat` the outputs in order.

    \b
    Examples:
      lpcfg parse model.npz data/test.txt -o test.parsed
      lpcfg parse model.npz --jobs 2 < corpus.txt | gzip > corpus.parsed.gz
    """
    if model == "-" and input == "-":
        raise LpcfgError("MODEL and INPUT cannot both be stdin ('-'): give INPUT as a file")
    check_output(output)
    lpcfg = LPCFG.load(model)
    sentences = _read_sentences(input, input_kind)
    stream = StreamParser(lpcfg, ParserOptions(**options), jobs=jobs)
    bar = progress_bar(desc="parse", unit="sent")
    # Trees are written as their blocks finish: the first lines appear before the input
    # ends, memory stays flat, and a file given with -o still appears only when complete.
    with bar, atomic_output(output) as fh:
        for res in stream.parse(sentences, progress=bar.update):
            fh.write((format_tree(res.tree, root="TOP") if res.tree is not None else "()") + "\n")
            if output == "-":
                fh.flush()  # a pipeline downstream sees each tree as soon as it exists
    stats = stream.stats
    n = stats.sentences
    rate = n / stats.seconds if stats.seconds > 0 else float("inf")
    reasons = ", ".join(f"{k} {why}" for why, k in sorted(stats.reasons.items()))
    report(
        f"parsed {n} sentences from {display_name(input)} in "
        f"{stats.seconds:.1f} s ({rate:.1f} sentences/s), {stats.fallbacks} fallback"
        + (f" ({reasons})" if reasons else "")
        + (f", {stats.retries} retried with looser pruning" if stats.retries else "")
        + (f", {stats.backoffs} backed off to a coarser grammar" if stats.backoffs else "")
    )
