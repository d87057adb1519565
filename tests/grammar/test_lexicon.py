"""Unknown-word signatures: shapes in any script, learned suffixes, the parse-time lexicon."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lpcfg_cli.grammar.lexicon import Lexicon, Signatures, is_signature

PLAIN = Signatures()


@pytest.mark.parametrize(
    ("word", "first", "expected"),
    [
        ("Vinken", False, "UNK-INITC"),
        ("Vinken", True, "UNK-FIRSTC"),
        ("NASA", False, "UNK-INITC-CAPS"),
        ("eBay", False, "UNK-MIXC"),
        ("walrus", False, "UNK-LC"),
        ("1,234", False, "UNK-NUM"),
        ("3.5", False, "UNK-NUM-PERIOD"),
        ("B-52", False, "UNK-INITC-CAPS-DIG-DASH"),
        ("well-to-do", False, "UNK-LC-DASH"),
        ("北京", False, "UNK-NOCASE-CJK"),  # a script without case
        ("東京タワー", False, "UNK-NOCASE-MIXS"),  # CJK and katakana
        ("Москва", False, "UNK-INITC-CYRILLIC"),
        ("Ἀθῆναι", False, "UNK-INITC-GREEK"),
        ("ǅemal", False, "UNK-INITC"),  # title-case letter
        ("٣٤", False, "UNK-NUM"),  # Arabic-Indic digits
        ("४२", False, "UNK-NUM"),  # Devanagari digits
        ("½", False, "UNK-NUM"),
        ("三", False, "UNK-NUM"),  # a CJK numeral is a numeral, not a letter
        ("«", False, "UNK-PUNCT"),
        ("–", False, "UNK-DASH-PUNCT"),  # en dash
        ("€", False, "UNK-CUR"),
        ("©", False, "UNK-SYM"),
    ],
)
def test_shapes_work_in_any_script(word: str, first: bool, expected: str) -> None:
    assert PLAIN(word, first) == expected


def _tokens(pairs: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    return [(w, t) for w, t, n in pairs for _ in range(n)]


STEMS = [
    "walk",
    "talk",
    "jump",
    "sing",
    "read",
    "play",
    "work",
    "look",
    "help",
    "call",
    "mov",
    "liv",
    "bak",
    "rain",
]


def _english() -> list[tuple[str, str]]:
    return _tokens(
        [(s + "ing", "VBG", 2) for s in STEMS]
        + [(s + "ed", "VBD", 2) for s in STEMS]
        + [(w, "NN", 3) for w in ["table", "stone", "house", "river", "cloud", "apple"]]
    )


def test_learned_suffixes_are_those_that_predict_the_pre_terminal() -> None:
    scheme = Signatures.learn(_english())
    assert {"ing", "ed"} <= scheme.suffixes or {"ng", "ed"} <= scheme.suffixes
    assert scheme("singing").startswith("UNK-LC-") and scheme("singing").endswith("ng")
    assert scheme("hopped") == "UNK-LC-ed"
    assert scheme("sky") == "UNK-LC"
    assert not any(len(s) == 1 for s in scheme.suffixes)  # no single letters in Latin script


def test_an_ending_seen_too_rarely_is_not_a_suffix() -> None:
    rare = _tokens([("walking", "VBG", Signatures.MIN_TOKENS - 1), ("table", "NN", 20)])
    assert "ing" not in Signatures.learn(rare).suffixes


def test_learned_suffixes_in_a_script_without_case() -> None:
    """One character of a script without case is a morpheme: it can be a suffix."""
    rare = _tokens([("朋友们", "NN", 12), ("同学们", "NN", 12), ("跑步了", "VV", 12)])
    scheme = Signatures.learn(rare)
    assert {"们", "了"} <= scheme.suffixes
    assert scheme("老师们") == "UNK-NOCASE-CJK-们"
    assert scheme("走了") == "UNK-NOCASE-CJK-了"


def test_a_longer_ending_that_adds_nothing_is_dropped() -> None:
    """ "king" (from "walking", "talking") says nothing "ing" does not."""
    rare = _english() + _tokens([("walking", "VBG", 10), ("talking", "VBG", 10)])
    scheme = Signatures.learn(rare)
    assert "king" not in scheme.suffixes
    assert scheme("smoking") == scheme("singing")


def test_the_parse_time_lexicon_assigns_unknown_words_as_training_did() -> None:
    rare = _english() + _tokens([("Москвой", "NNP", 15), ("Тверской", "NNP", 15)])
    scheme = Signatures.learn(rare)
    vocab = sorted({scheme(w) for w, _ in rare}) + ["the", "a"]
    lexicon = Lexicon(vocab, ["the", "a"])
    assert lexicon.signature.suffixes == scheme.suffixes
    for word in ["singing", "hopped", "Казанской", "chairs", "zzz", "Ok", "42"]:
        assert lexicon.signature(word, False) == scheme(word, False)
    assert lexicon.lookup("singing", 3) == [lexicon.index[scheme("singing")]]
    assert lexicon.lookup("the", 3) == [lexicon.index["the"]]
    # a shape never seen in training backs off to every signature
    assert sorted(lexicon.lookup("42", 3)) == sorted(lexicon.signature_ids)


@given(st.text(min_size=1, max_size=12).filter(lambda w: not w.isspace() and " " not in w))
def test_every_token_gets_one_signature_that_the_lexicon_reads_back(word: str) -> None:
    scheme = Signatures(["ing", "ed", "们"])
    sig = scheme(word)
    assert is_signature(sig)
    assert Signatures.from_vocabulary([sig]).suffixes <= scheme.suffixes
