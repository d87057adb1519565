"""Drawing trees from a model: the same draws as numpy's ``Generator.choice``."""

from __future__ import annotations

import numpy as np

from lpcfg_cli.model.sampling import _cdf, _draw, random_lpcfg, sample_trees


def test_a_draw_from_the_cumulative_table_is_numpys_choice():
    """``_draw(_cdf(p))`` consumes the stream as ``rng.choice(len(p), p=p)`` does and gives
    its outcome, for tables with zeros at either end and of thousands of outcomes."""
    rs = np.random.default_rng(0)
    tables = [rs.dirichlet(np.ones(k)) for k in (1, 2, 17, 256, 5000)]
    tables += [np.array([0.0, 0.5, 0.0, 0.5]), np.array([0.2, 0.0, 0.0, 0.8])]
    ours, numpys = np.random.default_rng(5), np.random.default_rng(5)
    for t in range(20_000):
        p = tables[t % len(tables)]
        assert _draw(_cdf(p), ours) == numpys.choice(len(p), p=p)


def test_sampled_trees_are_reproducible_and_depend_on_the_seed():
    model = random_lpcfg(inter=4, pre=4, words=12, states=3, seed=9)
    first = [str(t) for t in sample_trees(model, 50, seed=3)]
    assert first == [str(t) for t in sample_trees(model, 50, seed=3)]
    assert first != [str(t) for t in sample_trees(model, 50, seed=4)]
