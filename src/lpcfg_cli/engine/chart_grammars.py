"""A model's parameters arranged for the chart passes.

- ``CoarseGrammar``: the treebank PCFG (one state per symbol), its binary rules indexed by
  left child, so that the coarse pass costs what the rules that can apply cost, not symbols
  squared (a grammar of thousands of symbols stays fast).
- ``LatentGrammar``: an L-PCFG's rule tensors grouped by their children ``(b, c)`` (the split
  sum ``z = sum_k alpha_b(i, k) (x) alpha_c(k, j)`` is shared by every rule ``a -> b c``),
  each packed on the states where it is not zero.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.dispatch import kernel
from lpcfg_cli.engine.scaling import FLUSH


@dataclass
class CoarseGrammar:
    """A PCFG's binary rules indexed by left child, then by right child.

    The children pairs of left child ``b`` are ``left_ptr[b]:left_ptr[b + 1]``; pair ``q``
    has right child ``pair_right[q]`` and rules ``pair_ptr[q]:pair_ptr[q + 1]`` (their
    parents and probabilities). The right children of ``b`` are also a bit set,
    ``right_bits[b]`` (``right_child_bits``), so that the pass meets them with the symbols
    present at a span's end a word of 64 symbols at a time. The coarse pass sums the splits
    of one pair as a single dot product (the sum is shared by all the pair's rules) and
    skips at once the pairs whose children have no split with mass in common. Indexed so, an
    earlier kernel that visited the splits one at a time skipped many of the pairs of a
    grammar of thousands of symbols (the PTB sample binarized ``--vertical 2 --horizontal
    2``) and ran faster than with the rules of a left child in one flat list
    (docs/design-notes.md, The coarse pass).
    """

    n_symbols: int
    left_ptr: np.ndarray  # (N + 1,) into the pairs
    pair_right: np.ndarray  # (P,) right child of each pair
    pair_ptr: np.ndarray  # (P + 1,) into the rules
    parent: np.ndarray  # (R,) rules sorted by (left, right)
    prob: np.ndarray
    prior: np.ndarray  # (N,) ``symbol_prior``: the coarse beam's outside estimate
    right_bits: np.ndarray  # (N, W) uint64: bit c % 64 of word c // 64 if (b, c) is a pair
    right_rank: np.ndarray  # (N, W) pairs of b whose right child lies in an earlier word

    @classmethod
    def build(
        cls, n_symbols: int, rules: np.ndarray, prob: np.ndarray, root: np.ndarray | None = None
    ) -> CoarseGrammar:
        rules = np.asarray(rules, dtype=np.int64).reshape(-1, 3)
        prob = np.asarray(prob, dtype=np.float64)
        idx = np.flatnonzero(prob > 0)
        order = idx[np.lexsort((rules[idx, 2], rules[idx, 1]))]
        left, right = rules[order, 1], rules[order, 2]
        first = np.ones(len(order), dtype=bool)
        first[1:] = (left[1:] != left[:-1]) | (right[1:] != right[:-1])
        starts = np.flatnonzero(first)
        pair_left = left[starts]
        left_ptr = np.searchsorted(pair_left, np.arange(n_symbols + 1)).astype(np.int64)
        pair_ptr = np.append(starts, len(order)).astype(np.int64)
        pair_right = right[starts].copy()
        return cls(
            n_symbols,
            left_ptr,
            pair_right,
            pair_ptr,
            rules[order, 0].copy(),
            prob[order].copy(),
            symbol_prior(n_symbols, rules, prob, root),
            *right_child_bits(n_symbols, pair_left, pair_right),
        )


def right_child_bits(
    n_symbols: int, pair_left: np.ndarray, pair_right: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The children pairs ``(pair_left[q], pair_right[q])`` (sorted by left, then right
    child) as bit sets: ``(bits, rank)``, both ``(N, W)`` with ``W = ceil(N / 64)``; bit
    ``c % 64`` of ``bits[b, c // 64]`` is set if ``(b, c)`` is a pair, and ``rank[b, w]``
    counts the pairs of ``b`` with right child below ``64 w``. Pair ``(b, c)`` is then number
    ``left_ptr[b] + rank[b, c // 64]`` plus the set bits of ``bits[b, c // 64]`` below bit
    ``c % 64``."""
    words = max(1, -(-n_symbols // 64))
    left = np.asarray(pair_left, dtype=np.int64)
    right = np.asarray(pair_right, dtype=np.int64)
    bits = np.zeros((n_symbols, words), dtype=np.uint64)
    np.bitwise_or.at(
        bits, (left, right // 64), np.left_shift(np.uint64(1), (right % 64).astype(np.uint64))
    )
    per_word = np.zeros((n_symbols, words), dtype=np.int64)
    np.add.at(per_word, (left, right // 64), 1)
    rank = np.cumsum(per_word, axis=1) - per_word
    return bits, rank


def symbol_prior(
    n_symbols: int, rules: np.ndarray, prob: np.ndarray, root: np.ndarray | None
) -> np.ndarray:
    """The expected number of nodes of each symbol in a derivation of the PCFG: ``e = root +
    e M``, ``M[a, b]`` the expected number of ``b`` children of an ``a`` node (the mean matrix
    of the PCFG's branching process), solved by fixed-point iteration.

    The coarse beam's estimate of an item's outside value, the simplest of Caraballo &
    Charniak's (1998) figures of merit (inside times a prior of the symbol): without it a
    beam on inside values alone prunes the symbols that sit high in trees (their inside
    values are small as they cover many rules) and costs F1 (docs/parsing.md, The coarse
    beam). All ones where it is not defined: no root weights given, or a PCFG whose
    derivations are not finite with probability one (the series diverges), where the beam
    then compares inside values alone.
    """
    ones = np.ones(n_symbols)
    if root is None or len(rules) == 0:
        return ones
    root = np.asarray(root, dtype=np.float64)
    parent = np.concatenate([rules[:, 0], rules[:, 0]])
    child = np.concatenate([rules[:, 1], rules[:, 2]])
    weight = np.concatenate([prob, prob])
    e = root.copy()
    for _ in range(2000):
        nxt = root + np.bincount(child, weights=weight * e[parent], minlength=n_symbols)
        if not np.all(np.isfinite(nxt)) or nxt.max(initial=0.0) > 1e12:
            return ones
        done = np.abs(nxt - e).max(initial=0.0) <= 1e-10 * nxt.max(initial=1.0)
        e = nxt
        if done:
            return e
    return ones


@dataclass
class LatentGrammar:
    """Rule tensors grouped by children pair, each stored on its live states only.

    Rules are sorted by children pair: group ``g`` holds rules ``group_ptr[g]:group_ptr[g +
    1]`` (``rule_order[i]`` is the grammar's index of sorted rule ``i``) and
    ``pair_group[b * N + c]`` is the group of children ``(b, c)`` or -1.

    A rule's tensor ``T[a, b, c]`` (``M`` states each, zero-padded) is mostly zeros, in blocks:
    EM drives most entries below ``FLUSH``, a rule's non-zero entries lie on a few of each
    child's states, and split-merge models are padded to their largest symbol (the shares:
    docs/design-notes.md, Packed rule tensors). The passes were bound by streaming the full
    tensors (``M^3`` entries per rule and children pair and length). So each group keeps the
    left and right child states that some rule of it uses (``b_idx[b_ptr[g]:b_ptr[g + 1]]``,
    ``c_idx[...]``; ``K_g`` = their product), each rule the parent states it reaches
    (``a_idx[a_ptr[q]:a_ptr[q + 1]]``), and ``packed[t_ptr[q]:t_ptr[q + 1]]`` holds rule
    ``q``'s ``(A_q, K_g)`` block of those entries. The entries left out are exact zeros, so
    sums are unchanged (up to their order). The split sums of a group are kept on its ``K_g``
    entries.
    """

    n_symbols: int
    m: int
    rules: np.ndarray  # (R, 3) in the grammar's order
    rule_order: np.ndarray  # (R,)
    rule_parent: np.ndarray  # (R,) parent symbol, sorted order
    group_ptr: np.ndarray  # (G + 1,)
    pair_group: np.ndarray  # (N * N,) int32
    a_ptr: np.ndarray  # (R + 1,) live parent states of each rule
    a_idx: np.ndarray
    b_ptr: np.ndarray  # (G + 1,) live left-child states of each group
    b_idx: np.ndarray
    c_ptr: np.ndarray  # (G + 1,) live right-child states of each group
    c_idx: np.ndarray
    t_ptr: np.ndarray  # (R + 1,) each rule's block in ``packed``
    packed: np.ndarray  # (sum of A_q * K_g,)
    lexical: np.ndarray  # (L, M)
    lexical_parent: np.ndarray  # (L,)
    root: np.ndarray  # (N, M)

    @property
    def dtype(self) -> np.dtype:
        return self.packed.dtype

    @property
    def flush(self) -> float:
        """Flush threshold of the passes (0 in double precision)."""
        return FLUSH if self.packed.dtype == np.float32 else 0.0

    @classmethod
    def from_arrays(
        cls,
        n_symbols: int,
        rules: np.ndarray,
        tensors: np.ndarray,
        lexical: np.ndarray,
        lexical_parent: np.ndarray,
        root: np.ndarray,
        dtype: type = np.float64,
    ) -> LatentGrammar:
        """``tensors`` ``(R, M, M * M)``, ``lexical`` ``(L, M)``, ``root`` ``(N, M)``."""
        pack = functools.partial(_pack, tensors, dtype=dtype)
        m = int(tensors.shape[1])
        return cls._arranged(n_symbols, m, rules, pack, lexical, lexical_parent, root, dtype)

    @classmethod
    def _arranged(
        cls, n_symbols, m, rules, pack, lexical, lexical_parent, root, dtype
    ) -> LatentGrammar:
        """The grammar of ``rules`` grouped by children pair, its tensors packed by
        ``pack(rule_order, group_ptr)`` (``_pack`` or ``_pack_stored``)."""
        rules = np.asarray(rules, dtype=np.int64).reshape(-1, 3)
        order, ptr, pair_group = _grouping(n_symbols, rules)
        return cls(
            n_symbols,
            m,
            rules,
            order,
            rules[order, 0].copy(),
            ptr,
            pair_group,
            *pack(order, ptr),
            np.ascontiguousarray(lexical, dtype=dtype),
            np.asarray(lexical_parent, np.int64),
            np.ascontiguousarray(root, dtype=dtype),
        )

    @classmethod
    def from_model(cls, model, dtype: type = np.float64) -> LatentGrammar:
        """Arrange an ``LPCFG``'s parameters (per-symbol state counts padded to the largest).

        A model whose binary parameters are still as a compact file stores them
        (``LPCFG.stored_binary``) is packed from the stored entries, to the same arrays as
        from its dense tensors, without the dense float64 array or the padded tensors."""
        g = model.grammar
        stored = model.stored_binary
        if stored is None:
            return cls.from_arrays(
                g.n_symbols,
                g.binary,
                model.padded_binary(),
                model.padded_lexical(dtype),
                g.lexical[:, 0],
                model.padded_root(dtype),
                dtype,
            )
        m, dims = model.max_states, model.states[g.binary]
        pack = functools.partial(_pack_stored, stored, model.binary_offsets, dims, m=m, dtype=dtype)
        # Padded straight in the passes' precision, without a float64 copy of the whole
        # lexicon first (the largest transient array of a parser's set-up).
        lexical, root = model.padded_lexical(dtype), model.padded_root(dtype)
        return cls._arranged(g.n_symbols, m, g.binary, pack, lexical, g.lexical[:, 0], root, dtype)

    def with_parameters(
        self, tensors: np.ndarray, lexical: np.ndarray, root: np.ndarray
    ) -> LatentGrammar:
        """The same rule layout with new parameters (EM reuses the grouping every iteration;
        the live states are found again: EM can only remove them)."""
        return LatentGrammar(
            self.n_symbols,
            self.m,
            self.rules,
            self.rule_order,
            self.rule_parent,
            self.group_ptr,
            self.pair_group,
            *_pack(tensors, self.rule_order, self.group_ptr, self.dtype),
            np.ascontiguousarray(lexical, dtype=self.dtype),
            self.lexical_parent,
            np.ascontiguousarray(root, dtype=self.dtype),
        )

    def unpack(self, values: np.ndarray) -> np.ndarray:
        """An array laid out as ``packed`` (e.g. expected counts) as full ``(R, M, M * M)``
        tensors in the grammar's rule order, zero on the states left out."""
        m = self.m
        out = np.zeros(len(self.rule_order) * m**3, dtype=values.dtype)
        out[
            _positions(
                self.rule_order,
                self.group_ptr,
                self.a_ptr,
                self.a_idx,
                self.b_ptr,
                self.b_idx,
                self.c_ptr,
                self.c_idx,
                self.t_ptr,
                m,
            )
        ] = values
        return out.reshape(len(self.rule_order), m, m * m)

    def unsort(self, counts: np.ndarray) -> np.ndarray:
        """Per-rule arrays in grouped order back to the grammar's rule order."""
        out = np.empty_like(counts)
        out[self.rule_order] = counts
        return out


def _grouping(n: int, rules: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rule_order, group_ptr, pair_group)`` of rules ``(R, 3)`` over ``n`` symbols:
    sorted by children pair, then parent."""
    r = len(rules)
    key = rules[:, 1] * n + rules[:, 2]
    order = np.lexsort((rules[:, 0], key))
    skey = key[order]
    first = np.flatnonzero(np.r_[True, skey[1:] != skey[:-1]]) if r else np.zeros(0, int)
    ptr = np.append(first, r).astype(np.int64)
    pair_group = np.full(n * n, -1, dtype=np.int32)
    pair_group[skey[first]] = np.arange(len(first), dtype=np.int32)
    return order, ptr, pair_group


def _empty_packing(n_groups: int, dtype: type) -> tuple:
    zero = np.zeros(1, np.int64)
    zg = np.zeros(n_groups + 1, np.int64)
    empty = np.zeros(0, np.int64)
    return zero, empty, zg, empty, zg.copy(), empty, zero.copy(), np.zeros(0, dtype)


def _pack_stored(stored, offsets, dims, order, group_ptr, *, m: int, dtype: type) -> tuple:
    """``_pack`` of the binary tensors of a model whose parameters are ``stored``
    (``files.packed_arrays.StoredEntries`` of the flat ragged array: rule ``r``'s
    ``dims[r]`` block at ``offsets[r]``), read off the entries: the same arrays, in
    ``dtype``, as ``_pack`` of the padded dense tensors."""
    r = len(order)
    n_groups = len(group_ptr) - 1
    if r == 0:
        return _empty_packing(n_groups, dtype)
    flush = FLUSH if dtype == np.float32 else 0.0
    order = np.asarray(order, np.int64)
    inv = np.empty(r, np.int64)
    inv[order] = np.arange(r)
    rule_group = np.repeat(np.arange(n_groups), np.diff(group_ptr))
    args = ((stored.mask, stored.size, stored.kept), (offsets, dims, inv, rule_group), flush)
    live_a = np.zeros((r, m), np.bool_)
    gb, gc = np.zeros((n_groups, m), np.bool_), np.zeros((n_groups, m), np.bool_)
    none1, none2 = np.zeros(0, np.int64), np.zeros((0, 0), np.int64)
    nowhere = (none1, none2, none2, none2, none1, none1)
    _stored_pass(*args, (live_a, gb, gc), False, nowhere, np.zeros(0, dtype))
    a_cnt, b_cnt, c_cnt = live_a.sum(1), gb.sum(1), gc.sum(1)
    a_ptr, b_ptr, c_ptr = (np.r_[0, np.cumsum(x)].astype(np.int64) for x in (a_cnt, b_cnt, c_cnt))
    a_idx, b_idx, c_idx = (np.nonzero(x)[1].astype(np.int64) for x in (live_a, gb, gc))
    ranks = tuple(np.cumsum(x, axis=1) - 1 for x in (live_a, gb, gc))
    width = b_cnt * c_cnt
    t_ptr = np.r_[0, np.cumsum(a_cnt * width[rule_group])].astype(np.int64)
    packed = np.zeros(t_ptr[-1], dtype=dtype)
    _stored_pass(*args, (live_a, gb, gc), True, (t_ptr, *ranks, c_cnt, width), packed)
    return a_ptr, a_idx, b_ptr, b_idx, c_ptr, c_idx, t_ptr, packed


# ``_HIGH_BIT[x]``: place of the highest set bit of byte ``x`` counted from the top (0 for
# 128..255), the order of ``np.packbits``: the stored entries' masks are walked a set bit at
# a time, not a bit at a time (the test of each bit mispredicted on sparse masks).
_HIGH_BIT = np.array([0] + [7 - int(x).bit_length() + 1 for x in range(1, 256)], np.int64)


@kernel(nogil=True, inline="always")
def _entry(t, r, offsets, dims):
    """Rule and states ``(r, a, b, c)`` of flat entry ``t``, walking ``r`` forward."""
    while t >= offsets[r + 1]:
        r += 1
    local = t - offsets[r]
    mb, mc = dims[r, 1], dims[r, 2]
    a = local // (mb * mc)
    rest = local - a * mb * mc
    b = rest // mc
    return r, a, b, rest - b * mc


@kernel(nogil=True)
def _stored_pass(stored, rules, flush, live, filling, at, out):
    """One walk over the stored entries (``stored``: the ``StoredEntries``' mask, size and
    kept values) that live (``>= flush``); ``rules``: each rule's offset and dims in the
    flat array, its place in sorted order and its group. Without ``filling`` it
    marks ``live`` = (per sorted rule its parent states, per group its left and right child
    states), as ``_live_states`` does; with ``filling`` it puts each entry into its rule's
    packed ``(A_q, K_g)`` block of ``out``, placed by ``at`` = ``(t_ptr, ra, rb, rc, nc,
    width)`` (``ra``, ``rb``, ``rc``: a state's place among the rule's or the group's live
    states)."""
    mask, size, kept = stored
    offsets, dims, inv, rule_group = rules
    live_a, gb, gc = live
    t_ptr, ra, rb, rc, nc, width = at
    k, r, a, b = 0, 0, 0, 0
    row = offsets[0]  # flat place of state (a, b, 0) of rule r
    mb, mc = dims[0, 1], dims[0, 2]
    for byte in range(len(mask)):
        bits = np.int64(mask[byte])
        while bits != 0:  # its set bits, the first entry's (the highest) first
            bit = _HIGH_BIT[bits]
            bits ^= 128 >> bit
            t = byte * 8 + bit
            if t >= size:
                break
            v = kept[k]
            k += 1
            if v == 0.0 or abs(v) < flush:
                continue
            # The entries come in order: a few rows on, (a, b, c) follow from the last
            # entry's by counting; further on, or in another rule, by division (whose
            # latency, on every entry, was most of this pass).
            if t >= offsets[r + 1] or t - row >= 4 * mc:
                r, a, b, c = _entry(t, r, offsets, dims)
                mb, mc = dims[r, 1], dims[r, 2]
                row = t - c
            else:
                c = t - row
                while c >= mc:
                    c -= mc
                    row += mc
                    b += 1
                    if b == mb:
                        b = 0
                        a += 1
            q = inv[r]
            g = rule_group[q]
            if filling:
                out[t_ptr[q] + ra[q, a] * width[g] + rb[g, b] * nc[g] + rc[g, c]] = v
            else:
                live_a[q, a] = True
                gb[g, b] = True
                gc[g, c] = True


def _pack(tensors: np.ndarray, order: np.ndarray, group_ptr: np.ndarray, dtype: type) -> tuple:
    """``LatentGrammar``'s live-state arrays and packed blocks of ``tensors`` (``(R, M, M *
    M)``, any float type, grammar order) in ``dtype``. In single precision entries below
    ``FLUSH`` count as zero (they are flushed: products stay out of the subnormal range)."""
    r, m = tensors.shape[0], tensors.shape[1]
    flush = FLUSH if dtype == np.float32 else 0.0
    t4 = tensors.reshape(r, m, m, m)
    if r == 0:
        return _empty_packing(len(group_ptr) - 1, dtype)
    live_a, live_b, live_c = _live_states(t4, np.asarray(order, np.int64), flush)
    proto = np.zeros(0, dtype)
    flat = np.ascontiguousarray(tensors).reshape(-1)
    order = np.asarray(order, np.int64)
    return _fill(flat, m, order, group_ptr, live_a, live_b, live_c, flush, proto)


@kernel(nogil=True)
def _live_states(t4, order, flush):
    """Per sorted rule, which parent, left and right states have an entry ``>= flush``."""
    r, m = len(order), t4.shape[1]
    live_a = np.zeros((r, m), np.bool_)
    live_b = np.zeros((r, m), np.bool_)
    live_c = np.zeros((r, m), np.bool_)
    for q in range(r):
        t = t4[order[q]]
        for a in range(m):
            for b in range(m):
                for c in range(m):
                    v = t[a, b, c]
                    if v != 0.0 and abs(v) >= flush:
                        live_a[q, a] = True
                        live_b[q, b] = True
                        live_c[q, c] = True
    return live_a, live_b, live_c


@kernel(nogil=True)
def _fill(flat, m, order, group_ptr, live_a, live_b, live_c, flush, proto):
    r = len(order)
    n_groups = len(group_ptr) - 1
    a_ptr = np.zeros(r + 1, np.int64)
    for q in range(r):
        a_ptr[q + 1] = a_ptr[q] + live_a[q].sum()
    b_ptr = np.zeros(n_groups + 1, np.int64)
    c_ptr = np.zeros(n_groups + 1, np.int64)
    gb = np.zeros((n_groups, m), np.bool_)
    gc = np.zeros((n_groups, m), np.bool_)
    for g in range(n_groups):
        for q in range(group_ptr[g], group_ptr[g + 1]):
            gb[g] |= live_b[q]
            gc[g] |= live_c[q]
        b_ptr[g + 1] = b_ptr[g] + gb[g].sum()
        c_ptr[g + 1] = c_ptr[g] + gc[g].sum()
    a_idx = np.empty(a_ptr[r], np.int64)
    b_idx = np.empty(b_ptr[n_groups], np.int64)
    c_idx = np.empty(c_ptr[n_groups], np.int64)
    for q in range(r):
        a_idx[a_ptr[q] : a_ptr[q + 1]] = np.flatnonzero(live_a[q])
    for g in range(n_groups):
        b_idx[b_ptr[g] : b_ptr[g + 1]] = np.flatnonzero(gb[g])
        c_idx[c_ptr[g] : c_ptr[g + 1]] = np.flatnonzero(gc[g])
    t_ptr = np.zeros(r + 1, np.int64)
    for g in range(n_groups):
        k = (b_ptr[g + 1] - b_ptr[g]) * (c_ptr[g + 1] - c_ptr[g])
        for q in range(group_ptr[g], group_ptr[g + 1]):
            t_ptr[q + 1] = t_ptr[q] + (a_ptr[q + 1] - a_ptr[q]) * k
    pos = _positions(order, group_ptr, a_ptr, a_idx, b_ptr, b_idx, c_ptr, c_idx, t_ptr, m)
    packed = np.zeros(t_ptr[r], dtype=proto.dtype)
    for i in range(len(pos)):
        v = flat[pos[i]]
        if v != 0.0 and abs(v) >= flush:
            packed[i] = v
    return a_ptr, a_idx, b_ptr, b_idx, c_ptr, c_idx, t_ptr, packed


@kernel(nogil=True)
def _positions(order, group_ptr, a_ptr, a_idx, b_ptr, b_idx, c_ptr, c_idx, t_ptr, m):
    """Where each packed entry sits in the full ``(R, M, M, M)`` tensors (grammar order),
    as a flat index."""
    pos = np.empty(t_ptr[-1], np.int64)
    for g in range(len(group_ptr) - 1):
        bs = b_idx[b_ptr[g] : b_ptr[g + 1]]
        cs = c_idx[c_ptr[g] : c_ptr[g + 1]]
        for q in range(group_ptr[g], group_ptr[g + 1]):
            i = t_ptr[q]
            for a in a_idx[a_ptr[q] : a_ptr[q + 1]]:
                for b in bs:
                    for c in cs:
                        pos[i] = ((order[q] * m + a) * m + b) * m + c
                        i += 1
    return pos
