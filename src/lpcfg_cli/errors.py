"""Errors that reach the user as one line on stderr (never a traceback)."""

from __future__ import annotations

import signal


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

    def __str__(self) -> str:
        where = ""
        if self.source is not None:
            where = f"{self.source}:{self.line}: " if self.line is not None else f"{self.source}: "
        return f"{where}{self.message}"


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
