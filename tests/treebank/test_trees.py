"""Treebank reading, normalisation and writing."""

from __future__ import annotations

import io
import sys

import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, parse_tree, read_treebank
from lpcfg_cli.treebank.tree import Tree, leaves, words

PRETTY = """( (S
    (NP-SBJ (DT The) (NN cat) )
    (VP (VBD sat) )
    (. .) ))
( (S (NP-SBJ-1 (PRP It)) (VP (VBD rained)) ))
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_reads_pretty_printed_and_one_per_line(tmp_path):
    a = write(tmp_path, "a.mrg", PRETTY)
    b = write(
        tmp_path,
        "b.mrg",
        "(TOP (S (NP (NNP John)) (VP (VBZ runs))))\n(ROOT (NP (NN hello)))\n(S (X (Y z)))\n",
    )
    recs = read_treebank([a, b])
    assert [r.line for r in recs] == [1, 5, 1, 2, 3]
    assert [r.source for r in recs] == [a, a, b, b, b]
    assert words(recs[0].tree) == ["The", "cat", "sat", "."]


def test_reads_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"(S (NN a))\n")))
    assert [r.tree.label() for r in read_treebank(["-"])] == ["S"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("(S (NN a))\n(S (NP (DT a)\n(VP (V b)))\n", 2, "not closed"),
        ("(S (NN a)))\n", 1, "unexpected ')'"),
        ("(S (NN a))\nstray (S (NN b))\n", 2, "text outside brackets"),
        ("(S (NN a))\n(TOP word)\n", 2, "without a pre-terminal"),
        ("(S (NP) (NN a))\n", 1, "empty constituent"),
    ],
)
def test_malformed_input_is_located(tmp_path, text, line, message):
    path = write(tmp_path, "bad.mrg", text)
    with pytest.raises(LpcfgError) as exc:
        read_treebank([path])
    assert exc.value.source == path
    assert exc.value.line == line
    assert message in str(exc.value)


def test_empty_binary_and_invalid_utf8_files(tmp_path):
    for content, message in (
        (b"", "no trees"),
        (b"\x00\x01(S", "binary"),
        (b"(S (NN caf\xe9))", "invalid UTF-8"),
    ):
        path = tmp_path / "f.mrg"
        path.write_bytes(content)
        with pytest.raises(LpcfgError, match=message):
            read_treebank([str(path)])


def test_skip_bad_reports_and_continues(tmp_path):
    path = write(tmp_path, "mixed.mrg", "(S (NN a))\n(S (NP) (NN b))\n(S (NN c))\n")
    bad = []
    recs = read_treebank([path], skip_bad=True, on_bad=bad.append)
    assert [words(r.tree) for r in recs] == [["a"], ["c"]]
    assert len(bad) == 1 and bad[0].line == 2


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "( (S (NP-SBJ-1 (DT The) (NN cat)) (VP (VBD sat) (PP-LOC=2 (IN on) (NP (PRP it))))))",
            "(S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it)))))",
        ),
        (
            "(TOP (S (NP (-NONE- *T*-1)) (VP (VBZ is) (NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-)))))",
            "(S (VP (VBZ is) (NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-))))",
        ),
        ("(ROOT (NP (NP (NP (NN dog)))))", "(NP (NN dog))"),
        ("( (NN hello))", "(NN hello)"),
        ("(S (NP (-NONE- *)) (VP (-NONE- *U*)))", None),
    ],
)
def test_normalize(raw, expected):
    tree = parse_tree(raw)
    before = str(tree)
    out = normalize(tree)
    assert (format_tree(out) if out is not None else None) == expected
    assert str(tree) == before  # input untouched


def test_format_escapes_brackets_and_wraps_root():
    tree = Tree("NP", [Tree("-LRB-", ["("]), Tree("NN", ["x"])])
    assert format_tree(tree, root="TOP") == "(TOP (NP (-LRB- -LRB-) (NN x)))"
    assert format_tree(None) == "()"
    assert leaves(parse_tree(format_tree(tree))) == ["-LRB-", "x"]


def test_standard_split_sizes(ptb_split):
    assert {k: len(v) for k, v in ptb_split.items()} == {"train": 3253, "dev": 316, "test": 345}


def test_a_missing_sample_is_fetched_with_nltks_downloader_and_said(monkeypatch):
    """Without the sample, ``standard_split(fetch=True)`` asks nltk's downloader for it and
    says so; when the download fails (no network), the error says how to get it."""
    import nltk

    from lpcfg_cli.errors import LpcfgError
    from lpcfg_cli.treebank import ptb_sample

    installed = {"now": False}
    asked = []
    monkeypatch.setattr(ptb_sample, "_sample", lambda: (None, [] if installed["now"] else None))

    def download(name, quiet=False, raise_on_error=False):
        asked.append(name)
        return False

    monkeypatch.setattr(nltk, "download", download)
    lines: list[str] = []
    with pytest.raises(LpcfgError, match="nltk's downloader could not fetch it"):
        ptb_sample.standard_split(fetch=True, report=lines.append)
    assert asked == ["treebank"] and "fetching it with nltk's downloader" in lines[0]

    def download_ok(name, quiet=False, raise_on_error=False):
        installed["now"] = True
        return True

    monkeypatch.setattr(nltk, "download", download_ok)
    with pytest.raises(LpcfgError, match="wsj_0001.mrg missing"):  # fetched, but empty here
        ptb_sample.standard_split(fetch=True, report=lines.append)
    assert lines[-1].startswith("the Penn Treebank sample at")
    with pytest.raises(LpcfgError, match="not installed: run"):
        installed["now"] = False
        ptb_sample.standard_split()
