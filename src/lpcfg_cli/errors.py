"""Errors that reach the user as one line on stderr (never a traceback)."""

from __future__ import annotations


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
