"""Options and stderr conventions shared by the subcommands, defined once so they agree.

stderr carries three kinds of lines: errors (``lpcfg: error: ...``, always), warnings
(``lpcfg: warning: ...``, always) and reports: progress bars and summary lines, which
``--quiet`` (on every subcommand) suppresses. Progress bars appear only when stderr is a
terminal unless ``--progress`` asks for them, so a log file gets the summaries, not bars.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource
from tqdm import tqdm

_QUIET = "lpcfg.quiet"
_PROGRESS = "lpcfg.progress"


class FiniteFloat(click.FloatRange):
    """A float in a range that refuses ``nan`` and ``inf``, which every comparison of a
    range check lets through (``--prune nan`` would otherwise mean no pruning)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def output_option(what: str) -> Callable[[Any], Any]:
    """``-o/--output FILE`` (default stdout, written atomically)."""
    return click.option(
        "-o",
        "--output",
        default="-",
        type=click.Path(dir_okay=False, allow_dash=True),
        help=f"Where to write the {what} (default stdout; files are written atomically).",
    )


seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Random seed (a whole number >= 0); the same seed gives the same result.",
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


def _remember(key: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        ctx.meta[key] = value

    return callback


progress_option = click.option(
    "--progress/--no-progress",
    default=None,
    expose_value=False,
    callback=_remember(_PROGRESS),
    help="Progress bars on stderr [default: only when stderr is a terminal].",
)


def quiet_param() -> click.Option:
    """``-q/--quiet``, which the command line adds to every subcommand."""
    return click.Option(
        ["-q", "--quiet"],
        is_flag=True,
        expose_value=False,
        callback=_remember(_QUIET),
        help="No progress bars or summary lines on stderr (errors and warnings still).",
    )


def _meta() -> dict[str, Any]:
    ctx = click.get_current_context(silent=True)
    return ctx.meta if ctx is not None else {}


def quiet() -> bool:
    """Whether ``--quiet`` was given to the running subcommand."""
    return bool(_meta().get(_QUIET))


def report(message: str) -> None:
    """A summary line on stderr (``lpcfg: ...``), unless ``--quiet``."""
    if not quiet():  # through tqdm, which clears a bar being drawn and redraws it below
        tqdm.write(f"lpcfg: {message}", file=sys.stderr)


def warn(message: str) -> None:
    """A warning line on stderr (``lpcfg: warning: ...``), shown even with ``--quiet``."""
    click.echo(f"lpcfg: warning: {message}", err=True)


def progress_bar(**kwargs: Any) -> tqdm:
    """A tqdm bar on stderr, drawn only when wanted (see the module docstring)."""
    err = sys.stderr
    wanted = _meta().get(_PROGRESS)
    if wanted is None:
        wanted = _isatty(err)
    return tqdm(file=err, leave=False, disable=quiet() or not wanted, **kwargs)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def given(ctx: click.Context, name: str) -> ParameterSource | None:
    """Where parameter ``name`` got its value, or None when it has its default."""
    source = ctx.get_parameter_source(name)
    return None if source in (None, ParameterSource.DEFAULT) else source


def unused(ctx: click.Context, name: str, why: str, *, refuse: bool = True) -> None:
    """Report an option that cannot have an effect in this run, if the user gave one.

    On the command line it is refused (exit 2) when ``refuse``: the user meant something
    that would not happen. From a config file (which may serve several runs) or when it
    cannot change the result (``refuse=False``), one warning line; a config value equal
    to the default (``seed = 0`` in a file shared by every method) says nothing.
    """
    source = given(ctx, name)
    if source is None:
        return
    param = next(p for p in ctx.command.params if p.name == name)
    if source is ParameterSource.DEFAULT_MAP and ctx.params.get(name) == param.default:
        return
    flag = max(param.opts, key=len) if isinstance(param, click.Option) else name
    if source is ParameterSource.DEFAULT_MAP:
        warn(f"{flag} (from --config) has no effect {why}: ignored")
    elif refuse:
        raise click.UsageError(f"{flag} has no effect {why}: drop {flag}", ctx)
    else:
        warn(f"{flag} has no effect {why}: ignored")

