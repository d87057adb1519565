"""Sentences drawn from a random-topology parsing model, and their empirical moments.

Sampling follows the generative process of Hsu, Kakade & Liang (2012), section 3: a
topology uniform among those over ``L`` words, then states (or words) top-down. Both kinds
of topology are drawn exactly by counts, one random choice per node for all the sentences
of a length at once (numpy, no Python loop over sentences; timings: docs/design-notes.md,
Smaller notes):

- constituency: a span of ``n`` leaves splits after ``m`` with probability
  ``Catalan(m - 1) Catalan(n - m - 1) / Catalan(n - 1)``; nodes are visited in pre-order, so
  node ``j``'s children are ``j + 1`` and ``j + 2m`` in every tree, and ``2L - 1`` steps
  draw every sentence's tree, states and words;
- dependency: Eisner's unique decomposition of a projective tree (the one of
  ``moments``): the root's two complete halves, a complete span's farthest argument
  (an arc, "incomplete" span, and the argument's own complete span), an incomplete span's
  split, each chosen with probability proportional to its number of trees. Each tree
  needs exactly ``2L - 1`` nontrivial items, so a per-sentence stack runs in lock-step;
  an argument's word is drawn when its arc is chosen (its head's word is known by then).

A set of sentences is ``{length: (n_L, length) int array of word ids}`` (``ByLength``).

Empirical moments are averages over sentences of one-hot products, by ``np.bincount``
over pair or triple word-id codes (weighted by ``eta`` of the sliced word):

- ``TripleMoments``: ``E[x_p1 (x) x_p2 (x) x_p3]`` for every length ``3..L_max`` and
  positions ``p1 < p2 < p3`` (``d^3`` numbers each, so for small ``d``); ``sliced(eta)``
  gives the mixing matrix rows of ``mixing`` (section 5.2's ``mu123eta``...);
- ``sliced_sum``: ``sum_rows c_row mu_row;eta`` straight from the sentences for any ``d``
  (what UNMIX needs: one row of ``pinv(M)`` times the stacked moments, ``d x d`` memory);
- ``PairMoments``: DEP-IES's ``pi``, ``mu12``, ``mu13`` (length 3) and ``mu~12``
  (length 2), section 5.3.

``exact_triple_moments`` / ``exact_pair_moments`` give the same objects from a model by
``moments.moment`` (infinite data); ``from_sentences`` reads sentences of text;
``draw_sentences`` draws a model file's sentences as text (``lpcfg sample``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations

import numpy as np

from lpcfg_cli.topology_models import mixing
from lpcfg_cli.topology_models.families import Constituency, Dependency, Params
from lpcfg_cli.topology_models.moments import (
    catalan,
    complete_spans,
    incomplete_spans,
    moment,
    tables,
)
from lpcfg_cli.topology_models.topology_file import TopologyModel
from lpcfg_cli.treebank.sentences import split_tokens

ByLength = dict[int, np.ndarray]


class _Columns:
    """Column distributions ``p[:, c]`` (``(K, R)``) made ready for vectorised draws."""

    def __init__(self, p: np.ndarray):
        p = np.clip(np.real(np.asarray(p, dtype=float)), 0, None)
        if p.ndim == 1:
            p = p[:, None]
        total = p.sum(axis=0, keepdims=True)
        if not np.all(total > 0):
            raise ValueError("a distribution has no mass")
        cum = np.cumsum(p / total, axis=0)
        cum[-1] = 1.0
        self.size = p.shape[0]
        # columns one after another, column c shifted by c: one sorted array for every draw
        self.flat = (cum + np.arange(p.shape[1])).T.ravel()

    def draw(self, cols: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One outcome for each entry of ``cols`` (which column's distribution)."""
        cols = np.asarray(cols, dtype=np.int64)
        u = rng.random(cols.shape)
        idx = np.searchsorted(self.flat, u + cols, side="right") - cols * self.size
        return np.clip(idx, 0, self.size - 1)


@cache
def _split_table(length: int) -> _Columns:
    """Column ``n``: P(a span of ``n`` leaves splits after ``m``), outcome ``m - 1``."""
    w = np.zeros((max(length - 1, 1), length + 1))
    w[0, :] = 1  # spans of 0 or 1 leaves never split; keep their columns valid
    for n in range(2, length + 1):
        w[:, n] = 0
        for m in range(1, n):
            w[m - 1, n] = catalan(m - 1) * catalan(n - m - 1)
    return _Columns(w)


def _constituency(p: Constituency, length: int, n: int, rng: np.random.Generator) -> np.ndarray:
    nodes = 2 * length - 1
    size = np.zeros((n, nodes), dtype=np.int64)
    start = np.zeros((n, nodes), dtype=np.int64)
    state = np.zeros((n, nodes), dtype=np.int64)
    words = np.zeros((n, length), dtype=np.int64)
    size[:, 0] = length
    state[:, 0] = _Columns(p.pi).draw(np.zeros(n), rng)
    emit = _Columns(p.o)
    if p.t1 is not None:
        kids = [_Columns(p.t1), _Columns(p.t2)]
    else:
        joint = _Columns(np.asarray(p.b).reshape(p.k * p.k, p.k))
    splits = _split_table(length)
    for j in range(nodes):
        sz = size[:, j]
        leaf = np.flatnonzero(sz == 1)
        words[leaf, start[leaf, j]] = emit.draw(state[leaf, j], rng)
        inner = np.flatnonzero(sz > 1)
        if not inner.size:
            continue
        m = splits.draw(sz[inner], rng) + 1
        left, right = j + 1, j + 2 * m
        size[inner, left], size[inner, right] = m, sz[inner] - m
        start[inner, left], start[inner, right] = start[inner, j], start[inner, j] + m
        parent = state[inner, j]
        if p.t1 is not None:
            state[inner, left] = kids[0].draw(parent, rng)
            state[inner, right] = kids[1].draw(parent, rng)
        else:
            pair = joint.draw(parent, rng)
            state[inner, left], state[inner, right] = pair // p.k, pair % p.k
    return words


_COMP_R, _COMP_L, _INC = 0, 1, 2  # head at the span's start / end; an arc between its ends


@cache
def _dep_tables(length: int) -> tuple[_Columns, _Columns]:
    """Choice tables: the root's position (outcome h), and for item type ``t`` and span
    length ``l`` (column ``t * (length + 1) + l``) the split outcome (see ``_dependency``)."""
    root = np.array(
        [complete_spans(h + 1) * complete_spans(length - h) for h in range(length)], float
    )
    w = np.zeros((max(length - 1, 1), 3 * (length + 1)))
    for t in (_COMP_R, _COMP_L, _INC):
        for size in range(length + 1):
            col = w[:, t * (length + 1) + size]
            if size < 2:
                col[0] = 1
                continue
            for c in range(size - 1):
                if t == _COMP_R:  # farthest right argument at r = c + 1
                    col[c] = incomplete_spans(c + 2) * complete_spans(size - c - 1)
                elif t == _COMP_L:  # farthest left argument at r = c
                    col[c] = complete_spans(c + 1) * incomplete_spans(size - c)
                else:  # start's right half [0, c], end's left half [c + 1, l - 1]
                    col[c] = complete_spans(c + 1) * complete_spans(size - c - 1)
    return _Columns(root), _Columns(w)


def _dependency(p: Dependency, length: int, n: int, rng: np.random.Generator) -> np.ndarray:
    root_table, table = _dep_tables(length)
    left, right = _Columns(p.left), _Columns(p.right)
    words = np.zeros((n, length), dtype=np.int64)
    rows = np.arange(n)
    depth = 2 * length
    st_type = np.zeros((n, depth), dtype=np.int64)
    st_start = np.zeros((n, depth), dtype=np.int64)
    st_len = np.zeros((n, depth), dtype=np.int64)
    sp = np.zeros(n, dtype=np.int64)

    def push(mask: np.ndarray, kind, begin: np.ndarray, size: np.ndarray) -> None:
        at = np.flatnonzero(mask)
        kind = np.broadcast_to(kind, mask.shape)
        st_type[at, sp[at]] = kind[at]
        st_start[at, sp[at]] = begin[at]
        st_len[at, sp[at]] = size[at]
        sp[at] += 1

    h = root_table.draw(np.zeros(n), rng)
    words[rows, h] = _Columns(p.pi).draw(np.zeros(n), rng)
    zero = np.zeros(n, dtype=np.int64)
    push(h + 1 > 1, _COMP_L, zero, h + 1)
    push(length - h > 1, _COMP_R, h, length - h)
    for _ in range(2 * length - 2):
        sp -= 1
        kind, s, span = st_type[rows, sp], st_start[rows, sp], st_len[rows, sp]
        c = table.draw(kind * (length + 1) + span, rng)
        is_r, is_l, is_i = kind == _COMP_R, kind == _COMP_L, kind == _INC
        # complete span headed at s: argument a = s + c + 1 under a right arc
        a = s + c + 1
        at = np.flatnonzero(is_r)
        words[at, a[at]] = right.draw(words[at, s[at]], rng)
        push(is_r, _INC, s, c + 2)
        push(is_r & (span - c - 1 > 1), _COMP_R, a, span - c - 1)
        # complete span headed at e = s + span - 1: argument a = s + c under a left arc
        a = s + c
        at = np.flatnonzero(is_l)
        words[at, a[at]] = left.draw(words[at, (s + span - 1)[at]], rng)
        push(is_l & (c + 1 > 1), _COMP_L, s, c + 1)
        push(is_l, _INC, a, span - c)
        # arc between s and e: s's right half [s, s + c], e's left half [s + c + 1, e]
        push(is_i & (c + 1 > 1), _COMP_R, s, c + 1)
        push(is_i & (span - c - 1 > 1), _COMP_L, s + c + 1, span - c - 1)
    return words


def sample(params: Params, length: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` sentences of ``length`` words from any family: ``(n, length)`` word ids."""
    if length < 1:
        raise ValueError(f"sentence length must be at least 1, not {length}")
    if isinstance(params, Constituency):
        return _constituency(params, length, n, rng)
    return _dependency(params, length, n, rng)


def sample_by_length(
    params: Params, counts: Mapping[int, int], rng: np.random.Generator
) -> ByLength:
    """``counts[L]`` sentences of each length ``L`` (lengths in increasing order)."""
    return {n: sample(params, n, c, rng) for n, c in sorted(counts.items()) if c > 0}


def draw_lengths(length_counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` sentence lengths drawn from counts per length (index = length)."""
    counts = np.asarray(length_counts, dtype=float)
    return rng.choice(len(counts), size=n, p=counts / counts.sum())


# Sentences drawn at once by ``draw_sentences`` (a larger count is drawn in pieces of this
# many, so memory stays flat); up to this many the draw is one piece.
SENTENCES_AT_ONCE = 10_000


def draw_sentences(
    model: TopologyModel, count: int, length: int | None = None, seed: int = 0
) -> Iterator[list[str]]:
    """``count`` sentences of ``model`` as token lists, ``length`` words each or of lengths
    drawn from its training length distribution (``draw_lengths``), drawn in pieces of
    ``SENTENCES_AT_ONCE``; the same sentences for one seed."""
    rng = np.random.default_rng(seed)
    vocab = np.asarray(model.vocab, dtype=object)
    for first in range(0, count, SENTENCES_AT_ONCE):
        size = min(SENTENCES_AT_ONCE, count - first)
        if length is None:
            lengths = draw_lengths(model.length_counts, size, rng)
        else:
            lengths = np.full(size, length)
        values, counts = np.unique(lengths, return_counts=True)
        per_length = {int(n): int(c) for n, c in zip(values, counts, strict=True)}
        data = sample_by_length(model.params, per_length, rng)
        rows: list[list[str]] = [[]] * size
        for n, words in data.items():
            at = np.flatnonzero(lengths == n).tolist()
            for i, row in zip(at, vocab[words].tolist(), strict=True):
                rows[i] = row
        yield from rows


def sentence_counts(data: ByLength, length_max: int) -> np.ndarray:
    """Sentences per length ``0..length_max`` (float, as ``TripleMoments.n_sentences``)."""
    out = np.zeros(length_max + 1)
    for n, w in data.items():
        if n <= length_max:
            out[n] = len(w)
    return out


# --- triple moments (PCFG-IE, section 5.2) ------------------------------------------------


def triples(length_max: int) -> list[tuple[int, tuple[int, int, int]]]:
    """``(L, (p1, p2, p3))`` for ``L = 3..length_max``, in mixing-row order."""
    return [(n, pos) for n in range(3, length_max + 1) for pos in combinations(range(n), 3)]


@dataclass
class TripleMoments:
    """``tensors[i] = E[x_p1 (x) x_p2 (x) x_p3]`` for ``triples(length_max)[i]`` over
    sentences of that length; ``n_sentences[L]`` how many sentences of length ``L`` they
    average (``inf`` for exact moments, 0 when none: those rows are unobserved)."""

    d: int
    length_max: int
    tensors: np.ndarray  # (n_triples, d, d, d)
    n_sentences: np.ndarray  # (length_max + 1,)

    def sliced(self, eta: np.ndarray) -> np.ndarray:
        """The mixing-matrix rows' moments ``(n_rows, d, d)`` (``mixing.rows`` order):
        each triple's tensor with its sliced axis contracted with ``eta``, the other two
        axes (row, column) in position order."""
        eta = np.asarray(eta, dtype=float)
        t = self.tensors
        out = np.stack(
            [
                np.einsum("iabc,a->ibc", t, eta),
                np.einsum("iabc,b->iac", t, eta),
                np.einsum("iabc,c->iab", t, eta),
            ],
            axis=1,
        )
        return out.reshape(-1, self.d, self.d)


def _codes(data: ByLength, n: int, positions: tuple[int, ...], d: int) -> np.ndarray:
    w = data[n]
    code = np.zeros(len(w), dtype=np.int64)
    for q in positions:
        code = code * d + w[:, q]
    return code


def triple_moments(data: ByLength, d: int, length_max: int) -> TripleMoments:
    """Empirical ``TripleMoments`` of sentences (lengths above ``length_max`` unused).
    Memory ``n_triples * d^3`` floats: for small vocabularies (the unmixing experiments);
    ``sliced_sum`` serves any ``d``."""
    ts = triples(length_max)
    if len(ts) * d**3 > 5 * 10**7:
        raise ValueError(f"triple tensors of d = {d} words are too large; use sliced_sum")
    counts = sentence_counts(data, length_max)
    out = np.zeros((len(ts), d**3))
    for i, (n, pos) in enumerate(ts):
        if counts[n]:
            out[i] = np.bincount(_codes(data, n, pos, d), minlength=d**3) / counts[n]
    return TripleMoments(d, length_max, out.reshape(-1, d, d, d), counts)


def sliced_sum(
    data: ByLength, d: int, length_max: int, etas: np.ndarray, coef: np.ndarray
) -> np.ndarray:
    """``sum_i coef[i] mu_i;eta`` for each row ``eta`` of ``etas`` (``(m, d)`` ->
    ``(m, d, d)``) over the mixing rows ``i`` (``mixing.rows(length_max)`` order), straight
    from sentences in ``m d^2`` memory: for each length and position pair, one
    ``bincount`` per ``eta`` of the pair's word codes weighted by
    ``sum_s coef[(pair, s)] eta(x_s)`` over the rows where that pair is (row, column).
    Rows of lengths without sentences must have ``coef`` 0."""
    etas = np.atleast_2d(np.asarray(etas, dtype=float))
    coef = np.asarray(coef, dtype=float)
    counts = sentence_counts(data, length_max)
    rs = mixing.rows(length_max)
    index = {r: i for i, r in enumerate(rs)}
    lengths = np.array([r.length for r in rs])
    total = np.zeros((len(etas), d * d))
    for n in range(3, length_max + 1):
        if not counts[n]:
            if np.any(coef[lengths == n]):
                raise ValueError(f"no sentences of length {n}, but its rows are used")
            continue
        w = data[n]
        for i, j in combinations(range(n), 2):
            weight = np.zeros((len(etas), len(w)))
            for s in range(n):
                if s in (i, j):
                    continue
                pos = tuple(sorted((i, j, s)))
                c = coef[index[mixing.Row(n, pos, pos.index(s))]]  # type: ignore[arg-type]
                if c:
                    weight += c * etas[:, w[:, s]]
            if not weight.any():
                continue
            code = w[:, i] * d + w[:, j]
            for e in range(len(etas)):
                total[e] += np.bincount(code, weights=weight[e], minlength=d * d) / counts[n]
    return total.reshape(len(etas), d, d)


def exact_triple_moments(params: Constituency, length_max: int) -> TripleMoments:
    """``TripleMoments`` of a model (``moments.moment``, memoised span tables)."""
    dp = tables(params)
    ts = triples(length_max)
    out = np.stack([moment(params, n, pos, dp) for n, pos in ts])
    counts = np.full(length_max + 1, np.inf)
    counts[:3] = 0
    return TripleMoments(params.d, length_max, np.real(out), counts)


# --- pair moments (DEP-IES, section 5.3) --------------------------------------------------


@dataclass
class PairMoments:
    """DEP-IES's moments (section 5.3): ``pi`` the average word distribution over every
    position of every sentence (each position's marginal is the stationary ``pi``), ``mu12``
    and ``mu13`` of length-3 sentences, ``mu12_2`` (the paper's ``mu~12``) of length 2;
    ``n_sentences`` per length as in ``TripleMoments``."""

    d: int
    pi: np.ndarray
    mu12: np.ndarray
    mu13: np.ndarray
    mu12_2: np.ndarray
    n_sentences: np.ndarray


def pair_moments(data: ByLength, d: int) -> PairMoments:
    """Empirical ``PairMoments`` (needs sentences of lengths 2 and 3)."""
    for n in (2, 3):
        if n not in data or not len(data[n]):
            raise ValueError(f"DEP-IES needs sentences of length {n}")
    words = np.concatenate([w.ravel() for w in data.values()])
    pi = np.bincount(words, minlength=d) / len(words)

    def pair(n: int, i: int, j: int) -> np.ndarray:
        w = data[n]
        return (np.bincount(w[:, i] * d + w[:, j], minlength=d * d) / len(w)).reshape(d, d)

    top = max(data)
    return PairMoments(
        d, pi, pair(3, 0, 1), pair(3, 0, 2), pair(2, 0, 1), sentence_counts(data, top)
    )


def exact_pair_moments(params: Dependency) -> PairMoments:
    """``PairMoments`` of a model (``moments.moment``)."""
    dp = tables(params)
    pi = np.mean([moment(params, 3, (q,), dp) for q in range(3)], axis=0)
    counts = np.full(4, np.inf)
    counts[0] = 0
    return PairMoments(
        params.d,
        np.real(pi),
        np.real(moment(params, 3, (0, 1), dp)),
        np.real(moment(params, 3, (0, 2), dp)),
        np.real(moment(params, 2, (0, 1))),
        counts,
    )


# --- text -----------------------------------------------------------------------------------


@dataclass
class Corpus:
    """Sentences read from text: ``vocab`` (token strings in id order: by frequency, most
    frequent first, then by spelling), ``data`` (``ByLength`` word ids), ``length_counts``
    (sentences per length, index = length) and the lines skipped."""

    vocab: list[str]
    data: ByLength
    length_counts: np.ndarray
    empty: int
    too_long: int


def from_lines(lines: Iterable[str], length_max: int) -> Corpus:
    """One sentence per line, tokens separated by whitespace (``from_sentences``)."""
    return from_sentences((split_tokens(line) for line in lines), length_max)


def from_sentences(sentences: Iterable[Sequence[str]], length_max: int) -> Corpus:
    """Sentences as token lists (``treebank.sentences.read_sentences``); empty ones and
    those of more than ``length_max`` tokens are skipped (counted). The vocabulary is the
    distinct tokens of the kept sentences."""
    ids: dict[str, int] = {}
    flat: list[int] = []
    lengths: list[int] = []
    empty = too_long = 0
    for tokens in sentences:
        if not tokens:
            empty += 1
            continue
        if len(tokens) > length_max:
            too_long += 1
            continue
        flat.extend(ids.setdefault(t, len(ids)) for t in tokens)
        lengths.append(len(tokens))
    words = list(ids)
    first = np.asarray(flat, dtype=np.int64)
    freq = np.bincount(first, minlength=len(words))
    order = sorted(range(len(words)), key=lambda i: (-freq[i], words[i]))
    rank = np.empty(len(words), dtype=np.int64)
    rank[order] = np.arange(len(words))
    first = rank[first]
    size = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(size)
    data: ByLength = {}
    for n in np.unique(size):
        rows = np.flatnonzero(size == n)
        starts = ends[rows] - n
        data[int(n)] = first[starts[:, None] + np.arange(n)]
    counts = np.bincount(size, minlength=length_max + 1)
    return Corpus([words[i] for i in order], data, counts, empty, too_long)
