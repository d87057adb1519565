"""Combining the posteriors of an ensemble's models (a product of grammars, Petrov 2010):
one score per chart item (``combine``) and per anchored rule (``combine_rules``)."""

from __future__ import annotations

import numpy as np


def combine_rules(rules: list[tuple[np.ndarray, ...]], how: str) -> tuple[np.ndarray, ...]:
    """One posterior per anchored rule from an ensemble's models, as ``combine`` does for
    items: ``product`` keeps the rules every model has, with the geometric mean of their
    posteriors' absolute values; ``mean`` averages them (a model without the rule counts
    zero)."""
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
