"""Words, tags and phrase labels that collide in the label space or in the lexicon.

A Portuguese treebank failed ``lpcfg train`` with an internal error: its word ``{`` was
known as ``{`` but looked up as ``-LCB-`` (minimal case ``TWO_TREES``), and ``parse`` wrote
the word back as ``-LCB-``. The tests first pin each collision to its mechanism; the
property test at the end draws treebanks from a small alphabet of everything that can
collide (bracket words and their PTB names, the characters the label space reserves and
their escapes, the internal names ``%w`` and ``%t``, signature spellings, labels equal to
words, labels that are a pre-terminal in one place and a phrase in another, one-word trees,
unary chains): every learner must train on them, every model must parse one line per input
line, and ``binarize`` must round-trip, with no internal error.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.lexicon import Lexicon
from lpcfg_cli.grammar.training_data import bracketed_data, prepare, text_data
from lpcfg_cli.learners.registry import METHODS
from lpcfg_cli.model.backoff import coarser_pcfg
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, parse_tree
from lpcfg_cli.treebank.tree import Tree, leaves, words
from tests.support import invoke

TWO_TREES = "(S ({ {) (N n))\n(S (X {) (N n))\n"

# Every spelling that can collide: brackets and their PTB names, the reserved characters of
# the label space and escapes of them, the internal pre-terminal names, signature spellings
# and plain labels that are also words.
ALPHABET = [
    "{", "}", "[", "]", "(", ")", "-LCB-", "-LRB-", "+", "^", "@", "/", "_", "%",
    "%w", "%t", "%2B", "UNK", "UNK-LC", "X", "S",
]  # fmt: skip

# Each learner that takes trees, with settings small enough for a test (wcfg twice: it
# learns over the trees' tags or their words).
TRAIN = [
    ("pcfg", []),
    ("em", ["--states", "2", "--iterations", "2"]),
    ("spectral", ["--states", "2"]),
    ("pivot", ["--states", "2", "--min-count", "1"]),
    ("pivot+em", ["--states", "2", "--iterations", "1", "--min-count", "1"]),
    ("splitmerge", ["--cycles", "1", "--iterations", "2", "--max-states", "2"]),
    ("wcfg", ["--states", "1"]),
    ("wcfg", ["--states", "1", "--terminals", "words"]),
    ("wcfg-unsupervised", ["--states", "1", "--insides", "4", "--outsides", "3", "--steps", "3"]),
]
# The spectral WCFGs refuse data whose Hankel block has too low a rank for the states asked
# (or whose truncated factorisation misses every whole sentence): a documented refusal, one
# line, not an internal error. Every other learner must train.
MAY_REFUSE = {"wcfg", "wcfg-unsupervised"}


def ptb(tree: Tree | str) -> str:
    """``tree`` as a treebank spells it, written here rather than by ``format_tree`` (which
    is under test): ``(`` and ``)`` by their PTB names, every other spelling as it is."""
    if isinstance(tree, str):
        return {"(": "-LRB-", ")": "-RRB-"}.get(tree, tree)
    return "(" + " ".join([ptb(tree.label()), *(ptb(kid) for kid in tree)]) + ")"


def no_internal_error(result) -> None:
    assert "internal error" not in result.stderr, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


def train(d: Path, bank: Path, method: str, extra: list[str], name: str) -> Path | None:
    """The model of ``method`` trained on ``bank`` (None if a WCFG refused the data)."""
    model = d / f"{name}.npz"
    res = invoke("train", "--method", method, *extra, "-q", bank, "-o", model)
    no_internal_error(res)
    if res.exit_code != 0 and method in MAY_REFUSE:
        assert res.stderr.startswith(f"lpcfg: error: {method}: "), res.stderr
        assert res.stderr.count("\n") == 1, res.stderr
        return None
    assert res.exit_code == 0, (method, extra, res.stderr)
    return model


def parse_lines(model: Path, sentences: list[list[str]]) -> list[str]:
    """``lpcfg parse`` of the sentences (one per line): exactly one balanced tree per line,
    over the sentence's tokens spelt as they came (``(`` and ``)`` by their names)."""
    res = invoke("parse", model, "-q", stdin="".join(" ".join(s) + "\n" for s in sentences))
    no_internal_error(res)
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == len(sentences), (len(lines), len(sentences))
    for line, sentence in zip(lines, sentences, strict=True):
        if not sentence:
            assert line == "()"
            continue
        assert format_tree(parse_tree(line)) == line  # balanced, reads back as written
        assert leaves(parse_tree(line)) == [ptb(w) for w in sentence]
    return lines


def binarize_round_trip(d: Path, bank: Path, options: list[str]) -> None:
    """``binarize`` then ``binarize --reverse`` gives back the normalised trees, every
    word and label as it came."""
    res = invoke("binarize", *options, "-q", bank)
    no_internal_error(res)
    assert res.exit_code == 0, res.stderr
    back = invoke("binarize", "--reverse", "-q", stdin=res.stdout)
    no_internal_error(back)
    assert back.exit_code == 0, back.stderr
    normal = [ptb(normalize(parse_tree(line))) for line in bank.read_text().splitlines()]
    assert back.stdout.splitlines() == normal


# --- the writer ---------------------------------------------------------------------------


def test_only_round_brackets_are_escaped_when_writing() -> None:
    """``(`` and ``)`` are the only characters that break a PTB line: every other word and
    label is written as it came, so a treebank spelling ``{`` gets ``{`` back."""
    tree = Tree("[X]", ["{", "[", "]", "}", "-LCB-", "(", ":-)", "x{y"])
    assert format_tree(tree) == "([X] { [ ] } -LCB- -LRB- :--RRB- x{y)"
    assert format_tree(parse_tree(format_tree(tree))) == format_tree(tree)


# --- the reported case: a word spelt "{" --------------------------------------------------


@pytest.mark.parametrize(
    ("method", "extra"), TRAIN, ids=[m + " words" * ("words" in e) for m, e in TRAIN]
)
def test_the_two_tree_case_trains_and_parses_with_every_method(tmp_path, method, extra) -> None:
    """``{`` is seen twice (a known word): it was looked up as ``-LCB-``, so the training
    trees did not compile against their own grammar."""
    (tmp_path / "two.mrg").write_text(TWO_TREES)
    if method == "wcfg":  # fewer states factorise H_B without both whole sentences
        extra = ["--states", "3" if "words" in extra else "2", *extra[2:]]
    model = train(tmp_path, tmp_path / "two.mrg", method, extra, "m")
    assert model is not None
    lines = parse_lines(model, [["{", "n"], ["n", "{"], []])
    assert all("-LCB-" not in line for line in lines)


def test_a_native_bracket_word_is_parsed_back_as_itself(tmp_path) -> None:
    """A treebank that spells the word ``{`` gets ``{`` back from ``parse``, so that its
    own gold trees still match in EVALB; ``(`` is the one bracket that must be escaped."""
    (tmp_path / "two.mrg").write_text(TWO_TREES)
    model = train(tmp_path, tmp_path / "two.mrg", "pcfg", [], "m")
    assert model is not None
    assert parse_lines(model, [["{", "n"]]) == ["(TOP (S ({ {) (N n)))"]
    gold = tmp_path / "gold.mrg"
    gold.write_text("(S ({ {) (N n))\n")
    res = invoke("parse", model, "--input", "trees", gold, "-o", tmp_path / "out.mrg", "-q")
    assert res.exit_code == 0, res.stderr
    scored = invoke("evaluate", gold, tmp_path / "out.mrg")
    assert scored.exit_code == 0, scored.stderr
    assert "unmatch" not in scored.stdout + scored.stderr


def test_a_bracket_and_its_ptb_name_are_one_word() -> None:
    """A token is looked up as it is spelt when that spelling is known, else under the
    bracket's other spelling: a model of the PTB (``-LRB-``) parses a tokenizer's ``(``, a
    model of a treebank spelling ``{`` parses ``-LCB-``, and a treebank with both keeps
    both as they are."""
    bank = [
        Tree("S", [Tree("P", ["-LRB-"]), Tree("N", ["n"]), Tree("Q", ["{"])]),
        Tree("S", [Tree("B", ["["]), Tree("N", ["n"]), Tree("B", ["-LSB-"])]),
    ] * 2
    grammar, _ = build_grammar([binarize(t) for t in bank], rare=1)
    lexicon = grammar.lexicon
    for token, word in [("(", "-LRB-"), ("-LRB-", "-LRB-"), ("-LCB-", "{"), ("{", "{")]:
        assert lexicon.lookup(token, 1) == [lexicon.index[word]], token
    assert lexicon.lookup("[", 0) != lexicon.lookup("-LSB-", 0)
    # Training counts a rare spelling under the known one, as look-up will find it.
    trees = [parse_tree(t) for t in ("(S (A {) (N n))", "(S (B -LCB-) (N n))")]
    grammar, bank_ = build_grammar(trees * 2 + trees[1:], rare=2)
    assert "-LCB-" in grammar.known_words and "{" not in grammar.words
    assert bank_.n_trees == 5 and not len(grammar.rare_words)


def test_text_and_bracketed_data_keep_the_spelling_they_were_given() -> None:
    data = text_data([["{", "a"], ["{", "b"], ["-LCB-", "a"]])
    assert {"{", "-LCB-"} <= set(data.grammar.words)
    fixed = text_data([["(", "a"], ["-LRB-", "a"]], words=["-LRB-", "a"])
    assert fixed.grammar.words == ["-LRB-", "a"] and len(fixed.text.ids) == 1
    brackets = [[(0, 1, 2)], [(0, 1, 2)]]
    both = bracketed_data([["{", "a"], ["-LCB-", "a"]], brackets)
    assert both.grammar.words == ["{", "a", "-LCB-"]
    one = bracketed_data([["{", "a"], ["-LCB-", "a"]], brackets, words=["-LCB-", "a"])
    assert one.grammar.words == ["-LCB-", "a"] and one.bank.n_trees == 2


# --- collisions in the label space --------------------------------------------------------


def test_the_word_preterminal_is_not_tied_to_a_label_spelt_like_it() -> None:
    """The internal pre-terminal ``%w`` of a word beside phrases and a treebank tag spelt
    ``%w`` (symbol ``%25w``) emit different words; ``S+NP`` and ``NP%t`` (the pre-terminal
    use of a label that is also a phrase) end in one tag and share emissions."""
    trees = [
        parse_tree("(S (%w a) (NP (N b)) c)"),
        parse_tree("(S (NP a) (NP (N b) (N b)))"),
        parse_tree("(X (S (NP c)) (N b))"),
    ]
    grammar, _ = build_grammar([binarize(t) for t in trees], rare=0)
    index, vocab = grammar.symbol_index, grammar.lexicon.index
    rules = {(int(a), int(w)) for a, w in grammar.lexical}
    assert (index[labels.WORD], vocab["a"]) not in rules
    assert (index["%25w"], vocab["c"]) not in rules
    groups = grammar.emission_groups()
    assert groups[index["S+NP"]] == groups[index["NP%t"]]
    assert groups[index[labels.WORD]] != groups[index["%25w"]]
    assert {(index["NP%t"], vocab["c"]), (index["S+NP"], vocab["a"])} <= rules


def test_the_coarser_grammar_keeps_a_preterminal_apart_from_a_phrase(tmp_path) -> None:
    """With ``--vertical 2`` the pre-terminal ``VB`` and the phrase ``VB^S`` are two
    symbols; projected without annotation they must stay two (``VB%t`` and ``VB``), as
    ``--vertical 1`` would have them, not one symbol that rewrites to words and phrases."""
    (tmp_path / "t.mrg").write_text("(S (VB a) (N b))\n(S (VB (N b) (N b)) (N c))\n")
    data = prepare([str(tmp_path / "t.mrg")], BinarizeOptions(vertical=2), rare=0)
    assert {"VB", "VB^S"} <= set(data.grammar.symbols)
    coarser = coarser_pcfg(train_pcfg(data.grammar, data.bank, {}))
    assert coarser is not None
    g = coarser.grammar
    assert not np.any(g.is_preterminal & g.is_interterminal), g.symbols
    assert {"VB", "VB%t"} <= set(g.symbols)


def test_a_tag_spelt_like_a_signature_is_a_tag(tmp_path) -> None:
    """``wcfg --terminals tags`` makes the tags its words: a tag ``UNK`` is known, not an
    unknown-word signature that every unseen tag would be scored as."""
    (tmp_path / "t.mrg").write_text("(S (UNK a) (N b))\n(S (N b) (UNK a) (N b))\n(S (N b) (N b))\n")
    model = train(tmp_path, tmp_path / "t.mrg", "wcfg", ["--states", "1"], "m")
    assert model is not None
    lexicon = LPCFG.load(model).grammar.lexicon
    assert "UNK" in lexicon.known and lexicon.signature_ids == []
    assert lexicon.lookup("ZZ", 0) == []
    assert Lexicon(["UNK", "a"], ["a"]).signature_ids == [0]  # a true signature still is one


# --- generated treebanks ------------------------------------------------------------------


@st.composite
def treebanks(draw, max_trees: int = 4) -> list[Tree]:
    """A few trees over a handful of spellings of ``ALPHABET``, used both as labels and as
    words (so labels equal words and a label is a pre-terminal here and a phrase there), with
    unary chains, words beside phrases and one-word trees; maybe every tree twice, so that
    words are seen more often than ``--rare``."""
    spellings = draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=6, unique=True))
    spelling = st.sampled_from(spellings)

    def node(depth: int) -> Tree:
        label = draw(spelling)
        if depth >= 3 or draw(st.integers(0, 2)) == 0:
            return Tree(label, [draw(spelling)])  # a pre-terminal
        n = draw(st.integers(1, 3))  # 1: a unary chain
        kids: list = []
        for _ in range(n):
            beside = n > 1 and draw(st.integers(0, 4)) == 0
            kids.append(draw(spelling) if beside else node(depth + 1))
        return Tree(label, kids)

    bank = [node(0) for _ in range(draw(st.integers(1, max_trees)))]
    return bank * draw(st.integers(1, 2))


def check_treebank(d: Path, bank: list[Tree], binarization: list[str]) -> None:
    """Every learner trains on ``bank``, every model parses its sentences (and an empty line
    and unseen bracket spellings) one line each, and binarize round-trips."""
    path = d / "bank.mrg"
    path.write_text("".join(ptb(t) + "\n" for t in bank), encoding="utf-8")
    sentences = [words(parse_tree(line)) for line in path.read_text().splitlines()]
    sentences += [[], ["(", "{", "-LRB-", "-RCB-", "]", "UNK", "%w", "unseen"]]
    for i, (method, extra) in enumerate(TRAIN):
        options = extra if method.startswith("wcfg") else [*extra, *binarization]
        model = train(d, path, method, options, f"m{i}")
        if model is not None:
            parse_lines(model, sentences)
    binarize_round_trip(d, path, binarization)


def test_every_method_is_trained_here() -> None:
    assert {method for method, _ in TRAIN} == set(METHODS)


BINARIZATIONS = st.sampled_from(
    [[], ["--vertical", "2", "--horizontal", "1"], ["--factor", "left", "--horizontal", "2"]]
)


@settings(
    max_examples=50,  # about 30 s; the slow test below draws 1,000
    deadline=None,
    database=None,  # nothing written outside tmp_path
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(treebanks(), BINARIZATIONS)
def test_colliding_treebanks_train_parse_and_round_trip(tmp_path, bank, binarization) -> None:
    check_treebank(Path(tempfile.mkdtemp(dir=tmp_path)), bank, binarization)


@pytest.mark.slow
@settings(
    max_examples=1000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(treebanks(max_trees=7), BINARIZATIONS)
def test_colliding_treebanks_exhaustively(tmp_path, bank, binarization) -> None:
    check_treebank(Path(tempfile.mkdtemp(dir=tmp_path)), bank, binarization)
