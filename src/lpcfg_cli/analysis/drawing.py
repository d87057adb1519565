"""Trees drawn: SVG for pages and reports, text for terminals.

The layout is nltk's (``nltk.tree.prettyprinter.TreePrettyPrinter``: every node on a grid of
rows and columns, centred over its children, the words on the bottom row). ``tree_svg`` turns
that grid into SVG of its own: each column as wide as its widest label, each phrase node a
``<g class="node" data-pos=".." data-label="..">`` that a page can find by its tree position
and mark (``marks``: CSS classes, e.g. a parse's wrong brackets), pre-terminal tags and words
``<text class="tag">`` and ``<text class="word">``, the edges ``<path>``. ``tree_text`` is
nltk's own text drawing. ``trees_svg`` stacks several trees in one SVG document and
``trees_html`` puts them on one self-contained page (``lpcfg draw``).

``max_depth`` keeps large trees readable: a node that deep with phrase nodes below it is
drawn as its label over a roof (a triangle) over its words. ``phrase_positions`` lists the
phrase nodes in the order their brackets open, as EVALB's brackets of the tree come.

nltk is imported when a tree is drawn (it costs about a second). Its layout recurses and
slows down on trees many hundreds of levels deep: a tree deeper than ``MAX_DRAWN_DEPTH``
(after collapsing) is refused (``ParameterError``: collapse it with ``max_depth``;
``check_drawable`` checks a tree first), and the recursion limit is raised while one is laid
out. The rest of the module is iterative.
"""

from __future__ import annotations

import contextlib
import html
import re
import sys
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.hyperparams import Checked, hyper
from lpcfg_cli.treebank.nltk_trees import to_nltk
from lpcfg_cli.treebank.tree import Tree, is_preterminal, leaves, words

# The deepest tree (levels of nodes, words included, after collapsing) laid out: nltk's
# layout recurses, and its time grows with about the cube of the depth (seconds for a unary
# chain a thousand levels deep, a minute for two thousand).
MAX_DRAWN_DEPTH = 800


@dataclass(frozen=True)
class DrawOptions(Checked):
    """How trees are drawn (``lpcfg draw``, ``lpcfg report``)."""

    max_depth: int | None = hyper(
        None,
        "Collapse each phrase N levels below the root that has phrases below it into its "
        "label over a triangle over its words, so that long sentences stay readable "
        "(default: draw every node).",
        min=0,
        kind="int",
        metavar="N",
    )


NO_PARSE = "(no parse)"  # what an empty tree (a failed parse) is drawn as
SVG_NS = "http://www.w3.org/2000/svg"

FONT = 12  # px, the labels' size
ROW = 34  # px from one row's baseline to the next
ASCENT, DESCENT = 10, 3  # px of a label above and below its baseline
PAD = 5  # px each side of a column's widest label
MARGIN = 8  # px around the drawing
CAPTION = 20  # px above each tree of ``trees_svg`` for its number
GAP = 16  # px between the trees of ``trees_svg``

# What a tree needs beyond the presentation attributes its elements carry (black labels,
# grey edges, centred text): grey tags, and the classes "extra" (red, bold) and "missing"
# (blue, bold) on marked nodes, their edges and roofs. ``tree_svg(standalone=True)`` holds
# it; a page of many trees (``standalone=False``) holds it once.
SVG_STYLE = (
    ".lpcfg-tree text.tag{fill:#6b6b6b}"
    ".lpcfg-tree text.no-parse{fill:#888;font-style:italic}"
    ".lpcfg-tree .extra>text{fill:#c8102e;font-weight:bold}"
    ".lpcfg-tree path.extra{stroke:#c8102e;stroke-width:2}"
    ".lpcfg-tree path.roof.extra{fill:#fde8ea}"
    ".lpcfg-tree .missing>text{fill:#0b5cd5;font-weight:bold}"
    ".lpcfg-tree path.missing{stroke:#0b5cd5;stroke-width:2}"
    ".lpcfg-tree path.roof.missing{fill:#e6efff}"
)

# Characters XML 1.0 cannot hold, even escaped: drawn as U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

Position = tuple[int, ...]


@dataclass(frozen=True)
class _Item:
    """One node of nltk's grid: ``kind`` is "phrase", "tag", "word", "roof" (the words of a
    collapsed node) or "frontier" (nltk's "..." under a node with no children)."""

    kind: str
    text: str
    pos: Position


def phrase_positions(tree: Tree) -> list[Position]:
    """The tree positions of ``tree``'s phrase nodes (every node but the pre-terminals, the
    nodes whose one child is a word) in pre-order: the order their opening brackets come in
    when the tree is written on one line, which is the order of EVALB's brackets. A position
    is a tuple of child indices, as nltk's ``treepositions``; ``()`` is the root."""
    out: list[Position] = []
    stack: list[tuple[Tree, Position]] = [(tree, ())]
    while stack:
        node, pos = stack.pop()
        if is_preterminal(node):
            continue
        out.append(pos)
        stack.extend(
            (child, pos + (i,))
            for i, child in reversed(list(enumerate(node)))
            if isinstance(child, Tree)
        )
    return out


def tree_svg(
    tree: Tree,
    *,
    marks: Mapping[tuple[int, ...], str] | None = None,
    max_depth: int | None = None,
    title: str | None = None,
    standalone: bool = True,
) -> str:
    """``tree`` drawn as an ``<svg>`` element (for a file of its own or inline in HTML).

    Each phrase node is a ``<g class="node" data-pos="0.1" data-label="NP">`` holding its
    ``<text>`` (``data-pos``: its tree position, dotted, "" for the root); pre-terminal tags
    and words are ``<text class="tag">`` and ``<text class="word">``; edges are ``<path>``.
    ``marks`` maps a phrase node's position to CSS classes (e.g. "extra", "missing") added
    to its ``class`` and to the edges to its children. ``max_depth``: a node that many
    levels below the root with phrase nodes below it is drawn as a ``collapsed`` node over a
    roof (``<path class="roof">``) over its words, in one ``<text class="word collapsed">``
    (marks of nodes under it are not drawn). ``title`` becomes the ``<title>``. With
    ``standalone`` the SVG holds its ``<style>`` (``SVG_STYLE``: grey tags, the "extra" and
    "missing" classes); without, the page it goes in holds it once. An empty tree (``()``,
    a failed parse) is drawn as the text "(no parse)".

    ``ValueError`` for a mark on a position that is not a phrase node or a negative
    ``max_depth``; ``ParameterError`` for a tree deeper than ``MAX_DRAWN_DEPTH`` levels
    after collapsing.
    """
    edges, texts, width, height = _drawing(tree, marks or {}, max_depth)
    return _svg(edges, texts, width, height, title, standalone)


def check_drawable(tree: Tree, *, max_depth: int | None = None) -> None:
    """Refuse, before any drawing, a tree too deep to draw with this ``max_depth``
    (``ParameterError``, as drawing it would) or a negative ``max_depth`` (``ValueError``)."""
    if not _no_parse(tree):
        depth = _depth(_collapse(tree, max_depth)[0])
        if depth > MAX_DRAWN_DEPTH:
            raise _too_deep(depth)


def tree_text(tree: Tree, *, unicode: bool = True, max_depth: int | None = None) -> str:
    """``tree`` drawn in text, by nltk (``TreePrettyPrinter.text``): with Unicode
    box-drawing lines, or ASCII ones. ``max_depth`` collapses as in ``tree_svg``: the node
    shows its label over one leaf, its words. An empty tree is "(no parse)". Ends with a
    newline."""
    if _no_parse(tree):
        return NO_PARSE + "\n"
    drawn, _ = _collapse(tree, max_depth)
    printer = _printer(drawn)
    with _recursion_room(drawn):
        return str(printer.text(unicodelines=unicode))


def trees_svg(
    trees: Sequence[Tree | None],
    *,
    numbers: Sequence[int] | None = None,
    max_depth: int | None = None,
    title: str | None = None,
) -> str:
    """One SVG document of ``trees`` stacked top to bottom, each under its number
    (``numbers``, by default 1, 2, ...) and drawn as ``tree_svg`` draws it (None or an
    empty tree: "(no parse)")."""
    numbers = _numbers(trees, numbers)
    parts, width, y = [], 0.0, float(MARGIN)
    for tree, number in zip(trees, numbers, strict=True):
        edges, texts, w, h = _drawing(tree, {}, max_depth)
        inner = _svg(edges, texts, w, h, None, False)
        parts.append(
            f'<g class="tree" transform="translate(0 {_num(y)})">'
            f'<text class="caption" x="{MARGIN}" y="{CAPTION - 6}" text-anchor="start" '
            f'font-weight="bold">{number}</text>'
            f'<g transform="translate(0 {CAPTION})">{inner}</g></g>'
        )
        width, y = max(width, w), y + CAPTION + h + GAP
    return _svg([], parts, width, y - GAP + MARGIN, title, True, cls="lpcfg-trees")


def trees_html(
    trees: Sequence[Tree | None],
    *,
    captions: Sequence[str] | None = None,
    numbers: Sequence[int] | None = None,
    max_depth: int | None = None,
    title: str = "Trees",
    charset: str = "utf-8",
) -> str:
    """One self-contained HTML page (no network: inline style, no scripts) of ``trees``,
    each drawn as ``tree_svg`` draws it in a box that scrolls sideways, under its number
    (``numbers``, by default 1, 2, ...) and its caption (``captions``, by default its
    words). ``charset`` is the one the page says it is written in."""
    numbers = _numbers(trees, numbers)
    if captions is None:
        captions = [" ".join(words(t)) if t is not None else "" for t in trees]
    if len(captions) != len(trees):
        raise ValueError(f"{len(captions)} captions for {len(trees)} trees")
    figures = []
    for tree, number, caption in zip(trees, numbers, captions, strict=True):
        edges, texts, w, h = _drawing(tree, {}, max_depth)
        svg = _svg(edges, texts, w, h, None, False)
        figures.append(
            f'<figure id="tree-{number}"><figcaption><span class="number">{number}</span> '
            f'{_text(caption)}</figcaption><div class="scroll">{svg}</div></figure>'
        )
    style = (
        "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fafafa}"
        "h1{font-size:1.3em}figure{margin:0 0 1.5em}figcaption{margin:0 0 .3em}"
        ".number{font-weight:bold;margin-right:.6em}"
        ".scroll{overflow-x:auto;border:1px solid #ddd;border-radius:4px;background:#fff}"
        ".scroll svg{display:block}" + SVG_STYLE
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="{_attr(charset)}">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_text(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
        f"<h1>{_text(title)}</h1>\n" + "\n".join(figures) + "\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------- the layout


def _no_parse(tree: Tree | None) -> bool:
    return tree is None or len(tree) == 0


def _numbers(trees: Sequence[Any], numbers: Sequence[int] | None) -> list[int]:
    if numbers is None:
        return list(range(1, len(trees) + 1))
    if len(numbers) != len(trees):
        raise ValueError(f"{len(numbers)} numbers for {len(trees)} trees")
    return list(numbers)


def _collapse(tree: Tree, max_depth: int | None) -> tuple[Tree, set[Position]]:
    """``tree`` with each node ``max_depth`` levels below the root that has phrase nodes
    below it replaced by its label over one leaf, its words joined by spaces; and the
    positions of those nodes (a copy; ``tree`` itself when nothing is collapsed)."""
    if max_depth is None:
        return tree, set()
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValueError(f"max_depth must be None or an integer of 0 or more, not {max_depth!r}")
    out = Tree(tree.label())
    collapsed: set[Position] = set()
    stack: list[tuple[Tree, Tree, Position]] = [(tree, out, ())]
    while stack:
        src, dst, pos = stack.pop()
        if len(pos) == max_depth and any(
            isinstance(c, Tree) and not is_preterminal(c) for c in src
        ):
            dst.append(" ".join(leaves(src)))
            collapsed.add(pos)
            continue
        for i, child in enumerate(src):
            if isinstance(child, Tree):
                new = Tree(child.label())
                dst.append(new)
                stack.append((child, new, pos + (i,)))
            else:
                dst.append(child)
    return (out, collapsed) if collapsed else (tree, collapsed)


def _items(drawn: Tree, collapsed: set[Position]) -> list[_Item]:
    """The nodes and words of ``drawn`` in the order nltk numbers them (pre-order, as its
    ``treepositions``; a node with no children gets a "..." leaf)."""
    items: list[_Item] = []
    stack: list[tuple[Tree | str, Position]] = [(drawn, ())]
    while stack:
        node, pos = stack.pop()
        if not isinstance(node, Tree):
            kind = "roof" if pos[:-1] in collapsed else "word"
            items.append(_Item(kind, str(node), pos))
            continue
        tag = is_preterminal(node) and pos not in collapsed
        items.append(_Item("tag" if tag else "phrase", str(node.label()), pos))
        if len(node) == 0:
            items.append(_Item("frontier", "...", pos + (0,)))
        stack.extend((child, pos + (i,)) for i, child in reversed(list(enumerate(node))))
    return items


def _depth(tree: Tree) -> int:
    """Levels of nodes, words included (a word alone under the root: 2)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth + (1 if any(isinstance(c, str) for c in node) else 0))
        stack.extend((c, depth + 1) for c in node if isinstance(c, Tree))
    return deepest


@contextlib.contextmanager
def _recursion_room(drawn: Tree) -> Iterator[None]:
    """Room on the stack for nltk to walk ``drawn`` by recursion (the limit raised for the
    block, then restored); running out after all is a ``ParameterError``."""
    depth = _depth(drawn)
    if depth > MAX_DRAWN_DEPTH:
        raise _too_deep(depth)
    frames, frame = 0, sys._getframe()
    while frame is not None:
        frames, frame = frames + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, frames + 4 * depth + 200))
    try:
        yield
    except RecursionError:
        raise _too_deep(depth) from None
    finally:
        sys.setrecursionlimit(limit)


def _too_deep(depth: int) -> ParameterError:
    return ParameterError(
        "a tree {depth} levels deep cannot be drawn (at most {limit}: nltk's layout "
        "recurses, and takes seconds on such trees); collapse it with {max_depth}",
        depth=depth,
        limit=MAX_DRAWN_DEPTH,
    )


def _printer(drawn: Tree) -> Any:
    """nltk's layout of ``drawn`` (a ``TreePrettyPrinter``)."""
    from nltk.tree.prettyprinter import TreePrettyPrinter  # imported on use (start-up)

    with _recursion_room(drawn):
        return TreePrettyPrinter(to_nltk(drawn))


# ---------------------------------------------------------------------------- SVG


def _drawing(
    tree: Tree | None, marks: Mapping[Position, str], max_depth: int | None
) -> tuple[list[str], list[str], float, float]:
    """The edges and the labels of ``tree``'s drawing, its width and its height (px)."""
    if _no_parse(tree):
        width = 2 * MARGIN + _width(NO_PARSE)
        text = f'<text class="no-parse" x="{_num(width / 2)}" y="{MARGIN + ASCENT}">'
        return [], [text + NO_PARSE + "</text>"], width, 2 * MARGIN + ASCENT + DESCENT
    assert tree is not None
    if marks:
        phrases = set(phrase_positions(tree))
        wrong = [pos for pos in marks if tuple(pos) not in phrases]
        if wrong:
            raise ValueError(f"marks name {wrong[0]!r}, which is not a phrase node of the tree")
    drawn, collapsed = _collapse(tree, max_depth)
    items = _items(drawn, collapsed)
    printer = _printer(drawn)
    coords: dict[int, tuple[int, int]] = printer.coords
    columns = max(col for _, col in coords.values()) + 1
    widths = [2 * PAD + 6.0] * columns
    for i, (_, col) in coords.items():
        widths[col] = max(widths[col], 2 * PAD + _width(items[i].text))
    lefts = [float(MARGIN)]
    for w in widths:
        lefts.append(lefts[-1] + w)
    where = {
        i: (lefts[col] + widths[col] / 2, MARGIN + ASCENT + row * ROW)
        for i, (row, col) in coords.items()
    }
    edges = _edges(printer.edges, items, where, marks, collapsed)
    texts = [_label(items[i], *where[i], marks, collapsed) for i in sorted(where)]  # pre-order
    height = 2 * MARGIN + ASCENT + DESCENT + max(row for row, _ in coords.values()) * ROW
    return edges, texts, lefts[-1] + MARGIN, height


def _edges(
    parents: Mapping[int, int],
    items: list[_Item],
    where: Mapping[int, tuple[float, float]],
    marks: Mapping[Position, str],
    collapsed: set[Position],
) -> list[str]:
    """The ``<path>`` elements of the edges: those of unmarked nodes in one path, each
    marked node's in a path with its classes, each collapsed node's roof in its own."""
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        if child in where and parent in where:
            children.setdefault(parent, []).append(child)
    plain: list[str] = []
    out: list[str] = []
    for parent, kids in sorted(children.items()):
        x, y = where[parent]
        pos = items[parent].pos
        mark = _mark(marks, pos)
        if pos in collapsed and items[parent].kind == "phrase":
            kx, ky = where[kids[0]]
            half = _width(items[kids[0]].text) / 2 + 2
            d = f"M{_num(x)} {y + DESCENT + 1}L{_num(kx - half)} {ky - ASCENT - 1}"
            d += f"H{_num(kx + half)}Z"
            out.append(f'<path class="roof collapsed{mark}" fill="#f4f4f4" d="{d}"/>')
            continue
        top = y + DESCENT + 1
        xs = [where[k][0] for k in kids]
        if len(kids) == 1 and abs(xs[0] - x) < 0.5:
            d = f"M{_num(x)} {top}V{where[kids[0]][1] - ASCENT - 1}"
        else:
            branch = top + (ROW - ASCENT - DESCENT - 2) // 2
            d = f"M{_num(x)} {top}V{branch}M{_num(min(xs))} {branch}H{_num(max(xs))}"
            d += "".join(f"M{_num(where[k][0])} {branch}V{where[k][1] - ASCENT - 1}" for k in kids)
        if mark:
            out.append(f'<path class="edge{mark}" d="{d}"/>')
        else:
            plain.append(d)
    if plain:
        out.insert(0, f'<path class="edge" d="{"".join(plain)}"/>')
    return out


def _label(
    item: _Item, x: float, y: float, marks: Mapping[Position, str], collapsed: set[Position]
) -> str:
    """The element of one node or word at (``x``, ``y``)."""
    text = f'<text x="{_num(x)}" y="{y}">{_text(item.text)}</text>'
    if item.kind == "phrase":
        cls = "node" + (" collapsed" if item.pos in collapsed else "") + _mark(marks, item.pos)
        dotted = ".".join(map(str, item.pos))
        label = _attr(item.text)
        return f'<g class="{_attr(cls)}" data-pos="{dotted}" data-label="{label}">{text}</g>'
    cls = {"tag": "tag", "word": "word", "roof": "word collapsed", "frontier": "frontier"}
    return f'<text class="{cls[item.kind]}"' + text[5:]


def _mark(marks: Mapping[Position, str], pos: Position) -> str:
    """`` CLASSES`` of the node at ``pos``, or ""."""
    mark = marks.get(pos) if marks else None
    return f" {mark.strip()}" if mark and mark.strip() else ""


def _svg(
    edges: list[str],
    texts: list[str],
    width: float,
    height: float,
    title: str | None,
    standalone: bool,
    cls: str = "lpcfg-tree",
) -> str:
    """The ``<svg>`` element of these edges (``<path>``) and labels."""
    w, h = _num(width), _num(height)
    head = (
        f'<svg xmlns="{SVG_NS}" class="{cls}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'font-family="sans-serif" font-size="{FONT}" text-anchor="middle">'
    )
    parts = [head]
    if title is not None:
        parts.append(f"<title>{_text(title)}</title>")
    if standalone:
        parts.append(f"<style>{SVG_STYLE}</style>")
    if edges:
        parts += ['<g fill="none" stroke="#8c8c8c">', *edges, "</g>"]
    parts += texts
    parts.append("</svg>")
    return "\n".join(parts)


def _width(text: str) -> float:
    """The width of ``text`` in px, estimated: wide (CJK) characters a full em, combining
    marks nothing, every other character 0.6 em."""
    total = 0.0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += FONT if unicodedata.east_asian_width(ch) in "WF" else 0.6 * FONT
    return total


def _num(value: float) -> str:
    """A coordinate, to the pixel's tenth, without a trailing ``.0``."""
    return f"{value:.1f}".removesuffix(".0")


def _text(text: str) -> str:
    """``text`` as XML character data."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=False)


def _attr(text: str) -> str:
    """``text`` as an XML attribute value (in double quotes)."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)
