"""``--config FILE``: option values from a TOML file (stdlib ``tomllib``).

A config file may set options at top level or in a table named after the subcommand
(``[train]``, ``[parse]``, ...); the table wins. Keys are the long option names without
their dashes, spelt with ``-`` or ``_`` (``dev-f1-every``, ``cap`` for ``--cap``); a
repeatable option takes a list (``cap = ["NP=4", "VP=8"]``) or one string. Options given
on the command line override the file. An unknown key is an error naming it, so a misspelt
option is not silently ignored; a top-level key may belong to another subcommand (one file
serves a whole pipeline).
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable
from typing import Any

import click

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import read_text

SUBCOMMANDS = ("binarize", "train", "bundle", "parse", "evaluate", "sample")


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
    path: str, command: click.Command, siblings: Iterable[click.Command] = ()
) -> dict[str, Any]:
    """Option values for ``command`` from the TOML file at ``path`` (a click default_map,
    keyed by parameter name); top-level keys may belong to the ``siblings`` (the other
    subcommands: one file serves a whole pipeline)."""
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise LpcfgError(f"invalid TOML: {exc}", source=path) from None
    for key, value in data.items():
        if isinstance(value, dict) and key not in SUBCOMMANDS:
            raise LpcfgError(f"unknown table [{key}]", source=path)
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
    table = data.get(command.name, {})
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in own:
            raise LpcfgError(
                f"unknown option '{key}' in [{command.name}]{_suggest(name, own)}", source=path
            )
        out[own[name].name] = _value(own[name], key, value, path)
    return out


def _value(option: click.Option, key: str, value: Any, path: str) -> Any:
    """The default_map entry for ``option``: a repeatable option takes a list or a string."""
    if not option.multiple:
        if isinstance(value, list):
            raise LpcfgError(f"option '{key}' takes one value, not a list", source=path)
        return value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise LpcfgError(f"option '{key}' takes a list of strings", source=path)


def _suggest(name: str, keys: Any) -> str:
    close = difflib.get_close_matches(name, list(keys), n=1)
    return f" (did you mean '{close[0].replace('_', '-')}'?)" if close else ""


def config_option(func: Any) -> Any:
    """Decorator adding ``--config FILE`` to a subcommand."""

    def callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        group = ctx.parent.command if ctx.parent is not None else None
        siblings = group.commands.values() if isinstance(group, click.Group) else ()
        ctx.default_map = {**(ctx.default_map or {}), **load_config(value, ctx.command, siblings)}

    return click.option(
        "--config",
        type=click.Path(dir_okay=False, allow_dash=False),
        is_eager=True,
        expose_value=False,
        callback=callback,
        help="TOML file of option values, keyed by option name (command-line options override it).",
    )(func)
