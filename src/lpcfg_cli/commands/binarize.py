"""`lpcfg binarize` (not available yet)."""

import click

from lpcfg_cli.config import config_option
from lpcfg_cli.errors import LpcfgError


@click.command(name="binarize", context_settings={"ignore_unknown_options": True})
@config_option
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args: tuple[str, ...]) -> None:
    """Not available yet."""
    raise LpcfgError("'lpcfg binarize' is not available yet")
