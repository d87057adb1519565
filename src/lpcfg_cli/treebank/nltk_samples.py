"""Fixed splits of nltk's four foreign bracketed treebanks (``split``): ``alpino`` (Dutch),
``cess_esp`` (Spanish), ``floresta`` (Portuguese) and ``sinica`` (Chinese, nltk's
``sinica_treebank``), each 2,000 training trees, 300 dev and 300 test, read with nltk's
corpus readers (``python -m nltk.downloader alpino cess_esp floresta sinica_treebank``).

The layout (``split_positions``): number the trees the reader gives that can be used
(``read``) 0, 1, 2, ... in corpus order, keep every ``stride``-th (2 for alpino and cess_esp,
3 for floresta and sinica: the largest stride that leaves 2,600 trees), and of the kept
trees, in order, each group of 26 gives its first 20 to train, the next 3 to dev and the
last 3 to test. The stride spreads the 2,600 trees over 75-87 % of each corpus, and the
groups put dev and test sentences beside training sentences all along it: the corpora are
not uniform along their order (sinica's first 30 % are fragments of 4-5 words, its last
half clauses of 13; cess_esp's first half averages 38 words, its second 26), so a
contiguous dev or test block would measure a different text than training saw. The price
is that dev and test sentences come from the articles training sentences come from.

What the readers get wrong, and what is done about it (``usable``); the counts are for
nltk 3.10's readers and data, and ``read`` checks them (``NltkTreebank.trees``,
``.left_out``), so that a changed reader or corpus cannot change a split unnoticed:

- A tree the bracket reader cannot parse is returned as a flat ``S`` over (word, tag)
  pairs after ``Bad tree detected; trying to recover... Recovered by returning a flat
  parse`` on stderr: left out, the message silenced. That is alpino's sentences with a
  ``<comments>`` element (153 of its 161) and a few others, cess_esp's trees cut in two by
  a ``(Fp . .)))`` line at the margin (each gives two flat parses), floresta's headlines
  such as ``(UTT+prop Name`` whose bracket is never closed (with the sentence read into
  them). The sinica reader (``sinica_parse``) recovers nothing and prints nothing: it
  parses every tree of the sample.
- A tree with a constituent without words (a bracket inside a word read as structure):
  left out. Alpino's words ``(`` and ``)`` and words such as ``(werk)dag``.
- floresta writes punctuation as ``(,)`` or ``(...)``; nltk mends the one-character ones
  into ``(, ,)``, and the others (``(...)``, ``(--)``, ``(»")``) are mended the same way
  here: the mark is its own tag and word.
- alpino: a node without a word of its own, co-indexed with another (Alpino's shared
  subjects and objects), is left by nltk's reader as XML text among the words
  (``<node begin="0" end="10" id="19" index="1" rel="su"/>``): removed, as normalisation
  removes the Penn Treebank's empty elements; and XML's ``&quot;``, ``&apos;`` and
  ``&amp;`` in words are written as the characters they stand for.

Labels are kept as the treebank writes them (``SUBJ+np``, ``>N+art``, ``sn.e-SUJ``,
``VE2[+NEG]``); lpcfg's normalisation (``treebank.normalize``) applies to them when the
files are read, as to any treebank. Words are the trees' leaves in the reader's order;
for alpino that is the XML's order of the nodes, not the sentence's, in two trees of three
(the sentence's order would make its constituents discontinuous).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import unescape

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.treebank.nltk_trees import from_nltk
from lpcfg_cli.treebank.tree import Tree, iter_nodes

SIZES = {"train": 2000, "dev": 300, "test": 300}
# One group of kept trees: its first 20 go to train, the next 3 to dev, the last 3 to test.
GROUP = (("train", 20), ("dev", 3), ("test", 3))

# Why a tree is left out (``Reading.left_out``) and what is mended (``Reading.mended``).
FLAT_PARSE = "unreadable: the reader returned a flat parse"
EMPTY_CONSTITUENT = "a constituent without words (a bracket in a word)"
XML_NODES = "alpino: co-indexed nodes without words, left as XML text, removed"
XML_ESCAPES = "alpino: words with XML escapes (&quot; &apos; &amp;) unescaped"
BARE_PUNCTUATION = "floresta: punctuation written (...) given its mark as word"

# What nltk's recovering reader writes to stderr for each tree it cannot parse.
_RECOVERY_LINES = ("Bad tree detected; trying to recover...", "Recovered by")


@dataclass(frozen=True)
class NltkTreebank:
    """One of nltk's treebanks: where nltk has it, and what its split is made of."""

    name: str  # as the split and its folder are named
    corpus: str  # the ``nltk.corpus`` reader
    package: str  # what ``python -m nltk.downloader`` installs
    language: str
    stride: int  # every stride-th usable tree joins the split
    trees: int  # trees the reader gives (``parsed_sents()``), nltk 3.10
    left_out: int  # of them, not usable (``usable``)
    description: str


TREEBANKS: dict[str, NltkTreebank] = {
    t.name: t
    for t in (
        NltkTreebank("alpino", "alpino", "alpino", "Dutch", 2, 7136, 561,
                     "Alpino Treebank, news text of the Eindhoven corpus's CDBL part"),
        NltkTreebank("cess_esp", "cess_esp", "cess_esp", "Spanish", 2, 6030, 30,
                     "CESS-ESP Treebank"),
        NltkTreebank("floresta", "floresta", "floresta", "Portuguese", 3, 9266, 71,
                     "Floresta Sinta(c)tica 7.4"),
        NltkTreebank("sinica", "sinica_treebank", "sinica_treebank", "Chinese", 3, 10000, 0,
                     "Sinica Treebank sample, Academia Sinica Balanced Corpus"),
    )
}  # fmt: skip


@dataclass
class Reading:
    """The usable trees of a treebank, with their positions in nltk's ``parsed_sents()``,
    and what was left out and mended on the way."""

    treebank: NltkTreebank
    trees: list[Tree]
    positions: list[int]
    total: int  # trees the reader gave
    left_out: dict[str, list[int]] = field(default_factory=dict)  # reason -> positions
    mended: dict[str, int] = field(default_factory=dict)  # what -> how many times
    folder: str = ""


@dataclass
class Split:
    """A treebank's split: the trees of each part and their positions in
    ``parsed_sents()``, and the reading they were taken from."""

    parts: dict[str, list[Tree]]
    positions: dict[str, list[int]]
    reading: Reading


def treebank(name: str) -> NltkTreebank:
    """The treebank called ``name`` (``TREEBANKS``); LpcfgError for any other name."""
    if name not in TREEBANKS:
        raise LpcfgError(f"no treebank {name!r}: one of {', '.join(TREEBANKS)}")
    return TREEBANKS[name]


def split_positions(n: int, stride: int, sizes: dict[str, int] = SIZES) -> dict[str, list[int]]:
    """Which of ``n`` usable trees (numbered in corpus order) make each part: every
    ``stride``-th, dealt in groups of 26 (20 train, 3 dev, 3 test) until every part has its
    size. LpcfgError if ``n`` trees are too few."""
    out: dict[str, list[int]] = {part: [] for part, _ in GROUP}
    kept = range(0, n, stride)
    deal = [part for part, count in GROUP for _ in range(count)]
    for j, position in enumerate(kept):
        part = deal[j % len(deal)]
        if len(out[part]) < sizes.get(part, 0):
            out[part].append(position)
        if all(len(out[p]) >= sizes.get(p, 0) for p in out):
            return out
    have = ", ".join(f"{len(v)} {k}" for k, v in out.items())
    raise LpcfgError(f"{n} trees at a stride of {stride} give only {have}")


def split(name: str, *, report: Callable[[str], None] | None = None) -> Split:
    """The fixed split of treebank ``name``, from nltk's corpus reader (``read``)."""
    reading = read(name, report=report)
    at = split_positions(len(reading.trees), reading.treebank.stride)
    return Split(
        parts={part: [reading.trees[i] for i in idx] for part, idx in at.items()},
        positions={part: [reading.positions[i] for i in idx] for part, idx in at.items()},
        reading=reading,
    )


def read(name: str, *, report: Callable[[str], None] | None = None) -> Reading:
    """The usable trees of treebank ``name`` (``usable``), read with nltk's corpus reader,
    its recovery messages silenced; what else it prints goes to stderr. LpcfgError when
    nltk does not have it, or when the reader gives other counts than this split was
    defined on."""
    tb = treebank(name)
    reader = _corpus(tb)
    noise = io.StringIO()
    try:
        with contextlib.redirect_stderr(noise):
            raw = list(iter(reader.parsed_sents()))  # list() alone reads it twice (len)
    except LookupError:
        raise LpcfgError(
            f"nltk's {tb.package} corpus is not installed: run "
            f"`python -m nltk.downloader {tb.package}` or set NLTK_DATA"
        ) from None
    other = [
        line
        for line in noise.getvalue().splitlines()
        if line.strip() and not line.strip().startswith(_RECOVERY_LINES)
    ]
    if other:
        print("\n".join(other), file=sys.stderr)
    reading = usable(raw, tb)
    reading.folder = _folder(reader)
    lost = sum(map(len, reading.left_out.values()))
    if (reading.total, lost) != (tb.trees, tb.left_out):
        raise LpcfgError(
            f"{name}: nltk's reader gave {reading.total} trees of which {lost} are not "
            f"usable; the split is defined on {tb.trees} and {tb.left_out} (nltk 3.10): "
            "a different reader or corpus would give a different split"
        )
    if report:
        report(
            f"{name}: {reading.total} trees from {reading.folder}, {lost} left out, "
            f"{len(reading.trees)} usable"
        )
    return reading


def usable(raw: list[Any], tb: NltkTreebank) -> Reading:
    """The trees of ``raw`` (nltk trees, as the reader of ``tb`` gives them) that can be
    used, as lpcfg trees, mended where the reader is known to go wrong (see the module);
    the others are left out, by reason."""
    reading = Reading(treebank=tb, trees=[], positions=[], total=len(raw))
    for i, nltk_tree in enumerate(raw):
        if _flat_parse(nltk_tree):
            reading.left_out.setdefault(FLAT_PARSE, []).append(i)
            continue
        tree = from_nltk(nltk_tree)
        if tb.name == "alpino":
            _count(reading, XML_NODES, _drop_xml_nodes(tree))
            _count(reading, XML_ESCAPES, _unescape_words(tree))
        elif tb.name == "floresta":
            _count(reading, BARE_PUNCTUATION, _mend_bare_punctuation(tree))
        if any(len(node) == 0 for node in iter_nodes(tree)):
            reading.left_out.setdefault(EMPTY_CONSTITUENT, []).append(i)
            continue
        reading.trees.append(tree)
        reading.positions.append(i)
    return reading


def _count(reading: Reading, what: str, n: int) -> None:
    if n:
        reading.mended[what] = reading.mended.get(what, 0) + n


def _flat_parse(tree: Any) -> bool:
    """Whether nltk's bracket reader gave up on this tree: it then returns ``S`` over
    (word, tag) tuples, or over nothing (``BracketParseCorpusReader._parse``)."""
    return len(tree) == 0 or any(not isinstance(k, str) and not hasattr(k, "label") for k in tree)


def _is_xml_start(token: Any) -> bool:
    return isinstance(token, str) and token.startswith("<node")


def _drop_xml_nodes(tree: Tree) -> int:
    """Remove the XML text nltk's alpino reader leaves for a node without a word
    (``<node begin="0" ... rel="su"/>``, one token per attribute), and the nodes left
    without children by it; how many were removed."""
    removed = 0
    emptied: set[int] = set()
    for node in reversed(list(iter_nodes(tree))):  # children before their parents
        kids: list[Any] = []
        inside = False
        for child in node:
            if inside or _is_xml_start(child):
                inside = not (isinstance(child, str) and child.endswith("/>"))
                removed += not inside
                continue
            if isinstance(child, Tree) and id(child) in emptied:
                continue
            kids.append(child)
        if len(kids) != len(node):
            node[:] = kids
            if not kids:
                emptied.add(id(node))
    return removed


def _unescape_words(tree: Tree) -> int:
    """Write XML's escapes in words as their characters; how many words changed."""
    changed = 0
    for node in iter_nodes(tree):
        for k, child in enumerate(node):
            if isinstance(child, str) and "&" in child:
                plain = unescape(child, {"&quot;": '"', "&apos;": "'"})
                if plain != child:
                    node[k] = plain
                    changed += 1
    return changed


def _mend_bare_punctuation(tree: Tree) -> int:
    """floresta's ``(...)``: a punctuation mark without a word gets itself as word, as
    nltk's reader does for one-character marks (``(,)`` -> ``(, ,)``)."""
    mended = 0
    for node in iter_nodes(tree):
        if len(node) == 0 and node.label():
            node.append(node.label())
            mended += 1
    return mended


def _corpus(tb: NltkTreebank) -> Any:
    import nltk.corpus  # imported on use only (start-up cost)

    return getattr(nltk.corpus, tb.corpus)


def _folder(reader: Any) -> str:
    try:
        return str(reader.root)
    except (AttributeError, LookupError):
        return "nltk's data path"
