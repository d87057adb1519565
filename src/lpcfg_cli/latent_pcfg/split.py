"""Splitting a PCFG's symbols into latent states: where EM starts.

``split_model`` (EM on trees, Matsuzaki et al. 2005): the PCFG's rules spread evenly over
the states and slightly perturbed. ``random_model`` (EM from strings): random parameters.
``split_maps`` and ``merge_maps``: the state maps of a split-merge cycle (Petrov et al.
2006, sections 2.1-2.2), shared by the learners of one latent symbol per chain and of
latent unary rules (``latent_pcfg.splitmerge``, ``latent_pcfg.chain_em``).
"""

from __future__ import annotations

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.model.lpcfg import LPCFG


def split_model(pcfg: LPCFG, states: int | np.ndarray, noise: float = 0.01, seed: int = 0) -> LPCFG:
    """Split every symbol of a PCFG into latent states (Matsuzaki et al. 2005): ``states``
    for all, or ``states[a]`` for symbol ``a``.

    Each rule's probability is spread evenly over the children's states, perturbed by a
    relative ``noise`` and renormalised per ``(a, h)``. EM starts from such a model; the
    parser benchmark uses one as an m-state model with the PCFG's accuracy.
    """
    rng = np.random.default_rng(seed)
    g = pcfg.grammar
    if int(pcfg.states.max()) != 1:
        raise LpcfgError("split_model needs a PCFG (one state per symbol)")
    m = np.broadcast_to(np.asarray(states, dtype=np.int64), (g.n_symbols,)).copy()
    model = LPCFG.zeros(g, m, pcfg.coarse, meta=dict(pcfg.meta))
    rule_of = np.repeat(np.arange(g.n_binary), model.binary_sizes)
    children = (m[g.binary[:, 1]] * m[g.binary[:, 2]])[rule_of]
    model.binary[:] = pcfg.binary[rule_of] / children
    model.binary *= 1.0 + noise * rng.uniform(-1, 1, size=model.binary.shape)
    model.lexical[:] = np.repeat(pcfg.lexical, m[g.lexical[:, 0]])
    model.lexical *= 1.0 + noise * rng.uniform(-1, 1, size=model.lexical.shape)
    model.root[:] = np.repeat(pcfg.root / m, m)
    # Renormalise per (a, h): binary tensor rows plus lexical entries sum to one.
    mx = int(m.max())
    total = np.zeros((g.n_symbols, mx))
    np.add.at(total, g.binary[:, 0], model.padded_binary().sum(axis=2))
    np.add.at(total, g.lexical[:, 0], model.padded_lexical())
    total[total == 0] = 1.0
    # Each entry's (a, h1): rule-major, then h1, then the children's states.
    h1 = (
        np.concatenate([np.repeat(np.arange(m[a]), m[b] * m[c]) for a, b, c in g.binary])
        if g.n_binary
        else np.zeros(0, np.int64)
    )
    model.binary /= total[g.binary[rule_of, 0], h1]
    lex_h = (
        np.concatenate([np.arange(m[a]) for a in g.lexical[:, 0]])
        if g.n_lexical
        else np.zeros(0, np.int64)
    )
    model.lexical /= total[np.repeat(g.lexical[:, 0], m[g.lexical[:, 0]]), lex_h]
    return model


def random_model(pcfg: LPCFG, states: int, seed: int = 0) -> LPCFG:
    """Every symbol of a PCFG split into ``states`` latent states with seeded random
    parameters (where EM from strings starts).

    For each ``(a, h1)``: every binary rule keeps the PCFG's probability, spread over its
    children's states by uniform random weights; the lexical rules keep their total, shared
    among the words in proportion to the PCFG's probability times a uniform random weight;
    the root keeps the PCFG's probability, shared by random weights. Every distribution is
    normalised, the states differ in every rule, and each node has the PCFG's expected
    number of children, so the grammar is consistent when the PCFG is (the string PCFG of
    ``model.treebank_pcfg.string_pcfg`` is: it is the relative frequencies of any bracketing).
    """
    rng = np.random.default_rng(seed)
    g = pcfg.grammar
    if int(pcfg.states.max()) != 1:
        raise LpcfgError("random_model needs a PCFG (one state per symbol)")
    m = int(states)
    binary = rng.uniform(size=(g.n_binary, m, m * m))
    binary *= (pcfg.binary[:, None] / binary.sum(axis=2))[:, :, None]
    lexical = pcfg.lexical[:, None] * rng.uniform(size=(g.n_lexical, m))
    mass = np.bincount(g.lexical[:, 0], pcfg.lexical, minlength=g.n_symbols)
    shared = np.zeros((g.n_symbols, m))
    np.add.at(shared, g.lexical[:, 0], lexical)
    ratio = np.divide(mass[:, None], shared, out=np.zeros_like(shared), where=shared > 0)
    lexical *= ratio[g.lexical[:, 0]]
    root = rng.uniform(size=(g.n_symbols, m))
    root *= (pcfg.root / root.sum(axis=1))[:, None]
    return LPCFG.from_padded(
        g, np.full(g.n_symbols, m), binary, lexical, root, pcfg.coarse, meta={"method": "random"}
    )


def split_maps(states: np.ndarray, max_states: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(new states, to, halves)`` of splitting every state of every symbol with at most
    ``max_states / 2`` states in two: ``to`` ``(N, M, M')`` maps state ``h`` to its halves
    ``2h``, ``2h + 1`` (or to itself), ``halves`` ``(N, M')`` is True at the first state of
    each split pair, the candidates for merging back."""
    grow = 2 * states <= max_states
    new = np.where(grow, 2 * states, states)
    m_old, m_new = int(states.max()), int(new.max())
    to = np.zeros((len(states), m_old, m_new))
    halves = np.zeros((len(states), m_new), dtype=bool)
    for a in range(len(states)):
        for h in range(states[a]):
            if grow[a]:
                to[a, h, 2 * h : 2 * h + 2] = 1.0
                halves[a, 2 * h] = True
            else:
                to[a, h, h] = 1.0
    return new, to, halves


def merge_maps(
    states: np.ndarray, halves: np.ndarray, loss: np.ndarray, freq: np.ndarray, fraction: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(new states, parent, child)`` of merging back the ``fraction`` of split pairs
    (``halves``) whose merge loses least (``loss``): ``child`` ``(N, M, M')`` sums the
    halves, ``parent`` mixes them by their expected counts ``freq``."""
    cand = np.argwhere(halves)
    n = int(round(fraction * len(cand)))
    chosen = cand[np.argsort(loss[halves], kind="stable")[:n]] if n else np.zeros((0, 2), int)
    merged = np.zeros_like(halves)
    merged[chosen[:, 0], chosen[:, 1]] = True
    m_old = int(states.max())
    new = states - merged.sum(axis=1)
    child = np.zeros((len(states), m_old, int(new.max())))
    for a in range(len(states)):
        j = -1
        for h in range(states[a]):
            if not (h > 0 and merged[a, h - 1]):
                j += 1
            child[a, h, j] = 1.0
    weight = child * (freq[:, :m_old, None] + 1e-12)
    parent = weight / np.maximum(weight.sum(axis=1, keepdims=True), 1e-300)
    return new, parent, child


def merge_losses(
    symbol: np.ndarray, inside: np.ndarray, outside: np.ndarray, n_symbols: int, halves: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(loss, freq)``, both ``(N, M)``: the approximate loss in training log-likelihood of
    merging each pair ``(h, h + 1)`` with ``halves[a, h]`` back into one state (Petrov et
    al. 2006, section 2.2), from every occurrence of a symbol in the trees (``symbol``, its
    ``inside`` and ``outside`` vectors, scaled so that their product is its posterior), and
    each state's expected count. At an occurrence, ``P_merged / P = 1 - (a1 b1 + a2 b2) +
    (p1 a1 + p2 a2)(b1 + b2)`` over the posterior, ``p1``, ``p2`` the halves' shares of their
    expected counts."""
    post = inside * outside
    m = inside.shape[1]
    freq = np.zeros((n_symbols, m))
    np.add.at(freq, symbol, post)
    loss = np.zeros((n_symbols, m))
    for h in range(0, m - 1):
        rows = np.flatnonzero(halves[symbol, h])
        if not len(rows):
            continue
        a = symbol[rows]
        f1, f2 = freq[a, h], freq[a, h + 1]
        p1 = np.divide(f1, f1 + f2, out=np.full(len(a), 0.5), where=f1 + f2 > 0)
        a1, a2 = inside[rows, h], inside[rows, h + 1]
        b1, b2 = outside[rows, h], outside[rows, h + 1]
        total = post[rows].sum(axis=1)
        merged = total - (a1 * b1 + a2 * b2) + (p1 * a1 + (1 - p1) * a2) * (b1 + b2)
        ratio = np.clip(merged / np.where(total > 0, total, 1.0), 1e-300, None)
        np.add.at(loss[:, h], a, -np.log(ratio))
    return loss, freq
