"""Sentences of text, one per line, and the blocks they are processed in.

One reader (``read_sentences``) for every command that takes sentences: tokens are separated
by whitespace, a blank line is the empty sentence (callers that have no use for it skip it),
and any line end counts (``fileio.iter_lines``). One blocker (``blocks``) for everything
that works on groups of sentences: the parser's batches, the streaming parser's blocks, the
scorers'; a block is closed by a count, by a budget of chart spans (a sentence of ``n``
words has ``n (n + 1) / 2``), or when the input pauses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from lpcfg_cli.files.streams import DEFAULT_ENCODING, Pause, iter_lines, iter_lines_or_pauses

T = TypeVar("T")

# Chart spans one batch of sentences may hold: bounds memory (a few (spans, symbols) arrays
# per batch) while keeping the engine's kernels large.
SPAN_BUDGET = 20_000


def spans(length: int) -> int:
    """Spans of the chart of a sentence of ``length`` words."""
    return length * (length + 1) // 2


def read_sentences(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    encoding: str = DEFAULT_ENCODING,
) -> Iterator[list[str]]:
    """Sentences of text files (``-``: stdin), one per line, tokens separated by whitespace,
    read as they are needed; a blank line gives the empty sentence."""
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        for line in iter_lines(path, encoding):
            yield line.split()


def read_sentences_or_pauses(
    path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING
) -> Iterator[list[str] | Pause]:
    """``read_sentences`` of one file, with ``fileio.PAUSE`` wherever the input pauses (a
    person typing): streaming consumers finish what they hold instead of waiting."""
    for line in iter_lines_or_pauses(path, encoding):
        yield line if isinstance(line, Pause) else line.split()


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
