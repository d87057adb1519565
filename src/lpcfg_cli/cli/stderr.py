"""The command line's stderr: warnings, summary lines and progress bars.

stderr carries three kinds of lines: errors (``lpcfg: error: ...``, always; ``cli.group``),
warnings (``lpcfg: warning: ...``, always) and reports: progress bars and summary lines,
which ``--quiet`` (on every subcommand) suppresses. Progress bars appear only when stderr
is a terminal unless ``--progress`` asks for them, so a log file gets the summaries, not
bars.

tqdm is imported only when a bar is drawn: its import (with the ``importlib.metadata`` it
loads) was a tenth of the start-up of a short ``lpcfg parse``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from lpcfg_cli.errors import raise_if_terminated

_QUIET = "lpcfg.quiet"
_PROGRESS = "lpcfg.progress"


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
    """A summary line on stderr (``lpcfg: ...``), unless ``--quiet``. Learners report as
    they go (every EM iteration): a terminating signal whose exception compiled code
    swallowed is raised again here, so that a long run stops soon after it."""
    raise_if_terminated()
    if quiet():
        return
    drawn = sys.modules.get("tqdm")  # a bar may be on screen only once tqdm is imported
    if drawn is not None:  # tqdm clears a bar being drawn and redraws it below the line
        drawn.tqdm.write(f"lpcfg: {message}", file=sys.stderr)
    else:
        click.echo(f"lpcfg: {message}", err=True)


def warn(message: str) -> None:
    """A warning line on stderr (``lpcfg: warning: ...``), shown even with ``--quiet``."""
    click.echo(f"lpcfg: warning: {message}", err=True)


class NoBar:
    """What ``progress_bar`` gives when no bar is wanted: a bar that draws nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(**kwargs: Any) -> Any:
    """A tqdm bar on stderr (``update``, ``close``, a context manager), drawn only when
    wanted (see the module docstring); a ``NoBar`` otherwise."""
    err = sys.stderr
    wanted = _meta().get(_PROGRESS)
    if wanted is None:
        wanted = _isatty(err)
    if quiet() or not wanted:
        return NoBar()
    from tqdm import tqdm  # drawn: see the module docstring

    return tqdm(file=err, leave=False, **kwargs)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
