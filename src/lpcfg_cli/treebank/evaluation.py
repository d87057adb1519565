"""EVALB's figures for trees in memory: ``evaluate(gold, test)`` takes ``Tree`` objects (or
bracketed lines, or ``None`` for a sentence without a parse) and scores them exactly as
``lpcfg evaluate`` scores files (``evalb``: the original program's figures, plus the strict
ones that count failed sentences as wrong)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.evalb import EvalResult, evaluate_lines
from lpcfg_cli.evalb.params import EvaluateOptions
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, trees_from_text
from lpcfg_cli.treebank.tree import Tree, words


def evaluate(
    gold: Sequence[Tree | str],
    test: Sequence[Tree | str | None],
    *,
    param: str = "collins",
    cutoff: int = 40,
    conventions: Conventions = PTB,
) -> EvalResult:
    """Score ``test`` trees against ``gold`` trees, in order (``param``: ``collins`` for
    COLLINS.prm, or ``none``; ``cutoff``: the length limit of the second summary block;
    ``conventions``: the treebank's, applied to both as ``convention_lines`` says, the Penn
    Treebank's by default, which EVALB's parameters apply themselves).
    ``result.all.figures()`` holds every figure: ``fmeasure`` is EVALB's, ``strict_fmeasure``
    counts skipped and failed sentences as wrong; ``format_report`` prints EVALB's report."""
    options = EvaluateOptions(cutoff=cutoff, param=param)  # checks both
    for name, trees in (("gold", gold), ("test", test)):
        if isinstance(trees, (str, bytes, Tree)) or not isinstance(trees, Sequence):
            raise TypeError(f"{name} must be a sequence of trees, not {type(trees).__name__}")
    if not gold:  # EVALB's F-measure of nothing is "-nan"
        raise ParameterError("{gold} holds no trees: nothing to score")
    if conventions != PTB:
        read = [_tree(t) for t in gold], [_tree(t) for t in test]
        gold_lines, test_lines = convention_lines(*read, conventions)
    else:
        gold_lines, test_lines = [_line(t) for t in gold], [_line(t) for t in test]
    return evaluate_lines(gold_lines, test_lines, options.params, options.cutoff)


def _tree(tree: Tree | str | None) -> Tree | None:
    """A tree given as a tree or a bracketed line (None, or ``()``: no tree)."""
    if isinstance(tree, str):
        found = trees_from_text(tree)
        return found[0] if found and len(found[0]) else None
    return tree


def convention_lines(
    gold: Sequence[Tree | None], test: Sequence[Tree | None], conventions: Conventions
) -> tuple[list[str], list[str]]:
    """Gold and test trees as the lines EVALB scores, both normalised by the treebank's
    ``conventions`` (``normalize``: dropped nodes, empty elements and lemmas removed, labels
    cut to categories; None or a tree left without words is ``()``).

    A test tree may come from ``parse`` (its words already read with the conventions) or
    from a parser fed the treebank's own tokens: its word rules (empty elements, lemmas)
    are applied when that gives the gold's words, and left out when leaving them out does,
    since cutting a lemma twice would cut a hyphenated word."""
    words_only = replace(conventions, empty="", lemma="")
    gold_normal = [normalize(t, conventions) if t is not None else None for t in gold]
    test_lines = []
    for i, t in enumerate(test):
        tree = normalize(t, conventions) if t is not None else None
        target = gold_normal[i] if i < len(gold_normal) else None
        if tree is not None and target is not None and words(tree) != words(target):
            plain = normalize(t, words_only)
            if plain is not None and words(plain) == words(target):
                tree = plain
        test_lines.append(_line(tree))
    return [_line(t) for t in gold_normal], test_lines


def _line(tree: Tree | str | None) -> str:
    if tree is None:
        return "()"
    if isinstance(tree, str):
        return tree
    if not isinstance(tree, Tree):
        raise TypeError(
            f"a tree must be a Tree, a bracketed string or None, not {type(tree).__name__}"
        )
    return format_tree(tree)
