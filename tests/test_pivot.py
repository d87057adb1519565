"""The pivot learner (Cohen & Collins 2014): its parts, and recovery of an L-PCFG that
satisfies the pivot assumption."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lpcfg_cli.grammar import Grammar, build_grammar, compile_trees
from lpcfg_cli.inside_outside import tree_scores
from lpcfg_cli.learners.pcfg import train_pcfg
from lpcfg_cli.learners.pivot import (
    PivotEstimator,
    PivotOptions,
    align,
    fast_anchor_words,
    simplex_weights,
)
from lpcfg_cli.model import LPCFG, PCFGParams
from lpcfg_cli.synthetic import sample_trees

# ------------------------------------------------------------------ components


def test_fast_anchor_words_finds_the_vertices():
    rng = np.random.default_rng(0)
    vertices = rng.standard_normal((4, 6))
    weights = rng.dirichlet(np.ones(4), size=300)
    points = np.vstack([weights @ vertices, vertices])  # the vertices come last
    picked = fast_anchor_words(points, 4)
    assert sorted(picked.tolist()) == [300, 301, 302, 303]


def test_simplex_weights_recover_convex_combinations():
    rng = np.random.default_rng(1)
    vertices = rng.standard_normal((3, 5))
    weights = rng.dirichlet(np.ones(3), size=50)
    got = simplex_weights(vertices, weights @ vertices, iterations=2000)
    np.testing.assert_allclose(got, weights, atol=2e-3)
    assert np.allclose(got.sum(axis=1), 1.0) and (got >= 0).all()
    # A point outside the hull gets the nearest point of the simplex, still a distribution.
    far = simplex_weights(vertices, 10 * vertices[:1], iterations=500)
    assert far.argmax() == 0 and np.isclose(far.sum(), 1.0)


def test_align_finds_the_permutation():
    import scipy.sparse as sp

    rng = np.random.default_rng(2)
    k = 3
    r = rng.dirichlet(np.ones(6), size=k).T  # p(f | h) (6, k)
    s = rng.dirichlet(np.ones(7), size=k).T  # p(g | h)
    p_h = np.array([0.5, 0.3, 0.2])
    q = (r * p_h) @ s.T  # Q_fg = sum_h p(h) p(f|h) p(g|h)
    post = r * p_h / (r * p_h).sum(axis=1, keepdims=True)  # q(h | f)
    perm = [2, 0, 1]
    t = align(sp.coo_matrix(q), post, s[:, perm], iterations=3000)
    expected = np.zeros((k, k))
    expected[np.arange(k), np.argsort(perm)] = 1.0
    np.testing.assert_allclose(t, expected, atol=0.05)


# ------------------------------------------------------------------ recovery


def pivot_grammar(seed: int = 0) -> LPCFG:
    """A two-state L-PCFG satisfying the pivot assumption for the node_rule / lexrule inside
    and the parent outside features: every (symbol, state) has a rule or word only it uses
    and a (parent rule, side) where only it appears."""
    rng = np.random.default_rng(seed)
    symbols = ["S", "A", "X", "Y"]
    words = [f"x{i}" for i in range(4)] + [f"y{i}" for i in range(4)]
    S, A, X, Y = range(4)
    # rule -> (allowed parent states, allowed left child states, allowed right states)
    rules = {
        (S, X, Y): ([0], [0], [0]), (S, Y, X): ([1], [1], [1]),
        (S, A, Y): ([0, 1], [0], [0, 1]), (S, Y, A): ([0, 1], [0, 1], [1]),
        (A, X, X): ([0], [0, 1], [0, 1]), (A, Y, Y): ([1], [0, 1], [0, 1]),
        (A, S, X): ([0, 1], [0], [0, 1]), (A, X, S): ([0, 1], [0, 1], [1]),
    }  # fmt: skip
    lexical = [(X, w) for w in range(4)] + [(Y, w) for w in range(4, 8)]
    g = Grammar(symbols, words, words, np.array(list(rules)), np.array(lexical))
    m = np.full(4, 2)
    coarse = PCFGParams(np.zeros(len(rules)), np.zeros(len(lexical)), np.array([1.0, 0, 0, 0]))
    model = LPCFG.zeros(g, m, coarse)
    for a, recursive in ((S, (2, 3)), (A, (6, 7))):
        for h in range(2):
            mass = {}
            for r, (key, (hp, hl, hr)) in enumerate(rules.items()):
                if key[0] != a or h not in hp:
                    continue
                cells = rng.uniform(0.5, 1.5, size=(len(hl), len(hr)))
                share = 0.35 if r in recursive else 1.0
                mass[r] = (hl, hr, share * cells)
            total = sum(c.sum() for _, _, c in mass.values())
            for r, (hl, hr, cells) in mass.items():
                model.binary_tensor(r)[h][np.ix_(hl, hr)] = cells / total
    for base in (0, 4):  # the words of X, then of Y
        for h in range(2):
            probs = np.zeros(4)
            probs[h] = rng.uniform(0.3, 0.5)  # the pivot word of state h
            probs[2:] = rng.uniform(0.5, 1.5, size=2)
            probs /= probs.sum()
            for i in range(4):
                model.lexical_vector(base + i)[h] = probs[i]
    model.root_vector(S)[:] = [0.6, 0.4]
    assert model.check_probabilistic() < 1e-12
    return model


def _recovery_error(truth: LPCFG, n: int) -> tuple[float, float]:
    """(max parameter error up to the best permutation, mean held-out |log p error|)."""
    trees = sample_trees(truth, n, seed=n)
    grammar, bank = build_grammar(trees, rare=0)
    opts = PivotOptions(count_per_state=0, lexicon_smoothing=0.0, min_count=5)
    model = PivotEstimator(grammar, bank, trees, opts).model(2)
    tg = truth.grammar
    sym = [grammar.symbol_index[s] for s in tg.symbols]  # truth symbol -> learned symbol
    best = np.inf
    for perms in itertools.product(itertools.permutations(range(2)), repeat=tg.n_symbols):
        err = 0.0
        for r, (a, b, c) in enumerate(tg.binary):
            lr = grammar.rule_id(sym[a], sym[b], sym[c])
            got = model.binary_tensor(lr)[np.ix_(perms[a], perms[b], perms[c])]
            err = max(err, np.abs(got - truth.binary_tensor(r)).max())
        for lx, (a, w) in enumerate(tg.lexical):
            got = model.lexical_vector(grammar.lexical_id(sym[a], grammar.words.index(tg.words[w])))
            err = max(err, np.abs(got[list(perms[a])] - truth.lexical_vector(lx)).max())
        for a in range(tg.n_symbols):
            got = model.root_vector(sym[a])[list(perms[a])]
            err = max(err, np.abs(got - truth.root_vector(a)).max())
        best = min(best, err)
    held_out = sample_trees(truth, 300, seed=7)
    lp_true = tree_scores(truth, compile_trees(tg, held_out)[0])[0]
    lp = tree_scores(model, compile_trees(grammar, held_out)[0])[0]
    return best, float(np.abs(lp - lp_true).mean())


def test_pivot_recovers_parameters_up_to_a_permutation():
    truth = pivot_grammar()
    e3, l3 = _recovery_error(truth, 2_000)
    e4, l4 = _recovery_error(truth, 20_000)
    assert e4 < 0.6 * e3 and l4 < 0.6 * l3
    assert e4 < 0.08 and l4 < 0.08


@pytest.mark.slow
def test_pivot_recovery_at_200k_trees():
    truth = pivot_grammar()
    e5, l5 = _recovery_error(truth, 200_000)
    e4, _ = _recovery_error(truth, 20_000)
    assert e5 < 0.7 * e4 and e5 < 0.04


def test_pivot_model_is_probabilistic_with_uniform_states():
    truth = pivot_grammar(seed=3)
    trees = sample_trees(truth, 500, seed=1)
    grammar, bank = build_grammar(trees, rare=0)
    model = PivotEstimator(grammar, bank, trees, PivotOptions(count_per_state=200)).model(4)
    assert model.form == "probabilistic" and (model.states == 4).all()
    assert model.check_probabilistic() < 1e-9
    assert abs(model.root.sum() - 1.0) < 1e-9 and (model.binary >= 0).all()
    assert min(model.meta["distinct_states"].values()) < 4  # rare symbols get fewer
    # Every training tree keeps a positive probability (EM can start from the model).
    lp, sign = tree_scores(model, bank)
    assert np.isfinite(lp).all() and (sign > 0).all()
    # One distinct state everywhere, copied to 4: exactly the treebank PCFG's distribution.
    one = PivotOptions(count_per_state=10**9, lexicon_smoothing=0.0)
    copied = PivotEstimator(grammar, bank, trees, one).model(4)
    assert set(copied.meta["distinct_states"].values()) == {1}
    pcfg = train_pcfg(grammar, bank, {})
    np.testing.assert_allclose(tree_scores(copied, bank)[0], tree_scores(pcfg, bank)[0],
                               rtol=1e-10)  # fmt: skip
