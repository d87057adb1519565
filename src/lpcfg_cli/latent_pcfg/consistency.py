"""Fixtures and error metrics for checking learners against a known grammar.

Used by the tests and by ``scripts/bench_consistency.py``: grammars satisfying the pivot
assumption (one recursive, one with a finite support), every tree of a finite support with
its exact probability (weighted by it, the trees give an estimator the population moments),
and the parameter and held-out errors of a model learned from a true model's samples
(consistency: both must fall as the sample grows, and vanish from the population moments).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import compile_trees
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.latent_pcfg.pivot import PivotOptions
from lpcfg_cli.latent_pcfg.spectral import SpectralOptions
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.model.sampling import sample_trees
from lpcfg_cli.treebank.tree import Tree

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


# A rule's cells: (allowed parent states, allowed left child states, allowed right states).
Cells = tuple[list[int], list[int], list[int]]


def pivot_lpcfg(seed: int = 0) -> LPCFG:
    """A two-state L-PCFG satisfying the pivot assumption for the node_rule / lexrule inside
    and the parent outside features: every (symbol, state) has a rule or word only it uses
    and a (parent rule, side) where only it appears. It is recursive (``S -> A Y``,
    ``A -> S X``): its support is infinite."""
    S, A, X, Y = range(4)
    rules: dict[tuple[int, int, int], Cells] = {
        (S, X, Y): ([0], [0], [0]),
        (S, Y, X): ([1], [1], [1]),
        (S, A, Y): ([0, 1], [0], [0, 1]),
        (S, Y, A): ([0, 1], [0, 1], [1]),
        (A, X, X): ([0], [0, 1], [0, 1]),
        (A, Y, Y): ([1], [0, 1], [0, 1]),
        (A, S, X): ([0, 1], [0], [0, 1]),
        (A, X, S): ([0, 1], [0, 1], [1]),
    }
    return _pivot_model(["S", "A", "X", "Y"], [2, 2, 2, 2], rules, (2, 3, 6, 7), seed)


def finite_pivot_lpcfg(seed: int = 0) -> LPCFG:
    """A non-recursive L-PCFG of the shape of ``pivot_lpcfg`` with a finite support (2016
    trees of 3 to 5 words), for population moments (``exact_support``).

    ``S -> A Y | Y A``, ``A -> X X | Y Y | B X | X B``, ``B -> X X | Y Y | X Y | Y X``,
    ``X -> x0..x3``, ``Y -> y0..y3``. ``A``, ``B``, ``X``, ``Y`` have two states, each with
    a rule or word only it uses and a (parent rule, side) where only it appears (the pivot
    assumption of Cohen & Collins 2014, and the rank conditions of Cohen et al. 2014). The
    root ``S`` has one state: a root-only symbol's outside is always the same, so no
    outside feature could tell two of its states apart (every finite support has such a
    symbol: the top of its acyclic symbol graph)."""
    S, A, B, X, Y = range(5)
    both = [0, 1]
    rules: dict[tuple[int, int, int], Cells] = {
        (S, A, Y): ([0], [0], [0]),
        (S, Y, A): ([0], [1], [1]),
        (A, X, X): ([0], both, both),
        (A, Y, Y): ([1], both, both),
        (A, B, X): (both, [0], both),
        (A, X, B): (both, both, [1]),
        (B, X, X): ([0], both, both),
        (B, Y, Y): ([1], both, both),
        (B, X, Y): (both, [0], both),
        (B, Y, X): (both, both, [1]),
    }
    return _pivot_model(["S", "A", "B", "X", "Y"], [1, 2, 2, 2, 2], rules, (), seed)


def _pivot_model(
    symbols: list[str],
    states: list[int],
    rules: dict[tuple[int, int, int], Cells],
    recursive: tuple[int, ...],
    seed: int,
) -> LPCFG:
    """The model over ``symbols`` whose last two are the pre-terminals ``X`` (words x0..x3)
    and ``Y`` (y0..y3): rule cells drawn uniformly in [0.5, 1.5] (times 0.35 for the rules
    numbered in ``recursive``), word ``h`` the pivot word of state ``h``, the first symbol
    the root."""
    rng = np.random.default_rng(seed)
    words = [f"x{i}" for i in range(4)] + [f"y{i}" for i in range(4)]
    X, Y = len(symbols) - 2, len(symbols) - 1
    lexical = [(X, w) for w in range(4)] + [(Y, w) for w in range(4, 8)]
    g = Grammar(symbols, words, words, np.array(list(rules)), np.array(lexical))
    coarse = PCFGParams(np.zeros(len(rules)), np.zeros(len(lexical)), np.eye(len(symbols))[0])
    model = LPCFG.zeros(g, np.array(states), coarse)
    for a in dict.fromkeys(key[0] for key in rules):
        for h in range(states[a]):
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
    model.root_vector(0)[:] = [0.6, 0.4] if states[0] == 2 else [1.0]
    assert model.check_probabilistic() < 1e-12
    return model


@dataclass
class Support:
    """Trees with their exact probabilities under a model; ``left_out``: the mass of the
    trees not listed (``1 - probs.sum()``, rounding aside)."""

    trees: list[Tree]
    probs: np.ndarray
    left_out: float


def exact_support(model: LPCFG, max_height: int | None = None, max_trees: int = 10**6) -> Support:
    """Every skeletal tree of a probabilistic ``model`` (of height at most ``max_height``;
    None: all, for a non-recursive grammar) with its probability, by the inside vectors of
    its subtrees (independent of the chart engine). Trees each weighted by its probability
    give an estimator the population moments, the limit of infinitely many samples, from
    which the spectral estimate is exact (Cohen et al. 2014, theorem 2: the M -> infinity
    end of theorem 3) and so is the pivot one (Cohen & Collins 2014, theorem 1, under its
    infinite-data assumption).

    ``pivot_lpcfg`` is recursive: a height bound leaves mass out, and the count explodes
    (height at most 7: 570066 trees, 0.45% of the mass left out; every two levels multiply
    the trees by 64 and divide the mass left out by about 6, so leaving out less than 1e-10
    takes height 27 and about 10^23 trees): its population moments are out of reach this
    way, hence ``finite_pivot_lpcfg``."""
    g = model.grammar
    if max_height is None:
        max_height = _height_bound(g)
    memo: dict[tuple[int, int], list[tuple[Tree, np.ndarray]]] = {}
    count = [0]

    def subtrees(a: int, height: int) -> list[tuple[Tree, np.ndarray]]:
        """(tree, p(tree | a, h) for every state h) of every tree under ``a`` of height at
        most ``height`` with a positive probability."""
        if (a, height) in memo:
            return memo[(a, height)]
        out: list[tuple[Tree, np.ndarray]] = []
        label = g.symbols[a]
        for lx in np.flatnonzero(g.lexical[:, 0] == a):
            beta = model.lexical_vector(lx).copy()
            if beta.any():
                out.append((Tree(label, [g.words[g.lexical[lx, 1]]]), beta))
        if height > 1:
            for r in np.flatnonzero(g.binary[:, 0] == a):
                _, b, c = g.binary[r]
                t = model.binary_tensor(r)
                for left, bl in subtrees(int(b), height - 1):
                    tl = np.tensordot(t, bl, axes=([1], [0]))  # (m_a, m_c)
                    for right, br in subtrees(int(c), height - 1):
                        beta = tl @ br
                        if beta.any():
                            out.append((Tree(label, [left, right]), beta))
                            count[0] += 1
                            if count[0] > max_trees:
                                raise LpcfgError(f"more than {max_trees} trees: lower max_height")
        memo[(a, height)] = out
        return out

    trees, probs = [], []
    for a in range(g.n_symbols):
        pi = model.root_vector(a)
        if not pi.any():
            continue
        for tree, beta in subtrees(a, max_height):
            p = float(pi @ beta)
            if p > 0:
                trees.append(tree.copy())  # subtrees are shared between the memo's trees
                probs.append(p)
    probs_arr = np.array(probs)
    return Support(trees, probs_arr, float(1.0 - probs_arr.sum()))


def _height_bound(g: Grammar) -> int:
    """The greatest height of a tree of the non-recursive grammar ``g`` (raises if it is
    recursive: its support is infinite)."""
    height: dict[int, int] = {}
    visiting: set[int] = set()

    def of(a: int) -> int:
        if a in height:
            return height[a]
        if a in visiting:
            raise LpcfgError(f"the grammar is recursive ({g.symbols[a]}): give max_height")
        visiting.add(a)
        kids = [max(of(int(b)), of(int(c))) for _, b, c in g.binary[g.binary[:, 0] == a]]
        visiting.discard(a)
        height[a] = 1 + max(kids, default=0)
        return height[a]

    return max(of(a) for a in range(g.n_symbols))


def parameter_error(truth: LPCFG, model: LPCFG) -> float:
    """Largest absolute difference between the parameters (t, q, pi) of ``truth`` and of a
    ``model`` learned from its samples, under the best permutation of each symbol's latent
    states (the models may index symbols, rules and words differently; every rule of
    ``truth`` must exist in ``model``). Brute force over permutations: small models only.
    A symbol with fewer true states than the model's is compared as ``pad_states`` copies
    it (as the pivot learner pads every symbol to ``m`` states)."""
    tg, g = truth.grammar, model.grammar
    sym = [g.symbol_index[s] for s in tg.symbols]
    wanted = np.maximum(truth.states, model.states[sym])
    if (wanted > truth.states).any():
        truth = pad_states(truth, wanted)
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


def pad_states(model: LPCFG, states: np.ndarray) -> LPCFG:
    """The same distribution over trees with ``states[a] >= model.states[a]`` states for
    symbol ``a``: state ``j`` copies state ``j mod m_a``, and a child state's probability is
    split evenly among its copies (the pivot learner's ``_expand``)."""
    g, old = model.grammar, model.states
    states = np.asarray(states, dtype=np.int64)
    src = [np.arange(states[a]) % old[a] for a in range(g.n_symbols)]
    share = [1.0 / np.bincount(s)[s] for s in src]
    out = LPCFG.zeros(g, states, model.coarse, model.form, model.meta)
    for r, (a, b, c) in enumerate(g.binary):
        t = model.binary_tensor(r)[np.ix_(src[a], src[b], src[c])]
        out.binary_tensor(r)[:] = t * share[b][None, :, None] * share[c][None, None, :]
    for lx, (a, _) in enumerate(g.lexical):
        out.lexical_vector(lx)[:] = model.lexical_vector(lx)[src[a]]
    for a in range(g.n_symbols):
        out.root_vector(a)[:] = model.root_vector(a)[src[a]] * share[a]
    return out


def held_out_error(truth: LPCFG, model: LPCFG, n: int = 300, seed: int = 7) -> float:
    """Mean ``|log p_model(tree) - log p_truth(tree)|`` over ``n`` fresh samples of ``truth``."""
    trees = sample_trees(truth, n, seed=seed)
    true_bank, _ = compile_trees(truth.grammar, trees)
    bank, dropped = compile_trees(model.grammar, trees)
    if dropped:
        raise LpcfgError(f"{dropped} held-out trees use rules the model lacks")
    lp_true = tree_scores(truth, true_bank)[0]
    return float(np.abs(tree_scores(model, bank)[0] - lp_true).mean())
