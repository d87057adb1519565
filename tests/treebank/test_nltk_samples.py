"""The fixed splits of nltk's four foreign treebanks (``treebank.nltk_samples``): the layout,
what the readers get wrong (planted, without the corpora), and the splits themselves when
nltk's data has the corpora (sinica in the default run; the others, 15-20 s each to read,
are slow)."""

from __future__ import annotations

import hashlib
import sys

import pytest
from nltk import Tree as NltkTree

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.treebank import nltk_samples as ns
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, trees_from_text
from lpcfg_cli.treebank.tree import iter_nodes, words

# --- the layout -----------------------------------------------------------------------


def test_every_stride_th_tree_is_dealt_twenty_three_three():
    at = ns.split_positions(6000, 2)
    assert {part: len(v) for part, v in at.items()} == ns.SIZES
    assert at["train"][:21] == list(range(0, 40, 2)) + [52]  # 20 kept trees, then dev's 3
    assert at["dev"][:4] == [40, 42, 44, 92] and at["test"][:4] == [46, 48, 50, 98]
    everything = sorted(at["train"] + at["dev"] + at["test"])
    assert everything == list(range(0, 2 * 2600, 2))  # disjoint, and every kept tree used
    assert ns.split_positions(6000, 2) == at  # no randomness


def test_too_few_trees_for_the_stride_is_an_error():
    assert max(max(v) for v in ns.split_positions(7800, 3).values()) == 7797
    with pytest.raises(LpcfgError, match="give only"):
        ns.split_positions(7790, 3)


def test_an_unknown_treebank_is_named():
    with pytest.raises(LpcfgError, match="one of alpino, cess_esp, floresta, sinica"):
        ns.treebank("tiger")


# --- what the readers get wrong (planted nltk trees) ------------------------------------


def nltk_tree(text: str) -> NltkTree:
    return NltkTree.fromstring(text)


def test_flat_parses_and_empty_constituents_are_left_out():
    """nltk's recovering reader returns ``S`` over (word, tag) pairs, or over nothing; a
    word with a bracket in it leaves a constituent without words."""
    raw = [
        nltk_tree("(S (NP (D a) (N b)) (V c))"),
        NltkTree("S", [("a", "D"), ("b", "N")]),
        NltkTree("S", []),
        nltk_tree("(S (N (werk ) dag) (V c))"),
        nltk_tree("(S (V d))"),
    ]
    reading = ns.usable(raw, ns.TREEBANKS["cess_esp"])
    assert reading.positions == [0, 4] and reading.total == 5
    assert reading.left_out == {ns.FLAT_PARSE: [1, 2], ns.EMPTY_CONSTITUENT: [3]}
    assert [format_tree(t) for t in reading.trees] == ["(S (NP (D a) (N b)) (V c))", "(S (V d))"]


def test_alpinos_xml_remnants_are_removed_and_its_escapes_written_as_characters():
    node = '<node begin="0" end="2" id="7" index="1" rel="su"/>'
    raw = [
        nltk_tree(f"(top (punct &quot;) (smain (verb zou) {node} (inf {node})) (noun zo&apos;n))"),
        nltk_tree("(top (punct ( ) (punct )) (noun x))"),  # nltk's words ( and )
    ]
    reading = ns.usable(raw, ns.TREEBANKS["alpino"])
    assert [format_tree(t) for t in reading.trees] == [
        "(top (punct \") (smain (verb zou)) (noun zo'n))"  # inf had only the remnant: gone
    ]
    assert reading.mended == {ns.XML_NODES: 2, ns.XML_ESCAPES: 2}
    assert reading.left_out == {ns.EMPTY_CONSTITUENT: [1]}


def test_florestas_bare_punctuation_gets_its_mark_as_word():
    raw = [nltk_tree("(STA+fcl (SUBJ+n Ele) (P+v-fin saiu) (...) (--))")]
    reading = ns.usable(raw, ns.TREEBANKS["floresta"])
    assert format_tree(reading.trees[0]) == (
        "(STA+fcl (SUBJ+n Ele) (P+v-fin saiu) (... ...) (-- --))"
    )
    assert reading.mended == {ns.BARE_PUNCTUATION: 2} and not reading.left_out
    # elsewhere an empty constituent is not mended
    assert ns.usable(raw, ns.TREEBANKS["cess_esp"]).left_out == {ns.EMPTY_CONSTITUENT: [0]}


class PlantedReader:
    """A corpus reader that recovers from a bad tree as nltk's does, saying so on stderr."""

    root = "/planted/sinica_treebank"

    def __init__(self, trees, installed=True):
        self.trees, self.installed = trees, installed

    def parsed_sents(self):
        if not self.installed:
            raise LookupError("Resource sinica_treebank not found.")
        for tree in self.trees:
            if isinstance(tree, NltkTree) and tree.label() == "S" and isinstance(tree[0], tuple):
                sys.stderr.write("Bad tree detected; trying to recover...\n")
                sys.stderr.write("  Recovered by returning a flat parse.\n")
            yield tree


def test_reading_silences_the_recovery_messages_and_checks_the_counts(monkeypatch, capsys):
    trees = [nltk_tree("(NP (Neu x))")] * 3 + [NltkTree("S", [("y", "N")])]
    planted = ns.NltkTreebank("sinica", "sinica_treebank", "sinica_treebank", "Chinese", 1,
                              trees=4, left_out=1, description="planted")  # fmt: skip
    monkeypatch.setitem(ns.TREEBANKS, "sinica", planted)
    monkeypatch.setattr(ns, "_corpus", lambda tb: PlantedReader(trees))
    lines: list[str] = []
    reading = ns.read("sinica", report=lines.append)
    assert reading.positions == [0, 1, 2] and reading.left_out == {ns.FLAT_PARSE: [3]}
    assert capsys.readouterr().err == ""
    assert lines == ["sinica: 4 trees from /planted/sinica_treebank, 1 left out, 3 usable"]
    # Another reader or corpus (here: one tree fewer) would make another split: refused.
    monkeypatch.setattr(ns, "_corpus", lambda tb: PlantedReader(trees[1:]))
    with pytest.raises(LpcfgError, match="gave 3 trees of which 1 are not usable"):
        ns.read("sinica")
    monkeypatch.setattr(ns, "_corpus", lambda tb: PlantedReader(trees, installed=False))
    with pytest.raises(LpcfgError, match="python -m nltk.downloader sinica_treebank"):
        ns.read("sinica")


# --- the splits, from nltk's data ---------------------------------------------------------


def real_split(name: str) -> ns.Split:
    try:
        return ns.split(name)
    except LpcfgError as err:
        if "not installed" in str(err):
            pytest.skip(f"nltk's {ns.TREEBANKS[name].package} corpus not available: {err}")
        raise


@pytest.fixture(scope="module")
def sinica() -> ns.Split:
    return real_split("sinica")


def check_split(data: ns.Split) -> None:
    """Sizes, disjoint positions in corpus order, and trees lpcfg reads and normalises."""
    assert {part: len(trees) for part, trees in data.parts.items()} == ns.SIZES
    positions = [p for part in data.positions.values() for p in part]
    assert len(set(positions)) == len(positions) == 2600
    assert all(v == sorted(v) for v in data.positions.values())
    left_out = {p for at in data.reading.left_out.values() for p in at}
    assert not left_out & set(positions)
    for trees in data.parts.values():
        text = "".join(format_tree(t, root="TOP") + "\n" for t in trees)
        again = trees_from_text(text)  # lpcfg's own reader takes every tree back
        assert [format_tree(t) for t in again] == [format_tree(t, root="TOP") for t in trees]
        for tree in trees:
            assert words(tree) and normalize(tree) is not None
            assert all(len(node) for node in iter_nodes(tree))


def digest(trees) -> str:
    return hashlib.sha256("".join(format_tree(t) + "\n" for t in trees).encode()).hexdigest()


def test_the_sinica_split_is_the_documented_one(sinica):
    """Every third tree, nothing left out (nltk's sinica reader parses every tree of the
    sample), the same trees on every machine."""
    check_split(sinica)
    assert sinica.reading.total == 10000 and not sinica.reading.left_out
    assert sinica.positions["train"][:4] == [0, 3, 6, 9]
    assert sinica.positions["dev"][:4] == [60, 63, 66, 138]
    assert sinica.positions["test"][-1] == 7797
    assert format_tree(sinica.parts["train"][0]) == "(NP (Neu 一))"  # a one-word tree
    assert digest(sinica.parts["train"]).startswith("cacccd70e6062a5d")
    assert digest(sinica.parts["dev"]).startswith("62bb149743237550")
    assert digest(sinica.parts["test"]).startswith("9816c3133af2153f")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "left_out", "mended"),
    [
        ("alpino", {ns.FLAT_PARSE: 161, ns.EMPTY_CONSTITUENT: 400},
         {ns.XML_NODES: 8412, ns.XML_ESCAPES: 2103}),
        ("cess_esp", {ns.FLAT_PARSE: 30}, {}),
        ("floresta", {ns.FLAT_PARSE: 71}, {ns.BARE_PUNCTUATION: 788}),
    ],
)  # fmt: skip
def test_the_other_splits_leave_out_and_mend_what_the_module_says(name, left_out, mended):
    data = real_split(name)
    check_split(data)
    assert {why: len(at) for why, at in data.reading.left_out.items()} == left_out
    assert data.reading.mended == mended
    assert data.reading.total == ns.TREEBANKS[name].trees
    text = " ".join(w for t in data.parts["train"] for w in words(t))
    assert "<node" not in text and "&quot;" not in text
