"""`python -m lpcfg_cli` runs the command line."""

from lpcfg_cli.cli.group import run

run()
