"""A model's parameters arranged for the chart passes.

- ``CoarseGrammar``: the treebank PCFG (one state per symbol), its binary rules indexed by
  left child, so that the coarse pass costs what the rules that can apply cost, not symbols
  squared (a grammar of thousands of symbols stays fast).
- ``LatentGrammar``: an L-PCFG's rule tensors grouped by their children ``(b, c)``: the split
  sum ``z = sum_k alpha_b(i, k) (x) alpha_c(k, j)`` is shared by every rule ``a -> b c``, and
  the stacked tensors of one group turn all spans of one length into a single matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.scaling import FLUSH, flush_rows


@dataclass
class CoarseGrammar:
    """A PCFG's binary rules indexed by left child, then by right child.

    The children pairs of left child ``b`` are ``left_ptr[b]:left_ptr[b + 1]``; pair ``q`` has
    right child ``pair_right[q]`` and rules ``pair_ptr[q]:pair_ptr[q + 1]`` (their parents and
    probabilities). The coarse pass sums the splits of one pair as a single dot product (the
    sum is shared by all the pair's rules) and skips at once the pairs whose children have
    no split with mass in common. Indexed so, an earlier kernel that visited the splits one at
    a time skipped half the pairs with the PTB sample binarized ``--vertical 2 --horizontal
    2`` (2,664 symbols) and took 9.8 s of CPU on the test split instead of 15.2 with the rules
    of a left child in one flat list.
    """

    n_symbols: int
    left_ptr: np.ndarray  # (N + 1,) into the pairs
    pair_right: np.ndarray  # (P,) right child of each pair
    pair_ptr: np.ndarray  # (P + 1,) into the rules
    parent: np.ndarray  # (R,) rules sorted by (left, right)
    prob: np.ndarray

    @classmethod
    def build(cls, n_symbols: int, rules: np.ndarray, prob: np.ndarray) -> CoarseGrammar:
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
        return cls(
            n_symbols,
            left_ptr,
            right[starts].copy(),
            pair_ptr,
            rules[order, 0].copy(),
            prob[order].copy(),
        )


@dataclass
class LatentGrammar:
    """Rule tensors ``(M, M*M)`` (zero-padded to ``M`` states), grouped by children pair.

    ``tensors[i]`` is rule ``rule_order[i]``; group ``g`` holds rows
    ``group_ptr[g]:group_ptr[g + 1]``; ``pair_group[b * N + c]`` is the group of children
    ``(b, c)`` or -1. ``stacked`` views the tensors as ``(R * M, M * M)``, so group ``g`` is the
    contiguous block of rows ``group_ptr[g] * M : group_ptr[g + 1] * M``.
    """

    n_symbols: int
    m: int
    rules: np.ndarray  # (R, 3) in the grammar's order
    rule_order: np.ndarray  # (R,)
    rule_parent: np.ndarray  # (R,) parent symbol, sorted order
    group_ptr: np.ndarray  # (G + 1,)
    pair_group: np.ndarray  # (N * N,) int32
    stacked: np.ndarray  # (R * M, M * M)
    lexical: np.ndarray  # (L, M)
    lexical_parent: np.ndarray  # (L,)
    root: np.ndarray  # (N, M)

    @property
    def dtype(self) -> np.dtype:
        return self.stacked.dtype

    @property
    def flush(self) -> float:
        """Flush threshold of the passes (0 in double precision)."""
        return FLUSH if self.stacked.dtype == np.float32 else 0.0

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
        rules = np.asarray(rules, dtype=np.int64).reshape(-1, 3)
        r, m = tensors.shape[0], tensors.shape[1]
        n = n_symbols
        key = rules[:, 1] * n + rules[:, 2]
        order = np.lexsort((rules[:, 0], key))
        skey = key[order]
        first = np.flatnonzero(np.r_[True, skey[1:] != skey[:-1]]) if r else np.zeros(0, int)
        ptr = np.append(first, r).astype(np.int64)
        pair_group = np.full(n * n, -1, dtype=np.int32)
        pair_group[skey[first]] = np.arange(len(first), dtype=np.int32)
        stacked = _stack(tensors, order, dtype)
        return cls(
            n,
            m,
            rules,
            order,
            rules[order, 0].copy(),
            ptr,
            pair_group,
            stacked,
            np.ascontiguousarray(lexical, dtype=dtype),
            np.asarray(lexical_parent, np.int64),
            np.ascontiguousarray(root, dtype=dtype),
        )

    @classmethod
    def from_model(cls, model, dtype: type = np.float64) -> LatentGrammar:
        """Arrange an ``LPCFG``'s parameters (per-symbol state counts padded to the largest)."""
        g = model.grammar
        return cls.from_arrays(
            g.n_symbols,
            g.binary,
            model.padded_binary(),
            model.padded_lexical(),
            g.lexical[:, 0],
            model.padded_root(),
            dtype,
        )

    def with_parameters(
        self, tensors: np.ndarray, lexical: np.ndarray, root: np.ndarray
    ) -> LatentGrammar:
        """The same rule layout with new parameters (EM reuses the grouping every iteration)."""
        m = self.m
        stacked = _stack(tensors, self.rule_order, self.dtype)
        return LatentGrammar(
            self.n_symbols,
            m,
            self.rules,
            self.rule_order,
            self.rule_parent,
            self.group_ptr,
            self.pair_group,
            stacked,
            np.ascontiguousarray(lexical, dtype=self.dtype),
            self.lexical_parent,
            np.ascontiguousarray(root, dtype=self.dtype),
        )

    def unsort(self, counts: np.ndarray) -> np.ndarray:
        """Per-rule arrays in grouped order back to the grammar's rule order."""
        out = np.empty_like(counts)
        out[self.rule_order] = counts
        return out


def _stack(tensors: np.ndarray, order: np.ndarray, dtype: type) -> np.ndarray:
    """``tensors[order]`` as ``(R * M, M * M)`` in ``dtype``, flushed in single precision.

    Gathered a few rules at a time into one preallocated array, so that no full-size
    temporary is made: on the EM m = 16 model (2,492 rules, 40 MB in float32) this costs 0.03
    s of every parse's start-up where gathering in double precision, then casting, then
    flushing through a mask took 0.41 s.
    """
    r, m = tensors.shape[0], tensors.shape[1]
    out = np.empty((r, m, tensors.shape[2]), dtype=dtype)
    for i in range(0, r, 64):
        out[i : i + 64] = tensors[order[i : i + 64]]
    out = out.reshape(r * m, tensors.shape[2])
    if dtype == np.float32:
        flush_rows(out, 0, len(out), FLUSH)  # products stay out of the subnormal range
    return out
