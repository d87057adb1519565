"""Combining the posteriors of an ensemble's models (a product of grammars, Petrov 2010):
one score per chart item (``combine``) and per anchored rule (``combine_rules``, of rules
first expressed over the items every model shares, ``rules_over``)."""

from __future__ import annotations

import numpy as np


def rules_over(
    rules: tuple[np.ndarray, ...], keys: np.ndarray, items: np.ndarray
) -> tuple[np.ndarray, ...]:
    """A chart's anchored rules (parent, left and right items as indices into the chart's
    sorted ``keys``, posterior; ``Chart.rules``) with their items as indices into ``items``
    (sorted keys too) instead, the rules with an item not in ``items`` left out.

    The models of a product need not run over the same items (``--product-prune``: the later
    ones over fewer than the first), and ``combine_rules`` matches rules by their items'
    indices: the rules of every model must index the same items first. A rule left out
    here touches an item the decoder is not given (one every later model ruled out, whose
    product is zero anyway)."""
    if keys is items or np.array_equal(keys, items):
        return rules
    it, x, y, post = rules
    if len(items) == 0:
        return (it[:0], x[:0], y[:0], post[:0])
    pos = np.searchsorted(items, keys)
    at = np.minimum(pos, len(items) - 1)
    index = np.where(items[at] == keys, at, -1)  # each of ``keys``' index into ``items``
    it, x, y = index[it], index[x], index[y]
    keep = (it >= 0) & (x >= 0) & (y >= 0)
    return (it[keep], x[keep], y[keep], post[keep])


def combine_rules(rules: list[tuple[np.ndarray, ...]], how: str) -> tuple[np.ndarray, ...]:
    """One posterior per anchored rule from an ensemble's models, as ``combine`` does for
    items: ``product`` keeps the rules every model has, with the geometric mean of their
    posteriors' absolute values; ``mean`` averages them (a model without the rule counts
    zero). A rule is its (parent, left, right) item indices: every model's rules must index
    the same items (``rules_over``)."""
    if len(rules) == 1:
        return rules[0]
    triples = np.concatenate([np.stack(r[:3], axis=1) for r in rules])  # (parent, left, right)
    uniq, inverse = np.unique(triples, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    per_model = np.zeros((len(rules), len(uniq)))  # a rule a model lacks has posterior 0
    first = 0
    for i, r in enumerate(rules):
        per_model[i, inverse[first : first + len(r[3])]] = r[3]
        first += len(r[3])
    post = combine(list(per_model), how)
    keep = post > 0
    return (uniq[keep, 0], uniq[keep, 1], uniq[keep, 2], post[keep])


def combine(marginals: list[np.ndarray], how: str) -> np.ndarray:
    """One score per item from the marginals of an ensemble's models (one array: itself).

    ``mean``: the average of their absolute values. ``product``: their geometric mean, which
    ranks items as the product of the models' posteriors does (Petrov 2010 multiplies the
    grammars' posteriors); an item some model rules out scores zero.
    """
    if len(marginals) == 1:
        return marginals[0]
    stacked = np.abs(np.stack(marginals))
    if how == "product":
        with np.errstate(divide="ignore"):
            return np.exp(np.log(stacked).mean(axis=0))
    return stacked.mean(axis=0)
