"""`lpcfg parse`: one sentence per line in, one tree per line out, same order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from lpcfg_cli.cli.configfile import model_command
from lpcfg_cli.cli.options import (
    conventions_from,
    conventions_given,
    conventions_options,
    hyper_options,
    input_option,
    jobs_option,
    unused,
    usable_jobs,
)
from lpcfg_cli.cli.paths import encoding_option
from lpcfg_cli.cli.stderr import progress_bar, progress_option, report
from lpcfg_cli.errors import LpcfgError, raise_if_terminated
from lpcfg_cli.files.streams import Pause, atomic_output, display_name
from lpcfg_cli.parsing.parser import Parser
from lpcfg_cli.parsing.parser_options import ParserOptions
from lpcfg_cli.parsing.tiers import ParseResult
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, read_treebank
from lpcfg_cli.treebank.sentences import read_sentences_or_pauses
from lpcfg_cli.treebank.tree import words

# Line numbers named per fallback reason in the summary (the rest are counted).
NAMED_LINES = 10


def _read_sentences(
    path: str, kind: str, encoding: str, lines: list[int], conventions: Conventions
) -> Iterator[list[str] | Pause]:
    """Sentences of INPUT, read as they are needed (text, pausing with the input) or all at
    once (trees), their tokens read with the model's treebank ``conventions`` (empty
    elements dropped, lemmas cut); the line of each is appended to ``lines`` as it is
    read."""
    if kind == "trees":
        for rec in read_treebank([path], encoding=encoding):
            lines.append(rec.line)
            tree = normalize(rec.tree, conventions) if conventions != PTB else rec.tree
            yield words(tree) if tree is not None else []
        return
    for sentence in read_sentences_or_pauses(path, encoding):
        if not isinstance(sentence, Pause):
            lines.append(len(lines) + 1)
            if conventions.reads_tokens:
                sentence = conventions.words(sentence)
        yield sentence


def _where(at: list[int], kind: str) -> str:
    """``lines 7, 12`` (the first ``NAMED_LINES``, then how many more) for the summary."""
    where = "line" if kind == "text" else "tree on line"
    named = ", ".join(map(str, at[:NAMED_LINES]))
    more = f" and {len(at) - NAMED_LINES} more" if len(at) > NAMED_LINES else ""
    return f"{where}{'s' if len(at) > 1 else ''} {named}{more}"


def _fallback_summary(fallbacks: dict[str, list[int]], kind: str) -> str:
    """``(2 longer than 660 words: lines 7, 12; ...)`` for the summary line."""
    parts = [f"{len(at)} {reason}: {_where(at, kind)}" for reason, at in sorted(fallbacks.items())]
    return f" ({'; '.join(parts)})" if parts else ""


def _tiers_summary(smoothed: list[int], glued: dict[int, list[int]], kind: str) -> str:
    """``, 3 parsed with the smoothed grammar (lines 4, 9, 12), 2 glued from pieces (1 from
    2 pieces: line 7; 1 from 3 pieces: line 30)`` for the summary line: the sentences the
    grammar could not derive, parsed by the parser's second and third tiers (none: empty)."""
    out = ""
    if smoothed:
        out += f", {len(smoothed)} parsed with the smoothed grammar ({_where(smoothed, kind)})"
    if glued:
        parts = [
            f"{len(at)} from {pieces} pieces: {_where(at, kind)}"
            for pieces, at in sorted(glued.items())
        ]
        total = sum(map(len, glued.values()))
        out += f", {total} glued from pieces ({'; '.join(parts)})"
    return out


@click.command(name="parse")
@model_command("trees")
@input_option(["text", "trees"], "`trees`: take the words of PTB trees (e.g. a gold file).")
@hyper_options([("parse", ParserOptions, {})])
@conventions_options
@jobs_option("Worker processes (forked; they share the loaded model). Same output for any N.")
@encoding_option
@progress_option
@click.pass_context
def command(
    ctx: click.Context,
    model: str,
    input: str,
    output: str,
    input_kind: str,
    jobs: int,
    encoding: str,
    **options: Any,
) -> None:
    """Parse sentences from INPUT (default stdin) with MODEL.

    One sentence per line, tokens separated by spaces (any line ending); the output has
    exactly one tree per input line, in order, wrapped in (TOP ...). An empty line gives the
    empty tree (). Tokens are read with the treebank conventions MODEL was trained with
    (with penn-historical: empty elements such as *pro* dropped, word-lemma tokens cut to
    their words), which --conventions may only restate.

    A sentence the model's grammar cannot derive is parsed with its grammar smoothed (any
    open-class tag for a word that is not punctuation, any constituent as the whole
    sentence), else cut into the fewest pieces that grammar derives, each parsed, joined
    under one node; both are counted and named by line in the summary. With a grammar
    binarized with --vertical 2 or more or --horizontal 1 or more, such a sentence is first
    parsed with the grammar's projection without those annotations (also counted). A
    sentence longer than --max-length, or whose chart this machine cannot hold, gets a flat
    fallback tree, counted and named by line.

    MODEL may be - to read the model file from stdin (INPUT is then a file). The first
    parse with a model file keeps the model arranged for parsing in a cache folder
    (LPCFG_CACHE_DIR, by default the user's cache folder; off turns it off), so that
    later parses with it start sooner.

    Input is read and trees are written as they are parsed (in blocks of sentences, and at
    once when the input pauses, as when typing), so memory stays flat on any input; a file
    given with -o appears only when complete. For a corpus spread over machines, parse
    pieces made by `split` and `cat` the outputs in order.

    \b
    Examples:
      lpcfg parse model.npz data/test.txt -o test.parsed
      lpcfg parse model.npz --jobs 2 < corpus.txt | gzip > corpus.parsed.gz
    """
    if model == "-" and input == "-":
        raise LpcfgError("MODEL and INPUT cannot both be stdin ('-'): give INPUT as a file")
    asked = conventions_from(options)
    parser = Parser(model, ParserOptions(**options), jobs=usable_jobs(jobs))
    arranged = parser.arranged  # from the cache of arranged models when it holds this one
    conventions = arranged.conventions
    if conventions_given(ctx):
        if not asked.same_rules(conventions):
            raise LpcfgError(
                f"--conventions {asked.name}: MODEL was trained with conventions "
                f"{conventions.name}, and parse reads sentences as its treebank wrote them "
                f"(drop --conventions)",
                source=display_name(model),
            )
    if not arranged.ensemble:
        for name in ("combine", "product_prune"):
            unused(
                ctx, name, "with a single model (it combines an ensemble's models)", refuse=False
            )
    lines: list[int] = []
    sentences = _read_sentences(input, input_kind, encoding, lines, conventions)
    fallbacks: dict[str, list[int]] = {}
    smoothed: list[int] = []  # lines parsed with the smoothed grammar
    glued: dict[int, list[int]] = {}  # lines glued, by number of pieces
    bar = progress_bar(desc="parse", unit="sent")
    # Trees are written as their blocks finish: the first lines appear before the input
    # ends, memory stays flat, and a file given with -o still appears only when complete.
    with bar, atomic_output(output, encoding=encoding) as fh:
        for number, res in enumerate(parser.parse(sentences, progress=bar.update)):
            fh.write(_line(res) + "\n")
            if res.fallback:
                fallbacks.setdefault(res.fallback, []).append(lines[number])
            elif res.pieces:
                glued.setdefault(res.pieces, []).append(lines[number])
            elif res.smoothed:
                smoothed.append(lines[number])
            if output == "-":
                fh.flush()  # a pipeline downstream sees each tree as soon as it exists
            raise_if_terminated()
    stats = parser.stats
    n = stats.sentences
    rate = n / stats.seconds if stats.seconds > 0 else float("inf")
    report(
        f"parsed {n} sentences from {display_name(input)} in "
        f"{stats.seconds:.1f} s ({rate:.1f} sentences/s), {stats.fallbacks} fallback"
        + _fallback_summary(fallbacks, input_kind)
        + _tiers_summary(smoothed, glued, input_kind)
        + (f", {stats.retries} retried with looser pruning" if stats.retries else "")
        + (f", {stats.backoffs} backed off to a coarser grammar" if stats.backoffs else "")
    )


def _line(res: ParseResult) -> str:
    return format_tree(res.tree, root="TOP") if res.tree is not None else "()"
