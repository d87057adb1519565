"""Root conventions: warn when gold and test wrap their trees differently.

Treebanks and parsers disagree on the root: ``( (S ..) )`` (an empty outer bracket),
``(TOP (S ..))``, ``(ROOT (S ..))`` or none. EVALB deletes only TOP, so a root bracket on
one side and not the other misses in every sentence. EVALB says nothing about it; ``lpcfg
evaluate`` warns, judging from the first trees that have words, read as EVALB reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

from lpcfg_cli.evalb.messages import SilentLog
from lpcfg_cli.evalb.params import COLLINS, EvalbParams
from lpcfg_cli.evalb.reader import Reader

__all__ = ["convention_warning", "root_convention"]

_WRAPPERS = ("", "TOP", "ROOT", "VROOT", "S1")  # labels of a bracket that only wraps a tree


def root_convention(line: str, params: EvalbParams = COLLINS) -> str | None:
    """The root bracket a tree line adds, as EVALB scores it.

    ``"''"`` for an empty outer bracket ``( (S ..) )``, the label for a wrapper such as
    ``(ROOT (S ..))``, ``"-"`` when there is no scored wrapper (none, or a deleted one such
    as TOP), None when the line has no words (nothing to judge).
    """
    reader = Reader(params)
    tree = reader.read(line, 0, SilentLog())
    if not tree.words or tree.unreadable or not tree.brackets:
        return None
    outer = tree.brackets[0]
    inner = tree.brackets[1] if len(tree.brackets) > 1 else None
    n = len(tree.words)
    wraps = (
        outer[1] == 0
        and outer[2] == n
        and inner is not None
        and inner[1] == 0
        and inner[2] == n
        and outer[0] in _WRAPPERS
    )
    if not wraps:
        return "-"
    label = reader.label(outer[0])
    if label is None:
        return "-"
    return label or "''"


def convention_warning(
    gold_lines: Sequence[str], test_lines: Sequence[str], params: EvalbParams = COLLINS
) -> str | None:
    """A one-line warning when the first trees of GOLD and TEST wrap their root
    differently in a way EVALB scores (e.g. ``( (S ..) )`` vs ``(TOP (S ..))``): the extra
    root bracket then misses in every sentence."""
    gold = _first_convention(gold_lines, params)
    test = _first_convention(test_lines, params)
    if gold is None or test is None or gold == test:
        return None
    return (
        f"root conventions differ: gold trees have {_describe(gold)}, test trees have "
        f"{_describe(test)}; EVALB scores that root bracket, so every sentence loses it "
        "(normalise the roots, e.g. both with TOP, which EVALB deletes)"
    )


def _first_convention(lines: Sequence[str], params: EvalbParams) -> str | None:
    """The root convention of the first line that has one."""
    return next((c for c in (root_convention(s, params) for s in lines) if c), None)


def _describe(conv: str) -> str:
    if conv == "''":
        return "an empty outer bracket '( (S ..) )'"
    if conv == "-":
        return "no scored root bracket"
    return f"a '({conv} ..)' root bracket"
