"""Theorem 1 of Cohen et al. (2014): the tensor form is invariant to invertible G^a."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import random_lpcfg
from tests.support import run_latent, short_sentences


def to_tensor_form(model: LPCFG, seed: int) -> LPCFG:
    """C(y1, y2) = T(y1 G^b, y2 G^c) (G^a)^-1, c_inf = q (G^a)^-1, c_1 = G^a pi."""
    rng = np.random.default_rng(seed)
    g = model.grammar
    gs = []
    for m in model.states:
        while True:
            mat = rng.normal(size=(m, m))
            if abs(np.linalg.det(mat)) > 0.1:
                break
        gs.append(mat)
    inv = [np.linalg.inv(mat) for mat in gs]
    out = LPCFG.zeros(g, model.states, model.coarse, form="tensor")
    for r, (a, b, c) in enumerate(g.binary):
        t = model.binary_tensor(r)
        out.binary_tensor(r)[:] = np.einsum("ijk,bj,ck,ia->abc", t, gs[b], gs[c], inv[a])
    for lx, (a, _) in enumerate(g.lexical):
        out.lexical_vector(lx)[:] = model.lexical_vector(lx) @ inv[a]
    for a in range(g.n_symbols):
        out.root_vector(a)[:] = gs[a] @ model.root_vector(a)
    return out


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), states=st.integers(1, 3))
def test_marginals_invariant_under_linear_transforms(seed, states):
    model = random_lpcfg(inter=3, pre=3, words=6, states=states, rules_per_symbol=4, seed=seed)
    sentences = short_sentences(model, 4, 8, seed)
    assert sentences  # nothing to compare would pass vacuously
    tensor = to_tensor_form(model, seed + 1)
    assert tensor.form == "tensor"
    _, prob_chart = run_latent(model, sentences)
    _, tensor_chart = run_latent(tensor, sentences)
    # Tree/sentence probabilities and every marginal are unchanged.
    np.testing.assert_allclose(np.exp(tensor_chart.log_z), np.exp(prob_chart.log_z), rtol=1e-7)
    np.testing.assert_allclose(tensor_chart.marginals(), prob_chart.marginals(), atol=1e-8)
    # ... while the parameters themselves really changed (the test can fail).
    if states > 1:
        assert not np.allclose(tensor.binary, model.binary)
