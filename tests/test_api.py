"""The public Python API (``lpcfg_cli.__all__``): every name resolves, importing the package
costs nothing, and the documented uses work: read a treebank, train any method with its
options dataclass, save and load, parse token lists and streams into trees, convert to and
from ``nltk.Tree``, evaluate, and parse through nltk's ``ParserI``."""

from __future__ import annotations

import re
import subprocess
import sys

import nltk
import numpy as np
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
    result = lp.evaluate(gold, trees)
    figures = result.all.figures()
    assert figures["sentences"] == 2 and figures["strict_fmeasure"] == 100.0
    assert result.strict_f1 == result.all.strict_f1 == figures["strict_fmeasure"]
    assert result.f1 == figures["fmeasure"] and result.all.tagging_accuracy == 100.0
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


def test_a_learner_is_built_from_its_options(treebank):
    data = lp.prepare([str(treebank / "train.mrg")], lp.binarization("em"))
    by_options = lp.learner(lp.EMOptions(states=2, iterations=2, seed=3))
    by_name = lp.learner("em", states=2, iterations=2, seed=3)
    assert by_options.option_values() == by_name.option_values()
    first, second = by_options.fit(data), by_name.fit(data)
    assert np.array_equal(first.lexical, second.lexical)
    assert lp.learner(lp.SpectralOptions(states=4)).method == "spectral"
    assert lp.learner(lp.AggregateEMOptions(states=4)).method == "em"  # the lm family's
    with pytest.raises(lp.ParameterError, match="KNOptions are the options of kn2, kn3"):
        lp.learner(lp.KNOptions())
    with pytest.raises(TypeError, match="method must be a method's name or the options"):
        lp.learner(3)


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


# ---- no silent wrong result (issue 56): what the command line refuses, the library refuses
# too, as TypeError or ValueError naming the parameter; each of these used to be accepted
# (a string parsed character by character, a bad count used as it came) or to fail with
# AttributeError, KeyError or a comparison error.


@pytest.fixture(scope="module")
def pcfg(treebank):
    return lp.train(str(treebank / "train.mrg"), method="pcfg")


@pytest.mark.parametrize(
    ("sentences", "error", "message"),
    [
        ("the cat", TypeError, "sentences must be an iterable of token lists, not a string"),
        (["the cat sat"], TypeError, "sentence 1 must be a list of tokens, not a string"),
        ([["the"], ["a b", "cat"]], ValueError, "sentence 2, token 1 ('a b') holds whitespace"),
        ([["", "cat"]], ValueError, "sentence 1, token 1 is empty"),
        ([["a\nb"]], ValueError, "token 1 ('a\\nb') holds whitespace"),
        ([["the", 3]], TypeError, "sentence 1, token 2 must be a string, not int"),
        (None, TypeError, "sentences must be an iterable of token lists, not NoneType"),
    ],
)
def test_parse_refuses_what_is_not_a_token_list(pcfg, sentences, error, message):
    with pytest.raises(error, match=re.escape(message)):
        list(lp.parse(pcfg, sentences))


def test_parse_checks_its_arguments_when_called(pcfg):
    with pytest.raises(TypeError, match="model must be a model file's path or a parsing model"):
        lp.parse(None, [["the"]])
    with pytest.raises(TypeError, match="model must be an LPCFG or a model file's path"):
        lp.NltkParser(None)
    for jobs, error in [(0, ValueError), (-1, ValueError), ("2", TypeError), (True, TypeError)]:
        with pytest.raises(error, match="jobs must be"):
            lp.parse(pcfg, [["the"]], jobs=jobs)


def test_the_empty_sentence_has_no_tree_and_says_so(pcfg):
    trees = list(lp.parse(pcfg, [["the", "cat"], []]))
    assert trees[1] is None
    with pytest.raises(TypeError, match="the empty sentence has no tree"):
        lp.to_nltk(trees[1])


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: lp.EMOptions(states=2.5), TypeError, "states must be a whole number, not 2.5"),
        (lambda: lp.EMOptions(states=True), TypeError, "states must be a whole number, not True"),
        (lambda: lp.EMOptions(states="a"), TypeError, "states must be a whole number, not 'a'"),
        (lambda: lp.EMOptions(iterations=0), ValueError, "iterations must be at least 1, not 0"),
        (lambda: lp.EMOptions(unaries=1), TypeError, "unaries must be True or False, not 1"),
        (lambda: lp.EMOptions(tol="0.1"), TypeError, "tol must be a number, not '0.1'"),
        (lambda: lp.learner("em", states=2.5), TypeError, "states must be a whole number"),
        (lambda: lp.ParserOptions(decode=3), TypeError, "decode must be a string, not 3"),
        (lambda: lp.train([]), ValueError, "treebank holds no file names or trees"),
        (lambda: lp.train(None), TypeError, "treebank must be a file name"),
        (lambda: lp.words(None), TypeError, "tree must be a Tree, not NoneType"),
        (lambda: lp.evaluate([], []), ValueError, "gold holds no trees: nothing to score"),
        (lambda: lp.evaluate(["(S (X a))"], ["(S (X a))"], param="foo"), ValueError,
         "param must be one of collins, none, not 'foo'"),
        (lambda: lp.evaluate(["(S (X a))"], ["(S (X a))"], cutoff=-1), ValueError,
         "cutoff must be at least 0, not -1"),
        (lambda: lp.evaluate("(S (X a))", ["(S (X a))"]), TypeError,
         "gold must be a sequence of trees, not str"),
    ],
)  # fmt: skip
def test_bad_arguments_are_type_or_value_errors_naming_the_parameter(make, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_bad_option_kinds_are_rendered_as_flags_on_the_command_line(tmp_path):
    from lpcfg_cli.errors import ParameterError, ParameterTypeError

    with pytest.raises(ParameterTypeError) as caught:
        lp.EMOptions(states=2.5)
    assert isinstance(caught.value, (ParameterError, TypeError))
    assert caught.value.render(lambda n: "--" + n) == "--states must be a whole number, not 2.5"


def test_words_with_unicode_spaces_survive_a_round_trip():
    """One definition of whitespace: C's isspace (EVALB's); U+00A0 and U+3000 are parts
    of words and labels when trees are read, written, split into words and scored."""
    from lpcfg_cli.evalb import reader
    from lpcfg_cli.treebank.sentences import WHITESPACE, split_tokens

    assert WHITESPACE == reader._WS
    text = "(S (NP\u00a0X (NNP New\u00a0York)) (VP (VBD won\u3000it)))"
    (tree,) = lp.trees_from_text(text)
    assert lp.format_tree(tree) == text
    assert lp.words(tree) == ["New\u00a0York", "won\u3000it"]
    assert split_tokens("New\u00a0York \t won\u3000it\x0b.") == [
        "New\u00a0York",
        "won\u3000it",
        ".",
    ]
    figures = lp.evaluate([text], [tree]).all.figures()
    assert figures["strict_fmeasure"] == 100.0
    with pytest.raises(ValueError, match="holds whitespace"):
        lp.format_tree(lp.Tree("NP", ["a b"]))
    with pytest.raises(ValueError, match="empty word"):
        lp.format_tree(lp.Tree("NP", [""]))
