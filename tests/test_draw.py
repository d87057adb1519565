"""Trees drawn (``analysis.drawing``) and `lpcfg draw`: well-formed SVG whose phrase nodes
carry their tree positions, marks, escaping, collapsing, nltk's own text drawing, and the
command's formats, selection, parsing and errors."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from lpcfg_cli.analysis.drawing import (
    MAX_DRAWN_DEPTH,
    phrase_positions,
    tree_svg,
    tree_text,
    trees_html,
    trees_svg,
)
from lpcfg_cli.errors import ParameterError
from lpcfg_cli.treebank.nltk_trees import to_nltk
from lpcfg_cli.treebank.ptb import parse_tree
from lpcfg_cli.treebank.tree import Tree, iter_nodes, leaves, words
from tests.support import ROOT, TINY_TREES, invoke, one_error

NS = "{http://www.w3.org/2000/svg}"
CAT = "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))"


def svg_root(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # raises if the SVG is not well-formed XML
    assert root.tag == NS + "svg"
    assert {"width", "height", "viewBox"} <= set(root.attrib)
    return root


def texts(root: ET.Element, cls: str | None = None) -> list[str]:
    """The content of the ``<text>`` elements (with ``cls`` among their classes)."""
    return [
        el.text or ""
        for el in root.iter(NS + "text")
        if cls is None or cls in el.get("class", "").split()
    ]


def nodes(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(NS + "g") if "node" in g.get("class", "").split()]


def dotted(pos: tuple[int, ...]) -> str:
    return ".".join(map(str, pos))


def chain(depth: int) -> Tree:
    tree = Tree("X", ["w"])
    for _ in range(depth - 2):
        tree = Tree("A", [tree])
    return tree


# ---------------------------------------------------------------------------- library


@pytest.mark.parametrize(
    "line",
    [
        CAT,
        "( (S (NP-SBJ (NNP Kim)) (VP (VBD saw) (NP (DT the) (NN dog) (, ,))) (. .)))",
        "(TOP (S (NP (NP (DT a) (NN b)) (PP (IN c) (NP (NN d)))) (VP (VB e) (NP (-NONE- *T*-1)))))",
    ],
)
def test_svg_has_one_text_per_label_and_word_and_the_phrase_positions(line):
    tree = parse_tree(line)
    root = svg_root(tree_svg(tree))
    labels = [node.label() for node in iter_nodes(tree)]
    assert len(texts(root)) == len(labels) + len(leaves(tree))
    assert sorted(texts(root, "word")) == sorted(leaves(tree))
    tags = [n.label() for n in iter_nodes(tree) if len(n) == 1 and isinstance(n[0], str)]
    assert sorted(texts(root, "tag")) == sorted(tags)
    phrases = nodes(root)
    assert [g.get("data-pos") for g in phrases] == [dotted(p) for p in phrase_positions(tree)]
    nltk_tree = to_nltk(tree)
    for g in phrases:
        pos = tuple(int(i) for i in g.get("data-pos").split(".") if i)
        assert g.get("data-label") == nltk_tree[pos].label()
        assert [t.text or "" for t in g.iter(NS + "text")] == [nltk_tree[pos].label()]
    assert root.iter(NS + "path")  # edges


def test_phrase_positions_are_the_brackets_in_the_order_they_open():
    tree = parse_tree("( (S (NP (DT the) (NN cat)) (VP (VBD sat) (ADVP (RB here))) (. .)))")
    assert phrase_positions(tree) == [(), (0,), (0, 0), (0, 1), (0, 1, 1)]
    assert phrase_positions(parse_tree("(NN cat)")) == []
    deep = chain(5000)  # no recursion: 5,000 levels
    assert len(phrase_positions(deep)) == 4998
    assert phrase_positions(deep)[-1] == (0,) * 4997


def test_marks_become_classes_of_the_nodes_and_their_edges():
    tree = parse_tree(CAT)
    root = svg_root(tree_svg(tree, marks={(1, 1): "extra", (): "missing", (0,): "a b"}))
    classes = {g.get("data-pos"): g.get("class").split() for g in nodes(root)}
    assert classes[""] == ["node", "missing"] and classes["1.1"] == ["node", "extra"]
    assert classes["0"] == ["node", "a", "b"] and classes["1"] == ["node"]
    edges = [p.get("class", "").split() for p in root.iter(NS + "path")]
    assert ["edge", "extra"] in edges and ["edge", "missing"] in edges
    style = "".join(s.text or "" for s in root.iter(NS + "style"))
    assert ".extra" in style and ".missing" in style and "bold" in style
    assert not list(svg_root(tree_svg(tree, standalone=False)).iter(NS + "style"))
    with pytest.raises(ValueError, match="not a phrase node"):
        tree_svg(tree, marks={(0, 0): "extra"})  # a pre-terminal
    with pytest.raises(ValueError, match="not a phrase node"):
        tree_svg(tree, marks={(7,): "extra"})


def test_labels_and_words_are_escaped():
    tree = Tree("S&P", [Tree("NP", [Tree("CC", ["&"]), Tree("SYM", ["<"])]), Tree('"', ['"'])])
    svg = tree_svg(tree, title='a <b> & "c"')
    root = svg_root(svg)
    assert sorted(texts(root, "word")) == sorted(['"', "&", "<"])
    assert nodes(root)[0].get("data-label") == "S&P"
    assert root.find(NS + "title").text == 'a <b> & "c"'
    assert "S&amp;P" in svg


def test_chinese_words():
    tree = parse_tree("(IP (NP (NR 中国)) (VP (VV 发展) (NP (NN 经济))) (PU 。))")
    root = svg_root(tree_svg(tree))
    assert texts(root, "word") == ["中国", "发展", "经济", "。"]
    # wide characters take a full em: the words' columns do not overlap
    xs = [float(el.get("x")) for el in root.iter(NS + "text") if "word" in el.get("class", "")]
    assert all(b - a >= 24 for a, b in zip(xs, xs[1:], strict=False))
    assert "中国" in tree_text(tree)


def test_max_depth_collapses_deeper_phrases_into_a_roof():
    tree = parse_tree(CAT)
    root = svg_root(tree_svg(tree, max_depth=1))
    assert "sat on the mat" in texts(root, "collapsed")
    assert texts(root, "word") == ["the", "cat", "sat on the mat"]
    assert not {"PP", "IN", "VBD"} & set(texts(root))
    vp = [g for g in nodes(root) if g.get("data-label") == "VP"]
    assert [g.get("data-pos") for g in vp] == ["1"] and "collapsed" in vp[0].get("class")
    assert [p for p in root.iter(NS + "path") if "roof" in p.get("class", "")]
    # a node at the depth with only pre-terminals below it is drawn whole
    assert texts(svg_root(tree_svg(tree, max_depth=1)), "tag") == ["DT", "NN"]
    assert texts(svg_root(tree_svg(tree, max_depth=0)), "word") == ["the cat sat on the mat"]
    assert tree_svg(tree, max_depth=9) == tree_svg(tree)
    text = tree_text(tree, max_depth=1)
    assert "sat on the mat" in text and "PP" not in text and "NP" in text
    with pytest.raises(ValueError):
        tree_svg(tree, max_depth=-1)


def test_text_is_nltks_own_drawing():
    from nltk.tree.prettyprinter import TreePrettyPrinter

    tree = parse_tree(CAT)
    assert tree_text(tree) == TreePrettyPrinter(to_nltk(tree)).text(unicodelines=True)
    assert tree_text(tree, unicode=False) == TreePrettyPrinter(to_nltk(tree)).text()
    assert "─" in tree_text(tree) and "─" not in tree_text(tree, unicode=False)


def test_an_empty_tree_is_no_parse():
    root = svg_root(tree_svg(Tree("")))
    assert texts(root) == ["(no parse)"] and nodes(root) == []
    assert tree_text(Tree("")) == "(no parse)\n"
    assert phrase_positions(Tree("")) == [()]


def test_deep_trees_are_drawn_up_to_the_limit_or_collapsed():
    assert len(nodes(svg_root(tree_svg(chain(300))))) == 298
    too_deep = chain(MAX_DRAWN_DEPTH + 1)
    with pytest.raises(ParameterError, match="max_depth"):
        tree_svg(too_deep)
    with pytest.raises(ParameterError, match="max_depth"):
        tree_text(too_deep)
    root = svg_root(tree_svg(chain(5000), max_depth=10))
    assert len(nodes(root)) == 11 and texts(root, "word") == ["w"]


def test_trees_stacked_in_one_svg_and_one_page():
    trees = [parse_tree(CAT), Tree(""), parse_tree("(S (NP (NN a&b)) (VP (VB c)))")]
    root = svg_root(trees_svg(trees, numbers=[4, 5, 9]))
    inner = root.findall(f"{NS}g/{NS}g/{NS}svg")
    assert len(inner) == 3
    assert texts(root, "caption") == ["4", "5", "9"]
    assert "(no parse)" in texts(root)
    stacked = [g.get("transform") for g in root.findall(NS + "g") if g.get("class") == "tree"]
    tops = [float(re.fullmatch(r"translate\(0 ([\d.]+)\)", t)[1]) for t in stacked]
    assert tops == sorted(tops) and len(set(tops)) == 3
    page = trees_html(trees, title="T & t")
    assert page.count("<figure") == 3 and "<title>T &amp; t</title>" in page
    assert "the cat sat on the mat" in page and "a&amp;b c" in page


# ---------------------------------------------------------------------------- lpcfg draw


def urls(page: str) -> list[str]:
    return re.findall(r"""(?:src|href)\s*=\s*["']?([^"' >]*)""", page, re.I)


def test_draw_text_from_stdin_to_stdout():
    res = invoke("draw", stdin="\n".join(TINY_TREES[:2]) + "\n")
    assert res.exit_code == 0, res.stderr
    expected = [tree_text(parse_tree(line)) for line in TINY_TREES[:2]]
    assert res.stdout == "\n".join(expected)
    ascii_ = invoke("draw", "--ascii", stdin=TINY_TREES[0])
    assert ascii_.stdout == tree_text(parse_tree(TINY_TREES[0]), unicode=False)


def test_draw_infers_svg_and_html_from_the_output(tmp_path):
    src = tmp_path / "t.mrg"
    src.write_text("\n".join(TINY_TREES) + "\n()\n")
    out = tmp_path / "x.svg"
    res = invoke("draw", src, "-o", out)
    assert (res.exit_code, res.stdout) == (0, ""), res.stderr
    root = svg_root(out.read_text())
    assert texts(root, "caption") == ["1", "2", "3", "4", "5"]
    assert "(no parse)" in texts(root)
    one = tmp_path / "one.svg"
    assert invoke("draw", src, "--select", "2", "-o", one).exit_code == 0
    assert texts(svg_root(one.read_text()), "word") == ["a", "dog", "ran"]
    page = tmp_path / "x.html"
    assert invoke("draw", src, "-o", page, "--max-depth", "1").exit_code == 0
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 5
    assert "the cat sat on the mat" in html and "(no parse)" in html
    assert not [u for u in urls(html) if "http" in u or "//" in u]
    assert "<link" not in html and "<script" not in html and "@import" not in html
    assert "overflow-x:auto" in html
    forced = invoke("draw", src, "--format", "svg")
    assert forced.exit_code == 0 and svg_root(forced.stdout)


def test_draw_select(tmp_path):
    src = tmp_path / "t.mrg"
    src.write_text("\n".join(TINY_TREES) + "\n")
    res = invoke("draw", src, "--select", "4,1-2")
    assert res.exit_code == 0, res.stderr
    expected = [tree_text(parse_tree(TINY_TREES[i])) for i in (0, 1, 3)]
    assert res.stdout == "\n".join(expected)
    one_error(
        invoke("draw", src, "--select", "2,9"), "--select names tree 9, but the input holds 4"
    )
    for bad in ("x", "0", "3-1", "1,,2"):
        one_error(invoke("draw", src, "--select", bad), "Invalid value for '--select'")


def test_draw_an_empty_tree_is_no_parse():
    res = invoke("draw", stdin="()\n" + TINY_TREES[1] + "\n")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("(no parse)\n\n") and "dog" in res.stdout


def test_draw_refuses_unreadable_input(tmp_path):
    bad = tmp_path / "bad.mrg"
    bad.write_text(TINY_TREES[0] + "\n(S (NP (DT the) (NN cat))\n")
    one_error(invoke("draw", bad), "bad.mrg:2")
    one_error(invoke("draw", tmp_path / "missing.mrg"), "missing.mrg")
    binary = tmp_path / "bin.mrg"
    binary.write_bytes(b"\x00\x01\xff(S x)")
    one_error(invoke("draw", binary), "bin.mrg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mrg", "bin.mrg"]


def test_draw_deep_trees(tmp_path):
    """A unary chain 600 levels deep is drawn; one deeper than the limit is one error line
    naming its line and --max-depth, and is drawn with it."""
    from lpcfg_cli.treebank.ptb import format_tree

    src = tmp_path / "deep.mrg"
    src.write_text(format_tree(chain(600)) + "\n")
    res = invoke("draw", src, "-o", tmp_path / "deep.svg")
    assert res.exit_code == 0, res.stderr
    assert len(nodes(svg_root((tmp_path / "deep.svg").read_text()))) == 598
    src.write_text(TINY_TREES[0] + "\n" + format_tree(chain(MAX_DRAWN_DEPTH + 100)) + "\n")
    for form in ("text", "svg", "html"):
        one_error(invoke("draw", src, "--format", form), "deep.mrg:2: a tree 900 levels deep")
    assert "collapse it with --max-depth" in invoke("draw", src).stderr
    res = invoke("draw", src, "--max-depth", "20")
    assert res.exit_code == 0, res.stderr


def test_draw_parses_sentences_with_a_model(tmp_path):
    (tmp_path / "t.mrg").write_text("\n".join(TINY_TREES) + "\n")
    model = tmp_path / "m.npz"
    res = invoke("train", "--method", "pcfg", tmp_path / "t.mrg", "-o", model)
    assert res.exit_code == 0, res.stderr
    res = invoke("draw", "--model", model, stdin="the cat sat\n\nKim saw the dog\n")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("(no parse)") == 1
    assert all(w in res.stdout for w in ("cat", "sat", "Kim", "dog"))
    sentences = tmp_path / "s.txt"
    sentences.write_text("the cat sat\n\nKim saw the dog\n")
    page = tmp_path / "p.html"
    res = invoke("draw", sentences, "--model", model, "--select", "3", "-o", page)
    assert res.exit_code == 0, res.stderr
    html = page.read_text()
    assert html.count("<figure") == 1 and "Kim saw the dog" in html and 'id="tree-3"' in html


def test_draw_html_in_the_files_encoding(tmp_path):
    """The page says the encoding it is written in; a character that encoding lacks (here in
    the file's name, the page's title) is written as a character reference."""
    src = tmp_path / "中.mrg"
    src.write_text("(S (NP (NN café)) (VP (VB 发展)))\n", encoding="utf-8")
    page = tmp_path / "p.html"
    res = invoke("draw", src, "-o", page)
    assert res.exit_code == 0 and "发展" in page.read_text(encoding="utf-8")
    assert 'charset="utf-8"' in page.read_text(encoding="utf-8")
    src.write_text("(S (NP (NN café)))\n", encoding="latin-1")
    res = invoke("draw", src, "--encoding", "latin-1", "-o", page)
    assert res.exit_code == 0, res.stderr
    html = page.read_text(encoding="latin-1")
    assert ">café<" in html and 'charset="iso8859-1"' in html
    assert "&#20013;.mrg</title>" in html


# ---------------------------------------------------------------------------- the treebank


def test_the_longest_sentence_of_the_treebank_draws():
    path = ROOT / "data" / "train.mrg"
    if not path.exists():
        pytest.skip(f"{path} not found")
    line = max(path.read_text(encoding="utf-8").splitlines(), key=len)
    tree = parse_tree(line)
    assert len(words(tree)) >= 200
    root = svg_root(tree_svg(tree))
    assert texts(root, "word") == leaves(tree)
    assert [g.get("data-pos") for g in nodes(root)] == [dotted(p) for p in phrase_positions(tree)]
    assert tree_text(tree).count("\n") > 10
    collapsed = svg_root(tree_svg(tree, max_depth=2))
    assert len(nodes(collapsed)) < len(nodes(root))
    assert " ".join(texts(collapsed, "word")) == " ".join(leaves(tree))
