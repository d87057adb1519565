"""Treebank I/O and normalisation.

Reads PTB bracketed text in any layout (pretty-printed multi-line ``.mrg`` files,
one-tree-per-line files, with or without the outer empty bracket ``( (S ...) )`` or a
TOP/ROOT label) from files or stdin, and writes one tree per line. User files are read
directly (not through nltk's corpus readers, which refuse paths outside ``nltk.data.path``)
and parsed with ``nltk.Tree.fromstring`` after our own bracket scan, which gives precise
``FILE:LINE`` errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import nltk

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import display_name, read_text

ROOT_LABELS = ("", "TOP", "ROOT")
NONE_LABEL = "-NONE-"
# How bare brackets are written in the treebank; a token or label that is a bare bracket
# must be escaped or the output would not re-read.
_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-", "[": "-LSB-", "]": "-RSB-"}


@dataclass
class TreeRecord:
    """A tree and where it came from (for error messages)."""

    tree: nltk.Tree
    source: str
    line: int


_TOKENS = re.compile(r"\(|\)|\n|[^\s()]+")


def _split_trees(text: str, source: str) -> Iterable[tuple[str, int]]:
    """Top-level bracketed expressions of ``text`` with their starting line numbers."""
    depth, start, start_line, line = 0, -1, 0, 1
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
        elif tok == "(":
            if depth == 0:
                start, start_line = m.start(), line
            depth += 1
        elif tok == ")":
            if depth == 0:
                raise LpcfgError("unbalanced brackets: unexpected ')'", source=source, line=line)
            depth -= 1
            if depth == 0:
                yield text[start : m.end()], start_line
        elif depth == 0:
            raise LpcfgError(f"text outside brackets: {tok[:30]!r}", source=source, line=line)
    if depth > 0:
        raise LpcfgError(
            f"unbalanced brackets: {depth} '(' not closed at end of input",
            source=source, line=start_line,
        )  # fmt: skip


def _parse_one(chunk: str, source: str, line: int) -> nltk.Tree:
    """One bracketed expression as an ``nltk.Tree``, checked for PTB well-formedness."""
    try:
        tree = nltk.Tree.fromstring(chunk)
    except ValueError as exc:
        raise LpcfgError(f"malformed tree ({exc})", source=source, line=line) from None
    for node in tree.subtrees():
        kids = list(node)
        if not kids:
            if node is tree:
                break  # "()" or "(TOP)": an empty tree, dropped by the reader
            raise LpcfgError(f"empty constituent ({node.label()})", source=source, line=line)
        words = [k for k in kids if isinstance(k, str)]
        if words and len(kids) > 1:
            raise LpcfgError(
                f"word {words[0]!r} is not under its own pre-terminal in ({node.label()} ...)",
                source=source, line=line,
            )  # fmt: skip
        if words and node is tree and node.label() in ROOT_LABELS:
            raise LpcfgError(f"word {words[0]!r} without a pre-terminal", source=source,
                             line=line)  # fmt: skip
    return tree


def read_treebank(
    paths: Sequence[str],
    *,
    skip_bad: bool = False,
    on_bad: Callable[[LpcfgError], None] | None = None,
) -> list[TreeRecord]:
    """All trees of the given files (``-`` is stdin), in order.

    Malformed trees raise ``LpcfgError`` with FILE:LINE, or with ``skip_bad`` are passed to
    ``on_bad`` and skipped. Whole-file problems (missing, binary, invalid UTF-8, no trees)
    are always errors. Empty trees ``()`` are skipped.
    """
    records: list[TreeRecord] = []
    for path in paths:
        source = display_name(path)
        text = read_text(path)
        found = 0
        try:
            chunks = list(_split_trees(text, source))
        except LpcfgError as err:
            if not skip_bad:
                raise
            if on_bad:
                on_bad(err)
            chunks = _balanced_prefix(text, source)
        for chunk, line in chunks:
            try:
                tree = _parse_one(chunk, source, line)
            except LpcfgError as err:
                if not skip_bad:
                    raise
                if on_bad:
                    on_bad(err)
                continue
            found += 1
            if len(tree) == 0:
                continue
            records.append(TreeRecord(tree, source, line))
        if found == 0:
            raise LpcfgError("no trees found (empty file?)", source=source)
    return records


def _balanced_prefix(text: str, source: str) -> list[tuple[str, int]]:
    """The well-formed trees before a bracket error (for ``skip_bad``)."""
    out = []
    try:
        for item in _split_trees(text, source):
            out.append(item)
    except LpcfgError:
        pass
    return out


def strip_function_tags(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``, ``PP-LOC=2`` -> ``PP``; labels starting with '-' are kept."""
    if label.startswith("-") or not label:
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


def normalize(tree: nltk.Tree) -> nltk.Tree | None:
    """The form used for training and evaluation (a new tree; the input is not changed).

    Removes -NONE- elements and constituents left empty, strips function tags and
    co-indices, collapses X -> X unary repetitions and drops the root wrapper (an empty,
    TOP or ROOT label over a single child). Returns None if no words remain.
    """

    def clean(node: nltk.Tree | str) -> nltk.Tree | str | None:
        if isinstance(node, str):
            return node
        if node.label() == NONE_LABEL:
            return None
        kids = [k for k in (clean(child) for child in node) if k is not None]
        if not kids:
            return None
        label = strip_function_tags(node.label())
        if len(kids) == 1 and isinstance(kids[0], nltk.Tree) and kids[0].label() == label:
            return kids[0]
        return nltk.Tree(label, kids)

    out = clean(tree)
    while (
        isinstance(out, nltk.Tree)
        and out.label() in ROOT_LABELS
        and len(out) == 1
        and isinstance(out[0], nltk.Tree)
    ):
        out = out[0]
    if not isinstance(out, nltk.Tree):
        return None
    return out


def words(tree: nltk.Tree) -> list[str]:
    """The words of a tree, without -NONE- elements."""
    return [w for w, tag in tree.pos() if tag != NONE_LABEL]


def escape_token(token: str) -> str:
    """Bare brackets become -LRB- etc., so the token can be written in a tree."""
    return _ESCAPES.get(token, token)


def format_tree(tree: nltk.Tree | None, root: str | None = None) -> str:
    """One line of PTB: ``(S (NP (DT The) (NN cat)) ...)``; ``root`` wraps it, e.g. TOP."""
    if tree is None or (isinstance(tree, nltk.Tree) and len(tree) == 0 and not tree.label()):
        return "()"
    parts: list[str] = []

    def emit(node: nltk.Tree | str) -> None:
        if isinstance(node, str):
            parts.append(escape_token(node))
            return
        parts.append("(" + escape_token(node.label()))
        for child in node:
            parts.append(" ")
            emit(child)
        parts.append(")")

    emit(tree)
    text = "".join(parts)
    return f"({root} {text})" if root is not None else text


STANDARD_SPLIT = {"train": (1, 149), "dev": (150, 174), "test": (175, 199)}
STANDARD_SIZES = {"train": 3253, "dev": 316, "test": 345}


def standard_split() -> dict[str, list[nltk.Tree]]:
    """The project's split of the NLTK Penn Treebank sample (raw trees, as in the files).

    Raises LpcfgError if the sample is not installed (``python -m nltk.downloader treebank``
    or set NLTK_DATA).
    """
    try:
        from nltk.corpus import treebank

        fileids = treebank.fileids()
    except LookupError:
        raise LpcfgError(
            "the NLTK Penn Treebank sample is not installed: run "
            "`python -m nltk.downloader treebank` or set NLTK_DATA"
        ) from None
    out: dict[str, list[nltk.Tree]] = {}
    for part, (lo, hi) in STANDARD_SPLIT.items():
        ids = [f"wsj_{i:04d}.mrg" for i in range(lo, hi + 1)]
        missing = [f for f in ids if f not in fileids]
        if missing:
            raise LpcfgError(f"treebank sample incomplete: {missing[0]} missing")
        out[part] = [t for f in ids for t in treebank.parsed_sents(f)]
        if len(out[part]) != STANDARD_SIZES[part]:
            raise LpcfgError(
                f"{part} split has {len(out[part])} trees, expected {STANDARD_SIZES[part]}"
            )
    return out
