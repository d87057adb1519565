"""Words and unknown-word signatures.

Training words seen at most ``rare`` times are replaced by a word-shape signature, so that the
grammar learns which pre-terminals take unseen words of each shape (in the manner of the
Berkeley parser's ``UNK`` classes, made to work for any language); the parser then knows
them again (``RareWords``, ``rarewords``):

- case of the cased letters: first word capitalised, capitalised, all capitals, mixed, lower;
  words whose letters have no case (Chinese, Japanese, Arabic, Hebrew, Thai...) ``NOCASE``;
- the script of the letters when it is not Latin (``CJK``, ``HIRAGANA``, ``CYRILLIC``...,
  from the Unicode character names; ``MIXS`` for letters of several scripts);
- numerals of any script (``str.isnumeric``: ASCII and Arabic-Indic digits, fractions, Roman
  and CJK numerals): ``NUM`` for numerals only, ``DIG`` beside letters, ``PERIOD`` with a dot;
- a dash of any kind (Unicode ``Pd``);
- tokens with no letter or numeral: ``PUNCT`` (punctuation only), ``CUR`` (a currency sign),
  ``SYM`` (other symbols);
- a suffix, learned from the training data: the endings (2-4 letters) of rare words that say
  most about their pre-terminal (``Signatures.learn``); the suffixes in use are recovered
  from a model's vocabulary, so parsing assigns unknown words exactly as training did.

A bracket has two spellings: the PTB's name (``-LRB-``, ``-LCB-``...) and the character
itself, which a user's tokenizer emits and which a treebank of another tradition may use as
its word. Both are one word (``known_spelling``): a token is looked up as it is spelt when
the vocabulary knows that spelling, else under its bracket's other spelling, else by its
signature. Training counts a word under the entry that look-up gives it, so every training
tree compiles against its own grammar whichever spelling its treebank uses (a word known
only as ``{`` must not be looked up as ``-LCB-``).

At parse time a known word maps to itself. Any other token ``w`` with signature ``s`` is
scored for pre-terminal ``a`` by ``(1 - lam) q(a -> s) + lam f_s sum_s' q(a -> s')``: its
own signature's rule, backed off to "some rare word" scaled by the signature's share ``f_s``
of the rare training tokens, so that a pre-terminal that never took a word of this shape
still can (an all-capitals headline needs VBZ for ``APPEARS``). A signature never seen in
training uses the share of a signature seen once.

A known word seen ``c`` times is scored ``(1 - l) q(a -> w) + l q(a -> s) c / (c + c_s)``
with ``l = SMOOTH / (c + SMOOTH)`` for the pre-terminals ``a`` it has a rule for: its own
rules, smoothed towards its signature's (a class of ``c_s`` training tokens, of which ``w``
would be ``c``), in the manner of the Berkeley parser's lexicon, which smooths words seen
fewer than 100 times towards their unknown-word class. A rare training word given back by
``rarewords`` (``c <= rare``) is smoothed towards its signature over all the signature's
pre-terminals: its few tokens do not say which tags it can take. What this smooths is the latent
states: a word seen twice under NN has seen two of NN's states, and its signature's rule
spreads it over the states NN gives words of its shape. Letting the signature add
pre-terminals the word never had (the Berkeley parser does) gained nothing on dev and made
the coarse pass slower (more tags per rare word). ``SMOOTH`` was chosen on dev, between the
best values for split-merge and for EM (both measurements: docs/treebanks.md, Known words
smoothed towards their signature).
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

SIGNATURE_PREFIX = "UNK"

# The PTB's names of the brackets, and each name's bracket: the two spellings of one word.
_NAMES = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-", "[": "-LSB-", "]": "-RSB-"}
_OTHER_SPELLING = {**_NAMES, **{name: bracket for bracket, name in _NAMES.items()}}


def _script(ch: str) -> str:
    """First word of the character's Unicode name (``LATIN``, ``CJK``, ``ARABIC``...)."""
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0] if name else "UNNAMED"


def _shape(word: str, first: bool) -> list[str]:
    """The shape parts of ``word``'s signature (without prefix and suffix)."""
    letters = [ch for ch in word if ch.isalpha() and not ch.isnumeric()]
    numerals = any(ch.isnumeric() for ch in word)
    cased = [ch for ch in letters if ch.isupper() or ch.islower() or ch.istitle()]
    parts = []
    if cased:
        lead = word[0]
        if lead.isupper() or lead.istitle():
            parts.append("FIRSTC" if first else "INITC")
            if not any(ch.islower() for ch in cased):
                parts.append("CAPS")
        elif any(ch.isupper() or ch.istitle() for ch in cased):
            parts.append("MIXC")
        else:
            parts.append("LC")
    elif letters:
        parts.append("NOCASE")
    # ASCII letters are Latin and ASCII's one dash punctuation is "-": the Unicode database
    # is asked only about the other characters (most of a word's cost).
    scripts = {_script(ch) for ch in letters if not ch.isascii()} - {"LATIN"}
    if scripts:
        parts.append(scripts.pop() if len(scripts) == 1 else "MIXS")
    if numerals:
        parts.append("DIG" if letters else "NUM")
    if any(ch == "-" if ch.isascii() else unicodedata.category(ch) == "Pd" for ch in word):
        parts.append("DASH")
    if not letters and not numerals:
        cats = {unicodedata.category(ch) for ch in word}
        if "Sc" in cats:
            parts.append("CUR")
        elif all(c.startswith("P") for c in cats):
            parts.append("PUNCT")
        else:
            parts.append("SYM")
    if numerals and "." in word:
        parts.append("PERIOD")
    return parts


def _information(dist: Counter[str], prior: Counter[str]) -> float:
    """``n KL(dist || prior)`` (nats) of a tag distribution given as counts: how much
    knowing the class says about the tags of its ``n`` tokens."""
    n, total = sum(dist.values()), sum(prior.values())
    return sum(c * math.log((c / n) / (prior[t] / total)) for t, c in dist.items())


def _endings(word: str) -> list[str]:
    """Candidate suffixes of ``word``, longest first: its lower-cased endings of 4, 3 and 2
    letters that leave a stem of at least two characters; in a script without case (CJK,
    kana, Thai...), where one character is a morpheme or a syllable, also the last character,
    with a stem of one. (Single letters of a cased script parsed the PTB's dev split worse
    than 2-4 letters: docs/treebanks.md, Unknown words, in any script.)"""
    lower = word.lower()
    uncased = lower[-1:].isalpha() and not (lower[-1:].islower() or lower[-1:].isupper())
    stem = 1 if uncased else 2
    out = []
    for k in (4, 3, 2, 1) if uncased else (4, 3, 2):
        end = lower[-k:]
        if len(lower) >= k + stem and all(ch.isalpha() and not ch.isnumeric() for ch in end):
            out.append(end)
    return out


class Signatures:
    """The signature scheme of one grammar: the shape classes and a suffix inventory."""

    #: Suffixes kept: the endings of rare training words that say most about their
    #: pre-terminal (``learn``), at most ``MAX_SUFFIXES``, each ending ``MIN_TOKENS`` or more.
    MAX_SUFFIXES = 30
    MIN_TOKENS = 10
    MIN_GAIN = 2.0  # nats: n KL of a longer ending against its chosen shorter one

    def __init__(self, suffixes: Iterable[str] = ()):
        self.suffixes = frozenset(suffixes)

    @classmethod
    def learn(cls, rare: Sequence[tuple[str, str]]) -> Signatures:
        """The suffix inventory of a treebank's rare words, given as (word, pre-terminal)
        tokens: each ending is scored by the information it carries about the pre-terminal,
        ``n_s KL(p(tag | ending s) || p(tag | rare))``, so that endings frequent in every class
        (``te``, ``on`` in English) rank low and ``ing``, ``ed``, ``ly`` high."""
        by_end: dict[str, Counter[str]] = {}
        tags: Counter[str] = Counter()
        for word, tag in rare:
            tags[tag] += 1
            for ending in _endings(word):
                by_end.setdefault(ending, Counter())[tag] += 1
        scored = sorted(
            (-_information(dist, tags), ending)
            for ending, dist in by_end.items()
            if sum(dist.values()) >= cls.MIN_TOKENS
        )
        chosen = {e for _, e in scored[: cls.MAX_SUFFIXES]}
        # A longer ending that says nothing its chosen shorter ending does not ("king" after
        # "ing", "友们" after "们") would only split that class: drop it.
        for ending in sorted(chosen, key=len, reverse=True):
            shorter = [ending[k:] for k in range(1, len(ending)) if ending[k:] in chosen]
            if shorter and _information(by_end[ending], by_end[shorter[0]]) < cls.MIN_GAIN:
                chosen.discard(ending)
        chosen = cls(chosen)
        # A suffix that is never the longest match of a rare word (all the words ending in
        # "ing" end in "king") would be missing from the vocabulary, and parsing could not
        # recover it: drop it (moving no word, so the rest stays in use).
        used = {chosen._suffix(word) for word, _ in rare}
        return cls(chosen.suffixes & used)

    def _suffix(self, word: str) -> str | None:
        for ending in _endings(word):
            if ending in self.suffixes:
                return ending
        return None

    @classmethod
    def from_vocabulary(cls, words: Iterable[str]) -> Signatures:
        """The scheme a grammar was trained with, read off its signature entries."""
        found = set()
        for w in words:
            if is_signature(w):
                # Shape parts are upper-case ASCII names; a suffix is a lower-cased ending
                # (or one in a script without case), never one of them.
                last = w.rsplit("-", 1)[-1]
                if last and not (last.isascii() and last.isupper()):
                    found.add(last)
        return cls(found)

    def __call__(self, word: str, first: bool = False) -> str:
        """Signature of ``word`` (``first``: it starts the sentence), e.g. ``UNK-INITC-s``."""
        parts = [SIGNATURE_PREFIX, *_shape(word, first)]
        suffix = self._suffix(word)
        if suffix is not None:
            parts.append(suffix)
        return "-".join(parts)


def is_signature(token: str) -> bool:
    """True for the pseudo-words that stand for rare words."""
    return token == SIGNATURE_PREFIX or token.startswith(SIGNATURE_PREFIX + "-")


def spellings(token: str) -> tuple[str, ...]:
    """The spellings ``token`` is looked up under, in order: itself, then for a bracket its
    other spelling (``{`` -> ``-LCB-``, ``-LCB-`` -> ``{``; see the module)."""
    other = _OTHER_SPELLING.get(token)
    return (token,) if other is None else (token, other)


def known_spelling(token: str, known: Container[str]) -> str | None:
    """The first of ``token``'s ``spellings`` in ``known``; None if there is none."""
    for spelling in spellings(token):
        if spelling in known:
            return spelling
    return None


class Lexicon:
    """Maps tokens to the word ids of an indexed grammar.

    ``words`` is the grammar's vocabulary: known words and the signatures seen in training.
    """

    #: Weight of the back-off to "any rare word" in an unknown word's lexical score.
    BACKOFF = 0.1
    #: Pseudo-count of a known word's smoothing towards its signature (see the module).
    SMOOTH = 2.0

    def __init__(
        self,
        words: Sequence[str],
        known: Iterable[str],
        counts: Sequence[int] | None = None,
        rare: int = 0,
    ):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.known = set(known)
        # A known word spelt like a signature (a tag ``UNK`` of ``wcfg --terminals tags``)
        # is that word, not a signature.
        # (``startswith`` first: a method call, where ``is_signature`` of every word was a
        # Python call each, at every parser's set-up.)
        self.signature_ids = [
            i
            for i, w in enumerate(self.words)
            if w.startswith(SIGNATURE_PREFIX) and is_signature(w) and w not in self.known
        ]
        self.signature = Signatures.from_vocabulary(self.words[i] for i in self.signature_ids)
        counts = list(counts) if counts is not None else [1] * len(self.words)
        self.rare_total = max(1, sum(counts[i] for i in self.signature_ids))
        self.counts = counts
        self.rare = rare
        # A known word's entries, by (word, first in the sentence), so that its signature is
        # not recomputed for every token (docs/design-notes.md, Start-up); bounded by twice
        # the vocabulary.
        self._known_entries: dict[tuple[str, bool], list[tuple[int, float, int]]] = {}

    @staticmethod
    def known_words(tokens: Iterable[str], rare: int) -> set[str]:
        """Training words seen more than ``rare`` times (the others become signatures)."""
        counts = Counter(tokens)
        return {w for w, c in counts.items() if c > rare and not is_signature(w)}

    @staticmethod
    def training_token(word: str, position: int, known: set[str], scheme: Signatures) -> str:
        """The vocabulary entry a training word is counted under: the one ``lookup`` gives
        it (its known spelling, else its signature), so that training data compiles
        against its own grammar."""
        spelling = known_spelling(word, known)
        return spelling if spelling is not None else scheme(word, position == 0)

    def lookup(self, token: str, position: int) -> list[int]:
        """Word ids whose lexical rules score ``token`` at sentence ``position``."""
        word = known_spelling(token, self.known)
        if word is not None:
            return [self.index[word]]
        sig = self.index.get(self.signature(token, position == 0))
        if sig is not None:
            return [sig]
        return list(self.signature_ids)

    @property
    def pooled_id(self) -> int:
        """The word id ``lookup_weighted(..., pooled=True)`` gives the back-off to every
        signature: one past the vocabulary (``engine.tokens.RulesByWord`` gives it rules)."""
        return len(self.words)

    def lookup_weighted(
        self, token: str, position: int, pooled: bool = False
    ) -> list[tuple[int, float, int]]:
        """(word id, weight, restriction) triples whose weighted lexical rules score
        ``token``: the rules of the word id, or with a restriction ``r >= 0`` only those
        whose pre-terminal also has a rule for word ``r`` (a known word's smoothing).

        An unknown word's back-off to every signature is one entry per signature, or with
        ``pooled`` one entry of ``pooled_id`` (the same weight), whose rules hold the sums
        of the signatures' rules."""
        word = known_spelling(token, self.known)
        if word is not None:
            key = (word, position == 0)
            entries = self._known_entries.get(key)
            if entries is None:
                entries = self._known_entries[key] = self._smoothed(word, position == 0)
            return entries
        sig = self.index.get(self.signature(token, position == 0))
        share = (self.counts[sig] if sig is not None else 1) / self.rare_total
        if pooled:
            out = [(self.pooled_id, self.BACKOFF * share, -1)] if self.signature_ids else []
        else:
            out = [(i, self.BACKOFF * share, -1) for i in self.signature_ids]
        if sig is not None:
            out.append((sig, 1.0 - self.BACKOFF, -1))
        return out

    def _smoothed(self, word: str, first: bool) -> list[tuple[int, float, int]]:
        """A known word's entries: its own rules, smoothed towards its signature's."""
        w = self.index[word]
        c = self.counts[w]
        sig = self.index.get(self.signature(word, first))
        if sig is None or self.SMOOTH == 0:
            return [(w, 1.0, -1)]
        lam = self.SMOOTH / (c + self.SMOOTH)
        # A word seen at most ``rare`` times was trained as its signature and given back by
        # ``rarewords``: its few tokens do not say which tags it can take, so its signature
        # may lend it any of its own (a word seen once as VBD must still be a VBN).
        free = c <= self.rare
        return [(w, 1.0 - lam, -1), (sig, lam * c / (c + self.counts[sig]), -1 if free else w)]


@dataclass
class RareWords:
    """The rare training words of a grammar and their tokens: row ``k`` of ``table`` says
    that word ``words[table[k, 0]]`` stood ``table[k, 3]`` times under pre-terminal
    ``table[k, 1]`` with signature (vocabulary id) ``table[k, 2]``."""

    words: list[str] = field(default_factory=list)
    table: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int64))

    def __post_init__(self) -> None:
        self.table = np.asarray(self.table, dtype=np.int64).reshape(-1, 4)

    def __len__(self) -> int:
        return len(self.words)

    @classmethod
    def count(cls, tokens: Iterable[tuple[str, int, int]]) -> RareWords:
        """From ``(word, pre-terminal, signature id)`` tokens, in order of first sight."""
        counts = Counter(tokens)
        index: dict[str, int] = {}
        rows = []
        for (word, a, sig), n in counts.items():
            rows.append((index.setdefault(word, len(index)), a, sig, n))
        return cls(list(index), np.array(rows, dtype=np.int64).reshape(-1, 4))


def is_uncased_word(token: str) -> bool:
    """Whether ``token`` has letters and none of them has case (Chinese, Japanese, Thai...):
    the words whose characters are morphemes or syllables (``_endings``), which
    ``CharacterEvidence`` scores."""
    if token.isascii():  # every ASCII letter has case (and this is most of a PTB's words)
        return False
    letters = [ch for ch in token if ch.isalpha() and not ch.isnumeric()]
    return bool(letters) and not any(ch.isupper() or ch.islower() or ch.istitle() for ch in letters)


@dataclass
class CharacterEvidence:
    """What the first and the last character of an unknown word in a script without case say
    about its part of speech, learned from the words seen once in training.

    In Chinese a word's characters are morphemes, and its first and last ones carry much of
    what its form says about its tag (Tseng, Jurafsky and Manning 2005, *Morphological
    features help POS tagging of unknown words across language varieties*). A signature
    holds at most one of them (a learned suffix), and only for the few characters seen often
    enough to be a class of their own (``Signatures.learn``), where a Chinese treebank has
    many unseen words (a quarter of the Sinica sample's test tokens). Here every character
    of a word seen once, at either end, is naive-Bayes evidence beside the signature: an
    unknown uncased token's lexical rules under the pre-terminals of emission group ``G``
    are weighted by

        f(G) = prod_{c in (first, last)} p(G | c) / p(G),
        p(G | c) = (n(G, c) + SMOOTH p(G)) / (n(c) + SMOOTH),

    where ``n`` counts the training tokens of uncased words seen once (from ``RareWords``)
    by emission group and character, and ``p(G)`` is each group's share of them. Words seen
    once, not every rare word, since they are what unseen words are like (Good-Turing; with
    split-merge's ``--rare 6`` the words seen up to 6 times made worse evidence on dev). The
    last character is left out where the token's signature already ends in it (a learned
    suffix: that evidence is in the signature's rules). A character never seen, or a group
    no such token had, gives a factor of 1. The factors of one token are scaled to a largest
    of 1: a token is in every parse of its sentence once, so only their ratios matter.
    Measured on the Sinica sample (docs/treebanks.md, Unknown words in a script without
    case: their characters).
    """

    #: Pseudo-count of a character's smoothing towards the prior (chosen on Sinica's dev).
    SMOOTH = 5.0
    #: The rare words counted: those seen at most this often in training.
    MAX_COUNT: ClassVar[int] = 1
    #: Unknown tokens whose factors are kept (a corpus's unknown words are unbounded).
    CACHED: ClassVar[int] = 100_000

    group: np.ndarray  # (N,) emission group of each symbol
    prior: np.ndarray  # (G,) share of the counted tokens in each group
    first: dict[str, np.ndarray]  # character -> (G,) counted tokens it starts
    last: dict[str, np.ndarray]  # character -> (G,) counted tokens it ends
    _cache: dict[tuple[str, bool], np.ndarray | None] = field(default_factory=dict, repr=False)

    @classmethod
    def count(cls, rare: RareWords, group: np.ndarray) -> CharacterEvidence | None:
        """From the rare training words (``RareWords``) and each symbol's emission group;
        None when no word seen once is uncased (every cased treebank)."""
        if not len(rare) or not len(group):
            return None
        tokens = np.bincount(rare.table[:, 0], rare.table[:, 3], minlength=len(rare))
        counted = np.array([is_uncased_word(w) for w in rare.words]) & (tokens <= cls.MAX_COUNT)
        rows = rare.table[counted[rare.table[:, 0]]]
        if not len(rows):
            return None
        n_groups = int(group.max()) + 1
        first: dict[str, np.ndarray] = {}
        last: dict[str, np.ndarray] = {}
        for w, a, _, n in rows:
            word, g = rare.words[w], group[a]
            first.setdefault(word[0], np.zeros(n_groups))[g] += n
            last.setdefault(word[-1], np.zeros(n_groups))[g] += n
        prior = np.bincount(group[rows[:, 1]], weights=rows[:, 3], minlength=n_groups)
        return cls(group, prior / prior.sum(), first, last)

    def factors(
        self, token: str, first: bool, signature: Callable[[str, bool], str]
    ) -> np.ndarray | None:
        """(G,) weights of an unknown ``token`` (``first``: it starts the sentence) by
        emission group (see the class), ``signature(token, first)`` its signature (asked
        only when the token is not cached); None when it is not an uncased word or none of
        its characters was seen."""
        key = (token, first)
        if key not in self._cache:
            if len(self._cache) >= self.CACHED:
                self._cache.clear()
            self._cache[key] = (
                self._factors(token, signature(token, first)) if is_uncased_word(token) else None
            )
        return self._cache[key]

    def _factors(self, token: str, signature: str) -> np.ndarray | None:
        ends = [(self.first, token[0])]
        if len(token) > 1 and not signature.endswith("-" + token[-1].lower()):
            ends.append((self.last, token[-1]))
        out = np.ones_like(self.prior)
        seen = self.prior > 0
        found = False
        for table, ch in ends:
            counts = table.get(ch)
            if counts is None:
                continue
            found = True
            p = (counts + self.SMOOTH * self.prior) / (counts.sum() + self.SMOOTH)
            out[seen] *= p[seen] / self.prior[seen]
        return out / out.max() if found else None
