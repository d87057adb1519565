"""Tree reading and writing on hostile input (issue 12, items 2, 3, 5, 6 and 8).

Brackets inside words and labels, a broken tree among good ones, trees thousands of levels
deep or thousands of children wide, empty trees and a byte-order mark: each is read and
written without loss, through the library and through `binarize`, `evaluate` and `parse`.
"""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.parsing.decoders import _build
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize, debinarize
from lpcfg_cli.treebank.heads import constituent_heads
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import escape_token, format_tree, parse_tree, read_treebank
from lpcfg_cli.treebank.tree import Tree, iter_nodes, leaves, tagged_words, words
from tests.support import run

DEPTH = 5_000
WIDTH = 2_000


def write(tmp_path, name: str, text: str, bom: bool = False) -> str:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return str(path)


def balanced(line: str) -> bool:
    depth = 0
    for char in line:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


# --- item 2: brackets inside words and labels are escaped, and read back -----------------

HOSTILE_TOKENS = [
    ":-)",
    "(a)",
    "((",
    ")",
    "(",
    "a(b",
    "x)y)",
    "{",
    "]",
    ":-\\",
    "a\\",
    "\\)",
    "-LRB-",
    "é(ü)",
    "日本)",
]


def test_brackets_inside_tokens_are_written_with_ptb_names():
    assert format_tree(Tree("JJ", [":-)"]), root="TOP") == "(TOP (JJ :--RRB-))"
    assert format_tree(Tree("VB", ["(a)"])) == "(VB -LRB-a-RRB-)"
    assert format_tree(Tree("NP(x", [Tree("A)", ["w"])])) == "(NP-LRB-x (A-RRB- w))"
    # Only round brackets break the format: a brace or square bracket is written as it is.
    assert escape_token("{") == "{" and escape_token("]") == "]" and escape_token("x{") == "x{"


def test_every_written_tree_is_balanced_and_reads_back_as_written(tmp_path):
    tree = Tree(")S(", [Tree(f"T{i}(", [tok]) for i, tok in enumerate(HOSTILE_TOKENS)])
    line = format_tree(tree, root="TOP")
    assert balanced(line)
    (rec,) = read_treebank([write(tmp_path, "w.mrg", line + "\n")])
    assert format_tree(rec.tree) == line
    assert len(leaves(rec.tree)) == len(HOSTILE_TOKENS)
    # A word ending in a backslash stays one word (nltk alone would read "\)" as text).
    assert leaves(rec.tree)[HOSTILE_TOKENS.index("a\\")] == "a\\"


def test_evaluate_scores_escaped_words_like_any_other(tmp_path):
    line = format_tree(Tree("S", [Tree("JJ", [":-)"]), Tree("NN", ["(a)"])]), root="TOP")
    result = evaluate_lines([line], [line])
    assert not result.messages and result.all.figures()["fmeasure"] == 100.0


# --- item 3: --skip-bad resynchronises at the next tree and names what was lost ----------


def fifty_one_trees_line_two_broken() -> str:
    lines = [f"(S (NP (NN w{i})) (VP (VB v{i})))" for i in range(51)]
    lines[1] = lines[1][:-1]  # one ')' missing on line 2
    return "".join(line + "\n" for line in lines)


def test_skip_bad_loses_only_the_broken_tree(tmp_path):
    path = write(tmp_path, "tb.mrg", fifty_one_trees_line_two_broken())
    bad = []
    recs = read_treebank([path], skip_bad=True, on_bad=bad.append)
    assert len(recs) == 50
    assert [r.line for r in recs] == [1, *range(3, 52)]
    assert [(e.line, e.message.rsplit("; ", 1)[-1]) for e in bad] == [(2, "lost line 2")]


def test_skip_bad_in_a_pretty_printed_file_resumes_at_the_next_tree(tmp_path):
    """Indented lines continue a tree; a line starting with '(' at the margin starts one, so
    a missing ')' and a later extra ')' do not silently merge the trees between them."""
    text = (
        "( (S (NP (DT a))\n    (VP (V b)\n    (. .) ))\n"  # line 2 lacks a ')'
        "( (S (NP (DT c))\n    (VP (V d))))\n"
        "( (S (NP (DT e)) (VP (V f)))) )\n"  # a stray ')' at the end
        "( (S (NP (DT g)) (VP (V h))))\n"
    )
    bad = []
    recs = read_treebank([write(tmp_path, "p.mrg", text)], skip_bad=True, on_bad=bad.append)
    assert [words(r.tree) for r in recs] == [["c", "d"], ["g", "h"]]
    assert [r.line for r in recs] == [4, 7]
    assert [(e.line, e.message.rsplit("; ", 1)[-1]) for e in bad] == [
        (1, "lost lines 1-3"),
        (6, "lost line 6"),
    ]


def test_binarize_and_train_skip_bad_keep_fifty_of_fifty_one(tmp_path):
    path = write(tmp_path, "tb.mrg", fifty_one_trees_line_two_broken())
    res = run("binarize", "--skip-bad", path)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 50
    assert res.stderr == (
        f"lpcfg: warning: {path}:2: unbalanced brackets: '(' not closed "
        "before the next tree on line 3; lost line 2 (skipped)\n"
    )
    res = run("train", "--method", "pcfg", "--skip-bad", path, "-o", str(tmp_path / "m.npz"))
    assert res.returncode == 0, res.stderr
    assert f"{path}:2: " in res.stderr and "lost line 2" in res.stderr
    assert "50 trees" in res.stderr


# --- item 5: any depth, any width, no recursion --------------------------------------------


def right_branching(depth: int) -> Tree:
    """(X (A a0) (X (A a1) (X ... (A end)))): ``depth`` levels, binary all the way down."""
    tree = Tree("A", ["end"])
    for i in range(depth - 1):
        tree = Tree("X", [Tree("A", [f"a{i}"]), tree])
    return tree


def unary_chain(depth: int) -> Tree:
    """(U0 (U1 (U0 ... (A end)))): one word under ``depth`` levels."""
    tree = Tree("A", ["end"])
    for i in range(depth - 1):
        tree = Tree(f"U{i % 2}", [tree])
    return tree


def wide(width: int) -> Tree:
    return Tree("S", [Tree(f"T{i % 7}", [f"w{i}"]) for i in range(width)])


SHAPES = {
    "right-branching": lambda: right_branching(DEPTH),
    "unary": lambda: unary_chain(DEPTH),
    "wide": lambda: wide(WIDTH),
}


def height(tree: Tree) -> int:
    best, stack = 0, [(tree, 1)]
    while stack:
        node, h = stack.pop()
        best = max(best, h)
        stack.extend((c, h + 1) for c in node if isinstance(c, Tree))
    return best


@pytest.mark.parametrize("shape", SHAPES)
def test_library_handles_deep_and_wide_trees(tmp_path, shape):
    tree = SHAPES[shape]()
    line = format_tree(tree)
    (rec,) = read_treebank([write(tmp_path, "t.mrg", line + "\n")])
    assert format_tree(rec.tree) == line
    normal = normalize(rec.tree)
    assert format_tree(normal) == line
    assert words(normal) == leaves(normal) == [w for w, _ in tagged_words(tree)]
    for opts in (BinarizeOptions(), BinarizeOptions(horizontal=2, vertical=3, factor="left")):
        binary = binarize(normal, opts)
        assert format_tree(debinarize(binary)) == line
    binary = binarize(normal)
    assert height(binary) == {"right-branching": DEPTH, "unary": 1, "wide": WIDTH}[shape]
    _, bank = build_grammar([binary])
    assert bank.n_nodes == len(list(iter_nodes(binary)))
    assert int(bank.height.max()) == height(binary)
    assert constituent_heads(normal)[(0, len(words(normal)))] == 0  # no rule: first child


def test_binarize_refuses_what_is_not_a_normalised_tree_in_one_line():
    with pytest.raises(LpcfgError, match="empty constituent"):
        binarize(parse_tree("(S (NP) (NN x))"))


def test_x_over_x_chains_of_any_length_collapse():
    tree = Tree("NN", ["w"])
    for _ in range(DEPTH):
        tree = Tree("NP", [tree])
    assert format_tree(normalize(Tree("TOP", [tree]))) == "(NP (NN w))"


def test_decoding_a_long_sentence_builds_a_deep_tree_without_recursion():
    n = 2_000
    layout = SpanLayout([n])
    split = np.ones(layout.n_spans, dtype=np.int64)  # every span splits after its first word
    labels = np.zeros(layout.n_spans, dtype=np.int64)
    tree = _build(layout, 0, n, split, labels, ["X"], [f"w{i}" for i in range(n)])
    assert height(tree) == n
    assert leaves(tree) == [f"w{i}" for i in range(n)]


def test_binarize_and_evaluate_commands_handle_deep_and_wide_trees(tmp_path):
    lines = [format_tree(make(), root="TOP") for make in SHAPES.values()]
    gold = write(tmp_path, "gold.mrg", "".join(line + "\n" for line in lines))
    out = tmp_path / "bin.txt"
    res = run("binarize", gold, "-o", str(out))
    assert res.returncode == 0, res.stderr
    back = run("binarize", "--reverse", str(out))
    assert back.returncode == 0, back.stderr
    assert back.stdout.splitlines() == [line[len("(TOP ") : -1] for line in lines]
    res = run("evaluate", "--json", gold, gold)
    assert res.returncode == 0, res.stderr
    assert '"fmeasure": 100.0' in res.stdout
    result = evaluate_lines(lines, lines)
    assert result.all.figures()["fmeasure"] == 100.0


# --- item 6: an empty tree in gives () out ------------------------------------------------


def test_reader_keeps_empty_trees_in_place(tmp_path):
    path = write(tmp_path, "e.mrg", "(S (NN a))\n()\n(TOP)\n(S (NN b))\n")
    recs = read_treebank([path])
    assert [(r.line, len(r.tree)) for r in recs] == [(1, 1), (2, 0), (3, 0), (4, 1)]
    assert [words(r.tree) for r in recs] == [["a"], [], [], ["b"]]


def test_binarize_writes_one_line_per_tree_including_empty_ones():
    trees = "(S (NP (NN a)) (VP (VB b)))\n()\n(S (NP (-NONE- *)) (VP (-NONE- *T*)))\n"
    res = run("binarize", stdin=trees + "(S (NN c) (VB d))\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "(S (NP+NN a) (VP+VB b))\n()\n()\n(S (NN c) (VB d))\n"
    back = run("binarize", "--reverse", stdin=res.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout == "(S (NP (NN a)) (VP (VB b)))\n()\n()\n(S (NN c) (VB d))\n"


# --- item 8: a UTF-8 byte-order mark starts a file, it is not text ------------------------


def test_byte_order_mark_is_accepted_by_the_reader(tmp_path):
    recs = read_treebank([write(tmp_path, "b.mrg", "(S (NN a))\n", bom=True)])
    assert [format_tree(r.tree) for r in recs] == ["(S (NN a))"]
    res = run("binarize", write(tmp_path, "b.mrg", "(S (NN a) (VB b))\n", bom=True))
    assert (res.returncode, res.stdout) == (0, "(S (NN a) (VB b))\n")


def test_byte_order_mark_is_accepted_by_evaluate_in_gold_and_test(tmp_path):
    text = "(TOP (S (NP (NN a)) (VP (VB b))))\n(TOP (S (NN c) (VB d)))\n"
    plain = run("evaluate", write(tmp_path, "g.mrg", text), write(tmp_path, "t.mrg", text))
    assert plain.returncode == 0, plain.stderr
    marked = run(
        "evaluate",
        write(tmp_path, "gb.mrg", text, bom=True),
        write(tmp_path, "tb.mrg", text, bom=True),
    )
    assert (marked.returncode, marked.stdout, marked.stderr) == (0, plain.stdout, "")


# --- parse: the same guarantees at the command line ---------------------------------------


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    bank = "".join(
        f"(S (NP (DT the) (NN {n})) (VP (VB {v}) (JJ {a})))\n"
        for n in ("cat", "dog")
        for v in ("is", "looks")
        for a in ("big", "red")
    )
    (d / "train.mrg").write_text(bank)
    res = run("train", "--method", "pcfg", str(d / "train.mrg"), "-o", str(d / "m.npz"))
    assert res.returncode == 0, res.stderr
    return d / "m.npz"


def test_parse_writes_balanced_trees_for_bracketed_words(tiny_model):
    res = run(
        "parse", str(tiny_model), "--no-progress", stdin="the cat is :-)\nthe (a) looks x)y\n"
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and all(balanced(line) for line in lines)
    assert ":--RRB-" in lines[0] and "-LRB-a-RRB-" in lines[1] and "x-RRB-y" in lines[1]


def test_parse_trees_input_gives_one_line_per_tree_empty_ones_too(tiny_model, tmp_path):
    trees = "(S (NN the) (NN cat))\n()\n(TOP (S (NN the) (NN dog)))\n( )\n"
    path = write(tmp_path, "in.mrg", trees, bom=True)
    res = run("parse", str(tiny_model), "--input", "trees", path, "--no-progress")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 4 and lines[1] == lines[3] == "()"
    assert lines[0].startswith("(TOP ") and lines[2].startswith("(TOP ")
