"""The command line's files: what each subcommand reads and writes.

Arguments and options of type ``InputPath`` are inputs, those of type ``OutputPath`` outputs;
``guard_outputs`` makes every subcommand check its outputs before any work
(``files.streams.check_output``: writable, not a folder) and refuse one that is one of its
inputs (the same path, a symlink or a hard link; the ``--config`` file included).
``--encoding`` is the text encoding of every text file a subcommand reads or writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import DEFAULT_ENCODING, check_encoding, check_output

CONFIG = "lpcfg.config"  # ctx.meta key of the --config file (an input of the run)


class InputPath(click.Path):
    """A file the command reads: no output of the run may be it (``check_outputs``)."""


class OutputPath(click.Path):
    """A file the command writes: checked before any work, and refused when it is one of
    the run's inputs (``check_outputs``)."""


def check_outputs(ctx: click.Context) -> None:
    """Refuse, before any work, an output of ``ctx``'s command that cannot be written or
    that is one of its inputs (by path, symlink or hard link), the ``--config`` file
    included: writing it would destroy what the run reads."""
    inputs: list[str] = []
    outputs: list[tuple[str, str]] = []
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if value is None:
            continue
        values = list(value) if isinstance(value, (tuple, list)) else [value]
        if isinstance(param.type, InputPath):
            inputs += values
        elif isinstance(param.type, OutputPath):
            flag = min(param.opts, key=len) if isinstance(param, click.Option) else param.name
            outputs += [(str(flag), v) for v in values]
    if ctx.meta.get(CONFIG):
        inputs.append(ctx.meta[CONFIG])
    for flag, path in outputs:
        check_output(path, inputs, flag)


def guard_outputs(command: click.Command) -> None:
    """Make ``command`` (every subcommand of a group) run ``check_outputs`` before its body."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            guard_outputs(sub)
        return
    body = command.callback
    if body is None or getattr(body, "_outputs_guarded", False):
        return

    def guarded(*args: Any, **kwargs: Any) -> Any:
        check_outputs(click.get_current_context())
        return body(*args, **kwargs)

    guarded._outputs_guarded = True  # type: ignore[attr-defined]
    command.callback = guarded


def output_option(what: str) -> Callable[[Any], Any]:
    """``-o/--output FILE`` (default stdout, written atomically)."""
    return click.option(
        "-o",
        "--output",
        default="-",
        type=OutputPath(dir_okay=False, allow_dash=True),
        help=f"Where to write the {what} (default stdout; files are written atomically).",
    )


def model_output_option(what: str) -> Callable[[Any], Any]:
    """``-o/--output FILE``, required: where a model goes (``-`` for stdout)."""
    return click.option(
        "-o",
        "--output",
        required=True,
        type=OutputPath(dir_okay=False, allow_dash=True),
        help=f"{what} to write (.npz; written atomically).",
    )


def input_path(**kwargs: Any) -> InputPath:
    """The type of a file argument or option the command reads."""
    return InputPath(dir_okay=False, **kwargs)


def _check_encoding(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return check_encoding(value)
    except LpcfgError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None


encoding_option = click.option(
    "--encoding",
    default=DEFAULT_ENCODING,
    show_default=True,
    callback=_check_encoding,
    help="Text encoding of the files read and written (any codec Python knows: latin-1, "
    "iso-8859-15, cp1252, utf-16...).",
)
