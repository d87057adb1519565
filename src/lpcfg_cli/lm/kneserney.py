"""Interpolated Kneser-Ney bigram and trigram models (``kn2``, ``kn3``): the baselines of
Cohen & Collins (2014, table 2), which used SRILM's ``-kndiscount -interpolate``.

For an n-gram ``g = (c, w)`` of level ``k`` (``k`` ids, context ``c`` of ``k - 1``)::

    p_k(w | c) = (max(N_k(c w) - D_k(N_k(c w)), 0) + gamma_k(c) p_{k-1}(w | c[1:])) / T_k(c)
    T_k(c) = sum_w N_k(c w),   gamma_k(c) = sum_w D_k(N_k(c w)),   p_0(w) = 1 / (V - 1)

and ``p_k(w | c) = p_{k-1}(w | c[1:])`` for a context ``c`` never seen at level ``k``.
``N_k`` is the raw count at the model's order; at lower levels it is the continuation
count ``N1+(. c w)``, the number of distinct ids seen before ``c w`` (Kneser & Ney 1995),
except for n-grams that start with ``<s>``, which keep raw counts since nothing can precede
them (as SRILM does). ``p_0`` is uniform over every id but ``<s>``.

Padding follows SRILM: a sentence is ``<s> w1 .. wn </s>``; the first word of a trigram
model is predicted from the bigram context ``<s>`` (the context ``<s> <s>`` is never
counted, so it backs off entirely to ``p_2(w1 | <s>)``), and ``</s>`` is predicted once.

Discounts (``KNOptions``): by default modified Kneser-Ney (Chen & Goodman 1998), three per
level, ``D1, D2, D3+`` for counts 1, 2 and more, estimated from the level's count-of-counts
``n_r``: ``Y = n1 / (n1 + 2 n2)``, ``D1 = 1 - 2 Y n2 / n1``, ``D2 = 2 - 3 Y n3 / n2``,
``D3+ = 3 - 4 Y n4 / n3``; this is SRILM's ``-kndiscount``. ``modified=False`` uses one
discount ``Y`` per level (original Kneser-Ney, SRILM's ``-ukndiscount``), and ``discount=D``
one fixed ``D`` at every level.

Against ``nltk.lm.KneserNeyInterpolated`` (one fixed discount; tested exactly in
``tests/test_lm_kneserney.py``): nltk does not discount the unigram level (its lowest level
is the continuation distribution, with no uniform part), which is ``discounts`` with a zero
first row here; and it pads ``order - 1`` times on both sides (``<s> <s> w1 .. wn </s>
</s>`` for a trigram), so its trigram counts differ from SRILM's and ours. Its bigram model
equals ours with the same discounts; its trigram one equals ours fitted from its padded
trigrams without the ``<s>`` rules (``start_id=None``), for every context not ending in
``<s>`` (for those nltk's back-off weight counts the bigram ``<s> <s>``, which no trigram
continues, so its distribution there does not sum to one).

Counting is numpy throughout (n-grams as int64 keys, ``np.unique``, ``searchsorted``), with
no Python loop over n-grams (timings on Brown: docs/learners/language-models.md, Cost).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.hyperparams import Checked, hyper, to_dict
from lpcfg_cli.lm.corpus import Sentence, Vocabulary


@dataclass(frozen=True)
class KNOptions(Checked):
    """Options of the Kneser-Ney baselines; ``order`` comes from the method (kn2, kn3)."""

    order: int = field(default=2)
    modified: bool = hyper(
        True,
        "Kneser-Ney: three discounts per order (D1, D2, D3+; modified KN, Chen & Goodman "
        "1998, SRILM's -kndiscount) instead of one (n1 / (n1 + 2 n2), Kneser & Ney 1995).",
    )
    rare: int = hyper(
        1, "Training words seen at most this often are <unk> (1: words seen once).", min=0
    )
    discount: float | None = hyper(
        None,
        "Kneser-Ney: one fixed discount D (0 < D <= 1) at every order instead of estimated ones.",
        min=0.0,
        max=1.0,
        kind="float",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.order not in (2, 3):
            raise LpcfgError(f"Kneser-Ney models here are of order 2 or 3, not {self.order}")
        if self.discount is not None and not self.discount > 0:
            raise LpcfgError(f"discount must be greater than 0, not {self.discount!r}")


def gram_keys(grams: np.ndarray, radix: int) -> np.ndarray:
    """Each row of ids ``(a_1 .. a_k)`` as the int64 key ``sum a_i radix^(k - i)``."""
    key = np.zeros(len(grams), dtype=np.int64)
    for j in range(grams.shape[1]):
        key = key * radix + grams[:, j]
    return key


def count_levels(
    grams: np.ndarray, radix: int, start_id: int | None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The keys (sorted) and Kneser-Ney counts of every level ``k = 1 .. order`` from the
    ``(N, order)`` n-grams of the events (see the module docstring for the counts).

    With ``start_id`` (the id of ``<s>``), an n-gram with ``<s>`` past its first place is
    padding and not counted, and n-grams that start with ``<s>`` keep their raw counts at
    lower levels; ``start_id=None`` treats every id alike (to reproduce nltk).
    """
    order = grams.shape[1]
    if radix**order >= 2**63:
        raise LpcfgError(f"{radix} ids are too many for int64 keys of {order}-grams")
    keys: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * order
    counts: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * order
    for k in range(order, 0, -1):
        g = grams[:, order - k :]
        if start_id is not None and k > 1:
            g = g[~(g[:, 1:] == start_id).any(axis=1)]
        uk, raw = np.unique(gram_keys(g, radix), return_counts=True)
        if k == order:
            keys[k - 1], counts[k - 1] = uk, raw
            continue
        suffixes, continuation = np.unique(keys[k] % radix**k, return_counts=True)
        at, found = _find(suffixes, uk)
        c = np.where(found, continuation[at], 0) if len(suffixes) else np.zeros_like(raw)
        if start_id is not None:
            c = np.where(uk // radix ** (k - 1) == start_id, raw, c)
        keep = c > 0
        keys[k - 1], counts[k - 1] = uk[keep], c[keep].astype(np.int64)
    return keys, counts


def estimate_discounts(counts: Sequence[np.ndarray], modified: bool = True) -> np.ndarray:
    """``(order, 3)``: the discounts ``D1, D2, D3+`` of each level from its count-of-counts
    (module docstring). Where the counts cannot give one (a level with no count of 1 or 2,
    say, in a tiny corpus) the level's ``Y`` is used, else 0.5; each ``D_r`` is clipped to
    ``[0, r]`` so that no count goes negative."""
    out = np.empty((len(counts), 3))
    for level, c in enumerate(counts):
        n = np.bincount(np.minimum(c, 5), minlength=6)[1:5].astype(np.float64)  # n1 .. n4
        with np.errstate(divide="ignore", invalid="ignore"):
            y = n[0] / (n[0] + 2 * n[1])
            if modified:
                d = np.array(
                    [1 - 2 * y * n[1] / n[0], 2 - 3 * y * n[2] / n[1], 3 - 4 * y * n[3] / n[2]]
                )
            else:
                d = np.full(3, y)
        fallback = y if np.isfinite(y) and 0 < y <= 1 else 0.5
        d = np.where(np.isfinite(d) & (d > 0), d, fallback)
        out[level] = np.clip(d, 0.0, [1.0, 2.0, 3.0])
    return out


@dataclass
class _Level:
    """One level's tables: n-gram keys and counts, and per context its total and back-off
    weight (``gamma``), all sorted by key."""

    keys: np.ndarray
    counts: np.ndarray
    discount: np.ndarray  # per n-gram: D(count)
    contexts: np.ndarray
    total: np.ndarray
    gamma: np.ndarray


class KneserNey:
    """An interpolated Kneser-Ney model of ``order`` 2 or 3 (``LanguageModel`` protocol).

    Built by ``fit`` (or ``from_events``); ``keys[k - 1]`` and ``counts[k - 1]`` are level
    ``k``'s n-gram keys (``gram_keys``) and counts, ``discounts`` its ``(order, 3)``
    discounts: the whole model, as saved in a model file.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        keys: Sequence[np.ndarray],
        counts: Sequence[np.ndarray],
        discounts: np.ndarray,
        radix: int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.vocab = vocab
        self.order = len(keys)
        self.method = f"kn{self.order}"
        self.radix = len(vocab) if radix is None else int(radix)
        self.keys = [np.asarray(k, dtype=np.int64) for k in keys]
        self.counts = [np.asarray(c, dtype=np.int64) for c in counts]
        self.discounts = np.asarray(discounts, dtype=np.float64)
        self.meta = dict(meta or {})
        self._validate()
        self._levels = [self._level(k) for k in range(1, self.order + 1)]

    @classmethod
    def from_events(
        cls,
        vocab: Vocabulary,
        grams: np.ndarray,
        discounts: np.ndarray | None = None,
        *,
        modified: bool = True,
        start_id: int | None = Vocabulary.BOS_ID,
        radix: int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> KneserNey:
        """The model of the ``(N, order)`` n-grams ``grams`` (events' context then next id),
        with the given discounts or estimated ones (see ``count_levels`` for ``start_id``)."""
        radix = len(vocab) if radix is None else radix
        keys, counts = count_levels(np.asarray(grams, dtype=np.int64), radix, start_id)
        if discounts is None:
            discounts = estimate_discounts(counts, modified)
        return cls(vocab, keys, counts, discounts, radix, meta)

    def _validate(self) -> None:
        if self.order < 1 or len(self.counts) != self.order:
            raise LpcfgError("a Kneser-Ney model needs keys and counts for every level")
        if self.discounts.shape != (self.order, 3) or not np.all(np.isfinite(self.discounts)):
            raise LpcfgError(f"discounts must be finite, of shape ({self.order}, 3)")
        if np.any(self.discounts < 0) or np.any(self.discounts > [1.0, 2.0, 3.0]):
            raise LpcfgError("discounts must lie in [0, r] for counts r = 1, 2, 3+")
        if self.radix < len(self.vocab) or self.radix**self.order >= 2**63:
            raise LpcfgError(f"key radix {self.radix} does not fit the vocabulary")
        for k, (keys, counts) in enumerate(zip(self.keys, self.counts, strict=True), 1):
            if keys.ndim != 1 or keys.shape != counts.shape:
                raise LpcfgError(f"level {k}: keys and counts differ in shape")
            if len(keys) and (keys[0] < 0 or keys[-1] >= self.radix**k):
                raise LpcfgError(f"level {k}: n-gram keys out of range")
            if np.any(np.diff(keys) <= 0) or np.any(counts <= 0):
                raise LpcfgError(f"level {k}: keys must increase and counts be positive")

    def _level(self, k: int) -> _Level:
        keys, counts = self.keys[k - 1], self.counts[k - 1]
        discount = self.discounts[k - 1][np.minimum(counts, 3) - 1]
        ctx = keys // self.radix
        starts = np.flatnonzero(np.r_[True, ctx[1:] != ctx[:-1]]) if len(ctx) else np.empty(0, int)
        total = np.add.reduceat(counts, starts).astype(np.float64) if len(ctx) else np.empty(0)
        gamma = np.add.reduceat(discount, starts) if len(ctx) else np.empty(0)
        return _Level(keys, counts, discount, ctx[starts], total, gamma)

    def probs(self, context: np.ndarray, next_ids: np.ndarray) -> np.ndarray:
        """``p(next_ids[i] | context[i])`` for an ``(n, order - 1)`` context array."""
        context = np.asarray(context, dtype=np.int64).reshape(len(next_ids), self.order - 1)
        nxt = np.asarray(next_ids, dtype=np.int64)
        p = np.where(nxt == Vocabulary.BOS_ID, 0.0, 1.0 / (self.radix - 1))
        ctx_key = np.zeros(len(nxt), dtype=np.int64)
        for k, level in enumerate(self._levels, 1):
            if k > 1:  # extend the context key one id further back
                ctx_key = ctx_key + context[:, self.order - k] * self.radix ** (k - 2)
            if len(level.keys) == 0:
                continue  # no context seen at this level: p stays the lower level's
            c_at, c_seen = _find(level.contexts, ctx_key)
            g_at, g_seen = _find(level.keys, ctx_key * self.radix + nxt)
            kept = np.where(g_seen, np.maximum(level.counts[g_at] - level.discount[g_at], 0), 0)
            p = np.where(c_seen, (kept + level.gamma[c_at] * p) / level.total[c_at], p)
        return p

    def log_probs(self, context: np.ndarray, next_ids: np.ndarray) -> np.ndarray:
        """Natural log of ``probs`` (``-inf`` for probability zero)."""
        with np.errstate(divide="ignore"):
            return np.log(self.probs(context, next_ids))

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The arrays and JSON metadata of a model file (``modelfile.save_model``)."""
        arrays = {"discounts": self.discounts}
        for k in range(1, self.order + 1):
            arrays[f"keys{k}"] = self.keys[k - 1]
            arrays[f"counts{k}"] = self.counts[k - 1]
        return arrays, {**self.meta, "order": self.order, "radix": self.radix}

    @classmethod
    def from_arrays(
        cls, vocab: Vocabulary, arrays: dict[str, np.ndarray], meta: dict[str, Any]
    ) -> KneserNey:
        """The model saved by ``to_arrays``; ``LpcfgError`` if the arrays do not fit."""
        order = meta.get("order")
        if type(order) is not int or order not in (2, 3):
            raise LpcfgError(f"Kneser-Ney order must be 2 or 3, not {order!r}")
        radix = meta.get("radix")
        if type(radix) is not int:
            raise LpcfgError(f"Kneser-Ney key radix must be a whole number, not {radix!r}")
        needed = ["discounts"] + [
            f"{n}{k}" for k in range(1, order + 1) for n in ("keys", "counts")
        ]
        missing = [n for n in needed if n not in arrays]
        if missing:
            raise LpcfgError(f"missing arrays {', '.join(missing)}")
        for name in needed[1:]:
            if arrays[name].dtype.kind not in "iu":
                raise LpcfgError(f"{name} must hold whole numbers")
        if arrays["discounts"].dtype.kind not in "iuf":
            raise LpcfgError("discounts must be numbers")
        keys = [arrays[f"keys{k}"] for k in range(1, order + 1)]
        counts = [arrays[f"counts{k}"] for k in range(1, order + 1)]
        extra = {k: v for k, v in meta.items() if k not in ("order", "radix")}
        return cls(vocab, keys, counts, arrays["discounts"], radix, extra)


def _find(sorted_keys: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each query key in ``sorted_keys`` (clipped) and whether it is there."""
    if len(sorted_keys) == 0:
        return np.zeros(len(query), dtype=np.int64), np.zeros(len(query), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, query), len(sorted_keys) - 1)
    return at, sorted_keys[at] == query


def estimate(train: Sequence[Sentence], options: KNOptions | None = None) -> KneserNey:
    """The Kneser-Ney model of ``options.order`` of the ``train`` sentences (vocabulary:
    ``Vocabulary.build(train, options.rare + 1)``); ``meta["seconds"]`` says how long it
    took."""
    options = options or KNOptions()
    t0 = time.perf_counter()
    vocab = Vocabulary.build(train, options.rare + 1)
    events = vocab.events(train, options.order)
    grams = np.column_stack([events.context, events.next])
    discounts = None
    if options.discount is not None:
        discounts = np.full((options.order, 3), options.discount)
    summary = {"sentences": len(train), "tokens": len(events) - len(train), "oov": events.oov}
    meta = {"options": to_dict(options), "train": summary}
    model = KneserNey.from_events(vocab, grams, discounts, modified=options.modified, meta=meta)
    model.meta["seconds"] = time.perf_counter() - t0
    return model
