"""numba's side of the engine's kernels (``dispatch``): its dispatchers, and where it keeps
what it compiles, wherever lpcfg is installed and whoever runs it. numba is imported only
here, and only when a kernel first needs it.

numba keeps compiled kernels on disk (``cache=True``) so that a process after the first
starts in a fraction of a second instead of compiling for tens of seconds. Where it keeps
them must never decide whether lpcfg runs: an install owned by another account, a read-only
container image, a service account without a writable home all leave numba's defaults (the
``__pycache__`` beside the sources, then ``~/.cache``) unwritable, and numba then refuses to
define a cached function at all (``RuntimeError: cannot cache function ...: no locator
available``).

So ``dispatcher`` decides, for the folder of each kernel's module, where its cache goes
(``cache_folder``):

1. ``NUMBA_CACHE_DIR`` when the user set it (numba honours it first);
2. the ``__pycache__`` beside the sources, numba's default, when writable;
3. the user's cache folder by the platform's convention (``$XDG_CACHE_HOME`` or
   ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows),
   under ``lpcfg/numba``;
4. nowhere: the kernels are compiled in memory, each run, and one warning line says that
   the start-up will be slower and how to give a cache folder.

What is compiled is read from any of these folders the user can read (``cache_folders``),
writable or not: the kernels compiled into an install's ``__pycache__`` by whoever
installed it serve every user, who would otherwise compile them again on each run (numba
reads its cache only where it may also write: its locators insist on a writable folder).
A kernel not found there is compiled and kept in the folder ``cache_folder`` chose; where
there is none, the warning of 4. comes at its first compilation, not before.
"""

from __future__ import annotations

import os
import sys
import tempfile
import types
from collections.abc import Callable
from typing import Any

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


def user_cache_folder(name: str = "numba") -> str | None:
    """Folder ``name`` of lpcfg's in the user's cache folder by the platform's convention,
    or None without a home."""
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not base or base.startswith("~"):
        return None
    return os.path.join(base, "lpcfg", name)


def cache_folders(source_folder: str = _PACKAGE) -> list[str]:
    """Every folder where compiled kernels of the modules in ``source_folder`` may be found,
    writable or not, in the order they are looked in (see the module docstring): reading
    needs no more than permission to read, so an install compiled once serves all."""
    found = [
        os.environ.get("NUMBA_CACHE_DIR") or _user_folder,
        os.path.join(source_folder, "__pycache__"),
        user_cache_folder(),
    ]
    return [folder for folder in dict.fromkeys(found) if folder]


def cache_folder(source_folder: str = _PACKAGE) -> str | None:
    """Where the compiled kernels of the modules in ``source_folder`` are kept (see the
    module docstring); None: in memory. Points numba's cache at the user's cache folder
    when neither ``NUMBA_CACHE_DIR`` nor the folder beside the sources can be written."""
    global _user_folder
    given = os.environ.get("NUMBA_CACHE_DIR") or _user_folder
    if given and _writable(given):
        return given
    beside = os.path.join(source_folder, "__pycache__")
    if _writable(beside):
        return beside
    folder = user_cache_folder()
    if folder is not None and _writable(folder):
        _user_folder = folder
        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = folder
        return folder
    return None


_user_folder: str | None = None  # the user's cache folder, once chosen


_in_memory_said = False


def _say_in_memory() -> None:
    """The warning, once per process, that kernels are compiled in memory."""
    global _in_memory_said
    if not _in_memory_said:
        _in_memory_said = True
        print(
            "lpcfg: warning: no writable folder for compiled kernels (set NUMBA_CACHE_DIR "
            "or XDG_CACHE_HOME to one): they are compiled in memory, so start-up is slower",
            file=sys.stderr,
        )


def _cache(source_folder: str) -> bool:
    """Whether kernels defined in ``source_folder`` can be cached on disk; the first time
    they cannot, one warning line."""
    if cache_folder(source_folder) is not None:
        return True
    _say_in_memory()
    return False


def _read_only_tree(source_folder: str, written: str | None) -> str | None:
    """The ``__pycache__`` beside the sources when it is a folder this user can read but
    not the one compilations are written to (``written``): numba would not read it."""
    beside = os.path.join(source_folder, "__pycache__")
    if beside == written or not os.path.isdir(beside):
        return None
    return beside if os.access(beside, os.R_OK | os.X_OK) else None


def _import_numba() -> Any:
    # numba loads scipy's BLAS when it first compiles or loads a kernel. Loading it with
    # numba lets threadpoolctl hold it to one thread in every parsing process:
    # threadpool_limits only limits libraries already loaded, and one loaded inside the
    # limit ran two threads per process (tests/parsing/test_streaming.py checks it).
    import numba
    import scipy.linalg.cython_blas  # noqa: F401

    if _user_folder is not None:
        numba.config.CACHE_DIR = _user_folder
    return numba


def dispatcher(function: Callable[..., Any], options: dict[str, Any]) -> tuple[Any, dict]:
    """numba's dispatcher of ``function`` (``numba.njit(cache=..., **options)``, the cache
    kept where ``cache_folder`` says), and the globals numba will compile it with: a copy of
    its module's, in which the caller puts numba's dispatchers in place of the kernels it
    calls (the module itself keeps its kernels)."""
    source = os.path.dirname(os.path.abspath(function.__code__.co_filename))
    written = cache_folder(source)
    tree = _read_only_tree(source, written)
    namespace = dict(function.__globals__)
    copy = types.FunctionType(
        function.__code__, namespace, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__qualname__ = function.__qualname__
    copy.__doc__ = function.__doc__
    numba = _import_numba()
    if tree is None:
        return numba.njit(cache=_cache(source), **options)(copy), namespace
    compiled = numba.njit(cache=False, **options)(copy)
    # What numba's own enable_caching does (``cache=True``), with a cache that also reads
    # the tree beside the sources.
    compiled._cache = _layered_cache(copy, written is not None)
    return compiled, namespace


def _layered_cache(function: Callable[..., Any], writable: bool) -> Any:
    """numba's cache of ``function``: kernels read first from the folder compilations are
    written to (when ``writable``, numba's own cache there), then from the read-only
    ``__pycache__`` beside its source; a compilation kept in the former only, or, without
    it, compiled in memory with the warning."""
    from numba.core.caching import FunctionCache

    caches: list[Any] = []
    # numba's locators refuse a folder they cannot write (RuntimeError), as may those named
    # in NUMBA_CACHE_LOCATOR_CLASSES: that layer is then left out.
    if writable:
        try:
            caches.append(FunctionCache(function))
        except (OSError, RuntimeError):
            writable = False
    try:
        caches.append(_read_only_cache_class()(function))
    except (OSError, RuntimeError):
        pass
    return _layers_class()(caches, writable)


_classes: dict[str, type] = {}  # made once numba is imported


def _read_only_cache_class() -> type:
    """numba's ``FunctionCache`` of the ``__pycache__`` beside a kernel's source, read only:
    its locator (numba's ``_CacheLocator`` API) is numba's ``InTreeCacheLocator`` without
    the demand that the folder be writable, and it keeps nothing."""
    if "read_only" not in _classes:
        from numba.core import caching

        class ReadOnlyInTreeLocator(caching.InTreeCacheLocator):
            def ensure_cache_path(self) -> None:
                raise OSError(f"{self.get_cache_path()} is read only here")

            @classmethod
            def from_function(cls, py_func: Any, py_file: str) -> Any:
                folder = os.path.join(os.path.dirname(py_file), "__pycache__")
                return cls(py_func, py_file) if os.path.isdir(folder) else None

        class ReadOnlyImpl(caching.CompileResultCacheImpl):
            _locator_classes = [ReadOnlyInTreeLocator]

        class ReadOnlyCache(caching.FunctionCache):
            _impl_class = ReadOnlyImpl

            def load_overload(self, sig: Any, target_context: Any) -> Any:
                try:
                    return super().load_overload(sig, target_context)
                except Exception:  # torn or foreign files someone else wrote: a miss
                    return None

            def save_overload(self, sig: Any, data: Any) -> None:
                pass

        _classes["read_only"] = ReadOnlyCache
    return _classes["read_only"]


def _layers_class() -> type:
    """numba's cache interface over several caches: loads from the first that holds a
    kernel, keeps in the first (when ``writable``), else says the kernels are compiled in
    memory the first time one is."""
    if "layers" not in _classes:
        from numba.core.caching import _Cache

        class Layers(_Cache):
            def __init__(self, caches: list[Any], writable: bool):
                self._caches = caches
                self._writable = writable

            @property
            def cache_path(self) -> str | None:
                return self._caches[0].cache_path if self._caches else None

            def load_overload(self, sig: Any, target_context: Any) -> Any:
                for cache in self._caches:
                    found = cache.load_overload(sig, target_context)
                    if found is not None:
                        return found
                return None

            def save_overload(self, sig: Any, data: Any) -> None:
                if self._writable:
                    self._caches[0].save_overload(sig, data)
                else:
                    _say_in_memory()

            def enable(self) -> None:
                for cache in self._caches:
                    cache.enable()

            def disable(self) -> None:
                for cache in self._caches:
                    cache.disable()

            def flush(self) -> None:
                if self._writable:
                    self._caches[0].flush()

        _classes["layers"] = Layers
    return _classes["layers"]


def numba_notation(value: Any) -> str:
    """The type numba gives ``value``, in its signature notation (``float32[:, ::1]``,
    ``UniTuple(int64[::1], 3)``), as ``precompiled_signatures`` lists them. Raises
    ValueError for a value numba cannot take or an array that is not C-contiguous and
    writable: no signature takes one."""
    numba = _import_numba()
    try:
        t = numba.typeof(value)
    except Exception as e:  # numba's errors (big-endian dtypes, objects) derive from many
        raise ValueError(f"numba takes no {type(value).__name__} like this: {e}") from e
    return _notation(t, numba.types)


def _notation(t: Any, nbtypes: Any) -> str:
    if isinstance(t, nbtypes.Array):
        if t.layout != "C" or not t.mutable:
            raise ValueError(f"not a C-contiguous writable array: {t}")
        dims = [":"] * (t.ndim - 1) + ["::1"]
        return f"{_notation(t.dtype, nbtypes)}[{', '.join(dims)}]"
    if isinstance(t, nbtypes.UniTuple):
        return f"UniTuple({_notation(t.dtype, nbtypes)}, {t.count})"
    if isinstance(t, nbtypes.BaseTuple):
        return "Tuple((" + "".join(f"{_notation(x, nbtypes)}, " for x in t.types).strip() + "))"
    if isinstance(t, nbtypes.Boolean):
        return "boolean"
    return str(t)
