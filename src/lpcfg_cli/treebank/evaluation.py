"""EVALB's figures for trees in memory: ``evaluate(gold, test)`` takes ``Tree`` objects (or
bracketed lines, or ``None`` for a sentence without a parse) and scores them exactly as
``lpcfg evaluate`` scores files (``evalb``: the original program's figures, plus the strict
ones that count failed sentences as wrong)."""

from __future__ import annotations

from collections.abc import Sequence

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.evalb import EvalResult, evaluate_lines
from lpcfg_cli.evalb.params import EvaluateOptions
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import Tree


def evaluate(
    gold: Sequence[Tree | str],
    test: Sequence[Tree | str | None],
    *,
    param: str = "collins",
    cutoff: int = 40,
) -> EvalResult:
    """Score ``test`` trees against ``gold`` trees, in order (``param``: ``collins`` for
    COLLINS.prm, or ``none``; ``cutoff``: the length limit of the second summary block).
    ``result.all.figures()`` holds every figure: ``fmeasure`` is EVALB's, ``strict_fmeasure``
    counts skipped and failed sentences as wrong; ``format_report`` prints EVALB's report."""
    options = EvaluateOptions(cutoff=cutoff, param=param)  # checks both
    for name, trees in (("gold", gold), ("test", test)):
        if isinstance(trees, (str, bytes, Tree)) or not isinstance(trees, Sequence):
            raise TypeError(f"{name} must be a sequence of trees, not {type(trees).__name__}")
    if not gold:  # EVALB's F-measure of nothing is "-nan"
        raise ParameterError("{gold} holds no trees: nothing to score")
    return evaluate_lines(
        [_line(t) for t in gold], [_line(t) for t in test], options.params, options.cutoff
    )


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
