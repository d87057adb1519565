"""Treebank conventions: how a bracketed treebank writes what is not the syntax to be learnt.

Treebanks share the bracket format and little else. The Penn Treebank marks empty elements
with the tag ``-NONE-`` and writes function tags and indices after the category
(``NP-SBJ-1``); the Penn-Helsinki parsed corpora of historical English, Icelandic and Faroese
(``.psd`` files) put an ``ID`` node beside each tree and ``CODE`` nodes inside it, write empty
elements as ordinary words (``(NP-SBJ *pro*)``, ``(WNP-1 0)``) and each word with its lemma
(``kom-koma``); Floresta writes the function first (``SUBJ+np``); SPMRL treebanks append
morphological features (``NN##gen=m|num=s##``). ``Conventions`` says, as a few declarative
rules, which nodes, words and label parts are not syntax; ``normalize.normalize`` applies
them, and the same rules serve training, dev scoring, ``binarize``, ``evaluate`` (gold and
test alike) and the words ``parse`` reads. ``PRESETS`` names the usual sets; a preset is only
a set of the rules, each of which is an option of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.hyperparams import Checked, hyper

KEEP = ("first", "last")


@dataclass(frozen=True)
class Conventions:
    """The rules of one treebank's conventions (see the module; ``PRESETS`` names sets).

    - ``drop_labels``: nodes with these labels (as written, before any cutting) are removed
      with everything under them (``-NONE-``: the Penn Treebank's empty elements; ``ID`` and
      ``CODE``: the Penn-Helsinki corpora's sentence ids and comments).
    - ``empty``: a regular expression; a word it matches entirely is an empty element and is
      removed ("" for none). Nodes left without words go too.
    - ``function``: the characters that separate a label's category from its function tags,
      indices or features ("" keeps labels whole); the label is cut at the first of them
      (a label that starts with one, ``-LRB-``, stays whole).
    - ``keep``: which side of that cut is the category: ``first`` (``NP-SBJ-1`` -> ``NP``)
      or ``last`` (``SUBJ+np`` -> ``np``).
    - ``lemma``: the separator between a word and its lemma in a token (``kom-koma``); the
      word is what comes before its last occurrence ("" for none; a token without it is
      kept whole).
    """

    name: str = "ptb"
    drop_labels: tuple[str, ...] = ("-NONE-",)
    empty: str = ""
    function: str = "-="
    keep: str = "first"
    lemma: str = ""

    def __post_init__(self) -> None:
        if self.keep not in KEEP:
            raise ParameterError(
                "{keep} must be one of first, last, not {value}", value=repr(self.keep)
            )
        if not all(isinstance(x, str) for x in self.drop_labels):
            raise ParameterError("{drop_labels} must be label names")
        try:
            re.compile(self.empty)
        except re.error as exc:
            raise ParameterError(
                "{empty} is not a regular expression ({error})", error=str(exc)
            ) from None

    @cached_property
    def _empty(self) -> re.Pattern[str] | None:
        return re.compile(self.empty) if self.empty else None

    @cached_property
    def _cut(self) -> re.Pattern[str] | None:
        return re.compile("[" + re.escape(self.function) + "]") if self.function else None

    def label(self, label: str) -> str:
        """``label``'s category: cut at the first function separator, the ``keep`` side
        kept; a label that starts with a separator (``-LRB-``, ``-NONE-``) or would leave an
        empty side is kept whole."""
        if self._cut is None or not label or self._cut.match(label):
            return label
        m = self._cut.search(label, 1)
        if m is None:
            return label
        if self.keep == "first":
            return label[: m.start()] or label
        return label[m.end() :] or label

    def is_empty(self, word: str) -> bool:
        """Whether ``word`` is an empty element (matches ``empty`` entirely)."""
        return self._empty is not None and self._empty.fullmatch(word) is not None

    def word(self, token: str) -> str:
        """The word of a token (its lemma cut off at the last ``lemma`` separator; a token
        that would leave no word is kept whole)."""
        if not self.lemma:
            return token
        head, sep, _ = token.rpartition(self.lemma)
        return head if sep and head else token

    def words(self, tokens: list[str]) -> list[str]:
        """The words of a sentence's tokens as these conventions read them: empty elements
        removed, lemmas cut (what ``parse`` does to its input)."""
        return [self.word(t) for t in tokens if not self.is_empty(t)]

    @property
    def reads_tokens(self) -> bool:
        """Whether the rules change a sentence's tokens (``words`` is not the identity)."""
        return bool(self.empty or self.lemma)

    def to_dict(self) -> dict[str, Any]:
        """The rules as JSON values (a model file records them)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["drop_labels"] = list(self.drop_labels)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Conventions:
        """The inverse of ``to_dict`` (unknown keys are refused)."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ParameterError("unknown conventions rule(s): {names}", names=", ".join(unknown))
        out = dict(values)
        if "drop_labels" in out:
            out["drop_labels"] = tuple(out["drop_labels"])
        return cls(**out)

    def same_rules(self, other: Conventions) -> bool:
        """Whether ``other`` reads trees as these do (names aside)."""
        return replace(self, name="") == replace(other, name="")


# Empty elements of the Penn-Helsinki corpora, written as words: traces and other starred
# elements (``*T*-1``, ``*pro*``, ``*exp*``, ``*arb*``, ``*con*``, ``*ICH*-2``, ``*``) and the
# null complementizer and operator ``0``.
PENN_HELSINKI_EMPTY = r"\*.*|0"

PRESETS: dict[str, Conventions] = {
    # The Penn Treebank's (EVALB's COLLINS.prm and the L-PCFG papers): -NONE- elements
    # removed, labels cut at the first '-' or '='.
    "ptb": Conventions(),
    # The Penn-Helsinki parsed corpora (PPCME2, PPCEME, PPCMBE, YCOE, IcePaHC, FarPaHC).
    "penn-historical": Conventions(
        name="penn-historical",
        drop_labels=("ID", "CODE", "-NONE-"),
        empty=PENN_HELSINKI_EMPTY,
        function="-=",
        keep="first",
        lemma="-",
    ),
    # function+category labels (Floresta): the category after '+' is kept.
    "function-category": Conventions(
        name="function-category", drop_labels=("-NONE-",), function="+", keep="last"
    ),
    # SPMRL-style labels with features after '##' (and functions after '-'): features dropped.
    "spmrl": Conventions(name="spmrl", drop_labels=("-NONE-",), function="#-=", keep="first"),
    # Labels and words exactly as written.
    "none": Conventions(name="none", drop_labels=(), function=""),
}

PTB = PRESETS["ptb"]


def conventions(name: str = "ptb", **rules: Any) -> Conventions:
    """The preset ``name`` with ``rules`` (fields of ``Conventions``) replacing its own; the
    result is named ``name`` when no rule changes it, else ``custom``."""
    if name not in PRESETS:
        raise ParameterError(
            "{conventions} must be one of {names}, not {value}",
            names=", ".join(PRESETS),
            value=repr(name),
        )
    base = PRESETS[name]
    given = {k: v for k, v in rules.items() if v is not None}
    unknown = sorted(set(given) - {f.name for f in fields(Conventions)} - {"name"})
    if unknown:
        raise ParameterError("unknown conventions rule(s): {names}", names=", ".join(unknown))
    if "drop_labels" in given and isinstance(given["drop_labels"], str):
        given["drop_labels"] = tuple(x for x in given["drop_labels"].split(",") if x)
    out = replace(base, **given)
    return out if out == base else replace(out, name="custom")


@dataclass(frozen=True)
class ConventionsOptions(Checked):
    """The conventions a command reads trees with: a preset and any rules replacing its own
    (``resolve``); the command line's ``--conventions`` and rule options."""

    conventions: str = hyper(
        "ptb",
        "How the treebank writes what is not syntax (empty elements, function tags, extra "
        "nodes, lemmas): ptb, penn-historical, function-category, spmrl or none (see the "
        "treebanks page); a model file records it, and parse and evaluate use it.",
        choices=tuple(PRESETS),
    )
    drop_labels: str | None = hyper(
        None,
        "Labels of nodes removed with all they hold, comma-separated [default: the "
        "conventions' own, e.g. -NONE- for ptb].",
        kind="str",
        metavar="LABEL[,...]",
    )
    empty_pattern: str | None = hyper(
        None,
        "Regular expression of the words that are empty elements (removed with the nodes "
        "they leave empty) [default: the conventions' own].",
        kind="str",
        metavar="REGEX",
    )
    function_separator: str | None = hyper(
        None,
        "Characters that end a label's category (function tags, indices, features "
        "follow); '' keeps labels whole [default: the conventions' own, '-=' for ptb].",
        kind="str",
        metavar="CHARS",
    )
    keep_side: str | None = hyper(
        None,
        "Which side of the function separator is the category: first (NP-SBJ) or last "
        "(SUBJ+np) [default: the conventions' own].",
        choices=KEEP,
    )
    lemma_separator: str | None = hyper(
        None,
        "Separator of word and lemma in a token (the word is before its last occurrence) "
        "[default: the conventions' own, '-' for penn-historical].",
        kind="str",
        metavar="SEP",
    )

    def resolve(self) -> Conventions:
        """The conventions these options name."""
        return conventions(
            self.conventions,
            drop_labels=self.drop_labels,
            empty=self.empty_pattern,
            function=self.function_separator,
            keep=self.keep_side,
            lemma=self.lemma_separator,
        )
