"""EVALB's ``Error()``: the ``LINE : message`` lines it prints and its MAX_ERROR stop.

Both the reader (unbalanced brackets, unreadable lines) and the scorer (length, word and
line-count mismatches) report through one log, because EVALB counts all of them against
one limit: after more than MAX_ERROR messages the run stops with no summary.
"""

from __future__ import annotations

__all__ = ["ErrorLog", "SilentLog", "Stop", "Unreadable"]


class Stop(Exception):
    """EVALB exits here: more than MAX_ERROR errors."""


class Unreadable(Exception):
    """EVALB would repeat "Reading sentence" forever (only raised with no error limit)."""


class ErrorLog:
    """EVALB's ``Error()``: record ``LINE : message``, stop after more than max_error."""

    def __init__(self, max_error: int | None) -> None:
        self.max_error = max_error
        self.count = 0
        self.messages: list[str] = []

    def __call__(self, line: int, text: str) -> None:
        self.messages.append(f"{line} : {text}")
        self.count += 1
        if self.max_error is not None and self.count - 1 > self.max_error:
            raise Stop

    def forever(self, line: int, text: str) -> None:
        """An error the reader repeats without advancing: the run stops (or, with no
        error limit, the line is given up after one message)."""
        self(line, text)
        if self.max_error is None:
            raise Unreadable
        while True:
            self(line, text)


class SilentLog(ErrorLog):
    """Reading a line only to count its brackets: no messages, never stops."""

    def __init__(self) -> None:
        super().__init__(None)

    def __call__(self, line: int, text: str) -> None:
        pass
