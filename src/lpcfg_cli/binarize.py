"""Reversible binarization into the strict normal form of the L-PCFG papers.

Every node of a binarized tree is either a pre-terminal (one child, a word) or an
in-terminal (exactly two nonterminal children):

- unary chains are collapsed into one symbol joined with ``+`` top-down:
  ``(S (VP (VB go)))`` -> ``(S+VP+VB go)``; a chain ending in a pre-terminal is a
  pre-terminal symbol (``NP+NNP``); the root chain too;
- an n-ary node ``X`` (n > 2) is factored into binary nodes with intermediate symbols
  ``@X``, to the right (``X -> c1 @X``, ``@X -> c2 @X``, ..., ``@X -> c(n-1) cn``) or to the
  left; with horizontal markovization order ``h > 0`` an intermediate symbol remembers the
  last ``h`` sibling labels it has generated: ``@X/c1_c2``;
- with vertical order ``v > 1`` every phrasal (non pre-terminal) label is annotated with its
  ``v - 1`` nearest ancestors' labels: ``NP^S`` (v = 2), ``NP^VP^S`` (v = 3).

Label grammar of the binarized trees::

    symbol       := intermediate | chain
    intermediate := "@" label-with-annotation ["/" context]
    chain        := label-with-annotation ("+" label-with-annotation)*
    label-with-annotation := LABEL ("^" LABEL)*

The labels are self-describing, so ``debinarize`` needs no options: it splices ``@`` nodes
into their parent, splits ``+`` chains and strips ``^`` annotations. Input labels must not
contain ``+`` or ``^`` nor start with ``@`` (checked, with a clear error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import nltk

from lpcfg_cli.errors import LpcfgError

CHAIN = "+"
PARENT = "^"
INTERMEDIATE = "@"
CONTEXT = "/"


@dataclass(frozen=True)
class BinarizeOptions:
    """How trees are binarized; stored in models so parsing can undo it."""

    horizontal: int = 0
    vertical: int = 1
    factor: str = "right"

    def __post_init__(self) -> None:
        if not isinstance(self.horizontal, int) or self.horizontal < 0:
            raise LpcfgError(f"horizontal order must be an integer >= 0, not {self.horizontal!r}")
        if not isinstance(self.vertical, int) or self.vertical < 1:
            raise LpcfgError(f"vertical order must be an integer >= 1, not {self.vertical!r}")
        if self.factor not in ("right", "left"):
            raise LpcfgError(f"factor must be 'right' or 'left', not {self.factor!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BinarizeOptions:
        unknown = set(data) - {"horizontal", "vertical", "factor"}
        if unknown:
            raise LpcfgError(f"unknown binarization option {sorted(unknown)[0]!r}")
        return cls(**data)


def _is_preterminal(node: nltk.Tree) -> bool:
    return len(node) == 1 and isinstance(node[0], str)


def check_labels(tree: nltk.Tree) -> None:
    """Raise LpcfgError if a label would make the binarized label space ambiguous."""
    for node in tree.subtrees():
        label = node.label()
        if CHAIN in label or PARENT in label or label.startswith(INTERMEDIATE):
            raise LpcfgError(
                f"label {label!r} uses a character reserved by the binarization "
                f"('{CHAIN}', '{PARENT}', or a leading '{INTERMEDIATE}')"
            )


def binarize(tree: nltk.Tree, options: BinarizeOptions | None = None) -> nltk.Tree:
    """The strict-normal-form binarization of a normalised tree (a new tree)."""
    opts = options or BinarizeOptions()
    check_labels(tree)

    def visit(node: nltk.Tree, ancestors: tuple[str, ...]) -> nltk.Tree:
        if _is_preterminal(node):
            return nltk.Tree(node.label(), [node[0]])
        label = node.label()
        if opts.vertical > 1 and ancestors:
            label += "".join(PARENT + a for a in ancestors[: opts.vertical - 1])
        inner = (node.label(),) + ancestors
        kids = [visit(child, inner) for child in node]
        if len(kids) == 1:  # unary: collapse into a chain symbol
            child = kids[0]
            return nltk.Tree(label + CHAIN + child.label(), list(child))
        return _factor(label, kids, opts)

    return visit(tree, ())


def _factor(label: str, kids: list[nltk.Tree], opts: BinarizeOptions) -> nltk.Tree:
    """Binary nodes over ``kids`` under ``label`` with intermediate ``@`` symbols.

    An intermediate symbol's context is the last ``h`` siblings generated before it: to its
    left in right factoring, inside it in left factoring.
    """
    if len(kids) == 2:
        return nltk.Tree(label, kids)
    n = len(kids)
    if opts.factor == "right":
        node = nltk.Tree(_intermediate(label, kids[: n - 2], opts), kids[n - 2 :])
        for i in range(n - 3, 0, -1):
            node = nltk.Tree(_intermediate(label, kids[:i], opts), [kids[i], node])
        return nltk.Tree(label, [kids[0], node])
    node = nltk.Tree(_intermediate(label, kids[:2], opts), kids[:2])
    for i in range(2, n - 1):
        node = nltk.Tree(_intermediate(label, kids[: i + 1], opts), [node, kids[i]])
    return nltk.Tree(label, [node, kids[-1]])


def _intermediate(label: str, context: Sequence[nltk.Tree], opts: BinarizeOptions) -> str:
    name = INTERMEDIATE + label
    if opts.horizontal > 0 and context:
        name += CONTEXT + "_".join(k.label() for k in context[-opts.horizontal :])
    return name


def base_label(symbol: str) -> str:
    """Original label of one chain element: annotations and markov context removed."""
    return symbol.split(PARENT, 1)[0]


def debinarize(tree: nltk.Tree) -> nltk.Tree:
    """Undo ``binarize`` from the labels alone.

    Accepts any tree over the binarized label space (as a parser may build it): ``@``
    nodes anywhere are spliced into their parent; an ``@`` symbol at the root becomes its
    base label.
    """
    nodes = _undo(tree)
    if len(nodes) == 1 and isinstance(nodes[0], nltk.Tree):
        return nodes[0]
    label = base_label(tree.label().lstrip(INTERMEDIATE).split(CONTEXT, 1)[0].split(CHAIN)[0])
    return nltk.Tree(label or "X", nodes)


def _undo(node: nltk.Tree | str) -> list[nltk.Tree | str]:
    if isinstance(node, str):
        return [node]
    kids: list[nltk.Tree | str] = []
    for child in node:
        kids.extend(_undo(child))
    label = node.label()
    if label.startswith(INTERMEDIATE):
        return kids
    parts = [base_label(p) for p in label.split(CHAIN)]
    out = nltk.Tree(parts[-1], kids)
    for part in reversed(parts[:-1]):
        out = nltk.Tree(part, [out])
    return [out]
