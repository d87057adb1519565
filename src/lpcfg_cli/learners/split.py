"""Splitting a PCFG's symbols into latent states: where EM starts.

``split_model`` (EM on trees, Matsuzaki et al. 2005): the PCFG's rules spread evenly over
the states and slightly perturbed. ``random_model`` (EM from strings): random parameters.
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
    ``learners.pcfg.string_pcfg`` is: it is the relative frequencies of any bracketing).
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
