"""Fixtures and error metrics for checking learners against a known grammar.

Used by the tests and by ``scripts/bench_consistency.py``: a grammar satisfying the pivot
assumption, and the parameter and held-out errors of a model learned from a true model's
samples (consistency: both must fall as the sample grows).
"""

from __future__ import annotations

import itertools

import numpy as np

from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import compile_trees
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.learners.pivot import PivotOptions
from lpcfg_cli.learners.spectral import SpectralOptions
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.model.sampling import sample_trees

# The spectral algorithm as the papers state it (figures 7-8 of Cohen et al. 2014: no
# smoothing, no frequency cap, simple templates), which must be consistent.
PAPER_SPECTRAL = SpectralOptions(
    min_singular=1e-6,
    state_count=0,
    moment_smoothing=0,
    lexical_weight=1.0,
    lexical_count=0,
    inside_features=("rule", "rule+left", "rule+right", "word"),
    outside_features=("parent", "parent2", "up1"),
)
# The shipped defaults without the frequency cap (the small samples would cap every symbol).
ENGINEERED_SPECTRAL = SpectralOptions(min_singular=1e-6, state_count=0)
# The pivot learner with nothing that biases it toward the treebank PCFG.
PURE_PIVOT = PivotOptions(state_count=0, lexicon_smoothing=0.0, min_count=5)


def pivot_lpcfg(seed: int = 0) -> LPCFG:
    """A two-state L-PCFG satisfying the pivot assumption for the node_rule / lexrule inside
    and the parent outside features: every (symbol, state) has a rule or word only it uses
    and a (parent rule, side) where only it appears."""
    rng = np.random.default_rng(seed)
    symbols = ["S", "A", "X", "Y"]
    words = [f"x{i}" for i in range(4)] + [f"y{i}" for i in range(4)]
    S, A, X, Y = range(4)
    # rule -> (allowed parent states, allowed left child states, allowed right states)
    rules = {
        (S, X, Y): ([0], [0], [0]),
        (S, Y, X): ([1], [1], [1]),
        (S, A, Y): ([0, 1], [0], [0, 1]),
        (S, Y, A): ([0, 1], [0, 1], [1]),
        (A, X, X): ([0], [0, 1], [0, 1]),
        (A, Y, Y): ([1], [0, 1], [0, 1]),
        (A, S, X): ([0, 1], [0], [0, 1]),
        (A, X, S): ([0, 1], [0, 1], [1]),
    }
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


def parameter_error(truth: LPCFG, model: LPCFG) -> float:
    """Largest absolute difference between the parameters (t, q, pi) of ``truth`` and of a
    ``model`` learned from its samples, under the best permutation of each symbol's latent
    states (the models may index symbols, rules and words differently; every rule of
    ``truth`` must exist in ``model``). Brute force over permutations: small models only."""
    tg, g = truth.grammar, model.grammar
    sym = [g.symbol_index[s] for s in tg.symbols]
    word = [g.words.index(w) for w in tg.words]
    perms_of = [list(itertools.permutations(range(int(m)))) for m in truth.states]
    best = np.inf
    for perms in itertools.product(*perms_of):
        err = 0.0
        for r, (a, b, c) in enumerate(tg.binary):
            got = model.binary_tensor(g.rule_id(sym[a], sym[b], sym[c]))
            got = got[np.ix_(perms[a], perms[b], perms[c])]
            err = max(err, np.abs(got - truth.binary_tensor(r)).max())
        for lx, (a, w) in enumerate(tg.lexical):
            got = model.lexical_vector(g.lexical_id(sym[a], word[w]))[list(perms[a])]
            err = max(err, np.abs(got - truth.lexical_vector(lx)).max())
        for a in range(tg.n_symbols):
            got = model.root_vector(sym[a])[list(perms[a])]
            err = max(err, np.abs(got - truth.root_vector(a)).max())
        best = min(best, err)
    return float(best)


def held_out_error(truth: LPCFG, model: LPCFG, n: int = 300, seed: int = 7) -> float:
    """Mean ``|log p_model(tree) - log p_truth(tree)|`` over ``n`` fresh samples of ``truth``."""
    trees = sample_trees(truth, n, seed=seed)
    true_bank, _ = compile_trees(truth.grammar, trees)
    bank, dropped = compile_trees(model.grammar, trees)
    if dropped:
        raise LpcfgError(f"{dropped} held-out trees use rules the model lacks")
    lp_true = tree_scores(truth, true_bank)[0]
    return float(np.abs(tree_scores(model, bank)[0] - lp_true).mean())
