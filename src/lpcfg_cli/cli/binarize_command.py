"""`lpcfg binarize`: PTB trees in, binarized (or, with --reverse, restored) trees out."""

from __future__ import annotations

from typing import Any

import click

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import (
    binarization_options,
    conventions_from,
    conventions_options,
    conventions_unused,
    skip_bad_option,
    unused,
)
from lpcfg_cli.cli.paths import encoding_option, input_path, output_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize, debinarize
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, read_treebank


def _warn(err: LpcfgError) -> None:
    click.echo(f"lpcfg: warning: {err} (skipped)", err=True)


@click.command(name="binarize")
@config_option
@click.argument(
    "inputs", metavar="[INPUT]...", nargs=-1, type=input_path(allow_dash=True, dir_okay=True)
)
@output_option("trees")
@binarization_options
@click.option(
    "--reverse",
    is_flag=True,
    help="Debinarize: binarized trees in, normalised original-form trees out.",
)
@click.option(
    "--normalized",
    is_flag=True,
    help="Write the normalised trees (the treebank's --conventions applied), not binarized.",
)
@conventions_options
@skip_bad_option
@encoding_option
@click.pass_context
def command(
    ctx: click.Context,
    inputs: tuple[str, ...],
    output: str,
    horizontal: int,
    vertical: int,
    factor: str,
    reverse: bool,
    normalized: bool,
    skip_bad: bool,
    encoding: str,
    **values: Any,
) -> None:
    """Binarize PTB trees from INPUT files (default stdin) into strict normal form.

    Trees are first normalised as the treebank's --conventions say (for the default, ptb:
    -NONE- elements, function tags, X -> X unaries and the root wrapper removed;
    --normalized writes them so), then unary chains are collapsed into `A+B` symbols and n-ary
    nodes factored with `@A` intermediate symbols. Output: one tree per line, one line per
    input tree; a tree left with no words (e.g. all -NONE-) or an empty input tree `()` is
    written `()`. A round bracket inside a word or label is written -LRB-/-RRB- (`:-)` as
    `:--RRB-`); every other word and label as it is. The labels are self-describing, so
    `--reverse` needs no options.

    \b
    Examples:
      lpcfg binarize data/train.mrg -o train.bin
      lpcfg binarize --reverse train.bin | head
      lpcfg binarize --normalized --conventions penn-historical corpus/psd | head
    """
    conventions = conventions_from(values)
    if reverse and normalized:
        raise click.UsageError("--normalized writes trees before binarization: drop --reverse")
    if reverse or normalized:
        why = "with --reverse (the labels say how to restore)" if reverse else "with --normalized"
        for name in ("horizontal", "vertical", "factor"):
            unused(ctx, name, why, refuse=False)
    if reverse:
        conventions_unused(ctx, "with --reverse (binarized trees are normalised already)")
    options = BinarizeOptions(horizontal=horizontal, vertical=vertical, factor=factor)
    records = read_treebank(
        list(inputs) or ["-"], skip_bad=skip_bad, on_bad=_warn, encoding=encoding
    )
    lines = []
    for rec in records:
        try:
            if len(rec.tree) == 0:  # "()" in, "()" out: one line per input tree
                tree = None
            elif reverse:
                tree = debinarize(rec.tree)
            else:
                tree = normalize(rec.tree, conventions)
                if tree is not None and not normalized:
                    tree = binarize(tree, options)
        except LpcfgError as err:
            err = LpcfgError(err.message, source=rec.source, line=rec.line)
            if not skip_bad:
                raise err from None
            _warn(err)
            continue
        lines.append(format_tree(tree))
    with atomic_output(output, encoding=encoding) as fh:
        fh.writelines(line + "\n" for line in lines)
