"""Streaming, order-preserving parsing in one process or across worker processes.

Sentences are read and parsed in blocks and results come back in input order as soon as
their block is done, so memory stays bounded on inputs of any length and the first trees are
written before the input ends. With ``jobs > 1`` the workers are forked from a process that
already holds the prepared parser: they share the model's memory (copy-on-write) instead of
each loading it. Every process does its matrix products on one BLAS thread
(``threadpoolctl``): the parallelism is the processes, and two BLAS pools per core would
oversubscribe the machine (measured: a 2-thread BLAS beside another busy process made the
latent pass 12x slower).
"""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from threadpoolctl import threadpool_limits

from lpcfg_cli.model import LPCFG
from lpcfg_cli.parser import Parser, ParseResult, ParserOptions, ParseStats

# Sentences per block: small enough to stream and to balance the load across workers. With
# the default pruning the engine gains nothing from larger batches (the test split took 4.5-6.0
# s of CPU in blocks of 24, 32 or 96, within this machine's noise), while --jobs 2 finished
# 345 sentences in 5.6 s with blocks of 96 (four blocks: one worker got 3.4 s of work, the
# other 2.3) and in 3.8 s with blocks of 24.
BLOCK = 24

_WORKER: Parser | None = None


def _init_worker() -> None:
    threadpool_limits(1)


def _work(sentences: list[list[str]]) -> tuple[list[ParseResult], ParseStats]:
    assert _WORKER is not None
    _WORKER.stats = ParseStats()
    results = _WORKER.parse(sentences)
    return results, _WORKER.stats


def _add(total: ParseStats, stats: ParseStats) -> None:
    total.fallbacks += stats.fallbacks
    total.retries += stats.retries
    total.latent_flops += stats.latent_flops
    total.coarse_seconds += stats.coarse_seconds
    total.latent_seconds += stats.latent_seconds
    for k, v in stats.reasons.items():
        total.reasons[k] = total.reasons.get(k, 0) + v


def _blocks(sentences: Iterable[Sequence[str]], size: int) -> Iterator[list[list[str]]]:
    it = iter(sentences)
    while block := [list(s) for s in itertools.islice(it, size)]:
        yield block


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
        sentences: Iterable[Sequence[str]],
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[ParseResult]:
        """Results in input order, one per sentence, as their blocks finish."""
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
        for block in _blocks(sentences, self.block):
            self.parser.stats = ParseStats()
            results = self.parser.parse(block)
            self._count(block, self.parser.stats, progress)
            yield from results

    def _parallel(self, sentences, progress):
        global _WORKER
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
        self.parser.warm_up()  # the workers inherit the loaded kernels
        _WORKER = self.parser  # inherited by the forked workers
        try:
            with ctx.Pool(self.jobs, initializer=_init_worker) as pool:
                pending: collections.deque = collections.deque()
                for block in _blocks(sentences, self.block):
                    pending.append((block, pool.apply_async(_work, (block,))))
                    # Bounded look-ahead: memory stays flat however long the input is.
                    while len(pending) > 2 * self.jobs:
                        yield from self._collect(pending.popleft(), progress)
                while pending:
                    yield from self._collect(pending.popleft(), progress)
        finally:
            _WORKER = None

    def _collect(self, item, progress):
        block, future = item
        results, stats = future.get()
        self._count(block, stats, progress)
        yield from results

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
