"""Independent tasks in worker processes (the experiment scripts' ``--jobs``).

Each worker is forked (where the platform can: the parent's imports and compiled kernels
come for free) and does its matrix products on one BLAS thread, so that ``jobs`` workers
share the cores instead of each starting a BLAS pool per core. Results come back in the
order of the inputs, so what a script writes does not depend on ``jobs``. Parsing has its
own workers (``parallel``), which share one loaded model and stream.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from threadpoolctl import threadpool_limits

T = TypeVar("T")
R = TypeVar("R")

_limit = None  # the worker's BLAS limit, kept for the worker's lifetime


def usable_cpus() -> int:
    """Processors this process may run on (its CPU affinity where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _one_thread() -> None:
    global _limit
    _limit = threadpool_limits(1)


def process_map(fn: Callable[[T], R], items: Iterable[T], jobs: int) -> list[R]:
    """``[fn(x) for x in items]``, in ``jobs`` worker processes when ``jobs`` > 1 (``fn``
    and the items must be picklable: a module-level function, ``functools.partial``); never
    more workers than items or than the processors there are."""
    items = list(items)
    workers = min(jobs, len(items), usable_cpus())
    if workers <= 1:
        return [fn(x) for x in items]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_one_thread) as pool:
        return list(pool.map(fn, items))
