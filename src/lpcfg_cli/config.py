"""``--config FILE``: option values from a TOML file (stdlib ``tomllib``).

A config file may set options at top level or in a table named after the subcommand
(``[train]``, ``[parse]``, ...); the table wins. Keys are option names with ``-`` or ``_``.
Options given on the command line override the file. Unknown keys are an error, so a
misspelt option is not silently ignored.
"""

from __future__ import annotations

import tomllib
from typing import Any

import click

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import read_text

SUBCOMMANDS = ("binarize", "train", "parse", "evaluate", "sample")


def load_config(path: str, command: click.Command) -> dict[str, Any]:
    """Option values for ``command`` from the TOML file at ``path`` (a click default_map)."""
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise LpcfgError(f"invalid TOML: {exc}", source=path) from None
    for key, value in data.items():
        if isinstance(value, dict) and key not in SUBCOMMANDS:
            raise LpcfgError(f"unknown table [{key}]", source=path)
    own = {p.name for p in command.params if p.name and p.name != "config"}
    known_elsewhere = _all_option_names()
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            continue
        name = key.replace("-", "_")
        if name in own:
            out[name] = value
        elif name not in known_elsewhere:
            raise LpcfgError(f"unknown option '{key}'", source=path)
    for key, value in data.get(command.name, {}).items():
        name = key.replace("-", "_")
        if name not in own:
            raise LpcfgError(f"unknown option '{key}' in [{command.name}]", source=path)
        out[name] = value
    return out


def _all_option_names() -> set[str]:
    """Top-level keys may belong to another subcommand (one file for a whole pipeline)."""
    from lpcfg_cli.cli import main

    return {p.name for sub in main.commands.values() for p in sub.params if p.name}


def config_option(func: Any) -> Any:
    """Decorator adding ``--config FILE`` to a subcommand."""

    def callback(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        ctx.default_map = {**(ctx.default_map or {}), **load_config(value, ctx.command)}

    return click.option(
        "--config",
        type=click.Path(dir_okay=False, allow_dash=False),
        is_eager=True,
        expose_value=False,
        callback=callback,
        help="TOML file of option values (command-line options override it).",
    )(func)
