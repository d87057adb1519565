"""The ``lpcfg`` command line: the click group (``group``), ``--config`` files
(``configfile``), options derived from the library's dataclasses (``options``) and one module
per subcommand (``*_command``). ``run`` is the program (``lpcfg_cli.cli:run``): ``main``, the
click group, then a quick end of the process."""

from lpcfg_cli.cli.group import main, run

__all__ = ["main", "run"]
