"""Input and output streams with the command line's conventions.

``-`` is stdin/stdout; outputs to files are written atomically (temporary file in the same
directory, renamed over the target only when everything succeeded), so a failed run never
leaves a truncated file or destroys an existing one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO

from lpcfg_cli.errors import LpcfgError


def display_name(path: str | os.PathLike[str]) -> str:
    """Name used in error messages: ``<stdin>`` for ``-``."""
    return "<stdin>" if str(path) == "-" else str(path)


def read_text(path: str | os.PathLike[str]) -> str:
    """Whole text of a UTF-8 file (or stdin for ``-``), with clear errors for bad input."""
    name = display_name(path)
    try:
        if str(path) == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        raise LpcfgError("no such file", source=name) from None
    except IsADirectoryError:
        raise LpcfgError("is a directory, not a file", source=name) from None
    except OSError as exc:
        raise LpcfgError(exc.strerror or str(exc), source=name) from None
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise LpcfgError("binary data (NUL byte), not a text file", source=name, line=line)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LpcfgError(
            f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", source=name, line=line
        ) from None


def _permissions(target: str) -> int:
    """The mode a file written to ``target`` should get: the existing file's, or what
    ``open`` would give a new one (0666 less the umask)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO]:
    """Open ``path`` for writing; ``-`` is stdout. Files appear only if the block succeeds."""
    if str(path) == "-":
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise LpcfgError("directory does not exist", source=os.path.dirname(target) or ".")
    fd, tmp = tempfile.mkstemp(prefix=".lpcfg-", suffix=".tmp", dir=directory)
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
        os.chmod(tmp, _permissions(target))  # mkstemp makes 0600; a new file honours umask
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
