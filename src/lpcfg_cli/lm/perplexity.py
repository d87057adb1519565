"""Perplexity, computed the same way for every language model.

A language model (``LanguageModel``) has a ``vocab``, an ``order`` (2 for a bigram model:
it conditions on ``order - 1`` previous ids) and a vectorised
``log_probs(context, next_ids)``: the natural log of ``p(next_ids[i] | context[i])`` for
each row ``i``, where ``context`` is an ``(n, order - 1)`` int array, oldest id first,
padded with ``<s>`` before a sentence's start (``corpus.Events``). A bigram model reads
``context[:, 0]``; the trigram Kneser-Ney model both columns. Each conditional distribution
must sum to one over every id but ``<s>`` (``</s>`` and ``<unk>`` included).

Convention (``perplexity``): every word of every sentence and its ``</s>`` are predicted,
each sentence's context starting at ``<s>``; ``tokens`` counts these predictions. A word not
in the vocabulary is scored as ``<unk>`` and counted in ``oov``. On Brown every test word
can be scored this way, because training words seen once were replaced by ``<unk>``, so
``<unk>`` has a trained probability in every context; this is what Bengio et al. (2003) do
and keeps methods comparable (each is charged for every unknown word). The paper's NYT
figures instead leave unknown words out, as SRILM does for words outside its vocabulary;
on Brown that convention would drop every dev and test token that is ``<unk>`` (their
share: docs/learners/language-models.md, Perplexity, counted the same way for every model).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from lpcfg_cli.lm.corpus import Events, Sentence, Vocabulary, split_by_tokens

BATCH = 65_536  # events scored per log_probs call: bounds a model's working memory


class LanguageModel(Protocol):
    """What ``perplexity`` needs of a model (see the module docstring)."""

    vocab: Vocabulary
    order: int

    def log_probs(self, context: np.ndarray, next_ids: np.ndarray) -> np.ndarray:
        """Natural log ``p(next_ids[i] | context[i])``, shape ``(n,)``."""
        ...


@dataclass(frozen=True)
class Perplexity:
    """``exp`` of the mean negative log probability over ``tokens`` predictions, ``oov`` of
    which were words outside the vocabulary scored as ``<unk>``."""

    perplexity: float
    tokens: int
    oov: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def token_log_probs(
    model: LanguageModel, sentences: Sequence[Sentence] | Events, batch: int = BATCH
) -> np.ndarray:
    """The natural log probability of every predicted token (``Events`` order: each
    sentence's words, then its ``</s>``), computed ``batch`` events at a time."""
    events = (
        sentences if isinstance(sentences, Events) else model.vocab.events(sentences, model.order)
    )
    if events.context.shape[1] != model.order - 1:
        raise ValueError(
            f"events of order {events.context.shape[1] + 1} for a model of order {model.order}"
        )
    out = np.empty(len(events), dtype=np.float64)
    for lo in range(0, len(events), batch):
        hi = min(lo + batch, len(events))
        scores = np.asarray(model.log_probs(events.context[lo:hi], events.next[lo:hi]))
        if scores.shape != (hi - lo,):
            raise ValueError(f"log_probs gave shape {scores.shape} for {hi - lo} events")
        out[lo:hi] = scores
    return out


def perplexity(
    model: LanguageModel, sentences: Sequence[Sentence] | Events, batch: int = BATCH
) -> Perplexity:
    """The perplexity of ``model`` on ``sentences`` under the module's convention (infinite
    if a token has probability zero; NaN for no sentences)."""
    events = (
        sentences if isinstance(sentences, Events) else model.vocab.events(sentences, model.order)
    )
    scores = token_log_probs(model, events, batch)
    n = len(scores)
    value = math.exp(-float(scores.sum()) / n) if n else math.nan
    return Perplexity(value, n, events.oov)


@dataclass(frozen=True)
class SentenceScores:
    """Per sentence: the natural log of its probability (every word and its ``</s>``
    predicted, from ``<s>``; ``-inf`` where it is zero), its predictions (words + 1) and its
    words outside the vocabulary (scored as ``<unk>``), as ``perplexity`` counts them."""

    logprob: np.ndarray  # (n,) float64
    tokens: np.ndarray  # (n,) int64
    oov: np.ndarray  # (n,) int64


def sentence_scores(
    model: LanguageModel, sentences: Sequence[Sentence], batch: int = BATCH
) -> SentenceScores:
    """``SentenceScores`` of ``sentences`` (an empty sentence is scored too: the
    probability of ``</s>`` right after ``<s>``). Summed over a text, ``logprob`` and
    ``tokens`` give ``perplexity``'s figure."""
    encoded = model.vocab.encode(sentences)
    events = model.vocab.events(encoded, model.order)
    scores = token_log_probs(model, events, batch)
    lengths = np.diff(encoded.offsets)
    tokens = lengths + 1
    starts = np.cumsum(tokens) - tokens
    # Every sentence has at least one event (its </s>), so no slice of reduceat is empty.
    logprob = np.add.reduceat(scores, starts) if len(starts) else np.zeros(0)
    unknown = np.concatenate(([0], np.cumsum(encoded.unknown, dtype=np.int64)))
    oov = unknown[encoded.offsets[1:]] - unknown[encoded.offsets[:-1]]
    return SentenceScores(logprob, tokens, oov)


def halves(sentences: Sequence[Sentence]) -> tuple[list[Sentence], list[Sentence]]:
    """The dev set in two: the first half (by tokens, cut at a sentence boundary as
    ``corpus.split_by_tokens`` cuts) picks the number of iterations, the second is the
    half whose perplexity is reported (Cohen & Collins 2014, section 8)."""
    total = sum(len(s) for s in sentences)
    first, second = split_by_tokens(sentences, [total // 2])
    return first, second
