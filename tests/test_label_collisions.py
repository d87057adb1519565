"""Words, tags and phrase labels that collide in the label space or in the lexicon.

A Portuguese treebank spells the word ``{`` as it is, and ``parse`` wrote it back as
``-LCB-``, so its own gold trees no longer matched in EVALB. Each test pins a collision to
its mechanism.
"""

from __future__ import annotations

from lpcfg_cli.tree import Tree
from lpcfg_cli.trees import format_tree, parse_tree

# --- the writer ---------------------------------------------------------------------------


def test_only_round_brackets_are_escaped_when_writing() -> None:
    """``(`` and ``)`` are the only characters that break a PTB line: every other word and
    label is written as it came, so a treebank spelling ``{`` gets ``{`` back."""
    tree = Tree("[X]", ["{", "[", "]", "}", "-LCB-", "(", ":-)", "x{y"])
    assert format_tree(tree) == "([X] { [ ] } -LCB- -LRB- :--RRB- x{y)"
    assert format_tree(parse_tree(format_tree(tree))) == format_tree(tree)
