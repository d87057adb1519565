"""Trees to and from ``nltk.Tree``, what Python NLP code holds.

lpcfg has its own tree type (``treebank.tree.Tree``: importing nltk costs about a second of
every command's start-up, and nltk's tree methods recurse); these convert both ways without
recursion, so trees of any depth pass. nltk is imported here only, when a conversion is asked
for.
"""

from __future__ import annotations

from typing import Any

from lpcfg_cli.treebank.tree import Tree


def _nltk_tree() -> Any:
    from nltk import Tree as NltkTree  # imported on use only (start-up cost)

    return NltkTree


def to_nltk(tree: Tree) -> Any:
    """``tree`` as an ``nltk.Tree`` (the same labels and words)."""
    if not isinstance(tree, Tree):
        raise TypeError(
            f"tree must be a Tree, not {type(tree).__name__}"
            + (" (the empty sentence has no tree)" if tree is None else "")
        )
    nltk_tree = _nltk_tree()
    out = nltk_tree(tree.label(), [])
    stack = [(tree, out)]
    while stack:
        src, dst = stack.pop()
        for child in src:
            if isinstance(child, Tree):
                new = nltk_tree(child.label(), [])
                dst.append(new)
                stack.append((child, new))
            else:
                dst.append(child)
    return out


def from_nltk(tree: Any) -> Tree:
    """An ``nltk.Tree`` (or anything with ``label()`` whose children are trees and
    strings) as lpcfg's ``Tree``."""
    out = Tree(str(tree.label()))
    stack = [(tree, out)]
    while stack:
        src, dst = stack.pop()
        for child in src:
            if isinstance(child, str):
                dst.append(child)
            else:
                new = Tree(str(child.label()))
                dst.append(new)
                stack.append((child, new))
    return out
