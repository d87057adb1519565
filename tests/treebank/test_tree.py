"""The tree type: equality, copies and pickling without recursion; the reader's grammar."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from lpcfg_cli.treebank.ptb import format_tree, parse_tree
from lpcfg_cli.treebank.tree import Tree


def deep(depth: int) -> Tree:
    tree = Tree("A", ["end"])
    for i in range(depth):
        tree = Tree("X", [Tree("W", [f"w{i}"]), tree])
    return tree


def test_equality_is_labels_words_and_shape() -> None:
    t = parse_tree("(S (NP (DT a) (NN b)) (VP (VB c)))")
    assert t == parse_tree("(S (NP (DT a) (NN b)) (VP (VB c)))")
    assert t != parse_tree("(S (NP (DT a) (NN b)) (VP (VB d)))")
    assert t != parse_tree("(S (NP (DT a) (NN b)) (XP (VB c)))")
    assert t != parse_tree("(S (NP (DT a) (NN b)))")
    assert Tree("A", ["x"]) != Tree("A", [Tree("x", [])])
    assert Tree("A", ["x"]) != ["x"]


def test_deep_trees_compare_copy_and_pickle() -> None:
    """50,000 levels: each of these recursed (or was refused) with nltk's trees."""
    t = deep(50_000)
    c = t.copy()
    assert c == t and c is not t and c[1] is not t[1]
    c[1][0][0] = "changed"
    assert c != t
    back = pickle.loads(pickle.dumps(t))
    assert back == t
    assert format_tree(back) == format_tree(t)


def test_pickle_keeps_every_word_exactly() -> None:
    t = Tree("S", [Tree("JJ", [":-)"]), Tree("NN", ["(a)"]), Tree("X", []), Tree("", ["w"])])
    assert pickle.loads(pickle.dumps(t)) == t


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(S (NP x) y)", Tree("S", [Tree("NP", ["x"]), "y"])),
        ("( (S (A b)) )", Tree("", [Tree("S", [Tree("A", ["b"])])])),
        ("()", Tree("", [])),
        ("(TOP)", Tree("TOP", [])),
        ("(NN a\\)", Tree("NN", ["a\\"])),  # a backslash is an ordinary character
        ("(S\n  (A  b)\t(C d))", Tree("S", [Tree("A", ["b"]), Tree("C", ["d"])])),
    ],
)
def test_reader(text: str, expected: Tree) -> None:
    assert parse_tree(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(S (A b)", "not closed"),
        ("(S (A b)))", "text after the tree"),
        ("(S a) (T b)", "text after the tree"),
        ("word", "outside any bracket"),
        ("", "no tree"),
        (")", "closes nothing"),
    ],
)
def test_reader_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_tree(text)


def test_the_command_line_does_not_import_nltk() -> None:
    """nltk's import took 1.1 s of every command's start-up; only `make data` needs it."""
    code = "import sys, lpcfg_cli.cli.group; print('nltk' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
