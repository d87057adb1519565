"""Streaming, order-preserving parsing in one process or across worker processes: how
``parsing.parser.Parser`` runs its ``BlockParser`` over a stream of sentences (``stream``).

Sentences are read and parsed in blocks and results come back in input order as soon as
their block is done, so memory stays bounded on inputs of any length and the first trees are
written before the input ends. With ``jobs > 1`` the workers are forked from a process that
already holds the prepared parser: they share the model's memory (copy-on-write) instead of
each loading it. Every process does its matrix products on one BLAS thread
(``threadpoolctl``): the parallelism is the processes, and two BLAS pools per core would
oversubscribe the machine (a 2-thread BLAS beside another busy process made the latent pass
many times slower: docs/parsing.md, Streaming and ``--jobs``).

Workers get blocks of consecutive sentences while the input goes on. Once its end has been
read, each worker that becomes idle takes its share of what is left, chosen by predicted
cost (``balanced_share``), so that the workers end together without the many small blocks
that balancing by block size needs (a block costs about 10 ms beyond its sentences). Workers
are forked only as blocks need them, never more than ``jobs`` and never more than the blocks
there are (three sentences parse in one process whatever ``jobs`` says); the command line
caps ``jobs`` at the processors the machine gives this process (``usable_cpus``).

The worker processes are ``parsing.workers.Workers``.

Input may pause (a person typing): the sentence stream then carries ``fileio.PAUSE``, the
block being filled is parsed at once, and results are handed on before more input is awaited.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from threadpoolctl import threadpool_limits

from lpcfg_cli.engine.batching import blocks
from lpcfg_cli.errors import ParameterError
from lpcfg_cli.files.streams import Pause
from lpcfg_cli.parsing.run_stats import ParseStats
from lpcfg_cli.parsing.tiers import BlockParser, ParseResult
from lpcfg_cli.parsing.workers import Workers

# Sentences per block, in one process and with workers: larger blocks spread the kernels'
# per-call cost of streaming every rule tensor a chunk uses over more sentences (EM m = 16 on
# the test split in one process, whole command, 0.964 of the time of blocks of 24) and
# still stream (the first trees are written after about a second). With workers the load is
# balanced at the input's end instead (``balanced_share``), so their blocks are as large.
SERIAL_BLOCK = 96

# Blocks read ahead of the oldest result not yet returned, per worker: bounds memory (results
# of later blocks wait for a slow earlier one) while keeping every worker busy.
LOOKAHEAD = 2

# A sentence of n words costs about n**2.5 + COST_OFFSET units of parsing time in a block:
# least squares on the times of blocks of 23 sentences of about the same length (the test
# split sorted by length, EM m = 16) fits a + b n**2.5 with a / b about 400, closer than
# n**2 or n**3. Only ratios matter: it balances the workers' shares.
COST_POWER = 2.5
COST_OFFSET = 400

# The input's end is not split into blocks of fewer sentences than this: a block costs about
# 10 ms beyond its sentences.
MIN_SHARE = 8


def cost(sentence: Sequence[str]) -> float:
    """The predicted parsing time of ``sentence``, in units of one ``n ** COST_POWER``."""
    return len(sentence) ** COST_POWER + COST_OFFSET


def balanced_share(costs: Sequence[float], others: float, jobs: int) -> int:
    """How many of the sentences left at the input's end (their ``costs``, in input order)
    a worker that has just become idle takes, from the front: the prefix closest to a
    ``1 / jobs`` share of all the work still to do (these and ``others``, the predicted rest
    of the blocks the busy workers hold), so that the workers end together.

    A prefix, not the best-fitting set: the results of a worker that ends first are then
    written while the others parse, where a set spread over the input would hold them back
    until every share is done. The last of ``jobs`` idle workers gets what is left; all of
    it when fewer than ``2 * MIN_SHARE`` sentences are left, and never a share that would
    leave fewer than ``MIN_SHARE`` behind (a tail in small blocks costs more than it
    balances: docs/tried.md)."""
    n = len(costs)
    if n < 2 * MIN_SHARE:
        return n
    share = (sum(costs) + others) / jobs
    load, k = 0.0, 0
    while k < n and load + costs[k] / 2 < share:  # stop where the next would overshoot more
        load += costs[k]
        k += 1
    k = max(k, MIN_SHARE)
    return n if n - k < MIN_SHARE else k


class _Flight:
    """A block handed to a worker: its ``(position, sentence)`` pairs, predicted cost and
    when it was handed out."""

    __slots__ = ("block", "cost", "start")

    def __init__(self, block: list[tuple[int, list[str]]], cost: float):
        self.block, self.cost, self.start = block, cost, time.perf_counter()


class _Pace:
    """Seconds per cost unit of the blocks returned so far, to predict how much of a block
    in flight is left."""

    def __init__(self) -> None:
        self.seconds = self.cost = 0.0

    def record(self, flight: _Flight) -> None:
        self.seconds += time.perf_counter() - flight.start
        self.cost += flight.cost

    def left(self, flight: _Flight) -> float:
        """The predicted cost of what ``flight`` still has to parse (all of it before any
        block has returned)."""
        if self.seconds <= 0.0:
            return flight.cost
        done = (time.perf_counter() - flight.start) * self.cost / self.seconds
        return max(0.0, flight.cost - done)


def stream(
    parser: BlockParser,
    sentences: Iterable[Sequence[str] | Pause],
    stats: ParseStats,
    *,
    jobs: int = 1,
    block: int = SERIAL_BLOCK,
    progress: Callable[[int], None] | None = None,
) -> Iterator[ParseResult]:
    """``parser``'s results of ``sentences`` (checked lists of tokens, or ``fileio.PAUSE``),
    in input order, as their blocks finish, parsed with ``jobs`` processes in blocks of
    ``block`` sentences (see the module); each block's statistics, and the seconds the
    stream took, are added to ``stats``."""
    t0 = time.perf_counter()
    try:
        with threadpool_limits(1):
            if jobs <= 1:
                yield from _serial(parser, sentences, stats, block, progress)
            else:
                yield from _parallel(parser, sentences, stats, jobs, block, progress)
    finally:
        stats.seconds += time.perf_counter() - t0


def _serial(parser, sentences, stats, size, progress):
    for block in blocks(sentences, size=size):
        if not block:  # the input paused: nothing is held
            continue
        results, block_stats = parser.parse_block(block)
        stats.add(block_stats, seconds=False)
        if progress:
            progress(len(block))
        yield from results


def _parallel(parser, sentences, stats, jobs, size, progress):
    parser.warm_up()  # the workers inherit the loaded kernels
    workers = Workers(parser, jobs)
    source = iter(sentences)
    pending: list[tuple[int, list[str]]] = []  # read, not handed out: (position, words)
    flying: dict[int, _Flight] = {}  # blocks handed out, by number
    ready: dict[int, ParseResult] = {}  # results not yet returned, by position
    pace = _Pace()
    read = returned = submitted = 0  # sentences read, results returned, blocks handed out
    window = LOOKAHEAD * jobs * size
    exhausted = paused = complete = False
    try:
        while True:
            # Results in order first: the caller writes while the workers parse.
            if returned in ready:
                start = returned
                while returned in ready:
                    yield ready.pop(returned)
                    returned += 1
                if progress:
                    progress(returned - start)
                continue
            # Read ahead first: an input that ends within the window is shared out whole.
            if not exhausted and not paused and read - returned < window:
                item = next(source, None)
                if item is None:
                    exhausted = True
                elif isinstance(item, Pause):
                    paused = True  # hand out what is held before waiting for more
                else:
                    pending.append((read, item))
                    read += 1
                continue
            if pending and workers.can_take() and (exhausted or paused or len(pending) >= size):
                if exhausted:  # the input's end: this worker's share of what is left
                    others = sum(pace.left(f) for f in flying.values())
                    costs = [cost(s) for _, s in pending]
                    taken = balanced_share(costs, others, jobs)
                else:
                    taken = min(len(pending), size)
                block, pending = pending[:taken], pending[taken:]
                flying[submitted] = _Flight(block, sum(cost(s) for _, s in block))
                workers.submit(submitted, [s for _, s in block])
                submitted += 1
                continue
            if workers.busy:
                for number, results, block_stats in workers.collect():
                    flight = flying.pop(number)
                    pace.record(flight)
                    stats.add(block_stats, seconds=False)
                    for (position, _), result in zip(flight.block, results, strict=True):
                        ready[position] = result
                paused = paused and bool(pending)  # what was held goes out first
                continue
            if paused:
                paused = False  # nothing in flight: wait for more input
                continue
            break  # the input is done and every result returned
        complete = True
    finally:
        workers.close(kill=not complete)


def check_count(name: str, value: object) -> int:
    """``value`` if it is a whole number of at least 1, else ``TypeError`` or ``ValueError``
    naming parameter ``name`` (``True`` is not a count, nor is ``"2"``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number, not {type(value).__name__}")
    if value < 1:
        raise ParameterError("{" + name + "} must be at least 1, not {value}", value=int(value))
    return int(value)
