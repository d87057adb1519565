"""The form trees are trained and evaluated in: empty elements, function tags, co-indices,
X -> X repetitions and the root wrapper removed (``normalize``), as EVALB's COLLINS.prm and
the L-PCFG papers (Cohen et al. 2014, section 10) prepare the Penn Treebank, and as a
treebank's declared conventions (``treebank.conventions``) say for other treebanks."""

from __future__ import annotations

from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.tree import ROOT_LABELS, Tree


def normalize(tree: Tree, conventions: Conventions = PTB) -> Tree | None:
    """The form used for training and evaluation (a new tree; the input is not changed).

    Applies the treebank's ``conventions`` (``treebank.conventions``; the Penn Treebank's by
    default): removes the nodes they drop (``-NONE-`` elements), the words that are empty
    elements and constituents left empty, cuts labels to their categories (function tags
    and co-indices stripped) and words to their forms (lemmas cut); then collapses X -> X
    unary repetitions and drops the root wrapper (an empty, TOP or ROOT label over a single
    child). Returns None if no words remain.
    """
    dropped = set(conventions.drop_labels)
    if tree.label() in dropped:
        return None
    label_of, word_of, is_empty = conventions.label, conventions.word, conventions.is_empty
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
                if not is_empty(child):
                    kids.append(word_of(child))
            elif child.label() not in dropped:
                frames.append([child, 0, []])
            continue
        frames.pop()
        cleaned: Tree | None = None
        if kids:
            label = label_of(node.label())
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
