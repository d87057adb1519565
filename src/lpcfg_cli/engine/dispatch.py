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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lpcfg_cli.engine import jit, precompiled
from lpcfg_cli.engine.precompiled import argument_key


class Kernel:
    """A compiled kernel (see the module docstring); ``dispatcher`` is numba's."""

    def __init__(self, function: Callable[..., Any], options: dict[str, Any]):
        self.py_func = function
        self.options = options
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
        if table and not kwargs:
            fn = table.get(argument_key(args))
            if fn is not None:
                return fn(*args)
        return self.dispatcher(*args, **kwargs)

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


def kernel(**options: Any) -> Callable[[Callable[..., Any]], Kernel]:
    """Make ``function`` a compiled kernel; ``options`` are numba.njit's (``cache`` is
    decided by ``jit``)."""

    def decorate(function: Callable[..., Any]) -> Kernel:
        return Kernel(function, options)

    return decorate


def check_ids(name: str, ids: Any, n: int) -> None:
    """Raise ValueError, naming the parameter, unless every id in ``ids`` lies in ``[0,
    n)``: the kernels index arrays without bounds checks, so their callers check what they
    are given."""
    ids = np.asarray(ids)
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ValueError(f"{name}: ids must lie in [0, {n})")
