"""Streaming, order-preserving parsing in one process or across worker processes.

Sentences are read and parsed in blocks and results come back in input order as soon as
their block is done, so memory stays bounded on inputs of any length and the first trees are
written before the input ends. With ``jobs > 1`` the workers are forked from a process that
already holds the prepared parser: they share the model's memory (copy-on-write) instead of
each loading it. Every process does its matrix products on one BLAS thread
(``threadpoolctl``): the parallelism is the processes, and two BLAS pools per core would
oversubscribe the machine (measured: a 2-thread BLAS beside another busy process made the
latent pass 12x slower).

Workers are forked only as blocks need them, never more than ``jobs`` and never more than the
blocks there are (three sentences parse in one process whatever ``jobs`` says); the command
line caps ``jobs`` at the processors the machine gives this process (``usable_cpus``).

The workers are a small pool of our own (``Workers``) rather than ``multiprocessing.Pool``:
one pipe per worker and one block in flight per worker, so no lock is shared between
processes and ending the pool early (``lpcfg parse ... | head -1``, Ctrl-C, an error) is a
SIGKILL that cannot wait on anything. A CI run of the suite once hung on
``test_closed_pipe_ends_quietly[2]`` (Pool's shutdown, or its workers outliving their parent
while holding stderr open); here workers also die with their parent (Linux's
``PR_SET_PDEATHSIG``) and ignore Ctrl-C, which their parent handles; SIGTERM and SIGHUP end
them at once (the parent, which turns them into ``errors.Terminated``, cleans up).

Input may pause (a person typing): the sentence stream then carries ``fileio.PAUSE``, the
block being filled is parsed at once, and results are handed on before more input is awaited.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing.connection import Connection, wait

from threadpoolctl import threadpool_limits

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import Pause
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import Parser, ParseResult, ParserOptions, ParseStats
from lpcfg_cli.treebank.sentences import blocks

# Sentences per block: small enough to stream and to balance the load across workers. With
# the default pruning the engine gains nothing from larger batches (the test split took 4.5-6.0
# s of CPU in blocks of 24, 32 or 96, within this machine's noise), while --jobs 2 finished
# 345 sentences in 5.6 s with blocks of 96 (four blocks: one worker got 3.4 s of work, the
# other 2.3) and in 3.8 s with blocks of 24.
BLOCK = 24

# Blocks read ahead of the oldest one not yet returned, per worker: bounds memory (results
# of later blocks wait for a slow earlier one) while keeping every worker busy.
LOOKAHEAD = 2


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


def _serve(parser: Parser, conn: Connection, others: list[Connection], parent: int) -> None:
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
                parser.stats = ParseStats()
                message = ("ok", parser.parse(block), parser.stats)
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

    def __init__(self, parser: Parser, jobs: int):
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

    def collect(self) -> list[tuple[int, list[ParseResult], ParseStats]]:
        """Results of the busy workers that are done (waits for at least one)."""
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


def _add(total: ParseStats, stats: ParseStats) -> None:
    total.fallbacks += stats.fallbacks
    total.backoffs += stats.backoffs
    total.retries += stats.retries
    total.latent_flops += stats.latent_flops
    total.coarse_seconds += stats.coarse_seconds
    total.latent_seconds += stats.latent_seconds
    for k, v in stats.reasons.items():
        total.reasons[k] = total.reasons.get(k, 0) + v


class StreamParser:
    """Parses a stream of sentences with ``jobs`` processes; ``stats`` holds the totals."""

    def __init__(
        self,
        model: LPCFG,
        options: ParserOptions | None = None,
        *,
        jobs: int = 1,
        block: int = BLOCK,
    ):
        self.parser = Parser(model, options)
        self.jobs = jobs
        self.block = block
        self.stats = ParseStats()

    def parse(
        self,
        sentences: Iterable[Sequence[str] | Pause],
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[ParseResult]:
        """Results in input order, one per sentence, as their blocks finish (``sentences``
        may carry ``fileio.PAUSE``, see the module docstring)."""
        t0 = time.perf_counter()
        try:
            with threadpool_limits(1):
                if self.jobs <= 1:
                    yield from self._serial(sentences, progress)
                else:
                    yield from self._parallel(sentences, progress)
        finally:
            self.stats.seconds = time.perf_counter() - t0

    def _serial(self, sentences, progress):
        for block in blocks(sentences, size=self.block):
            if not block:  # the input paused: nothing is held
                continue
            self.parser.stats = ParseStats()
            results = self.parser.parse(block)
            self._count(block, self.parser.stats, progress)
            yield from results

    def _parallel(self, sentences, progress):
        self.parser.warm_up()  # the workers inherit the loaded kernels
        workers = Workers(self.parser, self.jobs)
        stream = iter(blocks(sentences, size=self.block))
        held: dict[int, list[list[str]]] = {}  # blocks handed out, by number
        done: dict[int, tuple[list[ParseResult], ParseStats]] = {}
        waiting: list[list[str]] | None = None  # read, not yet handed out
        oldest = 0  # the next block to return
        read = 0  # blocks read so far
        limit = LOOKAHEAD * self.jobs
        exhausted = complete = False
        try:
            while True:
                # Results in order first: the caller writes while the workers parse.
                if oldest in done:
                    results, stats = done.pop(oldest)
                    self._count(held.pop(oldest), stats, progress)
                    oldest += 1
                    yield from results
                    continue
                if waiting is not None and workers.can_take():
                    held[read] = waiting
                    workers.submit(read, waiting)
                    read, waiting = read + 1, None
                    continue
                if waiting is None and not exhausted and len(held) < limit:
                    block = next(stream, None)
                    if block is None:
                        exhausted = True
                    elif block:
                        waiting = block
                        continue
                    elif not workers.busy:
                        continue  # the input paused with nothing in flight: read on
                if not workers.busy:
                    break  # nothing in flight and nothing to hand out: the input is done
                for number, results, stats in workers.collect():
                    done[number] = (results, stats)
            complete = True
        finally:
            workers.close(kill=not complete)

    def _count(self, block, stats: ParseStats, progress) -> None:
        _add(self.stats, stats)
        self.stats.sentences += len(block)
        if progress:
            progress(len(block))


def parse_sentences(
    model: LPCFG,
    sentences: Sequence[Sequence[str]],
    options: ParserOptions | None = None,
    *,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[ParseResult], ParseStats]:
    """Parse ``sentences`` with ``jobs`` processes; returns results in order and totals."""
    stream = StreamParser(model, options, jobs=jobs)
    results = list(stream.parse(sentences, progress))
    return results, stream.stats
