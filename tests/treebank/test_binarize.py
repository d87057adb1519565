"""Binarization into strict normal form, and its exact inverse."""

from __future__ import annotations

import itertools

import pytest

from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize, debinarize
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import parse_tree
from lpcfg_cli.treebank.tree import Tree, iter_nodes


def in_normal_form(tree: Tree) -> bool:
    for node in iter_nodes(tree):
        pre = len(node) == 1 and isinstance(node[0], str)
        inner = len(node) == 2 and not any(isinstance(k, str) for k in node)
        if not (pre or inner):
            return False
    return True


OPTIONS = [
    BinarizeOptions(h, v, f)
    for h, v, f in itertools.product([0, 1, 2], [1, 2, 3], ["right", "left"])
]


def test_examples():
    t = parse_tree("(S (NP (DT a) (JJ b) (NN c) (NN d)) (VP (VB go)))")
    assert str(binarize(t)) == ("(S (NP (DT a) (@NP (JJ b) (@NP (NN c) (NN d)))) (VP+VB go))")
    # Left factoring: an intermediate node remembers the last h children inside it (NN c,
    # not NNS d outside it), its parent's label after ^.
    u = parse_tree("(S (NP (DT a) (JJ b) (NN c) (NNS d)) (VP (VB go)))")
    left = binarize(u, BinarizeOptions(horizontal=1, vertical=2, factor="left"))
    assert str(left) == (
        "(S (NP^S (@NP^S/NN (@NP^S/JJ (DT a) (JJ b)) (NN c)) (NNS d)) (VP^S+VB go))"
    )
    assert debinarize(left) == u
    right = binarize(u, BinarizeOptions(horizontal=2, vertical=1, factor="right"))
    assert str(right) == "(S (NP (DT a) (@NP/DT (JJ b) (@NP/DT_JJ (NN c) (NNS d)))) (VP+VB go))"
    assert debinarize(right) == u


def test_one_word_sentences_survive():
    for raw in ["(NN hello)", "(S (VP (VB go)))", "(FRAG (NP (NN wow)))"]:
        t = parse_tree(raw)
        for opts in OPTIONS:
            b = binarize(t, opts)
            assert len(b) == 1 and isinstance(b[0], str)
            assert debinarize(b) == t


def test_reserved_characters_are_escaped_and_restored():
    t = parse_tree("(S (A+B (NN x)) (@VB y))")
    b = binarize(t)
    assert str(b) == "(S (A%2BB+NN x) (%40VB y))"
    assert debinarize(b) == t


def test_debinarize_accepts_parser_output_with_odd_intermediates():
    t = parse_tree("(@NP (DT a) (@VP (NN b) (NN c)))")
    assert str(debinarize(t)) == "(NP (DT a) (NN b) (NN c))"


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: f"h{o.horizontal}v{o.vertical}{o.factor}")
def test_round_trip_on_whole_sample(ptb_trees, opts):
    normal = [normalize(t) for t in ptb_trees]
    assert len(normal) == 3914
    for tree in normal:
        b = binarize(tree, opts)
        assert in_normal_form(b)
        assert debinarize(b) == tree
