"""The form trees are trained and evaluated in: empty elements, function tags, co-indices,
X -> X repetitions and the root wrapper removed (``normalize``), as EVALB's COLLINS.prm and
the L-PCFG papers (Cohen et al. 2014, section 10) prepare the Penn Treebank."""

from __future__ import annotations

import re

from lpcfg_cli.treebank.tree import NONE_LABEL, ROOT_LABELS, Tree


def strip_function_tags(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``, ``PP-LOC=2`` -> ``PP``; labels starting with '-' are kept."""
    if label.startswith("-") or not label:
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


def normalize(tree: Tree) -> Tree | None:
    """The form used for training and evaluation (a new tree; the input is not changed).

    Removes -NONE- elements and constituents left empty, strips function tags and
    co-indices, collapses X -> X unary repetitions and drops the root wrapper (an empty,
    TOP or ROOT label over a single child). Returns None if no words remain.
    """
    if tree.label() == NONE_LABEL:
        return None
    out: Tree | None = None
    # Post-order without recursion: a frame is [node, next child, cleaned children].
    frames: list[list] = [[tree, 0, []]]
    while frames:
        frame = frames[-1]
        node, i, kids = frame
        if i < len(node):
            frame[1] = i + 1
            child = node[i]
            if isinstance(child, str):
                kids.append(child)
            elif child.label() != NONE_LABEL:
                frames.append([child, 0, []])
            continue
        frames.pop()
        cleaned: Tree | None = None
        if kids:
            label = strip_function_tags(node.label())
            if len(kids) == 1 and isinstance(kids[0], Tree) and kids[0].label() == label:
                cleaned = kids[0]
            else:
                cleaned = Tree(label, kids)
        if frames:
            if cleaned is not None:
                frames[-1][2].append(cleaned)
        else:
            out = cleaned
    while (
        isinstance(out, Tree)
        and out.label() in ROOT_LABELS
        and len(out) == 1
        and isinstance(out[0], Tree)
    ):
        out = out[0]
    return out
