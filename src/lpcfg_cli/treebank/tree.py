"""The tree type: a labelled node whose children are trees or words.

lpcfg's own, in place of ``nltk.Tree``: importing nltk (it imports ``scipy.stats`` and much
else) was most of every command's start-up (docs/design-notes.md, Start-up), and nltk's tree
methods recurse, so that trees deeper than about 500 levels were refused or crashed. This type
has the part of nltk's interface lpcfg uses (``label``, ``set_label``, list behaviour) and
every walk over it is iterative. Reading and writing the bracketed format is ``treebank.ptb``'s
job; the walks (``iter_nodes``, ``leaves``, ``tagged_words``, ``words``) are here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Union

Child = Union["Tree", str]

# Labels a treebank wraps its trees in (``( (S ...) )``, ``(TOP (S ...))``), and the label of
# empty elements (traces).
ROOT_LABELS = ("", "TOP", "ROOT")
NONE_LABEL = "-NONE-"


class Tree(list):
    """A node: ``label()`` and its children (``Tree`` or ``str`` words) as a list."""

    __slots__ = ("_label",)

    def __init__(self, label: str, children: Iterable[Child] = ()) -> None:
        super().__init__(children)
        self._label = label

    def label(self) -> str:
        return self._label

    def leaves(self) -> list[str]:
        """The words, in order (as ``nltk.Tree.leaves``, without recursion)."""
        return leaves(self)

    def set_label(self, label: str) -> None:
        self._label = label

    def __eq__(self, other: object) -> bool:
        """Same labels and words in the same shape (compared without recursion)."""
        stack: list[tuple[object, object]] = [(self, other)]
        while stack:
            a, b = stack.pop()
            if isinstance(a, Tree) != isinstance(b, Tree):
                return False
            if not isinstance(a, Tree):
                if a != b:
                    return False
                continue
            assert isinstance(b, Tree)
            if a._label != b._label or len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        return True

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def copy(self) -> Tree:  # type: ignore[override]
        """A deep copy (the words are shared: strings are immutable)."""
        out = Tree(self._label)
        stack = [(self, out)]
        while stack:
            src, dst = stack.pop()
            for child in src:
                if isinstance(child, Tree):
                    new = Tree(child._label)
                    dst.append(new)
                    stack.append((child, new))
                else:
                    dst.append(child)
        return out

    def __repr__(self) -> str:
        """Bracketed, without escaping (for debugging; ``trees.format_tree`` writes trees)."""
        tokens: list[str] = []
        stack: list[object] = [self]
        while stack:
            item = stack.pop()
            if item is _CLOSE:
                tokens.append(")")
            elif isinstance(item, Tree):
                tokens.append("(" + item._label)
                stack.append(_CLOSE)
                stack.extend(reversed(item))
            else:
                tokens.append(str(item))
        return tokens[0] + "".join(t if t == ")" else " " + t for t in tokens[1:])

    def __reduce__(self) -> tuple:
        """Pickles flat (pre-order labels and words with child counts): pickling nested lists
        recurses, and a parse of a 1,200-word sentence could not be sent between processes."""
        items: list[str] = []
        arity: list[int] = []
        stack: list[Child] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, Tree):
                items.append(node._label)
                arity.append(len(node))
                stack.extend(reversed(node))
            else:
                items.append(node)
                arity.append(-1)
        return (_unflatten, (items, arity))


def _unflatten(items: list[str], arity: list[int]) -> Tree:
    """Inverse of ``Tree.__reduce__``'s flattening."""
    root = Tree(items[0])
    open_nodes = [(root, arity[0])]
    for item, n in zip(items[1:], arity[1:], strict=True):
        while len(open_nodes[-1][0]) == open_nodes[-1][1]:
            open_nodes.pop()
        parent = open_nodes[-1][0]
        if n < 0:
            parent.append(item)
        else:
            node = Tree(item)
            parent.append(node)
            open_nodes.append((node, n))
    return root


_CLOSE = object()


def is_preterminal(node: Tree) -> bool:
    """A node over exactly one word."""
    return len(node) == 1 and isinstance(node[0], str)


def iter_nodes(tree: Tree) -> Iterator[Tree]:
    """Every node of ``tree`` in pre-order, as ``tree.subtrees()`` but without recursion."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in reversed(node) if isinstance(child, Tree))


def tagged_words(tree: Tree) -> list[tuple[str, str]]:
    """(word, label of its parent) in order, as ``tree.pos()`` but without recursion."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[Tree | str, str]] = [(tree, "")]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, Tree):
            label = node.label()
            stack.extend((child, label) for child in reversed(node))
        else:
            out.append((node, parent))
    return out


def leaves(tree: Tree) -> list[str]:
    """The words of ``tree`` in order, as ``tree.leaves()`` but without recursion."""
    return [word for word, _ in tagged_words(tree)]


def words(tree: Tree) -> list[str]:
    """The words of a tree, without -NONE- elements."""
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, not {type(tree).__name__}")
    return [w for w, tag in tagged_words(tree) if tag != NONE_LABEL]
