"""Per-rule tensor products over many nodes at once, for learners that work node by node
outside the chart engine (the pivot learner's rule EM, Cohen & Collins 2014, Eq. 1).

Nodes are sorted by rule; rules with similar numbers of nodes share one padded batched matrix
product, so a few products serve thousands of rules.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from lpcfg_cli.model.lpcfg import ragged_ranges

# Rules with more nodes than this get a matrix product of their own; the others are batched
# in buckets of similar size (one batched product per bucket).
_OWN_PRODUCT = 48


def _buckets(group: np.ndarray, own: int = _OWN_PRODUCT) -> Iterator[tuple]:
    """Yield (element indices, group ids, row of each element, slot of each element, cap).

    ``group`` is sorted. Groups with more than ``own`` elements come one at a time; the others
    in buckets of groups with similar sizes (capacity = a power of two). No elements (a
    treebank of one-word sentences has no binary rules): no buckets.
    """
    if len(group) == 0:
        return
    bounds = np.flatnonzero(np.r_[True, group[1:] != group[:-1], True])
    first, counts = bounds[:-1], np.diff(bounds)
    slot = np.arange(len(group)) - np.repeat(first, counts)
    big = counts > own
    for i in np.flatnonzero(big):
        idx = np.arange(first[i], first[i] + counts[i])
        yield idx, group[first[i : i + 1]], np.zeros(len(idx), np.int64), slot[idx], counts[i]
    cap_of = (2 ** np.ceil(np.log2(np.maximum(counts, 1)))).astype(np.int64)
    for cap in np.unique(cap_of[~big]):
        here = np.flatnonzero(~big & (cap_of == cap))
        row_of = np.full(len(counts), -1)
        row_of[here] = np.arange(len(here))
        idx = ragged_ranges(first[here], counts[here])
        yield idx, group[first[here]], np.repeat(row_of[here], counts[here]), slot[idx], int(cap)


def apply_rules(tensors: np.ndarray, rule: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``T[rule[i]] @ z[i]`` for every i: (n, M) from (n, M*M); ``rule`` must be sorted.

    ``tensors`` is (R, M, M*M).
    """
    m = tensors.shape[1]
    out = np.empty((len(rule), m), dtype=z.dtype)
    for idx, rules, rows, slots, cap in _buckets(rule):
        zt = np.zeros((len(rules), m * m, cap), dtype=z.dtype)
        zt[rows, :, slots] = z[idx]
        out[idx] = np.matmul(tensors[rules], zt)[rows, :, slots]  # (rules, M, cap)
    return out


def accumulate_outer(target: np.ndarray, rule: np.ndarray, b: np.ndarray, z: np.ndarray) -> None:
    """``target[r] += sum over i with rule[i] == r of outer(b[i], z[i])``; ``rule`` sorted."""
    if len(rule) == 0:
        return
    bounds = np.flatnonzero(np.r_[True, rule[1:] != rule[:-1], True])
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        target[rule[lo]] += b[lo:hi].T @ z[lo:hi]
