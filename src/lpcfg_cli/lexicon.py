"""Words and unknown-word signatures.

Training words seen at most ``rare`` times are replaced by a word-shape signature
(capitalisation, digits, dashes, common English suffixes, in the manner of the Berkeley
parser's ``UNK`` classes), so that the grammar learns which pre-terminals take unseen words of
each shape. At parse time a known word maps to itself. Any other token ``w`` with signature ``s`` is
scored for pre-terminal ``a`` by ``(1 - lam) q(a -> s) + lam f_s sum_s' q(a -> s')``: its
own signature's rule, backed off to "some rare word" scaled by the signature's share ``f_s``
of the rare training tokens, so that a pre-terminal that never took a word of this shape
still can (an all-capitals headline needs VBZ for ``APPEARS``). A signature never seen in
training uses the share of a signature seen once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

SIGNATURE_PREFIX = "UNK"

_SUFFIXES = (
    "ing", "ed", "ion", "er", "est", "ly", "ity", "y", "al", "s", "ble", "ive", "ic", "ous",
    "ment", "ness", "ist", "ism", "ful", "less", "ize", "ise", "ate", "en", "age",
)  # fmt: skip

# Token spellings a user's tokenizer may emit for brackets; the treebank uses the escapes.
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "{": "-LCB-", "}": "-RCB-", "[": "-LSB-", "]": "-RSB-"}


def signature(word: str, first: bool = False) -> str:
    """Word-shape class of ``word`` (``first``: it starts the sentence), e.g. ``UNK-INITC-s``."""
    parts = [SIGNATURE_PREFIX]
    has_upper = any(ch.isupper() for ch in word)
    has_lower = any(ch.islower() for ch in word)
    has_digit = any(ch.isdigit() for ch in word)
    has_alpha = any(ch.isalpha() for ch in word)
    if word[:1].isupper():
        parts.append("INITC" if not first else "FIRSTC")
        if not has_lower:
            parts.append("CAPS")
    elif has_upper:
        parts.append("MIXC")
    elif has_lower:
        parts.append("LC")
    if has_digit:
        parts.append("NUM" if not has_alpha else "DIG")
    if "-" in word:
        parts.append("DASH")
    if not has_alpha and not has_digit:
        parts.append("SYM")
    if "." in word and has_digit:
        parts.append("PERIOD")
    lower = word.lower()
    if has_lower and len(word) > 3:
        for suffix in _SUFFIXES:
            if lower.endswith(suffix) and len(lower) > len(suffix) + 1:
                parts.append(suffix)
                break
    return "-".join(parts)


def is_signature(token: str) -> bool:
    """True for the pseudo-words that stand for rare words."""
    return token == SIGNATURE_PREFIX or token.startswith(SIGNATURE_PREFIX + "-")


def canonical(token: str) -> str:
    """Spelling of a user's token in the treebank's convention (bare brackets escaped)."""
    return _BRACKETS.get(token, token)


class Lexicon:
    """Maps tokens to the word ids of an indexed grammar.

    ``words`` is the grammar's vocabulary: known words and the signatures seen in training.
    """

    #: Weight of the back-off to "any rare word" in an unknown word's lexical score.
    BACKOFF = 0.1

    def __init__(
        self, words: Sequence[str], known: Iterable[str], counts: Sequence[int] | None = None
    ):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.known = set(known)
        self.signature_ids = [i for i, w in enumerate(self.words) if is_signature(w)]
        counts = list(counts) if counts is not None else [1] * len(self.words)
        self.rare_total = max(1, sum(counts[i] for i in self.signature_ids))
        self.counts = counts

    @staticmethod
    def known_words(tokens: Iterable[str], rare: int) -> set[str]:
        """Training words seen more than ``rare`` times (the others become signatures)."""
        counts = Counter(tokens)
        return {w for w, c in counts.items() if c > rare and not is_signature(w)}

    @staticmethod
    def training_token(word: str, position: int, known: set[str]) -> str:
        """The vocabulary entry a training word is counted under."""
        return word if word in known else signature(word, position == 0)

    def lookup(self, token: str, position: int) -> list[int]:
        """Word ids whose lexical rules score ``token`` at sentence ``position``."""
        token = canonical(token)
        if token in self.known:
            return [self.index[token]]
        sig = self.index.get(signature(token, position == 0))
        if sig is not None:
            return [sig]
        return list(self.signature_ids)

    def lookup_weighted(self, token: str, position: int) -> list[tuple[int, float]]:
        """(word id, weight) pairs whose weighted lexical rules score ``token``."""
        token = canonical(token)
        if token in self.known:
            return [(self.index[token], 1.0)]
        sig = self.index.get(signature(token, position == 0))
        share = (self.counts[sig] if sig is not None else 1) / self.rare_total
        out = [(i, self.BACKOFF * share) for i in self.signature_ids]
        if sig is not None:
            out.append((sig, 1.0 - self.BACKOFF))
        return out
