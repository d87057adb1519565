"""``--config FILE``: option values from a TOML file (stdlib ``tomllib``).

A config file may set options at top level or in a table named after the subcommand
(``[train]``, ``[parse]``, ..., ``[lm.train]``, ``[lm.perplexity]`` and ``[lm.score]``
for the ``lm`` group's); the table wins. Keys are the long option names without
their dashes, spelt with ``-`` or ``_`` (``dev-f1-every``, ``cap`` for ``--cap``); a
repeatable option takes a list (``cap = ["NP=4", "VP=8"]``) or one string. Options given
on the command line override the file. An unknown key is an error naming it, so a misspelt
option is not silently ignored; a top-level key may belong to another subcommand (one file
serves a whole pipeline). A file name in the file (``dev = "../data/dev.mrg"``) is relative
to the file's own folder, as in a Makefile's includes or a pyproject.toml, so that one
config means the same files from any working folder.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable
from typing import Any

import click

from lpcfg_cli.cli.names import SUBCOMMANDS
from lpcfg_cli.cli.options import CommaOption
from lpcfg_cli.cli.paths import CONFIG, InputPath, input_path, output_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import read_text

GROUPS = {"lm": ("train", "perplexity", "score")}  # tables of a group's subcommands: [lm.train]


def option_keys(command: click.Command) -> dict[str, click.Option]:
    """Config keys of ``command``'s options (``dev_f1_every`` form) -> the option."""
    keys = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.name == "config":
            continue
        for opt in param.opts:
            if opt.startswith("--"):
                keys[opt[2:].replace("-", "_")] = param
    return keys


def load_config(
    path: str,
    command: click.Command,
    siblings: Iterable[click.Command] = (),
    table: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Option values for ``command`` from the TOML file at ``path`` (a click default_map,
    keyed by parameter name); top-level keys may belong to the ``siblings`` (the other
    subcommands: one file serves a whole pipeline). ``table``: the path of the command's
    own table (default ``(command.name,)``; ``("lm", "train")`` for ``lpcfg lm train``)."""
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise LpcfgError(f"invalid TOML: {exc}", source=path) from None
    for key, value in data.items():
        if isinstance(value, dict) and key not in SUBCOMMANDS:
            raise LpcfgError(f"unknown table [{key}]", source=path)
        for sub in value if isinstance(value, dict) and key in GROUPS else ():
            if isinstance(value[sub], dict) and sub not in GROUPS[key]:
                raise LpcfgError(f"unknown table [{key}.{sub}]", source=path)
    own = option_keys(command)
    elsewhere = {key for sub in (command, *siblings) for key in option_keys(sub)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            continue
        name = key.replace("-", "_")
        if name in own:
            out[own[name].name] = _value(own[name], key, value, path)
        elif name not in elsewhere:
            raise LpcfgError(f"unknown option '{key}'{_suggest(name, elsewhere)}", source=path)
    keys = table or (command.name or "",)
    section: Any = data
    for key in keys:
        section = section.get(key, {}) if isinstance(section, dict) else {}
    where = ".".join(keys)
    for key, value in section.items():
        name = key.replace("-", "_")
        if isinstance(value, dict) and keys[-1] in GROUPS:
            continue  # a subcommand's table, read by that subcommand
        if name not in own:
            raise LpcfgError(
                f"unknown option '{key}' in [{where}]{_suggest(name, own)}", source=path
            )
        out[own[name].name] = _value(own[name], key, value, path)
    return out


def _value(option: click.Option, key: str, value: Any, path: str) -> Any:
    """The default_map entry for ``option``, checked as the command line checks it.

    A flag takes a boolean; any other option takes what its command-line text would say: a
    TOML number or string is given to the option as its text (``2.5`` for a whole-number
    option is refused, not cut to 2; ``jobs = true`` is refused), and a repeatable option
    takes a list of strings or one string."""
    if option.is_flag or option.is_bool_flag:
        if not isinstance(value, bool):
            raise LpcfgError(f"option '{key}' takes true or false, not {value!r}", source=path)
        return value
    if option.multiple:
        if isinstance(value, str):
            return [_file_name(option, value, path)]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [_file_name(option, v, path) for v in value]
        raise LpcfgError(f"option '{key}' takes a list of strings", source=path)
    if isinstance(value, str):
        value = _file_name(option, value, path)
    if isinstance(value, list) and isinstance(option, CommaOption):
        if not value or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
        ):
            raise LpcfgError(f"option '{key}' takes a list of numbers or names", source=path)
        value = ",".join(map(str, value))
    if isinstance(value, list):
        raise LpcfgError(f"option '{key}' takes one value, not a list", source=path)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        shown = str(value).lower() if isinstance(value, bool) else repr(value)
        raise LpcfgError(f"option '{key}' takes a number or a string, not {shown}", source=path)
    text = value if isinstance(value, str) else repr(value)
    if isinstance(option.type, click.Path):
        return text  # checked where it is used: the command line may give another
    try:
        option.type.convert(text, option, None)
    except click.BadParameter as exc:
        raise LpcfgError(f"option '{key}': {exc.message}", source=path) from None
    return text


def _file_name(option: click.Option, value: str, config: str) -> str:
    """``value`` of a file-name option, relative to the config file's folder (as written in
    the file), so that the file means the same files from any working folder."""
    if not isinstance(option.type, click.Path) or value == "-" or os.path.isabs(value):
        return value
    return os.path.normpath(os.path.join(os.path.dirname(config), os.path.expanduser(value)))


def _suggest(name: str, keys: Any) -> str:
    close = difflib.get_close_matches(name, list(keys), n=1)
    return f" (did you mean '{close[0].replace('_', '-')}'?)" if close else ""


def _leaves(group: click.Group) -> list[click.Command]:
    """Every command under ``group``, those of nested groups included (a lazily loading
    group loads them all: an option of the file may belong to any of them)."""
    ctx = click.Context(group)
    out: list[click.Command] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None:
            out += _leaves(command) if isinstance(command, click.Group) else [command]
    return out


def config_option(func: Any) -> Any:
    """Decorator adding ``--config FILE`` to a subcommand."""

    def callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        ctx.meta[CONFIG] = value
        root = ctx.find_root().command
        siblings = _leaves(root) if isinstance(root, click.Group) else []
        table = tuple(ctx.command_path.split()[1:]) or None
        ctx.default_map = {
            **(ctx.default_map or {}),
            **load_config(value, ctx.command, siblings, table),
        }

    return click.option(
        "--config",
        type=InputPath(dir_okay=False, allow_dash=False),
        is_eager=True,
        expose_value=False,
        callback=callback,
        help="TOML file of option values, keyed by option name (command-line options override it).",
    )(func)


def model_command(what: str) -> Any:
    """The head of a command that runs a model over lines of input: ``--config FILE``, the
    ``MODEL`` and ``INPUT`` arguments (``-`` or none: stdin) and ``-o/--output`` for the
    ``what`` it writes (default stdout)."""
    decorators = (
        config_option,
        click.argument("model", type=input_path(allow_dash=True)),
        click.argument("input", default="-", type=input_path(allow_dash=True)),
        output_option(what),
    )

    def decorate(func: Any) -> Any:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return decorate
