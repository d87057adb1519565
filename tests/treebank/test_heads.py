"""Head rules (Collins 1999, appendix A) reached directly: ``head_child`` on one constituent's
children, ``constituent_heads`` on whole trees."""

from __future__ import annotations

import pytest

from lpcfg_cli.treebank.heads import constituent_heads, head_child
from lpcfg_cli.treebank.ptb import parse_tree


@pytest.mark.parametrize(
    ("label", "children", "head"),
    [
        # Base noun phrases: a final possessive heads; else the rightmost noun, ...
        ("NP", ["NNP", "NNP", "POS"], 2),
        ("NP", ["DT", "NN", "POS"], 2),
        ("NP", ["DT", "JJ", "NN", "NNS"], 3),
        ("NP", ["NN", "CC", "NN", "PP"], 2),
        ("NP", ["NP", "NNS"], 1),  # a noun before an NP
        # ... else the leftmost NP, else rightmost $/ADJP/PRN, CD, JJ/JJS/RB/QP, last child.
        ("NP", ["NP", ",", "NP", ","], 0),
        ("NP", ["NP", "PP"], 0),
        ("NP", ["DT", "ADJP", "CD"], 1),
        ("NP", ["$", "CD"], 0),
        ("NP", ["QP", "CD"], 1),
        ("NP", ["CD", "JJ"], 0),
        ("NP", ["DT", "RB"], 1),
        ("NP", ["DT", "DT"], 1),
        ("NP-SBJ-1", ["DT", "NN-HLN"], 1),  # function tags and indices are cut
        ("NX", ["NN", "NNS", "CC"], 1),
        # Verb phrases: left to right, the first of the priority list found.
        ("VP", ["VBD", "NP", "PP"], 0),
        ("VP", ["ADVP", "VBZ", "NP"], 1),
        ("VP", ["MD", "VP"], 0),
        ("VP", ["TO", "VP"], 0),
        ("VP", ["VB", "VBD"], 1),  # the priority list before the position: VBD before VB
        ("VP", ["VP", "CC", "VP"], 0),
        ("VP", ["ADVP", "NP", "VP"], 2),
        ("VP", ["ADVP", "PP"], 0),  # no priority label: the first child
        # Other phrases, left or right to left.
        ("S", ["NP-SBJ", "VP", "."], 1),
        ("S", ["PP", ",", "NP-SBJ", "VP"], 3),
        ("PP", ["IN", "NP"], 0),
        ("PP", ["IN", "IN", "NP"], 1),  # searched right to left
        ("PP", ["NP", "ADVP"], 1),  # right to left, nothing found: the last child
        ("ADVP", ["RB", "RB"], 1),
        ("SBAR", ["IN", "S"], 0),
        ("FRAG", ["NP", "PP"], 1),  # no priority list, right to left
        ("PRN", [",", "NP", ","], 0),  # no priority list, left to right
        # Labels without rules and one-child constituents: the first child.
        ("XYZ", ["NN", "VB", "NP"], 0),
        ("TOP", ["S", "."], 0),
        ("NP", ["PRP"], 0),
        ("PP", ["NP"], 0),
    ],
)
def test_head_child(label, children, head):
    assert head_child(label, children) == head


def test_constituent_heads_of_a_sentence():
    tree = parse_tree(
        "(S (NP-SBJ (DT The) (NN cat) (POS 's)) (VP (VBD sat) "
        "(PP (IN on) (NP (DT the) (NN mat)))) (. .))"
    )
    heads = constituent_heads(tree)
    assert heads == {
        (0, 1): 0,
        (1, 2): 1,
        (2, 3): 2,
        (3, 4): 3,
        (4, 5): 4,
        (5, 6): 5,
        (6, 7): 6,
        (7, 8): 7,
        (0, 3): 2,  # NP: the possessive
        (5, 7): 6,  # NP: the noun
        (4, 7): 4,  # PP: the preposition
        (3, 7): 3,  # VP: the verb
        (0, 8): 3,  # S: the VP's head
    }


def test_a_unary_chain_shares_its_head_and_words_beside_phrases_count():
    tree = parse_tree("(S (VP (VB go) (NP (NP (NNS cats)))) here)")
    assert constituent_heads(tree) == {(0, 1): 0, (1, 2): 1, (0, 2): 0, (2, 3): 2, (0, 3): 0}
