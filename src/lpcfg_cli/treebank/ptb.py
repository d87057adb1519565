"""Penn Treebank bracketed text: reading and writing trees.

Reads PTB bracketed text in any layout (pretty-printed multi-line ``.mrg`` files,
one-tree-per-line files, with or without the outer empty bracket ``( (S ...) )`` or a
TOP/ROOT label) from files or stdin, and writes one tree per line. User files are read
directly (not through nltk's corpus readers, which refuse paths outside ``nltk.data.path``)
into ``treebank.tree.Tree`` after our own bracket scan, which gives precise ``FILE:LINE`` errors. A
UTF-8 byte-order mark at the start of a file is skipped.

Trees of any depth and width work: nothing here (nor in binarization, grammar compiling,
head finding or decoding) walks a tree by Python recursion (``treebank.tree`` holds the
walks; ``treebank.normalize`` the normal form trees are trained and scored in).

Output (``format_tree``, the one writer of trees): one line, always balanced. A round
bracket inside a word or label would break the format, so every ``(`` becomes ``-LRB-`` and
every ``)`` becomes ``-RRB-``, the Penn Treebank's names for them (``:-)`` is written
``:--RRB-``, ``(a)`` is written ``-LRB-a-RRB-``). Every other word and label is written as
it is, braces and square brackets too: a treebank that spells the word ``{`` must get ``{``
back from ``parse``, or its own gold trees no longer match in EVALB. The reader reads what
the writer writes: ``format_tree(read(format_tree(t)))`` is ``format_tree(t)``. Escaped names
are not turned back into brackets on reading, since treebanks spell bracket words that way.
"""

from __future__ import annotations

import os
import re
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import DEFAULT_ENCODING, display_name, read_text
from lpcfg_cli.treebank.sentences import WHITESPACE
from lpcfg_cli.treebank.tree import ROOT_LABELS, Tree, iter_nodes


@dataclass
class TreeRecord:
    """A tree and where it came from (for error messages)."""

    tree: Tree
    source: str
    line: int


# A token: a bracket or a run of other characters that are not whitespace (``WHITESPACE``,
# as EVALB's: U+00A0 is part of a word or label). A backslash is an ordinary character, as
# in the PTB and EVALB, not an escape as nltk's default tokenizer has it.
_TOKEN = f"[^{WHITESPACE}()]+"
_TOKENS = re.compile(rf"\(|\)|{_TOKEN}")
_OPEN, _CLOSE, _WORD = 0, 1, 2
_BLANK = "[" + WHITESPACE.replace("\n", "") + "]"
# A line whose first non-blank character is "(": a top-level tree may start there.
_TREE_LINE = re.compile(rf"^{_BLANK}*\(", re.M)
_BLANKS = re.compile(f"{_BLANK}*")
_SPACE = re.compile(f"[{WHITESPACE}]")


class _Brackets:
    """The bracket structure of a whole text, from one pass over its tokens.

    ``match[i]`` is the token closing the ``(`` at token ``i`` (``-1`` if none does). The
    close matching an open bracket is the first after it that balances it, whatever
    precedes it, so a reader that restarts after an error can still use ``match``.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.kind = bytearray()
        self.start = array("q")
        self.match = array("q")
        unclosed: list[int] = []  # open brackets not closed yet (ascending)
        kind, start, match = self.kind, self.start, self.match
        for i, m in enumerate(_TOKENS.finditer(text)):
            pos = m.start()
            char = text[pos]
            start.append(pos)
            match.append(-1)
            if char == "(":
                kind.append(_OPEN)
                unclosed.append(i)
            elif char == ")":
                kind.append(_CLOSE)
                if unclosed:
                    match[unclosed.pop()] = i
            else:
                kind.append(_WORD)
        self.unclosed = unclosed
        self.newlines = array("q", (m.start() for m in re.finditer("\n", text)))
        self.tree_lines = array("q")  # offset of the "(" of every line that starts with one
        self.indents = array("q")  # its column
        for m in _TREE_LINE.finditer(text):
            self.tree_lines.append(m.end() - 1)
            self.indents.append(m.end() - 1 - m.start())

    def __len__(self) -> int:
        return len(self.kind)

    def line(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return bisect_left(self.newlines, offset) + 1

    def token_line(self, i: int) -> int:
        return self.line(self.start[i])

    def word(self, i: int) -> str:
        m = _TOKENS.match(self.text, self.start[i])
        return m.group() if m else ""

    def indent(self, line: int) -> int:
        """Column of the first non-blank character of ``line``."""
        begin = self.newlines[line - 2] + 1 if line > 1 else 0
        return _BLANKS.match(self.text, begin).end() - begin

    def next_tree(self, after_line: int, indent: int, until: int | None = None) -> int:
        """Token index of the next tree start: the first line after ``after_line`` that
        starts with ``(`` at most ``indent`` columns in (the deeper-indented lines of a
        pretty-printed tree do not start trees). ``len(self)`` if there is none, or none
        before offset ``until`` (checking one tree then costs only its own lines)."""
        if after_line > len(self.newlines):
            return len(self)
        lines, indents = self.tree_lines, self.indents
        end = len(lines) if until is None else bisect_left(lines, until)
        k = bisect_left(lines, self.newlines[after_line - 1])
        while k < end and indents[k] > indent:
            k += 1
        return bisect_left(self.start, lines[k]) if k < end else len(self)

    def open_at_end(self, i: int) -> int:
        """How many ``(`` from token ``i`` on are never closed."""
        return len(self.unclosed) - bisect_left(self.unclosed, i)


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _split_trees(
    text: str, source: str, on_bad: Callable[[LpcfgError], None] | None = None
) -> Iterator[tuple[str, int]]:
    """Top-level bracketed expressions of ``text`` with their starting line numbers.

    Without ``on_bad`` the first bracket error raises ``LpcfgError``. With it, a tree ends
    at the latest where the next tree starts: the next line starting with ``(`` no deeper
    than the tree's first line (the other lines of a pretty-printed tree are indented).
    The error, naming every line lost, goes to ``on_bad`` and reading resumes at that next
    tree. A tree not closed before it is lost with the lines up to it; a stray ``)`` or word
    between trees loses its line, the trees that end on it, and the lines up to the next
    tree. (Without ``on_bad`` a tree may continue on such a line: it is only an error if the
    tree is never closed.)
    """
    scan = _Brackets(text)
    kind, start, match = scan.kind, scan.start, scan.match
    pending: deque[tuple[str, int, int]] = deque()  # (tree, first line, last line)
    i, n = 0, len(scan)
    while i < n:
        line = scan.token_line(i)
        while pending and pending[0][2] < line:  # no error can come on their lines now
            yield pending.popleft()[:2]
        if kind[i] == _OPEN:
            j = match[i]
            until = start[j] if j >= 0 else None
            boundary = scan.next_tree(line, scan.indent(line), until) if on_bad else n
            if 0 <= j < boundary:
                pending.append((text[start[i] : start[j] + 1], line, scan.token_line(j)))
                i = j + 1
                continue
            yield from (p[:2] for p in pending)
            pending.clear()
            first, resume = line, boundary
            if resume == n:
                problem = (
                    f"unbalanced brackets: {scan.open_at_end(i)} '(' not closed at end of input"
                )
            else:
                problem = (
                    "unbalanced brackets: '(' not closed before the next tree on line "
                    f"{scan.token_line(resume)}"
                )
        else:  # a stray ")" or word between trees: lost with the trees ending on its line
            first = pending[0][1] if pending else line
            pending.clear()
            resume = scan.next_tree(line, scan.indent(first))
            if kind[i] == _CLOSE:
                problem = "unbalanced brackets: unexpected ')'"
            else:
                problem = f"text outside brackets: {scan.word(i)[:30]!r}"
        if on_bad is None:
            raise LpcfgError(problem, source=source, line=line)
        if first != line:
            problem += f" on line {line}"
        last = scan.token_line(resume - 1)
        on_bad(LpcfgError(f"{problem}; lost {_span(first, last)}", source=source, line=first))
        i = resume
    yield from (p[:2] for p in pending)


def parse_tree(chunk: str) -> Tree:
    """One balanced bracketed expression as a ``Tree`` (any depth; no recursion).

    ``(S (NP x) y)``: an open bracket, the label (empty if a bracket follows at once, as in
    ``( (S ...))`` or ``()``), then children, words or trees. ``ValueError`` says what is
    wrong with a malformed one.
    """
    tokens = _TOKENS.findall(chunk)
    stack: list[Tree] = []
    root: Tree | None = None
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        i += 1
        if root is not None:
            raise ValueError(f"text after the tree: {tok!r}")
        if tok == "(":
            label = ""
            if i < n and tokens[i] not in ("(", ")"):
                label = tokens[i]
                i += 1
            node = Tree(label)
            if stack:
                stack[-1].append(node)
            stack.append(node)
        elif tok == ")":
            if not stack:
                raise ValueError("')' closes nothing")
            node = stack.pop()
            if not stack:
                root = node
        elif stack:
            stack[-1].append(tok)
        else:
            raise ValueError(f"word {tok!r} outside any bracket")
    if stack:
        raise ValueError(f"{len(stack)} '(' not closed")
    if root is None:
        raise ValueError("no tree")
    return root


def _parse_one(chunk: str, source: str, line: int) -> Tree:
    """One bracketed expression as an ``Tree``, checked for PTB well-formedness."""
    try:
        tree = parse_tree(chunk)
    except (ValueError, TimeoutError) as exc:
        raise LpcfgError(f"malformed tree ({exc})", source=source, line=line) from None
    for node in iter_nodes(tree):
        kids = list(node)
        if not kids:
            if node is tree:
                break  # "()" or "(TOP)": an empty tree
            raise LpcfgError(f"empty constituent ({node.label()})", source=source, line=line)
        words = [k for k in kids if isinstance(k, str)]
        if words and node is tree and node.label() in ROOT_LABELS:
            raise LpcfgError(f"word {words[0]!r} without a pre-terminal", source=source, line=line)
    return tree


def read_treebank(
    paths: Sequence[str],
    *,
    skip_bad: bool = False,
    on_bad: Callable[[LpcfgError], None] | None = None,
    encoding: str = DEFAULT_ENCODING,
) -> list[TreeRecord]:
    """All trees of the given files (``-`` is stdin) in ``encoding``, in order. A folder
    stands for the treebank files under it (``TREEBANK_SUFFIXES``: ``.mrg`` as the Penn
    Treebank ships, ``.psd`` as the Penn-Helsinki corpora do), in the order of their paths.

    Malformed trees raise ``LpcfgError`` with FILE:LINE, or with ``skip_bad`` are passed to
    ``on_bad`` (each error names the lines lost) and skipped; reading resumes at the next
    tree. Whole-file problems (missing, binary, undecodable, no trees) are always errors.
    Empty trees ``()`` are kept (a tree with no children), so a reader that writes one line
    per tree can write ``()`` for them.
    """
    records: list[TreeRecord] = []
    for path in treebank_files(paths):
        text = read_text(path, encoding)
        records += text_records(text, display_name(path), skip_bad=skip_bad, on_bad=on_bad)
    return records


# The names of treebank files a folder given as a treebank stands for.
TREEBANK_SUFFIXES = (".mrg", ".psd", ".tree", ".trees", ".ptb")


def treebank_files(paths: Sequence[str]) -> list[str]:
    """``paths`` with each folder replaced by the treebank files under it (sorted; an
    error if it holds none)."""
    out: list[str] = []
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            out.append(path)
            continue
        found = sorted(
            os.path.join(root, name)
            for root, _, names in os.walk(path)
            for name in names
            if name.endswith(TREEBANK_SUFFIXES)
        )
        if not found:
            suffixes = ", ".join(TREEBANK_SUFFIXES)
            raise LpcfgError(f"a folder with no treebank files ({suffixes})", source=path)
        out += found
    return out


def text_records(
    text: str,
    source: str = "<string>",
    *,
    skip_bad: bool = False,
    on_bad: Callable[[LpcfgError], None] | None = None,
) -> list[TreeRecord]:
    """``read_treebank`` of bracketed ``text`` (``source`` names it in errors)."""
    records: list[TreeRecord] = []
    found, lost = 0, 0

    def report(err: LpcfgError) -> None:
        nonlocal lost
        lost += 1
        if on_bad:
            on_bad(err)

    for chunk, line in _split_trees(text, source, report if skip_bad else None):
        try:
            tree = _parse_one(chunk, source, line)
        except LpcfgError as err:
            if not skip_bad:
                raise
            lines = _span(line, line + chunk.count("\n"))
            report(LpcfgError(f"{err.message}; lost {lines}", source=source, line=line))
            continue
        found += 1
        records.append(TreeRecord(tree, source, line))
    if found == 0:
        if lost:
            raise LpcfgError(f"no well-formed trees ({lost} skipped)", source=source)
        raise LpcfgError("no trees found (empty file?)", source=source)
    return records


def read_trees(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    encoding: str = DEFAULT_ENCODING,
) -> list[Tree]:
    """The trees of treebank files (any layout PTB files come in; ``-``: stdin)."""
    many = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    return [rec.tree for rec in read_treebank([os.fspath(p) for p in many], encoding=encoding)]


def trees_from_text(text: str) -> list[Tree]:
    """The trees of bracketed ``text`` (one or many, any layout)."""
    return [rec.tree for rec in text_records(text)]


def escape_token(token: str) -> str:
    """A word or label as it can be written in a tree: ``(`` and ``)`` by their PTB names
    (``(`` -> ``-LRB-``, ``:-)`` -> ``:--RRB-``); anything else as it is (``{`` stays ``{``:
    see the module). Whitespace cannot be escaped, and a tree built in Python with a word
    or label holding some would come out as another tree: ``ValueError``."""
    if _SPACE.search(token):
        raise ValueError(f"a word or label holds whitespace: {token!r}")
    if "(" in token or ")" in token:
        return token.replace("(", "-LRB-").replace(")", "-RRB-")
    return token


_CLOSE_NODE = object()  # marks the end of a node's children in format_tree's stack


def format_tree(tree: Tree | None, root: str | None = None) -> str:
    """One line of PTB: ``(S (NP (DT The) (NN cat)) ...)``; ``root`` wraps it, e.g. TOP.

    The one writer of trees: words and labels are escaped with ``escape_token`` so the line
    is always balanced, and trees of any depth are written (no recursion). None, or an
    unlabelled tree without children, is the empty tree ``()`` (never wrapped).
    """
    if tree is None or (isinstance(tree, Tree) and len(tree) == 0 and not tree.label()):
        return "()"
    if not isinstance(tree, Tree):
        return escape_token(str(tree))
    parts = ["(", escape_token(str(root)), " "] if root is not None else []
    parts += ["(", escape_token(str(tree.label()))]
    stack: list[object] = [_CLOSE_NODE, *reversed(tree)]
    while stack:
        item = stack.pop()
        if item is _CLOSE_NODE:
            parts.append(")")
        elif isinstance(item, Tree):
            parts += [" (", escape_token(str(item.label()))]
            stack.append(_CLOSE_NODE)
            stack.extend(reversed(item))
        else:
            word = str(item)
            if not word:
                raise ValueError("a tree holds an empty word")
            parts += [" ", escape_token(word)]
    if root is not None:
        parts.append(")")
    return "".join(parts)
