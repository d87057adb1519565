"""Independent tasks in worker processes (the experiment scripts' ``--jobs``).

Each worker is forked (where the platform can: the parent's imports and compiled kernels
come for free) and does its matrix products on one BLAS thread, so that ``jobs`` workers
share the cores instead of each starting a BLAS pool per core. Results come back in the
order of the inputs, so what a script writes does not depend on ``jobs``. Parsing has its
own workers (``parallel``), which share one loaded model and stream.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from threadpoolctl import threadpool_limits

T = TypeVar("T")
R = TypeVar("R")

_limit = None  # the worker's BLAS limit, kept for the worker's lifetime


def _one_thread() -> None:
    global _limit
    _limit = threadpool_limits(1)


def process_map(fn: Callable[[T], R], items: Iterable[T], jobs: int) -> list[R]:
    """``[fn(x) for x in items]``, in ``jobs`` worker processes when ``jobs`` > 1 (``fn``
    and the items must be picklable: a module-level function, ``functools.partial``)."""
    items = list(items)
    if jobs <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    workers = min(jobs, len(items))
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_one_thread) as pool:
        return list(pool.map(fn, items))
