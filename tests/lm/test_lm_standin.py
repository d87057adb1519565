"""The NYT stand-in corpus (lpcfg_cli.lm.standin): text units, the per-corpus 80/5/5/10 cut,
lower-casing and whitespace tokens, the sources table, and refusals, on planted corpora (the
real corpora are not in CI's NLTK data)."""

from __future__ import annotations

import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.lm.standin import (
    corpus_sentences,
    sentences_of_text,
    split_corpus,
    standin_split,
    text_units,
)


def test_text_units_are_lines_or_blocks_between_blank_lines():
    text = "Headline without a stop\nFirst line of a\n  wrapped paragraph.\n\n\nNext one.\n"
    assert text_units(text, wrapped=False) == [
        "Headline without a stop",
        "First line of a",
        "  wrapped paragraph.",
        "Next one.",
    ]
    assert text_units(text, wrapped=True) == [
        "Headline without a stop First line of a wrapped paragraph.",
        "Next one.",
    ]
    assert text_units("", wrapped=True) == [] and text_units("\n \n", wrapped=False) == []


def test_sentences_of_text_splits_each_unit_then_tokenizes():
    """No sentence crosses a unit; WordPunctTokenizer splits punctuation off; a sentence
    with no token is dropped."""
    units = ["A b. C d!", "", "e-f"]
    got = sentences_of_text(units, lambda u: [*u.split(". "), " "])
    assert got == [["A", "b"], ["C", "d", "!"], ["e", "-", "f"]]


def _corpus(tag: str, n: int, length: int = 10) -> list[list[str]]:
    return [[f"{tag.upper()}{i}"] + ["w"] * (length - 1) for i in range(n)]


def test_split_corpus_cuts_80_5_5_10_of_the_tokens_in_order():
    sents = _corpus("a", 100)
    parts = split_corpus(sents)
    assert {k: len(v) for k, v in parts.items()} == {"train": 80, "dev1": 5, "dev2": 5, "test": 10}
    assert parts["train"][0] == sents[0] and parts["dev1"][0] == sents[80]
    assert parts["dev2"][0] == sents[85] and parts["test"][-1] == sents[99]


def test_standin_split_cuts_each_corpus_alike_and_lowercases():
    corpora = {"one": _corpus("a", 100), "two": _corpus("b", 200, length=5)}
    corpora["two"][0] = ["New York", "", "Is"]  # a token holding whitespace, an empty one
    parts, sources = standin_split(["one", "two"], reader=corpora.__getitem__)
    # Every part holds its share of both corpora, the first corpus's piece first.
    assert [s[0] for s in parts["train"][:1]] == ["a0"] and parts["train"][80][0] == "new"
    assert parts["train"][80] == ["new", "york", "is"]
    assert [s[0] for s in parts["dev1"]] == [f"a{i}" for i in range(80, 85)] + [
        f"b{i}" for i in range(160, 170)
    ]
    assert parts["dev"] == parts["dev1"] + parts["dev2"]
    assert [s[0] for s in parts["test"]][-1] == "b199"
    assert sources == {
        "one": {"train": 800, "dev1": 50, "dev2": 50, "test": 100},
        "two": {"train": 160 * 5 - 2, "dev1": 50, "dev2": 50, "test": 100},
    }
    assert all(w == w.lower() for part in parts.values() for s in part for w in s)


def test_standin_split_refuses_what_it_cannot_build():
    with pytest.raises(LpcfgError, match="at least one corpus"):
        standin_split([], reader=lambda name: [])
    with pytest.raises(LpcfgError, match="listed twice"):
        standin_split(["a", "a"], reader=lambda name: [["x"]])
    with pytest.raises(LpcfgError, match="'a' has no sentences"):
        standin_split(["a"], reader=lambda name: [[" "]])


def test_a_corpus_nltk_does_not_have_is_one_error_naming_the_downloader():
    with pytest.raises(LpcfgError, match=r"nltk.downloader no_such_corpus"):
        corpus_sentences("no_such_corpus")
