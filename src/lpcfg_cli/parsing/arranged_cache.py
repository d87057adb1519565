"""Arranged models kept between runs: a parse reads its model's arrangement in a few
milliseconds instead of building it (``parsing.arranged``; docs/parsing.md, Start-up and
the arranged-model cache).

``arrange(path)`` looks for the model file's arrangement in the cache folder, under a key
made of the file's identity (real path, device, inode, size, modification time, as
Python's bytecode cache and make judge a file unchanged) and of the lpcfg code that arranges
it (the size and modification time of each of its sources, so that an upgraded install or
an edited checkout never reads an arrangement of older code, and the byte order). On a
miss it loads the model, arranges it and writes the arrangement (atomically: a file
appears whole or not at all, and two processes arranging at once both succeed). The cache
folder is ``LPCFG_CACHE_DIR``, or the user's cache folder (``~/.cache/lpcfg/arranged`` on
Linux); ``LPCFG_CACHE_DIR=off`` turns the cache off. The cache never decides whether a
parse runs: a folder that cannot be written, a file that cannot be read or that another
version wrote is a miss, and the model is arranged from its file as without a cache. A
``LPCFG_CACHE_DIR`` that is no folder that can be written (a file, ``/dev/null``, another
user's folder) turns the cache off with one warning line: the user asked for a cache and
would otherwise wait for every arrangement without knowing why. The folder is kept under
``LIMIT`` bytes, dropping the arrangements used least recently.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
import time

from lpcfg_cli.engine import jit
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.arranged import ArrangedModel

ENV = "LPCFG_CACHE_DIR"
OFF = ("off", "0", "no", "false", "none")
SUFFIX = ".arranged"
# Bytes of arrangements kept in the cache folder (on the Penn Treebank sample, EM with 16
# states arranges to 24 MB, an ensemble of six split-merge grammars to 50 MB).
LIMIT = 2 << 30


def cache_folder() -> str | None:
    """Where arrangements are kept; None when the cache is off (``LPCFG_CACHE_DIR`` set to
    ``off``, or to what is no writable folder: then with a warning, see ``unusable``)."""
    given = os.environ.get(ENV)
    if given is None:
        return jit.user_cache_folder("arranged")
    given = given.strip()
    if not given or given.lower() in OFF:
        return None
    folder = os.path.expanduser(given)
    why = unusable(folder)
    if why is not None:
        _say_off(given, why)
        return None
    return folder


def unusable(folder: str) -> str | None:
    """Why arrangements cannot be kept in ``folder`` (made if missing), None when they can:
    tried for real, as permission bits say nothing for root or on a read-only mount."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        return "it is not a folder"
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except (OSError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return f"it cannot be written ({reason[:1].lower()}{reason[1:]})"
    return None


_off_said = False


def _say_off(given: str, why: str) -> None:
    """The warning, once per process, that the cache given is off."""
    global _off_said
    if not _off_said:
        _off_said = True
        print(
            f"lpcfg: warning: {ENV}={given}: {why}, so the arranged-model cache is off "
            "(set it to a writable folder, or to off)",
            file=sys.stderr,
        )


# The package's sources (``code_stamp``).
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A file being written that is older than this was left by a process that died.
STALE_SECONDS = 3600


@functools.lru_cache(maxsize=1)
def code_stamp() -> str:
    """The lpcfg code that arranges a model: each of its sources' size and modification
    time (an install or an edit changes them), and the machine's byte order (a cache
    folder may be shared by machines)."""
    stamps: list[str] = []
    _stamps(PACKAGE, len(PACKAGE), stamps)
    stamps.sort()
    stamps.append(sys.byteorder)  # the arrays are stored in this machine's order
    return hashlib.blake2b("\n".join(stamps).encode(), digest_size=16).hexdigest()


def _stamps(folder: str, root: int, out: list[str]) -> None:
    with os.scandir(folder) as it:
        for e in it:
            if e.name.endswith(".py"):
                st = e.stat()
                out.append(f"{e.path[root:]}\0{st.st_size}\0{st.st_mtime_ns}")
            elif e.name != "__pycache__" and e.is_dir():
                _stamps(e.path, root, out)


def source_of(path: str) -> dict[str, object] | None:
    """The identity of the model file at ``path`` (None: not a regular file, as stdin)."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if not os.path.isfile(real):
        return None
    return {
        "path": real,
        "device": st.st_dev,
        "inode": st.st_ino,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "code": code_stamp(),
    }


def entry_path(folder: str, source: dict[str, object]) -> str:
    """The file of the arrangement of ``source`` in ``folder``."""
    key = hashlib.blake2b(json.dumps(source, sort_keys=True).encode(), digest_size=16)
    return os.path.join(folder, key.hexdigest() + SUFFIX)


def arrange(path: str, loaded: LPCFG | None = None) -> ArrangedModel:
    """The model file at ``path`` (``-``: stdin) arranged for parsing, from the cache when it
    holds it (see the module), else loaded (``LPCFG.load``: a bad file is its
    ``LpcfgError``), arranged and kept. ``loaded``: the file's model, already read by the
    caller, arranged on a miss instead of reading the file again; it is not kept, since the
    file may have changed since it was read (the next run keeps its own)."""
    folder = cache_folder()
    source = None if path == "-" or folder is None else source_of(path)
    if folder is None or source is None:
        return ArrangedModel.of(loaded if loaded is not None else LPCFG.load(path))
    entry = entry_path(folder, source)
    try:
        arranged, header = ArrangedModel.load(entry)
        if header.get("source") == source:
            _touch(entry)
            return arranged
    except (OSError, ValueError):
        pass  # missing, torn or of another version: arranged anew below
    if loaded is not None:
        return ArrangedModel.of(loaded)
    arranged = ArrangedModel.of(LPCFG.load(path))
    if source_of(path) == source:  # not changed while it was read
        _keep(folder, entry, arranged, source)
    return arranged


def _touch(entry: str) -> None:
    try:
        os.utime(entry)
    except OSError:
        pass


def _keep(folder: str, entry: str, arranged: ArrangedModel, source: dict[str, object]) -> None:
    """Write ``arranged`` as ``entry`` (atomically; silently not at all where the folder
    cannot be written), then keep the folder under ``LIMIT``."""
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "wb", dir=folder, prefix=".writing-", suffix=SUFFIX, delete=False
        ) as fh:
            tmp = fh.name
            arranged.save(fh, {"source": source})
        os.replace(tmp, entry)
        tmp = None
        prune(folder, LIMIT, keep=entry)
    except (OSError, ValueError, TypeError):  # the parse goes on without keeping it
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def prune(folder: str, limit: int, keep: str | None = None) -> None:
    """Delete the arrangements in ``folder`` used least recently until the rest take at most
    ``limit`` bytes (never ``keep``), and files left half-written long ago."""
    found = []
    stale = time.time_ns() - STALE_SECONDS * 10**9
    with os.scandir(folder) as it:
        for e in it:
            if not e.name.endswith(SUFFIX) or not e.is_file():
                continue
            st = e.stat()
            if not e.name.startswith("."):
                found.append((st.st_mtime_ns, st.st_size, e.path))
            elif st.st_mtime_ns < stale:
                try:
                    os.unlink(e.path)
                except OSError:
                    pass
    total = sum(size for _, size, _ in found)
    for _, size, path in sorted(found):
        if total <= limit:
            break
        if path == keep:
            continue
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass
