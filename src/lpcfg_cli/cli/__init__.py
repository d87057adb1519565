"""The ``lpcfg`` command line: the click group (``group``), ``--config`` files
(``configfile``), options derived from the library's dataclasses (``options``) and one module
per subcommand (``*_command``). ``main`` is the entry point (``lpcfg_cli.cli:main``)."""

from lpcfg_cli.cli.group import main

__all__ = ["main"]
