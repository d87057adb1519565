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

import codecs
import contextlib
import io
import os
import re
import select
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from lpcfg_cli.errors import LpcfgError, raise_if_terminated

DEFAULT_ENCODING = "utf-8"
BYTE_ORDER_MARK = "\ufeff"


def display_name(path: str | os.PathLike[str]) -> str:
    """Name used in error messages: ``<stdin>`` for ``-``."""
    return "<stdin>" if str(path) == "-" else str(path)


def check_encoding(encoding: str) -> str:
    """``encoding`` if Python knows the codec (any name ``codecs.lookup`` takes: ``latin-1``,
    ``iso-8859-15``, ``cp1252``, ``utf-16``...), else ``LpcfgError`` naming it."""
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError, ValueError):
        raise LpcfgError(f"unknown encoding {encoding!r} (any codec Python knows)") from None
    if not getattr(info, "_is_text_encoding", True):  # base64, zlib...: bytes to bytes
        raise LpcfgError(f"{encoding!r} is not a text encoding")
    # A codec for something other than running text (``idna``: host names, lower-cased,
    # split at dots) would fail on a file's first line or, worse, change its words.
    try:
        data = codecs.getincrementalencoder(encoding)().encode(_PROBE, final=True)
        ok = codecs.getincrementaldecoder(encoding)().decode(data, final=True) == _PROBE
    except (UnicodeError, ValueError):
        ok = False
    if not ok:
        raise LpcfgError(
            f"{encoding!r} is not a codec for text files (it changes or refuses ordinary lines)"
        )
    return encoding


# Text every encoding of files must carry unchanged: brackets, spaces, both cases, line ends,
# a long word.
_PROBE = "(S (NP The Cat) (. .))\n(X " + "w" * 80 + ")\n"


def _codec_label(encoding: str) -> str:
    """How errors name an encoding: ``UTF-8`` as before, other codecs by their own name."""
    return "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding


def _byte_oriented(encoding: str) -> bool:
    """Whether ``encoding`` writes ASCII line ends as the bytes ``\\n`` and ``\\r`` and never
    uses those bytes inside a character (UTF-8, the ISO-8859 family, cp125x, Shift-JIS, GBK
    ...), so that lines can be split before decoding and errors located exactly; UTF-16 and
    UTF-32 are not."""
    try:
        return codecs.encode("a\r\nb", encoding) == b"a\r\nb"
    except (UnicodeError, LookupError):
        return False


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


def _decode_error(exc: UnicodeError, encoding: str, name: str, line: int) -> LpcfgError:
    """The error for text ``encoding`` cannot decode: the byte that fails, or for a codec
    that fails as a whole (``idna`` on text that is not a host name, ``utf-16`` without a
    byte-order mark) its own words."""
    if not isinstance(exc, UnicodeDecodeError):
        return LpcfgError(
            f"cannot be read as {_codec_label(encoding)} ({exc}): is --encoding right?",
            source=name,
            line=line,
        )
    byte = exc.object[exc.start] if exc.start < len(exc.object) else None
    what = f" (byte 0x{byte:02x})" if byte is not None else ""
    return LpcfgError(f"invalid {_codec_label(encoding)}{what}", source=name, line=line)


def _nul_error(name: str, line: int) -> LpcfgError:
    return LpcfgError("binary data (NUL byte), not a text file", source=name, line=line)


def read_text(path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING) -> str:
    """Whole text of a file (or stdin for ``-``) in ``encoding``, with clear errors for bad
    input (the line of an undecodable byte or a NUL). A byte-order mark at the start is the
    mark of the encoding, not text."""
    name = display_name(path)
    with open_input(path) as fh:
        data = fh.read()
    if _byte_oriented(encoding):
        if b"\x00" in data:
            raise _nul_error(name, data[: data.index(b"\x00")].count(b"\n") + 1)
        try:
            text = codecs.decode(data, encoding)
        except UnicodeError as exc:
            start = getattr(exc, "start", 0)
            raise _decode_error(exc, encoding, name, data[:start].count(b"\n") + 1) from None
    else:
        try:
            text = codecs.decode(data, encoding)
        except UnicodeError as exc:
            # The line of the bad unit: the text decoded before it, counted.
            start = getattr(exc, "start", 0)
            before = codecs.decode(data[:start], encoding, errors="replace")
            raise _decode_error(exc, encoding, name, before.count("\n") + 1) from None
        if "\x00" in text:
            raise _nul_error(name, text[: text.index("\x00")].count("\n") + 1)
    return text.removeprefix(BYTE_ORDER_MARK)


class Pause:
    """What ``iter_lines(..., pauses=True)`` yields when the input has no further complete
    line yet and reading on would wait (a person typing, a slow pipe): the reader can
    finish the work it holds instead of waiting for more."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PAUSE"


PAUSE = Pause()
_LINE_END = re.compile(rb"\r\n|\r|\n")
_CHUNK = 1 << 16


def read_lines(path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING) -> list[str]:
    """The file's lines (``read_text``) as EVALB's fgets sees them: a final newline ends
    the last line, it does not start an empty one."""
    lines = read_text(path, encoding).split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _may_pause(fh: IO[bytes]) -> bool:
    """Whether reading ``fh`` can wait for a writer (a terminal, pipe or socket): a regular
    file never pauses. Only where ``select`` works on such streams (not Windows)."""
    if sys.platform.startswith("win"):
        return False
    try:
        mode = os.fstat(fh.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return False
    return not stat.S_ISREG(mode)


def _ready(fh: IO[bytes]) -> bool:
    try:
        return bool(select.select([fh], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _raw_lines(fh: IO[bytes], pauses: bool) -> Iterator[bytes | Pause]:
    """The lines of a byte stream without their ends, which may be ``\\n``, ``\\r\\n`` or a
    lone ``\\r`` (old Mac files): one line per line however it ends. Reads what is there
    (``read1``), so a line typed on a terminal is yielded at once; with ``pauses``, ``PAUSE``
    comes before a read that would wait."""
    read = getattr(fh, "read1", fh.read)
    pauses = pauses and _may_pause(fh)
    pending = b""
    skip_lf = False  # the last chunk ended in "\r": a "\n" starting the next one is its end
    while True:
        if pauses and not _ready(fh):
            yield PAUSE
        chunk = read(_CHUNK)
        if not chunk:
            break
        if skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        skip_lf = chunk.endswith(b"\r")
        parts = _LINE_END.split(pending + chunk)
        pending = parts.pop()
        yield from parts
    if pending:
        yield pending


def iter_lines(path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING) -> Iterator[str]:
    """Lines of a text file (or stdin for ``-``) in ``encoding``, read incrementally, without
    their line ends (``\\n``, ``\\r\\n`` or ``\\r``). Errors name the line (NUL byte, a byte
    the encoding cannot decode); a byte-order mark at the start is not text. Memory stays
    flat however long the input is."""
    for line in iter_lines_or_pauses(path, encoding, pauses=False):
        assert isinstance(line, str)
        yield line


def iter_lines_or_pauses(
    path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING, *, pauses: bool = True
) -> Iterator[str | Pause]:
    """``iter_lines``, with ``PAUSE`` yielded whenever the input has no complete line ready
    and reading on would wait (see ``Pause``)."""
    name = display_name(path)
    with open_input(path) as fh:
        if _byte_oriented(encoding):
            decoder = codecs.getincrementaldecoder(encoding)()
            number = 0
            for raw in _raw_lines(fh, pauses):
                if isinstance(raw, Pause):
                    yield raw
                    continue
                number += 1
                if b"\x00" in raw:
                    raise _nul_error(name, number)
                try:
                    text = decoder.decode(raw)
                except UnicodeError as exc:
                    raise _decode_error(exc, encoding, name, number) from None
                yield text.removeprefix(BYTE_ORDER_MARK) if number == 1 else text
            try:
                decoder.decode(b"", final=True)
            except UnicodeError as exc:
                raise _decode_error(exc, encoding, name, max(number, 1)) from None
            return
        yield from _wide_lines(fh, encoding, name)


def _wide_lines(fh: IO[bytes], encoding: str, name: str) -> Iterator[str]:
    """``iter_lines`` for a codec whose characters may contain the bytes of line ends
    (UTF-16, UTF-32): decoded as a stream, then split into lines."""
    wrapper = io.TextIOWrapper(fh, encoding=encoding, errors="strict", newline=None)
    number = 0
    try:
        for text in wrapper:
            number += 1
            if "\x00" in text:
                raise _nul_error(name, number)
            text = text.removesuffix("\n")
            yield text.removeprefix(BYTE_ORDER_MARK) if number == 1 else text
    except UnicodeError as exc:
        raise _decode_error(exc, encoding, name, number + 1) from None
    finally:
        wrapper.detach()  # the caller's stream stays open


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


def _encode_error(exc: UnicodeEncodeError, target: str) -> LpcfgError:
    """The one-line error for text the output's encoding cannot hold."""
    char = exc.object[exc.start : exc.start + 1]
    return LpcfgError(
        f"{char!r} (U+{ord(char):04X}) cannot be written in {exc.encoding}: "
        "choose another --encoding",
        source=target,
    )


@contextlib.contextmanager
def _write_through(target: str, mode: str, encoding: str) -> Iterator[IO]:
    """Open ``target`` as the shell's ``>`` would: for devices, pipes and descriptors."""
    try:
        fh = open(target, mode, encoding=None if "b" in mode else encoding)
    except OSError as exc:
        raise _write_error(exc, target) from None
    is_stdout = _is_stdout(fh)
    try:
        with fh:
            yield fh
    except UnicodeEncodeError as exc:
        raise _encode_error(exc, target) from None
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
def _replace_atomically(target: str, real: str, mode: str, encoding: str) -> Iterator[IO]:
    """Write a temporary file beside ``real`` and rename it over ``real`` on success; on any
    failure or interruption (Ctrl-C, and SIGTERM or SIGHUP, which the command line turns
    into ``Terminated``) the temporary file is removed and ``real`` is untouched."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lpcfg-", suffix=".tmp", dir=os.path.dirname(real))
    except OSError as exc:
        raise _write_error(exc, target) from None
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
        raise_if_terminated()  # never complete an output the user asked to stop
        os.chmod(tmp, _permissions(real))  # mkstemp makes 0600; a new file honours umask
        os.replace(tmp, real)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, UnicodeEncodeError):
            raise _encode_error(exc, target) from None
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


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one existing file: the same path, a symlink to it or a hard
    link (same device and inode)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_output(
    path: str | os.PathLike[str],
    inputs: Sequence[str | os.PathLike[str] | None] = (),
    flag: str = "-o",
) -> None:
    """Refuse now what ``atomic_output(path)`` would refuse when opened, and an output that
    is one of the run's ``inputs`` (by path, symlink or hard link: it would be overwritten),
    so that a command can check its outputs before a long computation (nothing is created
    or opened). ``flag`` names the output in the messages."""
    target = os.fspath(path)
    if target == "-":
        return
    if target == "":
        raise LpcfgError(f"{flag} '' names no file: give a file name, or - for stdout")
    if target.endswith(("/", os.sep)):
        raise LpcfgError(f"{flag} {target} names a folder (it ends with '/'): give a file name")
    _writes_through(target)
    for other in inputs:
        if other is not None and str(other) != "-" and same_file(other, target):
            which = "" if os.fspath(other) == target else f" ({os.fspath(other)})"
            raise LpcfgError(
                f"{flag} {target} is also an input of this run{which}: it would be overwritten"
            )


@contextlib.contextmanager
def atomic_output(
    path: str | os.PathLike[str], mode: str = "w", encoding: str = DEFAULT_ENCODING
) -> Iterator[IO]:
    """Open ``path`` for writing (``-`` is stdout), as the module docstring describes; text
    is written in ``encoding``.

    Regular files (and symlinks to them, or new files) appear only if the block succeeds;
    other outputs are written through. Errors opening or writing are ``LpcfgError``;
    a closed stdout raises ``BrokenPipeError`` for the command line to end quietly.
    """
    if str(path) == "-":
        with _stdout(mode, encoding) as stream:
            yield stream
        return
    target = os.fspath(path)
    if _writes_through(target):
        with _write_through(target, mode, encoding) as fh:
            yield fh
        return
    with _replace_atomically(target, os.path.realpath(target), mode, encoding) as fh:
        yield fh


class _EncodedWriter:
    """Text written to a binary stream through an incremental encoder (a UTF-16 mark once,
    not per write); unlike ``io.TextIOWrapper`` it never closes the stream it writes to."""

    def __init__(self, binary: IO[bytes], encoding: str) -> None:
        self.binary = binary
        self.encoder = codecs.getincrementalencoder(encoding)("strict")

    def write(self, text: str) -> int:
        self.binary.write(self.encoder.encode(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.binary.flush()


@contextlib.contextmanager
def _stdout(mode: str, encoding: str) -> Iterator[Any]:
    """stdout as a binary stream, or as text in ``encoding`` (whatever the locale says)."""
    sys.stdout.flush()
    binary = sys.stdout.buffer
    stream: Any = binary if "b" in mode else _EncodedWriter(binary, encoding)
    try:
        yield stream
        stream.flush()
    except BrokenPipeError:
        raise  # the reader went away (``| head``): the command line ends quietly
    except UnicodeEncodeError as exc:
        raise _encode_error(exc, "<stdout>") from None
    except OSError as exc:  # ``> /dev/full``, a full disk
        raise _write_error(exc, "<stdout>") from None
