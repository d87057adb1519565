"""Options shared by several subcommands, defined once so their help stays consistent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def output_option(what: str) -> Callable[[Any], Any]:
    """``-o/--output FILE`` (default stdout, written atomically)."""
    return click.option(
        "-o",
        "--output",
        default="-",
        type=click.Path(dir_okay=False, allow_dash=True),
        help=f"Where to write the {what} (default stdout; files are written atomically).",
    )


def binarization_options(func: Any) -> Any:
    """``--horizontal``, ``--vertical`` and ``--factor`` (see ``BinarizeOptions``)."""
    for decorator in reversed([
        click.option("--horizontal", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Horizontal markovization order (siblings an intermediate symbol "
                          "remembers)."),
        click.option("--vertical", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Vertical order: 1 = none, 2 = parent annotation, 3 = grandparent."),
        click.option("--factor", type=click.Choice(["right", "left"]), default="right",
                     show_default=True, help="Factor n-ary nodes to the right or to the left."),
    ]):  # fmt: skip
        func = decorator(func)
    return func


skip_bad_option = click.option(
    "--skip-bad", is_flag=True, help="Report malformed trees on stderr and skip them."
)
