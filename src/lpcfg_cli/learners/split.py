"""Splitting a PCFG's symbols into latent states: where EM starts (Matsuzaki et al. 2005)."""

from __future__ import annotations

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.model import LPCFG


def split_model(pcfg: LPCFG, states: int, noise: float = 0.01, seed: int = 0) -> LPCFG:
    """Split every symbol of a PCFG into ``states`` latent states (Matsuzaki et al. 2005).

    Each rule's probability is spread evenly over the children's states, perturbed by a
    relative ``noise`` and renormalised per ``(a, h)``. EM starts from such a model; the
    parser benchmark uses one as an m-state model with the PCFG's accuracy.
    """
    rng = np.random.default_rng(seed)
    g = pcfg.grammar
    if int(pcfg.states.max()) != 1:
        raise LpcfgError("split_model needs a PCFG (one state per symbol)")
    m = np.full(g.n_symbols, states, dtype=np.int64)
    model = LPCFG.zeros(g, m, pcfg.coarse, meta=dict(pcfg.meta))
    rule_of = np.repeat(np.arange(g.n_binary), model.binary_sizes)
    model.binary[:] = pcfg.binary[rule_of] / (states * states)
    model.binary *= 1.0 + noise * rng.uniform(-1, 1, size=model.binary.shape)
    model.lexical[:] = np.repeat(pcfg.lexical, states)
    model.lexical *= 1.0 + noise * rng.uniform(-1, 1, size=model.lexical.shape)
    model.root[:] = np.repeat(pcfg.root / states, states)
    # Renormalise per (a, h): binary tensor rows plus lexical entries sum to one.
    total = np.zeros((g.n_symbols, states))
    np.add.at(total, g.binary[:, 0], model.binary.reshape(-1, states, states * states).sum(2))
    np.add.at(total, g.lexical[:, 0], model.lexical.reshape(-1, states))
    total[total == 0] = 1.0
    model.binary /= np.repeat(total[g.binary[:, 0]].ravel(), states * states)
    model.lexical /= total[g.lexical[:, 0]].ravel()
    return model
