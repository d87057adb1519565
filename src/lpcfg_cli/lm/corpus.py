"""Word sequences for language modelling: the Brown split, text files, the vocabulary.

Sentences are lists of tokens (``list[str]``). Models see them as integer ids of a
``Vocabulary`` and as n-gram *events*: one event per predicted token, the ``order - 1``
previous ids (padded with ``<s>`` at the start of the sentence) and the id predicted. Every
word of a sentence and its ``</s>`` are predicted; ``<s>`` is context only.

Counting is vectorised (numpy arrays, then ``scipy.sparse`` coo -> csr); the only Python
loop over tokens is the dictionary look-up that turns words into ids.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import DEFAULT_ENCODING, atomic_output, display_name
from lpcfg_cli.treebank.sentences import read_sentences, split_tokens

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"
SPECIALS = (BOS, EOS, UNK)

Sentence = list[str]


# --- the Brown corpus -----------------------------------------------------------------------


def split_by_tokens(sentences: Sequence[Sentence], sizes: Sequence[int]) -> list[list[Sentence]]:
    """``sentences`` (in order) cut into ``len(sizes) + 1`` parts at sentence boundaries:
    part ``i`` holds the sentences whose *first token* falls among tokens
    ``[sum(sizes[:i]), sum(sizes[:i + 1]))`` of the running count, the last part the rest.

    So a part ends with the sentence that crosses its boundary, and each part's token count
    is within one sentence's length of the size asked for (Brown: at most 172 tokens more).
    An empty sentence belongs where the running count stands.
    """
    if any(s < 0 for s in sizes):
        raise ValueError(f"part sizes must be >= 0, not {list(sizes)}")
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    starts = np.cumsum(lengths) - lengths  # running count at each sentence's first token
    part = np.searchsorted(np.cumsum(sizes), starts, side="right")
    return [
        [s for s, p in zip(sentences, part, strict=True) if p == i] for i in range(len(sizes) + 1)
    ]


def brown_split(
    tokens_train: int = 800_000, tokens_dev: int = 200_000, *, lower: bool = False
) -> dict[str, list[Sentence]]:
    """The Brown corpus (``nltk.corpus.brown.sents()``, in corpus order) split as Bengio et
    al. (2003) and Cohen & Collins (2014, section 8) do: train = the first 800K tokens, dev
    = the next 200K, test = the rest; cut at sentence boundaries by ``split_by_tokens`` (a
    sentence goes to the part where its first token falls).

    Casing: words keep their case by default (``lower=False``). Bengio et al. (2003, the
    setting the paper follows) distinguish upper and lower case, and so, by its vocabulary
    size, does the paper: 24,537 words are seen at least twice in our train part with case
    kept (22,433 lower-cased), and the paper reports a vocabulary of 24,488. Punctuation
    tokens are kept as words. ``lower=True`` lower-cases every token (a smaller vocabulary
    and fewer unknown words, but figures no longer comparable with the paper's).

    Raises ``LpcfgError`` when nltk's Brown corpus is not installed. Loading takes seconds
    (nltk reads the zipped corpus).
    """
    try:
        from nltk.corpus import brown

        sentences = [list(s) for s in brown.sents()]
    except LookupError:
        raise LpcfgError(
            "the NLTK Brown corpus is not installed: run `python -m nltk.downloader brown` "
            "or set NLTK_DATA"
        ) from None
    if lower:
        sentences = [[w.lower() for w in s] for s in sentences]
    train, dev, test = split_by_tokens(sentences, [tokens_train, tokens_dev])
    return {"train": train, "dev": dev, "test": test}


# --- text files -----------------------------------------------------------------------------


def read_corpus(path: str | os.PathLike[str], encoding: str = DEFAULT_ENCODING) -> list[Sentence]:
    """The sentences of a text file (``-``: stdin; ``sentences.read_sentences``), blank
    lines skipped: they hold no sentence. Bad input (an undecodable byte, a NUL byte, a
    missing file) is one ``LpcfgError`` naming the file and line."""
    return [tokens for tokens in read_sentences(path, encoding) if tokens]


def write_sentences(
    path: str | os.PathLike[str],
    sentences: Iterable[Sentence],
    encoding: str = DEFAULT_ENCODING,
) -> None:
    """Write one sentence per line, tokens separated by one space (``-``: stdout); the file
    appears atomically. A token that is empty or holds whitespace could not be read back as
    one token, so it is refused (``LpcfgError``)."""
    with atomic_output(path, encoding=encoding) as fh:
        for number, sentence in enumerate(sentences, 1):
            for token in sentence:
                if not token or split_tokens(token) != [token]:
                    raise LpcfgError(
                        f"token {token!r} is empty or holds whitespace",
                        source=display_name(path),
                        line=number,
                    )
            fh.write(" ".join(sentence) + "\n")


# --- vocabulary and events ------------------------------------------------------------------


@dataclass(frozen=True)
class Encoded:
    """Sentences as ids: ``ids`` are the words of every sentence one after the other (no
    boundary ids), sentence ``i`` is ``ids[offsets[i]:offsets[i + 1]]``; ``unknown`` marks
    the tokens that were not in the vocabulary (mapped to ``<unk>``), ``oov`` counts them."""

    ids: np.ndarray
    offsets: np.ndarray
    unknown: np.ndarray  # (tokens,) bool

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def oov(self) -> int:
        return int(self.unknown.sum())

    @property
    def tokens(self) -> int:
        return int(self.offsets[-1])


@dataclass(frozen=True)
class Events:
    """One row per predicted token (every word, then ``</s>``, of each sentence):
    ``context[i]`` the ``order - 1`` previous ids, oldest first (``<s>`` before the start
    of the sentence), ``next[i]`` the id predicted. ``oov`` as in ``Encoded``."""

    context: np.ndarray  # (n, order - 1) int64
    next: np.ndarray  # (n,) int64
    oov: int

    def __len__(self) -> int:
        return len(self.next)


class Vocabulary:
    """Word <-> id. Ids 0, 1, 2 are ``<s>`` (context only), ``</s>`` (predicted, never
    context) and ``<unk>``; then the words, most frequent first (ties in code-point order).

    ``build`` keeps the training words seen at least ``min_count`` times (2: a word seen
    once in training is ``<unk>``, so ``<unk>`` is trained on real contexts). Any word
    not in the vocabulary, in training or later, maps to ``<unk>``; a token spelt like one
    of the boundary symbols (``<s>``, ``</s>``) is treated as an unknown word, since it
    cannot be a boundary inside a sentence, while ``<unk>`` in a text is ``<unk>``.

    Out-of-vocabulary (OOV) tokens of a text are its tokens whose word is not in the
    vocabulary: in the training text itself these are exactly the words seen fewer than
    ``min_count`` times; a token ``<unk>`` in a text is not OOV (it is in the vocabulary).
    """

    BOS_ID, EOS_ID, UNK_ID = 0, 1, 2

    def __init__(self, words: Sequence[str], min_count: int = 2) -> None:
        words = list(words)
        if tuple(words[:3]) != SPECIALS:
            raise LpcfgError(f"a vocabulary starts with {', '.join(SPECIALS)}")
        self.words = words
        self.index = {w: i for i, w in enumerate(words)}
        if len(self.index) != len(words):
            raise LpcfgError("a vocabulary lists each word once")
        self.min_count = min_count
        # What a text's token maps to: the boundary spellings are not words of a text.
        self._lookup = {w: i for w, i in self.index.items() if w not in (BOS, EOS)}

    @classmethod
    def build(cls, sentences: Iterable[Sentence], min_count: int = 2) -> Vocabulary:
        """The vocabulary of training ``sentences``: the words seen >= ``min_count`` times."""
        if min_count < 1:
            raise LpcfgError(f"min_count must be at least 1, not {min_count}")
        counts = Counter(chain.from_iterable(sentences))
        for special in SPECIALS:
            counts.pop(special, None)
        kept = sorted(
            (w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w)
        )
        return cls([*SPECIALS, *kept], min_count)

    def __len__(self) -> int:
        return len(self.words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and (self.words, self.min_count) == (
            other.words,
            other.min_count,
        )

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} ids, min_count={self.min_count})"

    def id(self, word: str) -> int:
        """The id of ``word`` (``<unk>``'s if it is not in the vocabulary)."""
        return self._lookup.get(word, self.UNK_ID)

    def encode(self, sentences: Sequence[Sentence]) -> Encoded:
        """``sentences`` as ids (unknown words as ``<unk>``), with the OOV count."""
        lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
        offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        get = self._lookup.get
        flat = chain.from_iterable(sentences)
        ids = np.fromiter((get(w, -1) for w in flat), dtype=np.int64, count=int(offsets[-1]))
        unknown = ids == -1
        ids[unknown] = self.UNK_ID
        return Encoded(ids, offsets, unknown)

    def events(
        self, sentences: Sequence[Sentence] | Encoded, order: int, *, skip_unknown: bool = False
    ) -> Events:
        """The n-gram events of ``sentences`` for a model of ``order`` (2: bigrams).

        ``skip_unknown`` drops the events that predict a word outside the vocabulary (their
        ``oov`` still counts them; an unknown word in a later event's context stays
        ``<unk>``): the convention of Cohen & Collins (2014, section 8) for NYT, SRILM's
        for words outside its vocabulary. By default they are predicted as ``<unk>``."""
        encoded = sentences if isinstance(sentences, Encoded) else self.encode(sentences)
        context, nxt = ngram_events(encoded, order, self.BOS_ID, self.EOS_ID)
        if skip_unknown and encoded.oov:
            # Events are each sentence's words then its </s>; </s> is never unknown.
            lengths = np.diff(encoded.offsets) + 1
            is_end = np.zeros(len(nxt), dtype=bool)
            is_end[np.cumsum(lengths) - 1] = True
            unknown = np.zeros(len(nxt), dtype=bool)
            unknown[~is_end] = encoded.unknown
            context, nxt = context[~unknown], nxt[~unknown]
        return Events(context, nxt, encoded.oov)

    def bigram_counts(self, sentences: Sequence[Sentence] | Encoded) -> sp.csr_matrix:
        """``(V, V)`` bigram counts: row = previous id (``<s>`` included), column = next id
        (``</s>`` included); float64 so that it can be scaled in place."""
        ev = self.events(sentences, 2)
        v = len(self)
        data = np.ones(len(ev), dtype=np.float64)
        counts = sp.coo_matrix((data, (ev.context[:, 0], ev.next)), shape=(v, v)).tocsr()
        counts.sum_duplicates()
        return counts

    def unk_replaced(self, sentences: Iterable[Sentence]) -> list[Sentence]:
        """``sentences`` with every word not in the vocabulary written ``<unk>``."""
        words = self.words
        return [[words[self.id(w)] for w in s] for s in sentences]


def ngram_events(
    encoded: Encoded, order: int, bos: int = Vocabulary.BOS_ID, eos: int = Vocabulary.EOS_ID
) -> tuple[np.ndarray, np.ndarray]:
    """``(context, next)`` of ``Events`` from ids, without a Python loop: the predicted
    sequence of each sentence is its ids then ``eos``; the context at distance ``d`` is the
    predicted sequence ``d`` places back, or ``bos`` before the sentence's start."""
    if order < 1:
        raise ValueError(f"order must be at least 1, not {order}")
    lengths = np.diff(encoded.offsets) + 1  # words and </s>
    n = int(lengths.sum())
    ends = np.cumsum(lengths)  # one past each sentence's </s>
    nxt = np.empty(n, dtype=np.int64)
    is_end = np.zeros(n, dtype=bool)
    is_end[ends - 1] = True
    nxt[is_end] = eos
    nxt[~is_end] = encoded.ids
    position = np.arange(n, dtype=np.int64) - np.repeat(ends - lengths, lengths)
    context = np.full((n, order - 1), bos, dtype=np.int64)
    for j in range(order - 1):  # column j is distance order - 1 - j back
        d = order - 1 - j
        inside = position >= d
        context[inside, j] = nxt[np.flatnonzero(inside) - d]
    return context, nxt
