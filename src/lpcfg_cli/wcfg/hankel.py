"""Bases and Hankel blocks of a function over cut strings (Bailly et al. 2013, section 3).

A basis ``B = (P, S)`` is a list ``P`` of outside contexts ``<x; z>`` (pairs of strings, the
first being ``<eps; eps>``) and a list ``S`` of non-empty inside strings containing every
single symbol. ``HankelBlocks`` holds what Lemma 1 needs: ``H_B`` (p x s), ``H_A`` over the
inside completion ``S' = S x S`` and the vectors ``h_star`` (the row of ``<eps; eps>``) and
``h_sigma`` (the column of each symbol).

The blocks come either from a known WCFG (``exact_blocks``: ``f(<x;z>, (y))`` is eq. 12) or
from bracketed samples (``empirical_blocks``: the relative frequency of each cut, the
statistics of the supervised method of section 3.2). A bracketed sample is a sentence with
the binary nodes ``(start, split, end)`` of its tree (``Bracketed``); the bases of the
paper's experiments (section 5.2: the most frequent insides and contexts) are
``select_basis``'s, and ``complete_basis`` lists every string and context up to a length.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from lpcfg_cli.wcfg.algebraic import WCFG, all_strings, string_code

String = tuple[int, ...]
Context = tuple[String, String]
Node = tuple[int, int, int]

# Largest H_A (p * s * s entries, dense float64) the estimators build: 3e8 is 2.4 GB.
MAX_HA_ENTRIES = 300_000_000


@dataclass
class HankelBlocks:
    """Hankel sub-blocks for a basis over an alphabet of ``d`` symbols.

    ``H[o, i] = f(P[o], (S[i]))``; ``H_A[o, i1, i2] = f(P[o], (S[i1], S[i2]))``.
    """

    outsides: list[Context]  # P; outsides[0] == ((), ())
    insides: list[String]  # S; holds (sigma,) for every sigma < d
    H: np.ndarray  # (p, s)
    H_A: np.ndarray  # (p, s, s)
    d: int

    def __post_init__(self) -> None:
        if not self.outsides or self.outsides[0] != ((), ()):
            raise ValueError("the first outside context must be <eps; eps>")
        missing = [s for s in range(self.d) if (s,) not in self.inside_index]
        if missing:
            raise ValueError(f"the insides lack the single symbols {missing}")
        p, s = len(self.outsides), len(self.insides)
        if self.H.shape != (p, s) or self.H_A.shape != (p, s, s):
            raise ValueError("Hankel block shapes do not match the basis")

    @property
    def inside_index(self) -> dict[String, int]:
        return {x: i for i, x in enumerate(self.insides)}

    @property
    def h_star(self) -> np.ndarray:
        """(s,): ``f(<eps; eps>, (x))`` for ``x`` in S (the row of ``<eps; eps>``)."""
        return self.H[0]

    @property
    def h_sigma(self) -> np.ndarray:
        """(d, p): row sigma is the column of ``H`` for the inside ``(sigma)``."""
        index = self.inside_index
        return np.stack([self.H[:, index[(s,)]] for s in range(self.d)])


class Basis(NamedTuple):
    """``B = (P, S)``: outside contexts (``<eps; eps>`` first) and inside strings."""

    outsides: list[Context]
    insides: list[String]


# --- bracketed samples ----------------------------------------------------------------------


class Bracketed(NamedTuple):
    """A sentence and its binary bracketing: ``nodes`` are the binary nodes ``(start, split,
    end)`` (spans ``[start, end)``, children ``[start, split)`` and ``[split, end)``) of a
    binary tree whose leaves are the words, ``len(words) - 1`` of them, in pre-order (by
    start, then widest first), so that equal trees are equal tuples."""

    words: String
    nodes: tuple[Node, ...]


def bracketed(
    words: Sequence[int], nodes: Iterable[Sequence[int]], d: int | None = None
) -> Bracketed:
    """A checked ``Bracketed`` in canonical node order; ``ValueError`` if the nodes are not
    the binary nodes of one binary tree over the words (or a word is not below ``d``)."""
    ws = tuple(int(w) for w in words)
    ns = [tuple(int(v) for v in node) for node in nodes]
    length = len(ws)
    if not length:
        raise ValueError("a bracketed sample needs at least one word")
    if any(w < 0 or (d is not None and w >= d) for w in ws):
        raise ValueError(f"words must be symbols 0 .. {'d - 1' if d is None else d - 1}: {ws}")
    if len(ns) != length - 1:
        raise ValueError(f"{length} words need {length - 1} binary nodes, got {len(ns)}")
    split: dict[tuple[int, int], int] = {}
    for node in ns:
        if len(node) != 3 or not 0 <= node[0] < node[1] < node[2] <= length:
            raise ValueError(f"bad node {node}: need 0 <= start < split < end <= {length}")
        i, k, j = node
        if (i, j) in split:
            raise ValueError(f"two nodes span [{i}, {j})")
        split[i, j] = k
    if length > 1 and (0, length) not in split:
        raise ValueError(f"no node spans the whole sentence [0, {length})")
    for (i, j), k in split.items():
        for a, b in ((i, k), (k, j)):
            if b - a > 1 and (a, b) not in split:
                raise ValueError(f"node ({i}, {k}, {j}) has a child [{a}, {b}) that is no node")
    # n - 1 distinct spans, the root among them and every child a node or a word: the nodes
    # reachable from the root form a full binary tree over the n words, which has n - 1.
    order = sorted(split, key=lambda span: (span[0], -span[1]))
    return Bracketed(ws, tuple((i, split[i, j], j) for i, j in order))


def bracketing_of(tree: object) -> Bracketed:
    """The ``Bracketed`` form of a nested binary tree: a leaf is a symbol (an int), a node a
    pair ``(left, right)``; e.g. ``((0, 1), 1)`` is the sentence 0 1 1 with nodes
    ``(0, 2, 3), (0, 1, 2)``. Iterative (any depth)."""
    words: list[int] = []
    nodes: list[Node] = []
    # Post-order walk: a frame is [subtree, start, split or None, children done].
    stack: list[list] = [[tree, 0, None, 0]]
    end = 0
    while stack:
        frame = stack[-1]
        sub, start, _, done = frame
        if not isinstance(sub, (tuple, list)):
            if isinstance(sub, bool) or not isinstance(sub, (int, np.integer)):
                raise ValueError(f"a leaf must be a symbol (an int), got {sub!r}")
            words.append(int(sub))
            end = start + 1
            stack.pop()
            continue
        if len(sub) != 2:
            raise ValueError(f"a node must have two children, got {len(sub)}")
        if done == 0:
            frame[3] = 1
            stack.append([sub[0], start, None, 0])
        elif done == 1:
            frame[2], frame[3] = end, 2
            stack.append([sub[1], end, None, 0])
        else:
            nodes.append((start, frame[2], end))
            stack.pop()
    return bracketed(words, nodes)


def _collapse(
    samples: Iterable[Bracketed], weights: Sequence[float] | None
) -> tuple[dict[Bracketed, float], float]:
    """Identical samples merged (their weights summed) and the total weight ``N``."""
    if weights is None:
        merged: dict[Bracketed, float] = dict(Counter(samples))
    else:
        merged = {}
        samples = list(samples)
        if len(weights) != len(samples):
            raise ValueError(f"{len(weights)} weights for {len(samples)} samples")
        for sample, w in zip(samples, weights, strict=True):
            merged[sample] = merged.get(sample, 0.0) + float(w)
    total = float(sum(merged.values()))
    if not merged or total <= 0:
        raise ValueError("no samples (or a non-positive total weight)")
    return merged, total


def _constituents(sample: Bracketed) -> list[tuple[int, int]]:
    """The spans ``(i, j)`` of every leaf and every binary node."""
    return [(i, i + 1) for i in range(len(sample.words))] + [(i, j) for i, _, j in sample.nodes]


class _Trie:
    """Strings interned as ids, one symbol at a time (id 0 is the empty string): a context's
    prefix and suffix become two ints, hashed and compared in constant time however long
    the sentence."""

    def __init__(self) -> None:
        self.edges: dict[tuple[int, int], int] = {}
        self.parent: list[int] = [-1]
        self.symbol: list[int] = [-1]

    def add(self, symbols: Sequence[int]) -> int:
        """The id of ``symbols``, interning it and its prefixes."""
        return self.prefix_ids(symbols, grow=True)[-1]

    def prefix_ids(self, symbols: Sequence[int], grow: bool) -> list[int]:
        """Ids of ``symbols[:i]`` for ``i = 0 .. len``; without ``grow``, -1 from the first
        prefix not interned on."""
        out = [0]
        node = 0
        edges = self.edges
        for a in symbols:
            child = edges.get((node, a))
            if child is None:
                if not grow:
                    return out + [-1] * (len(symbols) + 1 - len(out))
                child = self.add_child(node, a)
            out.append(child)
            node = child
        return out

    def add_child(self, node: int, a: int) -> int:
        child = self.edges[node, a] = len(self.parent)
        self.parent.append(node)
        self.symbol.append(a)
        return child

    def spell(self, node: int) -> String:
        out: list[int] = []
        while node > 0:
            out.append(self.symbol[node])
            node = self.parent[node]
        return tuple(reversed(out))


def _context_ids(
    words: String, prefixes: _Trie, suffixes: _Trie, grow: bool
) -> tuple[list[int], list[int]]:
    """(pre, suf): ``pre[i]`` is the id of ``words[:i]``, ``suf[j]`` that of ``words[j:]``
    (suffixes are interned reversed), -1 for strings unknown to the tries without ``grow``."""
    pre = prefixes.prefix_ids(words, grow)
    rev = suffixes.prefix_ids(words[::-1], grow)
    return pre, rev[::-1]


def _interned_counts(
    samples: Iterable[Bracketed], weights: Sequence[float] | None
) -> tuple[Counter[String], Counter[tuple[int, int]], _Trie, _Trie]:
    """Constituent counts with contexts as (prefix id, suffix id) pairs of the two tries."""
    merged, _ = _collapse(samples, weights)
    prefixes, suffixes = _Trie(), _Trie()
    insides: Counter[String] = Counter()
    outsides: Counter[tuple[int, int]] = Counter()
    for sample, w in merged.items():
        ws = sample.words
        pre, suf = _context_ids(ws, prefixes, suffixes, grow=True)
        for i, j in _constituents(sample):
            insides[ws[i:j]] += w
            outsides[pre[i], suf[j]] += w
    return insides, outsides, prefixes, suffixes


# --- bases --------------------------------------------------------------------------------


def complete_basis(d: int, max_inside: int, max_context: int) -> Basis:
    """Every inside string of 1 .. ``max_inside`` symbols (by length, then lexicographic) and
    every context ``<x; z>`` with ``|x| + |z| <= max_context`` (by total length, then
    ``|x|``, then lexicographic; ``<eps; eps>`` first)."""
    if d < 1 or max_inside < 1 or max_context < 0:
        raise ValueError("need d >= 1, max_inside >= 1 and max_context >= 0")
    insides = [
        tuple(int(v) for v in row) for n in range(1, max_inside + 1) for row in all_strings(d, n)
    ]
    outsides: list[Context] = []
    for total in range(max_context + 1):
        for left in range(total + 1):
            for row in all_strings(d, total):
                r = tuple(int(v) for v in row)
                outsides.append((r[:left], r[left:]))
    return Basis(outsides, insides)


def constituent_counts(
    samples: Iterable[Bracketed], weights: Sequence[float] | None = None
) -> tuple[Counter[String], Counter[Context]]:
    """(inside strings, outside contexts) of every constituent (leaf or binary node) of the
    samples, with how often each is observed (weighted by the samples' weights)."""
    insides, pairs, prefixes, suffixes = _interned_counts(samples, weights)
    outsides: Counter[Context] = Counter(
        {(prefixes.spell(x), suffixes.spell(z)[::-1]): c for (x, z), c in pairs.items()}
    )
    return insides, outsides


def _top(counts: Mapping, keep: int, spell: Callable[[Any], Any] | None = None) -> list:
    """The ``keep`` most frequent keys: by count (highest first), ties broken by the
    lexicographic order of ``spell(key)`` (the key itself by default). Only the keys at or
    above the ``keep``-th count are sorted."""
    spelled = spell or (lambda key: key)
    keys = list(counts)
    if keep <= 0:
        return []
    if keep < len(keys):
        values = np.fromiter((counts[k] for k in keys), dtype=np.float64, count=len(keys))
        threshold = np.partition(values, len(keys) - keep)[len(keys) - keep]
        keys = [keys[i] for i in np.flatnonzero(values >= threshold)]
    return sorted(keys, key=lambda key: (-counts[key], spelled(key)))[:keep]


def top_basis(
    inside_counts: Mapping[String, float],
    outside_counts: Mapping[Context, float],
    d: int,
    *,
    factor: float | None = None,
    n_insides: int | None = None,
    n_outsides: int | None = None,
) -> Basis:
    """The basis of the most frequent insides and contexts (section 5.2).

    ``factor`` f keeps ``ceil(f * distinct)`` of each list (the paper's basis factor: the
    proportion of the distinct observed insides and outsides kept); ``n_insides`` and
    ``n_outsides`` (which take precedence) keep that many; a list given no size is kept
    whole. Order: by count, highest first, ties broken lexicographically (contexts as the
    pair ``(x, z)``). ``<eps; eps>`` is always the first context and every single symbol
    ``0 .. d - 1`` is always an inside (appended, in symbol order, when not kept), so a
    basis may exceed the asked size by these.
    """
    return _top_basis(inside_counts, outside_counts, None, d, factor, n_insides, n_outsides)


def _top_basis(
    inside_counts: Mapping[String, float],
    outside_counts: Mapping[Any, float],
    spell: Callable[[Any], Context] | None,
    d: int,
    factor: float | None,
    n_insides: int | None,
    n_outsides: int | None,
) -> Basis:
    """``top_basis`` with contexts keyed by anything ``spell`` turns into ``(x, z)``."""
    if factor is None and n_insides is None and n_outsides is None:
        raise ValueError("choose the basis size: a basis factor or numbers of insides/outsides")
    if factor is not None and not 0 <= factor <= 1:
        raise ValueError(f"the basis factor is a proportion in [0, 1], got {factor}")

    def size(explicit: int | None, distinct: int) -> int:
        if explicit is not None:
            if explicit < 0:
                raise ValueError("a basis size cannot be negative")
            return explicit
        if factor is None:
            return distinct
        return math.ceil(round(factor * distinct, 9))  # 0.1 * 30 is 3, not 4

    spelled = spell or (lambda key: key)
    eps: Context = ((), ())
    top = [spelled(c) for c in _top(outside_counts, size(n_outsides, len(outside_counts)), spell)]
    outsides = [eps] + [c for c in top if c != eps]
    insides = _top(inside_counts, size(n_insides, len(inside_counts)))
    chosen = set(insides)
    insides += [(s,) for s in range(d) if (s,) not in chosen]
    return Basis(outsides, insides)


def select_basis(
    samples: Iterable[Bracketed],
    d: int,
    *,
    factor: float | None = None,
    n_insides: int | None = None,
    n_outsides: int | None = None,
    weights: Sequence[float] | None = None,
) -> Basis:
    """``top_basis`` of the constituents observed in the bracketed samples (the supervised
    basis of section 5.2)."""
    inside_counts, pairs, prefixes, suffixes = _interned_counts(samples, weights)

    def spell(key: tuple[int, int]) -> Context:
        return prefixes.spell(key[0]), suffixes.spell(key[1])[::-1]

    return _top_basis(inside_counts, pairs, spell, d, factor, n_insides, n_outsides)


def _check_basis(basis: Basis, d: int) -> tuple[list[Context], list[String]]:
    outsides = [(tuple(map(int, x)), tuple(map(int, z))) for x, z in basis.outsides]
    insides = [tuple(map(int, y)) for y in basis.insides]
    if len(set(outsides)) != len(outsides) or len(set(insides)) != len(insides):
        raise ValueError("a basis lists each context and each inside once")
    if any(not y for y in insides):
        raise ValueError("inside strings are non-empty")
    strings = [*insides, *(x for x, _ in outsides), *(z for _, z in outsides)]
    if any(v < 0 or v >= d for y in strings for v in y):
        raise ValueError(f"the basis has symbols outside 0 .. {d - 1}")
    p, s = len(outsides), len(insides)
    if p * s * s > MAX_HA_ENTRIES:
        raise ValueError(
            f"a basis of {p} contexts x {s} insides needs an H_A of {p * s * s:,} entries "
            f"(limit {MAX_HA_ENTRIES:,}): choose a smaller basis"
        )
    return outsides, insides


# --- Hankel blocks ------------------------------------------------------------------------


def empirical_blocks(
    samples: Iterable[Bracketed],
    basis: Basis,
    d: int,
    weights: Sequence[float] | None = None,
) -> HankelBlocks:
    """The empirical Hankel blocks of bracketed samples (section 3.2, step 2).

    ``H(<x;z>, (y))`` is the weighted relative frequency of a constituent over ``y`` in
    context ``<x; z>`` (the statistic ``gamma(x;z)^T beta(y)`` of eq. 12 estimates: every
    binary node and every leaf is a constituent), ``H_A(<x;z>, (y1, y2))`` that of a binary
    node whose children span ``y1`` and ``y2``; both are divided by ``N``, the total weight
    (the number of sentences when unweighted). Identical samples are merged first.
    """
    merged, total = _collapse(samples, weights)
    outsides, insides = _check_basis(basis, d)
    p, s = len(outsides), len(insides)
    prefixes, suffixes = _Trie(), _Trie()
    o_index = {(prefixes.add(x), suffixes.add(z[::-1])): i for i, (x, z) in enumerate(outsides)}
    s_index = {y: i for i, y in enumerate(insides)}
    max_inside = max(len(y) for y in insides)
    h_cells: list[int] = []
    h_weights: list[float] = []
    a_cells: list[int] = []
    a_weights: list[float] = []
    for sample, w in merged.items():
        ws = sample.words
        if max(ws) >= d:
            raise ValueError(f"a sample has symbols outside 0 .. {d - 1}: {ws}")
        w /= total
        pre, suf = _context_ids(ws, prefixes, suffixes, grow=False)
        inside_at: dict[tuple[int, int], int] = {}
        context_at: dict[tuple[int, int], int] = {}
        for i, j in _constituents(sample):
            y = s_index.get(ws[i:j], -1) if j - i <= max_inside else -1
            o = o_index.get((pre[i], suf[j]), -1)
            inside_at[i, j] = y
            context_at[i, j] = o
            if y >= 0 and o >= 0:
                h_cells.append(o * s + y)
                h_weights.append(w)
        for i, k, j in sample.nodes:
            o, y1, y2 = context_at[i, j], inside_at[i, k], inside_at[k, j]
            if o >= 0 and y1 >= 0 and y2 >= 0:
                a_cells.append((o * s + y1) * s + y2)
                a_weights.append(w)
    return HankelBlocks(
        outsides,
        insides,
        _accumulate(h_cells, h_weights, (p, s)),
        _accumulate(a_cells, a_weights, (p, s, s)),
        d,
    )


def _accumulate(cells: list[int], weights: list[float], shape: tuple[int, ...]) -> np.ndarray:
    """A dense array of ``shape`` holding the summed weights of the flat ``cells``; only the
    touched entries are written (a large, mostly empty H_A stays cheap to build)."""
    out = np.zeros(math.prod(shape))
    if cells:
        unique, inverse = np.unique(np.asarray(cells, dtype=np.int64), return_inverse=True)
        out[unique] = np.bincount(inverse, np.asarray(weights))
    return out.reshape(shape)


def _insides(wcfg: WCFG, strings: list[String], batch_limit: int = 2_000_000) -> np.ndarray:
    """(len(strings), n) inside vectors: from ``inside_all`` when every string is short
    enough that all strings up to that length number at most ``batch_limit``, else one CKY
    per string."""
    longest = max(len(y) for y in strings)
    d = wcfg.d
    if sum(d**length for length in range(1, longest + 1)) <= batch_limit:
        table = wcfg.inside_all(longest)
        return np.stack([table[len(y)][string_code(y, d)] for y in strings])
    return np.stack([wcfg.inside(y) for y in strings])


def exact_blocks(wcfg: WCFG, basis: Basis) -> HankelBlocks:
    """The Hankel blocks of the function of a known WCFG (eq. 12 and eq. 18-20):
    ``H = P_B S_B`` and ``H_A = P_B A (S_B (x) S_B)`` with rows of outside vectors
    ``gamma(x; z)`` and columns of inside vectors ``beta(y)``."""
    outsides, insides = _check_basis(basis, wcfg.d)
    inside = _insides(wcfg, insides)  # (s, n)
    outside = np.stack([wcfg.outside(x, z) for x, z in outsides])  # (p, n)
    H = outside @ inside.T
    # H_A[o, a, b] = sum_ijk gamma_o[i] A[i, j, k] beta_a[j] beta_b[k]
    left = np.tensordot(outside, wcfg.binary, axes=(1, 0))  # (p, n, n): [o, j, k]
    half = np.tensordot(left, inside, axes=(1, 1))  # (p, n, s): [o, k, a]
    H_A = np.tensordot(half, inside, axes=(1, 1))  # (p, s, s): [o, a, b]
    return HankelBlocks(outsides, insides, H, H_A, wcfg.d)
