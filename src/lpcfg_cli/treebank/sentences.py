"""Sentences of text, one per line, read and checked.

One reader (``read_sentences``) for every command that takes sentences: tokens are separated
by whitespace (``WHITESPACE``, the one definition every reader and writer of text here uses),
a blank line is the empty sentence (callers that have no use for it skip it), and any line
end counts (``fileio.iter_lines``). Sentences given from Python are checked as they are read
(``checked_sentences``): a string where a token list belongs, an empty token or one with
whitespace in it would otherwise be parsed character by character or written as a malformed
tree line. The blocks they are processed in are ``engine.batching``'s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from lpcfg_cli.files.streams import DEFAULT_ENCODING, Pause, iter_lines, iter_lines_or_pauses

T = TypeVar("T")

# Whitespace: C's isspace() in the C locale, the characters EVALB and the Penn Treebank's
# tools separate tokens with (``evalb.reader`` keeps the same set; a test holds them equal).
# Every other character, U+00A0 and the other Unicode spaces included, is part of the token
# it is in, so a word or label written with one survives reading, parsing, binarizing and
# scoring alike; Python's ``str.split()`` would cut it (and at U+001C-U+001F too).
WHITESPACE = " \t\n\v\f\r"
_TOKEN = re.compile(f"[^{WHITESPACE}]+")
_SPACE = re.compile(f"[{WHITESPACE}]")


def split_tokens(line: str) -> list[str]:
    """The tokens of ``line``: its runs of characters other than ``WHITESPACE``."""
    return _TOKEN.findall(line)


def check_sentence(sentence: object, number: int | None = None) -> list[str]:
    """``sentence`` as a list of tokens, or ``TypeError`` / ``ValueError`` saying what is
    wrong with it (``number``: its 1-based place in the input, for the message): a string
    instead of a list of tokens, a token that is not a string, is empty or holds
    whitespace."""
    where = "sentence" if number is None else f"sentence {number}"
    if isinstance(sentence, (str, bytes)):
        raise TypeError(
            f"{where} must be a list of tokens, not a string ({_short(sentence)}); "
            "split it into words first"
        )
    if not isinstance(sentence, Iterable):
        raise TypeError(f"{where} must be a list of tokens, not {type(sentence).__name__}")
    tokens = list(sentence)
    for i, token in enumerate(tokens, 1):
        if not isinstance(token, str):
            raise TypeError(f"{where}, token {i} must be a string, not {type(token).__name__}")
        if not token:
            raise ValueError(f"{where}, token {i} is empty")
        if _SPACE.search(token):
            raise ValueError(
                f"{where}, token {i} ({token!r}) holds whitespace: a token is one word"
            )
    return tokens


def checked_sentences(sentences: object) -> Iterator[list[str]]:
    """Each of ``sentences`` checked by ``check_sentence`` as it is read (``Pause`` passes);
    ``sentences`` itself is checked at once."""
    if isinstance(sentences, (str, bytes)):
        raise TypeError(
            f"sentences must be an iterable of token lists, not a string ({_short(sentences)})"
        )
    if not isinstance(sentences, Iterable):
        raise TypeError(
            f"sentences must be an iterable of token lists, not {type(sentences).__name__}"
        )
    return _checked(sentences)


def _checked(sentences: Iterable[object]) -> Iterator[list[str]]:
    number = 0
    for sentence in sentences:
        if isinstance(sentence, Pause):
            yield sentence  # type: ignore[misc]
            continue
        number += 1
        yield check_sentence(sentence, number)


def _short(text: str | bytes) -> str:
    return repr(text if len(text) <= 30 else text[:27] + "...")


def read_sentences(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    encoding: str = DEFAULT_ENCODING,
) -> Iterator[list[str]]:
    """Sentences of text files (``-``: stdin), one per line, tokens separated by whitespace,
    read as they are needed; a blank line gives the empty sentence."""
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        for line in iter_lines(path, encoding):
            yield split_tokens(line)


def read_sentences_or_pauses(
    path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING
) -> Iterator[list[str] | Pause]:
    """``read_sentences`` of one file, with ``fileio.PAUSE`` wherever the input pauses (a
    person typing): streaming consumers finish what they hold instead of waiting."""
    for line in iter_lines_or_pauses(path, encoding):
        yield line if isinstance(line, Pause) else split_tokens(line)
