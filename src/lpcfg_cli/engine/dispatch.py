"""The engine's compiled kernels: one definition, run ahead-of-time compiled or through numba.

A kernel is a Python function written for numba's nopython mode and decorated with
``kernel(**numba_options)``. Called from Python, it runs

1. the machine code in the kernels' extension module (``precompiled``), when one was built
   for these sources, this numba and this processor, and the call's argument types are one
   of the signatures it was built for (``precompiled_signatures``, the parser's); numba is
   then never imported;
2. numba's just-in-time dispatcher otherwise (``jit``), made on first need, from numba's
   on-disk cache after the first run.

Why two ways: numba's import, the first call of a compiled function (its typing and lowering
registries, LLVM) and the scipy.linalg it loads cost a parse most of its start-up and about
125 MB before any model is read (docs/design-notes.md, Start-up). The extension module is
built once, from the same functions, by numba's own ahead-of-time compiler.

The extension module checks no argument type, so a call reaches it only when the Python
types of the arguments are exactly one of its signatures (``precompiled.argument_key``).
Anything else goes to numba, which compiles what it is given.

A kernel whose one call may run for minutes (the coarse pass over the chart of a sentence of
1,500 words) is declared ``kernel(interruptible=True, nogil=True)``: called from the main
thread, it runs in a thread of its own while the main thread waits, so that a signal's
Python handler (SIGTERM from ``timeout`` or Slurm, Ctrl-C) runs at once instead of when the
kernel returns: Python runs handlers only in the main thread, between bytecodes.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from lpcfg_cli.engine import jit, precompiled
from lpcfg_cli.engine.precompiled import argument_key


class Kernel:
    """A compiled kernel (see the module docstring); ``dispatcher`` is numba's."""

    def __init__(
        self, function: Callable[..., Any], options: dict[str, Any], interruptible: bool = False
    ):
        if interruptible and not options.get("nogil"):
            raise ValueError("interruptible: a kernel run in a thread must be nogil")
        self.py_func = function
        self.options = options
        self.interruptible = interruptible
        self.qualified_name = f"{function.__module__}.{function.__qualname__}"
        self.__name__ = function.__name__
        self.__qualname__ = function.__qualname__
        self.__module__ = function.__module__
        self.__doc__ = function.__doc__
        self.__wrapped__ = function
        self._dispatcher: Any = None
        self._precompiled: dict[tuple[Any, ...], Callable[..., Any]] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        table = self._precompiled
        if table is None:
            table = self._precompiled = precompiled.functions(self.qualified_name)
        fn: Callable[..., Any] | None = None
        if table and not kwargs:
            fn = table.get(argument_key(args))
        if fn is None:
            fn = self.dispatcher
        if self.interruptible and threading.current_thread() is threading.main_thread():
            return in_thread(fn, args, kwargs, self.__name__)
        return fn(*args, **kwargs)

    @property
    def dispatcher(self) -> Any:
        """numba's dispatcher of this kernel, made (and numba imported) on first use."""
        if self._dispatcher is None:
            self._dispatcher, namespace = jit.dispatcher(self.py_func, self.options)
            for name, value in list(namespace.items()):
                if isinstance(value, Kernel):
                    namespace[name] = value.dispatcher
        return self._dispatcher

    def __repr__(self) -> str:
        return f"<kernel {self.qualified_name}>"


def kernel(interruptible: bool = False, **options: Any) -> Callable[[Callable[..., Any]], Kernel]:
    """Make ``function`` a compiled kernel; ``options`` are numba.njit's (``cache`` is
    decided by ``jit``). ``interruptible``: a call from the main thread runs in a thread of
    its own (see the module docstring); needs ``nogil=True``."""

    def decorate(function: Callable[..., Any]) -> Kernel:
        return Kernel(function, options, interruptible)

    return decorate


# The asynchronous signals a kernel's thread blocks, so that the kernel delivers them to the
# main thread, whose wait they interrupt. Synchronous ones (SIGSEGV, SIGFPE) stay unblocked:
# blocked, a fault in the kernel would be undefined behaviour.
_ASYNC_SIGNALS = frozenset(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGALRM", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
)

# How often the main thread wakes while it waits (seconds): a signal delivered to another
# thread that does not block it (a BLAS thread) does not interrupt the wait, and is handled
# at the next wake-up.
_POLL = 0.1


def in_thread(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str
) -> Any:
    """``fn(*args, **kwargs)`` in a new thread, the calling (main) thread waiting for it
    with its signal handlers live: an exception a handler raises (``errors.Terminated``,
    ``KeyboardInterrupt``) leaves the wait at once, and the kernel's thread, left behind, ends
    when its call does, its results dropped (a kernel writes only into the arrays it was
    given, which its caller then drops with the exception). The call's own exception is
    raised here."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, _ASYNC_SIGNALS)
        try:
            outcome.append((True, fn(*args, **kwargs)))
        except BaseException as exc:  # handed to the waiting thread
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name=f"lpcfg kernel {name}", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(_POLL)
    ok, value = outcome[0]
    if ok:
        return value
    raise value


def check_ids(name: str, ids: Any, n: int) -> None:
    """Raise ValueError, naming the parameter, unless every id in ``ids`` lies in ``[0,
    n)``: the kernels index arrays without bounds checks, so their callers check what they
    are given."""
    ids = np.asarray(ids)
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ValueError(f"{name}: ids must lie in [0, {n})")


def int64s(values: Any) -> np.ndarray:
    """``values`` as the C-contiguous int64 array the kernels take (itself when it is one)."""
    return np.ascontiguousarray(values, dtype=np.int64)


def float64s(values: Any) -> np.ndarray:
    """``values`` as the C-contiguous float64 array the kernels take (itself when it is one)."""
    return np.ascontiguousarray(values, dtype=np.float64)
