"""The command line's files: what each subcommand reads and writes.

Arguments and options of type ``InputPath`` are inputs, those of type ``OutputPath`` outputs;
``guard_outputs`` makes every subcommand check its outputs before any work
(``files.streams.check_output``: writable, not a folder) and refuse one that is one of its
inputs or another of its outputs (the same path, a symlink or a hard link; the ``--config``
file included).
``--encoding`` is the text encoding of every text file a subcommand reads or writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.files.streams import DEFAULT_ENCODING, check_encoding, check_output, same_file

CONFIG = "lpcfg.config"  # ctx.meta key of the --config file (an input of the run)


class InputPath(click.Path):
    """A file the command reads: no output of the run may be it (``check_outputs``). An
    option's file must exist before any work, and the error names the option (an
    argument's names only the file, as the file is what was typed there)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        if isinstance(param, click.Option) and value != "-" and not os.path.exists(value):
            config = set_by(ctx, param.name) if ctx is not None else None
            where = f" (set in {config})" if config else ""
            raise LpcfgError(f"{max(param.opts, key=len)} {value}{where}: no such file")
        return value


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
    for i, (flag, path) in enumerate(outputs):
        check_output(path, inputs, flag)
        for other_flag, other in outputs[:i]:  # two outputs in one file: one would be lost
            if "-" not in (str(path), str(other)) and (
                same_file(path, other) or os.path.realpath(path) == os.path.realpath(other)
            ):
                raise LpcfgError(
                    f"{flag} {path} is also {other_flag}: two outputs of this run "
                    "cannot be one file"
                )


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
        ctx = click.get_current_context()
        check_outputs(ctx)
        try:
            return body(*args, **kwargs)
        except ParameterError as exc:  # say which of the parameters it names a file set
            exc.origins = {
                p.name: config for p in ctx.command.params if (config := set_by(ctx, p.name))
            }
            raise

    guarded._outputs_guarded = True  # type: ignore[attr-defined]
    command.callback = guarded


def set_by(ctx: click.Context, name: str | None) -> str | None:
    """The ``--config`` file option ``name`` took its value from, None if it did not."""
    config = ctx.meta.get(CONFIG)
    if not config or name is None:
        return None
    return config if ctx.get_parameter_source(name) is ParameterSource.DEFAULT_MAP else None


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
    """The type of a file argument or option the command reads (a folder only where
    ``dir_okay=True`` says so: a treebank given as its folder)."""
    return InputPath(**{"dir_okay": False, **kwargs})


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
