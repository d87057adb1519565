"""Sentences in batches: the blocks every chart is built for, and what happens when one does
not fit in memory.

One blocker (``blocks``) for everything that works on groups of sentences: the parser's
batches, the streaming parser's blocks, the scorers'; a block is closed by a count, by a
budget of chart spans (``SPAN_BUDGET``; a sentence of ``n`` words has ``n (n + 1) / 2``), or
when the input pauses. One rule for a batch whose charts do not fit (``MemoryError``, e.g.
under ``ulimit -v``): ``split_on_memory_error`` runs its items one at a time, and an item that
does not fit alone gets what the caller gives it (the parser a fallback tree, the scorer
"not scored").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from lpcfg_cli.files.streams import Pause

T = TypeVar("T")
R = TypeVar("R")

# Chart spans one batch of sentences may hold: bounds memory (a few (spans, symbols) arrays
# per batch) while keeping the engine's kernels large.
SPAN_BUDGET = 20_000


def spans(length: int) -> int:
    """Spans of the chart of a sentence of ``length`` words."""
    return length * (length + 1) // 2


def split_on_memory_error(
    run: Callable[[Sequence[T]], list[R]], items: Sequence[T], alone: Callable[[T], R]
) -> list[R]:
    """``run(items)``, one result per item; if it runs out of memory, each item alone, and
    ``alone(item)`` for an item whose run alone runs out of memory too."""
    try:
        return run(items)
    except MemoryError:
        pass
    if len(items) == 1:
        return [alone(items[0])]
    return [r for item in items for r in split_on_memory_error(run, [item], alone)]


def blocks(
    items: Iterable[T | Pause],
    *,
    size: int | None = None,
    span_budget: int | None = None,
    length: Callable[[Any], int] = len,
) -> Iterator[list[T]]:
    """Consecutive ``items`` (sentences, or anything ``length`` gives a sentence length of)
    in blocks of at most ``size`` items and at most ``span_budget`` chart spans (a longer
    sentence is a block of its own).

    A ``Pause`` among the items closes the block being filled and yields it even when it is
    empty: an empty block tells a streaming consumer that no input is ready, so that it can
    hand on the results it holds before it waits for more.
    """
    block: list[T] = []
    used = 0
    for item in items:
        if isinstance(item, Pause):
            yield block
            block, used = [], 0
            continue
        cost = spans(length(item))
        full = size is not None and len(block) >= size
        over = span_budget is not None and used + cost > span_budget
        if block and (full or over):
            yield block
            block, used = [], 0
        block.append(item)
        used += cost
    if block:
        yield block
