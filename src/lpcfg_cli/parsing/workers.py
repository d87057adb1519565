"""Worker processes: the parser's (``Workers``) and independent tasks (``process_map``, the
experiment scripts' ``--jobs``).

Each worker is forked (where the platform can: the parent's imports, compiled kernels and
loaded model come for free, shared copy-on-write) and does its matrix products on one BLAS
thread, so that ``jobs`` workers share the cores instead of each starting a BLAS pool per
core. Results come back in the order of the inputs, so what is written does not depend on
``jobs``; never more workers than items or than the processors there are (``usable_cpus``).

The parser's workers are a small pool of our own (``Workers``) rather than
``multiprocessing.Pool``: one pipe per worker and one block in flight per worker, so no lock
is shared between processes and ending the pool early (``lpcfg parse ... | head -1``,
Ctrl-C, an error) is a SIGKILL that cannot wait on anything (``Pool``'s shutdown, or its
workers outliving their parent while holding stderr open, once hung a test run). Workers die
with their parent (Linux's ``PR_SET_PDEATHSIG``), ignore Ctrl-C, which their parent handles,
and end at once on SIGTERM and SIGHUP (the parent, which turns them into
``errors.Terminated``, cleans up). This module imports no numerical code, so that the
command line can ask for ``usable_cpus`` cheaply.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from threadpoolctl import threadpool_limits

from lpcfg_cli.errors import LpcfgError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

# ``multiprocessing`` and ``concurrent.futures`` are imported where workers are made, not
# here: a parse in one process, which imports this module with the parser, never needs
# them (a fifth of ``lpcfg parse``'s imports).

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
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_one_thread) as pool:
        return list(pool.map(fn, items))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent ends (a no-op elsewhere), and end
    now if the parent is already gone."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)


class BlockParser(Protocol):
    """What a worker parses blocks with (``parsing.tiers.BlockParser``)."""

    def parse_block(self, block: list[list[str]]) -> tuple[list[Any], Any]: ...


def _serve(parser: BlockParser, conn: Connection, others: list[Connection], parent: int) -> None:
    """A worker's loop: blocks in, (results, stats) or an error out, until None or EOF."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    for name in ("SIGTERM", "SIGHUP"):  # end at once: the parent cleans up
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    for other in others:  # the parent's ends of other workers' pipes: EOF must mean EOF
        other.close()
    with threadpool_limits(1):
        while True:
            try:
                block = conn.recv()
            except (EOFError, OSError):
                return
            if block is None:
                return
            try:
                message = ("ok", *parser.parse_block(block))
            except LpcfgError as exc:  # the user's error: the parent reports it as it is
                message = ("usage", exc, "")
            except MemoryError:
                message = ("memory", "", "")
            except Exception as exc:  # reported by the parent as its own error
                message = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
            try:
                conn.send(message)
            except OSError:  # the parent is gone (where no death signal ended us first)
                return


class Workers:
    """Up to ``jobs`` forked processes that parse blocks with ``parser``, one block at a time
    each, forked as blocks need them (``submit``).

    ``submit`` gives a block to an idle worker, forking one if none is idle and fewer than
    ``jobs`` run; ``collect`` waits for any busy worker's result. ``close`` ends them:
    politely after a complete run, by SIGKILL otherwise.
    """

    def __init__(self, parser: BlockParser, jobs: int):
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
        self.parser = parser
        self.jobs = jobs
        self.conns: list[Connection] = []
        self.procs: list = []
        self.busy: dict[int, int] = {}  # worker -> block number it holds

    def _fork(self) -> int:
        mine, theirs = self.ctx.Pipe()
        proc = self.ctx.Process(
            target=_serve,
            args=(self.parser, theirs, list(self.conns), os.getpid()),
            daemon=True,
        )
        proc.start()
        theirs.close()
        self.conns.append(mine)
        self.procs.append(proc)
        return len(self.conns) - 1

    def can_take(self) -> bool:
        """Whether a block submitted now would start at once."""
        return len(self.busy) < self.jobs

    def submit(self, number: int, block: list[list[str]]) -> None:
        """Give block ``number`` to an idle worker (forked if needed; ``can_take`` first)."""
        idle = [w for w in range(len(self.conns)) if w not in self.busy]
        worker = idle[0] if idle else self._fork()
        self.conns[worker].send(block)
        self.busy[worker] = number

    def collect(self) -> list[tuple[int, list[Any], Any]]:
        """Results of the busy workers that are done (waits for at least one)."""
        from multiprocessing.connection import wait

        by_conn = {id(self.conns[w]): w for w in self.busy}
        out = []
        for conn in wait([self.conns[w] for w in self.busy]):
            worker = by_conn[id(conn)]
            try:
                status, *payload = conn.recv()
            except (EOFError, OSError):
                code = self.procs[worker].exitcode
                raise RuntimeError(f"a parsing worker ended unexpectedly (status {code})") from None
            if status == "usage":
                raise payload[0]
            if status == "memory":
                raise MemoryError
            if status == "error":
                raise RuntimeError(f"in a parsing worker: {payload[0]}\n{payload[1]}")
            out.append((self.busy.pop(worker), payload[0], payload[1]))
        return out

    def close(self, kill: bool) -> None:
        for conn in self.conns:
            if not kill:
                try:
                    conn.send(None)
                except OSError:
                    pass
            conn.close()
        for proc in self.procs:
            if kill:
                proc.kill()
            proc.join(timeout=None if kill else 10)
            if proc.is_alive():
                proc.kill()
                proc.join()
