"""Compiling the engine's kernels with numba, wherever lpcfg is installed and whoever runs it.

numba keeps compiled kernels on disk (``cache=True``) so that a process after the first
starts in a fraction of a second instead of compiling for tens of seconds. Where it keeps
them must never decide whether lpcfg runs: an install owned by another account, a read-only
container image, a service account without a writable home all leave numba's defaults (the
``__pycache__`` beside the sources, then ``~/.cache``) unwritable, and numba then refuses to
define a cached function at all (``RuntimeError: cannot cache function ...: no locator
available``).

So ``njit`` decides, for the folder of each kernel's module, where its cache goes
(``cache_folder``):

1. ``NUMBA_CACHE_DIR`` when the user set it (numba honours it first);
2. the ``__pycache__`` beside the sources, numba's default, when writable;
3. the user's cache folder by the platform's convention (``$XDG_CACHE_HOME`` or
   ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows),
   under ``lpcfg/numba``;
4. nowhere: the kernels are compiled in memory, each run, and one warning line says that
   the start-up will be slower and how to give a cache folder.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numba as nb

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _writable(folder: str) -> bool:
    """Whether files can be created in ``folder`` (made if missing), tried for real: a
    permission check says nothing for root or on a read-only mount."""
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except (OSError, ValueError):
        return False
    return True


def user_cache_folder() -> str | None:
    """The user's cache folder by the platform's convention, or None without a home."""
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not base or base.startswith("~"):
        return None
    return os.path.join(base, "lpcfg", "numba")


def cache_folder(source_folder: str = _PACKAGE) -> str | None:
    """Where the compiled kernels of the modules in ``source_folder`` are kept (see the
    module docstring); None: in memory. Points numba's cache at the user's cache folder
    when neither ``NUMBA_CACHE_DIR`` nor the folder beside the sources can be written."""
    given = os.environ.get("NUMBA_CACHE_DIR") or nb.config.CACHE_DIR
    if given and _writable(given):
        return given
    beside = os.path.join(source_folder, "__pycache__")
    if _writable(beside):
        return beside
    folder = user_cache_folder()
    if folder is not None and _writable(folder):
        nb.config.CACHE_DIR = folder
        return folder
    return None


_in_memory_said = False


def _cache(source_folder: str) -> bool:
    """Whether kernels defined in ``source_folder`` can be cached on disk; the first time
    they cannot, one warning line."""
    global _in_memory_said
    if cache_folder(source_folder) is not None:
        return True
    if not _in_memory_said:
        _in_memory_said = True
        print(
            "lpcfg: warning: no writable folder for compiled kernels (set NUMBA_CACHE_DIR "
            "or XDG_CACHE_HOME to one): they are compiled in memory, so start-up is slower",
            file=sys.stderr,
        )
    return False


def njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=..., **options)``, the cache kept where ``cache_folder`` says."""

    def decorate(function: Callable[..., Any]) -> Any:
        source = os.path.dirname(os.path.abspath(function.__code__.co_filename))
        return nb.njit(cache=_cache(source), **options)(function)

    return decorate
