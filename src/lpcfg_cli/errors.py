"""Errors that reach the user as one line on stderr (never a traceback)."""

from __future__ import annotations

import signal
import string
from collections.abc import Callable
from typing import Any


class LpcfgError(Exception):
    """Bad input or bad usage: reported as ``lpcfg: error: ...`` with exit status 2.

    ``source`` and ``line`` locate the problem (``FILE:LINE: message``).
    """

    exit_code = 2

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.source = source
        self.line = line

    def place(self) -> str:
        """``FILE:LINE: ``, ``FILE: `` or nothing: where the problem is."""
        if self.source is None:
            return ""
        return f"{self.source}:{self.line}: " if self.line is not None else f"{self.source}: "

    def __str__(self) -> str:
        return f"{self.place()}{self.message}"


class ParameterError(LpcfgError, ValueError):
    """A value the library's options cannot take, or a combination of them it cannot fit,
    told in the parameters' own names: the template names each parameter in braces
    (``"a {states} grid needs {dev} to choose among its values"``). ``str()`` gives the
    library's wording (``a states grid needs dev ...``); the command line renders each name
    as the flag that sets it (``--states``, ``--dev``: ``render``). A ``ValueError`` too, as
    Python code expects of a bad argument; ``ParameterTypeError`` is the ``TypeError``."""

    def __init__(self, template: str, **values: Any) -> None:
        self.template = template
        self.values = values
        self.names = [f for _, f, _, _ in string.Formatter().parse(template) if f]
        # The command line's parameters (by name) whose value came from a file, and which:
        # the message then says where to change it (set by the command line).
        self.origins: dict[str, str] = {}
        super().__init__(self.render(lambda name: name))

    def render(self, name_of: Callable[[str], str]) -> str:
        """The message with each parameter written ``name_of(parameter)``."""
        return self.template.format(
            **{n: name_of(n) for n in self.names if n not in self.values}, **self.values
        )


class ParameterTypeError(ParameterError, TypeError):
    """A parameter given a value of the wrong kind (``states=2.5``, ``jobs="2"``)."""


class CheckFailed(LpcfgError):
    """A figure failed a requested check (e.g. ``evaluate --strict``): exit status 1."""

    exit_code = 1


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (``timeout``, Slurm, a closed terminal): raised where the
    program stands so that every output being written is cleaned up as for Ctrl-C, then the
    process ends by that signal. A ``BaseException``, so that no ``except Exception``
    swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# The terminating signal received, if any. The command line's handler records it before it
# raises ``Terminated``: a signal that arrives inside a callback from C code (numba's
# compiler calls back into Python) has its exception swallowed there, and the run would go
# on as if nothing had happened. ``raise_if_terminated`` raises it again at the points where
# that matters, such as before an output replaces the old file.
terminated_by: int | None = None


def raise_if_terminated() -> None:
    """Raise ``Terminated`` (``KeyboardInterrupt`` for SIGINT) if a terminating signal was
    received (see ``terminated_by``)."""
    if terminated_by is None:
        return
    if terminated_by == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(terminated_by)
