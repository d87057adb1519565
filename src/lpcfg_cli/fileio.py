"""Input and output streams with the command line's conventions.

``-`` is stdin/stdout. An output that is (or will be) a regular file is written atomically
(temporary file in the same directory, renamed over the target only when everything
succeeded), so a failed run never leaves a truncated file or destroys an existing one; a
symlink keeps pointing at its target, which is the file replaced. Anything else (devices,
named pipes, ``/dev/fd/N``) is written through, as the shell's ``>`` does, so it is never
replaced by a regular file. What ``>`` refuses (an unwritable file or folder, a missing
folder, a directory) is refused up front, and a failed write (disk full, reader gone) is
one ``LpcfgError`` naming the output.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from typing import IO

from lpcfg_cli.errors import LpcfgError


def display_name(path: str | os.PathLike[str]) -> str:
    """Name used in error messages: ``<stdin>`` for ``-``."""
    return "<stdin>" if str(path) == "-" else str(path)


@contextlib.contextmanager
def open_input(path: str | os.PathLike[str], what: str = "file") -> Iterator[IO[bytes]]:
    """A binary input stream (stdin for ``-``); opening and reading errors become one
    ``LpcfgError`` naming the input (``what`` it should be: "no such model file")."""
    name = display_name(path)
    try:
        if str(path) == "-":
            yield sys.stdin.buffer
        else:
            with open(path, "rb") as fh:
                yield fh
    except FileNotFoundError:
        raise LpcfgError(f"no such {what}", source=name) from None
    except IsADirectoryError:
        raise LpcfgError(f"is a directory, not a {what}", source=name) from None
    except OSError as exc:
        raise LpcfgError(exc.strerror or str(exc), source=name) from None


def read_text(path: str | os.PathLike[str]) -> str:
    """Whole text of a UTF-8 file (or stdin for ``-``), with clear errors for bad input."""
    name = display_name(path)
    with open_input(path) as fh:
        data = fh.read()
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


def iter_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """Lines of a UTF-8 file (or stdin for ``-``), read incrementally, without their newline.

    Errors name the line (NUL byte, invalid UTF-8); a byte-order mark at the start is the
    mark of a UTF-8 file, not text. Memory stays flat however long the input is.
    """
    name = display_name(path)
    with open_input(path) as fh:
        for number, raw in enumerate(fh, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if b"\x00" in raw:
                raise LpcfgError(
                    "binary data (NUL byte), not a text file", source=name, line=number
                )
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise LpcfgError(
                    f"invalid UTF-8 (byte 0x{raw[exc.start]:02x})", source=name, line=number
                ) from None
            yield text[:-1] if text.endswith("\n") else text


def _permissions(target: str) -> int:
    """The mode a file written to ``target`` should get: the existing file's, or what
    ``open`` would give a new one (0666 less the umask)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# Folders whose entries are the open descriptors of a process (``/dev/fd`` links here).
_FD_FOLDER = re.compile(r"/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd")


def _names_descriptor(path: str) -> bool:
    """Whether ``path`` is ``/dev/fd/N`` or ``/proc/.../fd/N``: an already open file, which
    the user means to write to as it is (the shell's ``>`` does), never to replace."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return _FD_FOLDER.fullmatch(folder) is not None


def _write_error(exc: OSError, target: str) -> LpcfgError:
    """The one-line error for an output that could not be opened or written."""
    return LpcfgError(exc.strerror or str(exc), source=target)


@contextlib.contextmanager
def _write_through(target: str, mode: str) -> Iterator[IO]:
    """Open ``target`` as the shell's ``>`` would: for devices, pipes and descriptors."""
    encoding = None if "b" in mode else "utf-8"
    try:
        fh = open(target, mode, encoding=encoding)
    except OSError as exc:
        raise _write_error(exc, target) from None
    is_stdout = _is_stdout(fh)
    try:
        with fh:
            yield fh
    except OSError as exc:  # the body only writes: ENOSPC (/dev/full), EPIPE, EIO...
        if isinstance(exc, BrokenPipeError) and is_stdout:
            raise  # ``-o /dev/stdout | head``: the command line ends quietly, as for ``-``
        raise _write_error(exc, target) from None


def _is_stdout(fh: IO) -> bool:
    """Whether ``fh`` is the same open file as the process's stdout."""
    try:
        mine, out = os.fstat(fh.fileno()), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (mine.st_dev, mine.st_ino) == (out.st_dev, out.st_ino)


def _check_replaceable(target: str, real: str, exists: bool) -> None:
    """Refuse what the shell's ``>`` would for a regular file: missing folder, unwritable
    file or folder."""
    directory = os.path.dirname(real)
    if not os.path.isdir(directory):
        # Name the folder as given, or for a dangling symlink the folder it points into.
        missing = directory if os.path.islink(target) else os.path.dirname(target) or "."
        raise LpcfgError("directory does not exist", source=missing)
    if exists and not os.access(real, os.W_OK):
        raise LpcfgError("permission denied (file is not writable)", source=target)
    if not os.access(directory, os.W_OK):
        raise LpcfgError(f"permission denied (folder {directory} is not writable)", source=target)


@contextlib.contextmanager
def _replace_atomically(target: str, real: str, mode: str) -> Iterator[IO]:
    """Write a temporary file beside ``real`` and rename it over ``real`` on success."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lpcfg-", suffix=".tmp", dir=os.path.dirname(real))
    except OSError as exc:
        raise _write_error(exc, target) from None
    try:
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
        os.chmod(tmp, _permissions(real))  # mkstemp makes 0600; a new file honours umask
        os.replace(tmp, real)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # the body only writes: disk full, quota, I/O error
            raise _write_error(exc, target) from None
        raise


def _writes_through(target: str) -> bool:
    """Check ``target`` as an output; True if it is written through (not a regular file),
    False if it is (or will be) a regular file, replaced atomically."""
    try:
        info: os.stat_result | None = os.stat(target)  # follows symlinks, as ``>`` does
    except FileNotFoundError:
        info = None  # a new file, or a dangling symlink whose target ``>`` would create
    except OSError as exc:  # a symlink loop, a folder we may not search, ...
        raise _write_error(exc, target) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise LpcfgError("is a directory, not a file", source=target)
    if (info is not None and not stat.S_ISREG(info.st_mode)) or _names_descriptor(target):
        return True
    _check_replaceable(target, os.path.realpath(target), info is not None)
    return False


def check_output(
    path: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str] | None] = ()
) -> None:
    """Refuse now what ``atomic_output(path)`` would refuse when opened, and an output that
    is one of the run's ``inputs`` (it would be overwritten), so that a command can check
    its outputs before a long computation (nothing is created or opened)."""
    if str(path) == "-":
        return
    _writes_through(os.fspath(path))
    if os.path.exists(path):
        for other in inputs:
            if (
                other
                and str(other) != "-"
                and os.path.exists(other)
                and os.path.samefile(other, path)
            ):
                raise LpcfgError(f"-o {path} is also an input of this run: it would be overwritten")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO]:
    """Open ``path`` for writing (``-`` is stdout), as the module docstring describes.

    Regular files (and symlinks to them, or new files) appear only if the block succeeds;
    other outputs are written through. Errors opening or writing are ``LpcfgError``;
    a closed stdout raises ``BrokenPipeError`` for the command line to end quietly.
    """
    if str(path) == "-":
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        try:
            yield stream
            stream.flush()
        except BrokenPipeError:
            raise  # the reader went away (``| head``): the command line ends quietly
        except OSError as exc:  # ``> /dev/full``, a full disk
            raise _write_error(exc, "<stdout>") from None
        return
    target = os.fspath(path)
    if _writes_through(target):
        with _write_through(target, mode) as fh:
            yield fh
        return
    with _replace_atomically(target, os.path.realpath(target), mode) as fh:
        yield fh
