"""Lexical heads of constituents by head-percolation rules (after Collins 1999, appendix A).

The spectral learner's features use the part-of-speech tag of a constituent's head word.
Heads are found on the original (unbinarized) trees, where the rules apply, and carried over
to the binarized nodes by span (``latent_pcfg.features.binarized_heads``).
"""

from __future__ import annotations

from collections.abc import Sequence

from lpcfg_cli.treebank.tree import Tree, is_preterminal

# label -> (search direction, priority list); "left" scans children left to right.
_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ADJP": (
        "left",
        (
            "NNS",
            "QP",
            "NN",
            "$",
            "ADVP",
            "JJ",
            "VBN",
            "VBG",
            "ADJP",
            "JJR",
            "NP",
            "JJS",
            "DT",
            "FW",
            "RBR",
            "RBS",
            "SBAR",
            "RB",
        ),
    ),
    "ADVP": (
        "right",
        ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN"),
    ),
    "CONJP": ("right", ("CC", "RB", "IN")),
    "FRAG": ("right", ()),
    "INTJ": ("left", ()),
    "LST": ("right", ("LS", ":")),
    "NAC": (
        "left",
        (
            "NN",
            "NNS",
            "NNP",
            "NNPS",
            "NP",
            "NAC",
            "EX",
            "$",
            "CD",
            "QP",
            "PRP",
            "VBG",
            "JJ",
            "JJS",
            "JJR",
            "ADJP",
            "FW",
        ),
    ),
    "PP": ("right", ("IN", "TO", "VBG", "VBN", "RP", "FW")),
    "PRN": ("left", ()),
    "PRT": ("right", ("RP",)),
    "QP": ("left", ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),
    "RRC": ("right", ("VP", "NP", "ADVP", "ADJP", "PP")),
    "S": ("left", ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),
    "SBAR": (
        "left",
        ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG"),
    ),
    "SBARQ": ("left", ("SQ", "S", "SINV", "SBARQ", "FRAG")),
    "SINV": ("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),
    "SQ": ("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),
    "UCP": ("right", ()),
    "VP": (
        "left",
        ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP"),
    ),
    "WHADJP": ("left", ("CC", "WRB", "JJ", "ADJP")),
    "WHADVP": ("right", ("CC", "WRB")),
    "WHNP": ("left", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),
    "WHPP": ("right", ("IN", "TO", "FW")),
}

# Collins' special rule for base noun phrases: ordered (direction, labels) searches.
_NP_SEARCHES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("right", ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR")),
    ("left", ("NP",)),
    ("right", ("$", "ADJP", "PRN")),
    ("right", ("CD",)),
    ("right", ("JJ", "JJS", "RB", "QP")),
)


def _base(label: str) -> str:
    for sep in "-=":
        cut = label.find(sep, 1)
        if cut > 0:
            label = label[:cut]
    return label


def head_child(label: str, children: Sequence[str]) -> int:
    """Index of the head among ``children`` (their labels) of a ``label`` constituent."""
    kids = [_base(c) for c in children]
    n = len(kids)
    if n == 1:
        return 0
    base = _base(label)
    if base in ("NP", "NX", "NML"):
        if kids[-1] == "POS":
            return n - 1
        for direction, wanted in _NP_SEARCHES:
            order = range(n - 1, -1, -1) if direction == "right" else range(n)
            for i in order:
                if kids[i] in wanted:
                    return i
        return n - 1
    direction, priority = _RULES.get(base, ("left", ()))
    order = list(range(n)) if direction == "left" else list(range(n - 1, -1, -1))
    for wanted in priority:
        for i in order:
            if kids[i] == wanted:
                return i
    return order[0]


def constituent_heads(tree: Tree) -> dict[tuple[int, int], int]:
    """``(start, end) -> head word position`` for every constituent of an unbinarized tree.

    Constituents of one span (unary chains) share their head. Any depth (no recursion).
    """
    out: dict[tuple[int, int], int] = {}
    # A frame: [node, next child, start, position after the children so far, their heads].
    frames: list[list] = [[tree, 0, 0, 0, []]]
    while frames:
        frame = frames[-1]
        node, i, start, pos, heads = frame
        if is_preterminal(node):
            out.setdefault((start, start + 1), start)
            end, head = start + 1, start
        elif i < len(node):
            frame[1] = i + 1
            child = node[i]
            if isinstance(child, Tree):
                frames.append([child, 0, pos, pos, []])
            else:  # a word beside phrases: binarization gives it a pre-terminal of its own
                out.setdefault((pos, pos + 1), pos)
                heads.append(pos)
                frame[3] = pos + 1
            continue
        else:
            labels = [c.label() if isinstance(c, Tree) else "" for c in node]
            end, head = pos, heads[head_child(node.label(), labels)]
            out[(start, end)] = head
        frames.pop()
        if frames:
            frames[-1][3] = end
            frames[-1][4].append(head)
    return out
