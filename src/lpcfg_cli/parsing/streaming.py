"""Streaming, order-preserving parsing in one process or across worker processes.

Sentences are read and parsed in blocks and results come back in input order as soon as
their block is done, so memory stays bounded on inputs of any length and the first trees are
written before the input ends. With ``jobs > 1`` the workers are forked from a process that
already holds the prepared parser: they share the model's memory (copy-on-write) instead of
each loading it. Every process does its matrix products on one BLAS thread
(``threadpoolctl``): the parallelism is the processes, and two BLAS pools per core would
oversubscribe the machine (a 2-thread BLAS beside another busy process made the latent pass
many times slower: docs/parsing.md, Streaming and ``--jobs``).

Workers are forked only as blocks need them, never more than ``jobs`` and never more than the
blocks there are (three sentences parse in one process whatever ``jobs`` says); the command
line caps ``jobs`` at the processors the machine gives this process (``usable_cpus``).

The worker processes are ``parsing.workers.Workers``.

Input may pause (a person typing): the sentence stream then carries ``fileio.PAUSE``, the
block being filled is parsed at once, and results are handed on before more input is awaited.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from threadpoolctl import threadpool_limits

from lpcfg_cli.files.streams import Pause
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import Parser, ParseResult, ParserOptions, ParseStats
from lpcfg_cli.parsing.workers import Workers
from lpcfg_cli.treebank.sentences import blocks
from lpcfg_cli.treebank.tree import Tree

# Sentences per block with workers: small enough to balance the load across them (a few
# large blocks leave one worker with much more work than the other; smaller blocks pay the
# kernels' per-call cost of streaming every rule tensor a chunk uses: docs/parsing.md,
# Streaming and ``--jobs``).
BLOCK = 24

# Sentences per block in one process, where nothing needs balancing: larger blocks spread
# that per-call cost over more sentences (EM m = 16 on the test split, whole command,
# 0.964 of the time with blocks of 24) and still stream (the first trees are written after
# about a second).
SERIAL_BLOCK = 96

# Blocks read ahead of the oldest one not yet returned, per worker: bounds memory (results
# of later blocks wait for a slow earlier one) while keeping every worker busy.
LOOKAHEAD = 2


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
    """Parses a stream of sentences with ``jobs`` processes, in blocks of ``block``
    sentences (default ``SERIAL_BLOCK`` in one process, ``BLOCK`` with workers); ``stats``
    holds the totals."""

    def __init__(
        self,
        model: LPCFG,
        options: ParserOptions | None = None,
        *,
        jobs: int = 1,
        block: int | None = None,
    ):
        self.parser = Parser(model, options)
        self.jobs = jobs
        self.block = block or (BLOCK if jobs > 1 else SERIAL_BLOCK)
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
            results, stats = self.parser.parse_block(block)
            self._count(block, stats, progress)
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


def parse(
    model: LPCFG,
    sentences: Iterable[Sequence[str]],
    options: ParserOptions | None = None,
    *,
    jobs: int = 1,
) -> Iterator[Tree | None]:
    """The tree of each sentence (a list of tokens), in order, as they are parsed: its best
    parse, or a flat fallback tree when it has none (``ParseResult`` says why; use
    ``StreamParser`` for those details); None for the empty sentence. A stream: sentences
    are read as they are needed."""
    for result in StreamParser(model, options, jobs=jobs).parse(sentences):
        yield result.tree
