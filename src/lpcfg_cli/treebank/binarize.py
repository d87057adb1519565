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

The label grammar of the binarized trees is ``labels``'; the labels are self-describing,
so ``debinarize`` needs no options. Any label works (reserved characters are escaped, see
``labels``). A word that is a sibling of phrases (``(NP (DT the) dog)``) gets the internal
pre-terminal ``labels.WORD``, which ``debinarize`` removes again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.hyperparams import check, hyper
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.tree import Tree, is_preterminal


@dataclass(frozen=True)
class BinarizeOptions:
    """How trees are binarized; stored in models so parsing can undo it."""

    horizontal: int = hyper(
        0, "Horizontal markovization order (siblings an intermediate symbol remembers).", min=0
    )
    vertical: int = hyper(
        1, "Vertical order: 1 = none, 2 = parent annotation, 3 = grandparent.", min=1
    )
    factor: str = hyper(
        "right", "Factor n-ary nodes to the right or to the left.", choices=("right", "left")
    )

    def __post_init__(self) -> None:
        for name in ("horizontal", "vertical"):
            if not isinstance(getattr(self, name), int) or isinstance(getattr(self, name), bool):
                raise LpcfgError(f"{name} order must be an integer, not {getattr(self, name)!r}")
        check(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def binarize(tree: Tree, options: BinarizeOptions | None = None) -> Tree:
    """The strict-normal-form binarization of a normalised tree (a new tree).

    Works on trees of any depth and width (an explicit stack, no recursion; a unary chain
    is followed down once, so its symbol is built in time linear in its length).
    """
    opts = options or BinarizeOptions()
    keep = opts.vertical - 1  # ancestor labels a phrasal label is annotated with
    result: Tree | None = None
    # A frame: [chain symbol, bottom node's annotated label, bottom node, its ancestors,
    # next child, binarized children].
    frames = [_chain(tree, (), keep)]
    while frames:
        frame = frames[-1]
        symbol, label, node, ancestors, i, kids = frame
        if is_preterminal(node):
            out = Tree(symbol, [node[0]])
        elif i < len(node):
            frame[4] = i + 1
            child = node[i]
            if isinstance(child, str):  # a word beside phrases: give it a pre-terminal
                kids.append(Tree(labels.WORD, [child]))
            else:
                frames.append(_chain(child, ancestors, keep))
            continue
        else:
            out = _factor(label, kids, opts)
            out.set_label(symbol)
        frames.pop()
        if frames:
            frames[-1][5].append(out)
        else:
            result = out
    assert result is not None
    return result


def _chain(node: Tree, ancestors: tuple[str, ...], keep: int) -> list:
    """A ``binarize`` frame for ``node``: its unary chain followed down to the first node
    that is a pre-terminal or has several children, and the chain's ``+`` symbol.

    Phrasal labels get their nearest ``keep`` ``ancestors`` as ``^`` annotations; the
    pre-terminal at the bottom of a chain is not annotated.
    """
    parts = []
    while True:
        if is_preterminal(node):
            parts.append(labels.escape(node.label()))
            break
        if len(node) == 0:
            raise LpcfgError(f"empty constituent ({node.label()}) in a tree to binarize")
        parts.append(labels.annotated(node.label(), ancestors))
        ancestors = ((node.label(),) + ancestors)[:keep]
        if len(node) > 1 or isinstance(node[0], str):
            break
        node = node[0]
    return [labels.chain(parts), parts[-1], node, ancestors, 0, []]


def _factor(label: str, kids: list[Tree], opts: BinarizeOptions) -> Tree:
    """Binary nodes over ``kids`` under ``label`` with intermediate ``@`` symbols.

    An intermediate symbol's context is the last ``h`` siblings generated before it: to its
    left in right factoring, inside it in left factoring.
    """
    if len(kids) == 2:
        return Tree(label, kids)
    n = len(kids)
    if opts.factor == "right":
        node = Tree(_intermediate(label, kids, n - 2, opts), kids[n - 2 :])
        for i in range(n - 3, 0, -1):
            node = Tree(_intermediate(label, kids, i, opts), [kids[i], node])
        return Tree(label, [kids[0], node])
    node = Tree(_intermediate(label, kids, 2, opts), kids[:2])
    for i in range(2, n - 1):
        node = Tree(_intermediate(label, kids, i + 1, opts), [node, kids[i]])
    return Tree(label, [node, kids[-1]])


def _intermediate(label: str, kids: list[Tree], i: int, opts: BinarizeOptions) -> str:
    """The ``@`` symbol whose context is ``kids[:i]`` (its last ``h`` labels)."""
    context = kids[max(0, i - opts.horizontal) : i] if opts.horizontal > 0 else []
    return labels.intermediate(label, [k.label() for k in context])


def debinarize(tree: Tree) -> Tree:
    """Undo ``binarize`` from the labels alone.

    Accepts any tree over the binarized label space (as a parser may build it): ``@``
    nodes anywhere are spliced into their parent; an ``@`` symbol at the root becomes its
    base label. Works on trees of any depth and width (no recursion).
    """
    nodes: list[Tree | str] = []
    # A frame: [node, next child, its restored children, where its result goes]. The
    # children of an ``@`` node go straight into its parent's list (the splice), so a
    # factored node of n children costs O(n).
    frames = [_undo_frame(tree, nodes)]
    while frames:
        frame = frames[-1]
        node, i, kids, target = frame
        if i < len(node):
            frame[1] = i + 1
            child = node[i]
            if isinstance(child, str):
                kids.append(child)
            else:
                frames.append(_undo_frame(child, kids))
            continue
        frames.pop()
        if target is not None:
            target.append(_unchain(node.label(), kids))
    if len(nodes) == 1 and isinstance(nodes[0], Tree):
        return nodes[0]
    return Tree(labels.top_label(tree.label()) or "X", nodes)


def _undo_frame(node: Tree, parent_kids: list) -> list:
    if labels.is_intermediate(node.label()):
        return [node, 0, parent_kids, None]
    return [node, 0, [], parent_kids]


def _unchain(symbol: str, kids: list[Tree | str]) -> Tree | str:
    """The original nodes of one chain symbol over restored ``kids`` (the word itself for
    the pre-terminal ``labels.WORD``)."""
    if symbol == labels.WORD and len(kids) == 1:
        return kids[0]
    parts = labels.chain_parts(symbol)
    out = Tree(parts[-1], kids)
    for part in reversed(parts[:-1]):
        out = Tree(part, [out])
    return out
