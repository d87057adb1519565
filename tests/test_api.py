"""The public Python API (``lpcfg_cli.__all__``): every name resolves, importing the package
costs nothing, and the documented uses work: read a treebank, train any method with its
options dataclass, save and load, parse token lists and streams into trees, convert to and
from ``nltk.Tree``, evaluate, and parse through nltk's ``ParserI``."""

from __future__ import annotations

import subprocess
import sys

import nltk
import pytest
from nltk.parse.api import ParserI

import lpcfg_cli as lp
from tests.support import TINY_TREES


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    d = tmp_path_factory.mktemp("api")
    (d / "train.mrg").write_text("\n".join(TINY_TREES) + "\n")
    return d


def test_every_public_name_resolves():
    assert lp.__all__[0] == "__version__"
    for name in lp.__all__:
        assert getattr(lp, name) is not None, name
    assert set(dir(lp)) >= set(lp.__all__)
    with pytest.raises(AttributeError):
        lp.no_such_name  # noqa: B018


def test_importing_the_package_imports_no_numerical_code():
    code = (
        "import sys, lpcfg_cli; "
        "print(sorted(m for m in ('numpy', 'nltk', 'numba', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_train_parse_print_and_score(treebank):
    """The README's example, step by step."""
    model = lp.train(treebank / "train.mrg", method="pcfg")
    sentences = [["the", "cat", "sat"], ["Kim", "saw", "the", "dog"]]
    trees = list(lp.parse(model, sentences))
    printed = [lp.to_nltk(t) for t in trees]
    assert all(isinstance(t, nltk.Tree) for t in printed)
    assert [t.leaves() for t in printed] == sentences
    gold = lp.trees_from_text("(S (NP (DT the) (NN cat)) (VP (VBD sat)))" + TINY_TREES[2])
    figures = lp.evaluate(gold, trees).all.figures()
    assert figures["sentences"] == 2 and figures["strict_fmeasure"] == 100.0
    assert len(lp.read_trees(treebank / "train.mrg")) == len(TINY_TREES)


def test_every_parsing_method_trains_with_its_options_dataclass(treebank, tmp_path):
    data = lp.prepare([str(treebank / "train.mrg")], lp.binarization("em"))
    em = lp.learner("em", **vars(lp.EMOptions(states=2, iterations=2)))
    model = em.fit(data)
    assert isinstance(model, lp.LPCFG) and model.max_states == 2
    lp.save_model(model, tmp_path / "em.npz")
    again = lp.load_model(tmp_path / "em.npz")
    assert isinstance(again, lp.LPCFG) and again.meta["decode"] == "max-bracket"
    assert [lp.format_tree(t) for t in lp.parse(again, [["the", "dog", "ran"]])] == [
        lp.format_tree(t) for t in lp.parse(model, [["the", "dog", "ran"]])
    ]


def test_trees_in_memory_train_too(treebank):
    trees = lp.trees_from_text("\n".join(TINY_TREES))
    from_file = lp.train(treebank / "train.mrg")
    from_trees = lp.train(trees)
    assert (from_file.binary == from_trees.binary).all()


def test_nltk_trees_round_trip_at_any_depth():
    deep = lp.Tree("S", ["w"])
    for i in range(3000):
        deep = lp.Tree(f"X{i % 7}", [deep, "v"])
    there = lp.to_nltk(deep)
    assert isinstance(there, nltk.Tree) and there.label() == deep.label()
    assert lp.from_nltk(there) == deep
    small = nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VP (VBD sat)))")
    assert lp.format_tree(lp.from_nltk(small)) == "(S (NP (DT the) (NN cat)) (VP (VBD sat)))"


def test_an_lpcfg_model_is_an_nltk_parser(treebank):
    model = lp.train(treebank / "train.mrg")
    parser = lp.NltkParser(model)
    assert isinstance(parser, ParserI)
    trees = list(parser.parse(["the", "cat", "sat"]))
    assert len(trees) == 1 and isinstance(trees[0], nltk.Tree)
    assert trees[0].leaves() == ["the", "cat", "sat"]
    assert parser.parse_one(["Kim", "ran"]).leaves() == ["Kim", "ran"]
    many = [list(ts) for ts in parser.parse_sents([["the", "dog", "ran"], []])]
    assert len(many[0]) == 1 and many[1] == []


def test_library_errors_name_parameters_not_flags():
    with pytest.raises(lp.ParameterError) as caught:
        lp.learner("spectral", states=(8, 16)).check(dev=False)
    assert "--" not in str(caught.value) and "states" in str(caught.value)
    with pytest.raises(lp.LpcfgError) as caught:
        lp.EMOptions(states=0)
    assert "--" not in str(caught.value)


def test_every_public_name_has_a_reference_entry():
    """docs/python-api.md renders (mkdocstrings) each name of ``__all__`` from the module that
    defines it: a ``::: module`` block whose ``members`` list names it (or lists them all)."""
    import re

    from tests.support import ROOT

    text = (ROOT / "docs" / "python-api.md").read_text()
    blocks: dict[str, str] = {}
    for match in re.finditer(r"^::: (\S+)\n((?:    .*\n)*)", text, re.M):
        blocks[match.group(1)] = match.group(2)
    missing = []
    for name in lp.__all__:
        if name == "__version__":
            continue
        module = lp._LAZY[name]
        options = blocks.get(module)
        members = re.search(r"members: \[(.*)\]", options or "")
        listed = members is None or name in re.split(r",\s*", members.group(1))
        if options is None or not listed:
            missing.append(f"{name} ({module})")
    assert not missing, missing
