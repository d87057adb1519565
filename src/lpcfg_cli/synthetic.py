"""Random L-PCFGs and sampling from probabilistic-form models.

Used by ``lpcfg sample``, by the tests (brute-force checks of inside-outside, consistency of
the learners) and by ``make demo`` when the Penn Treebank sample is not installed.
"""

from __future__ import annotations

import itertools

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar import Grammar
from lpcfg_cli.model import LPCFG, PCFGParams
from lpcfg_cli.tree import Tree


def random_lpcfg(
    n_inter: int = 4,
    n_pre: int = 4,
    n_words: int = 12,
    states: int = 2,
    rules_per_symbol: int = 3,
    words_per_tag: int = 4,
    seed: int = 0,
    concentration: float = 1.0,
) -> LPCFG:
    """A random probabilistic L-PCFG whose trees are always finite.

    In-terminals ``N0 .. N{k-1}`` only rewrite to pre-terminals ``P*`` or to in-terminals with
    a larger index, so every derivation terminates; ``N0`` is the root. Each in-terminal
    gets ``rules_per_symbol`` binary rules, each pre-terminal ``words_per_tag`` words.
    """
    if n_inter < 1 or n_pre < 1 or states < 1:
        raise LpcfgError("a random grammar needs at least one in-terminal, pre-terminal, state")
    rng = np.random.default_rng(seed)
    symbols = [f"N{i}" for i in range(n_inter)] + [f"P{i}" for i in range(n_pre)]
    words = [f"w{i}" for i in range(n_words)]
    binary = []
    for a in range(n_inter):
        children = [n_inter + p for p in range(n_pre)] + list(range(a + 1, n_inter))
        pairs = {(int(rng.choice(children)), int(rng.choice(children)))
                 for _ in range(rules_per_symbol * 3)}  # fmt: skip
        for b, c in sorted(pairs)[:rules_per_symbol]:
            binary.append((a, b, c))
    lexical = []
    for p in range(n_pre):
        for w in rng.choice(n_words, size=min(words_per_tag, n_words), replace=False):
            lexical.append((n_inter + p, int(w)))
    grammar = Grammar(symbols, words, words, np.array(binary), np.array(lexical))
    m = np.full(len(symbols), states, dtype=np.int64)
    root = np.zeros(len(symbols))
    root[0] = 1.0
    model = LPCFG.zeros(grammar, m, PCFGParams(np.zeros(len(binary)), np.zeros(len(lexical)),
                                               root), meta={"method": "random"})  # fmt: skip
    for a in range(len(symbols)):
        rules = np.flatnonzero(grammar.binary[:, 0] == a)
        lex = np.flatnonzero(grammar.lexical[:, 0] == a)
        for h in range(states):
            sizes = [states * states] * len(rules) + [1] * len(lex)
            probs = rng.dirichlet(np.full(sum(sizes), concentration))
            pos = 0
            for r in rules:
                block = probs[pos : pos + states * states]
                model.binary_tensor(r)[h] = block.reshape(states, states)
                pos += states * states
            for lx in lex:
                model.lexical_vector(lx)[h] = probs[pos]
                pos += 1
        model.root_vector(a)[:] = rng.dirichlet(np.ones(states)) if a == 0 else 0.0
    model.coarse = marginal_pcfg(model)
    return model


def marginal_pcfg(model: LPCFG) -> PCFGParams:
    """A PCFG over the same rules for pruning: rule weights averaged over latent states."""
    g = model.grammar
    binary = np.array([model.binary_tensor(r).sum(axis=(1, 2)).mean() for r in range(g.n_binary)])
    lexical = np.array([model.lexical_vector(x).mean() for x in range(g.n_lexical)])
    root = np.array([model.root_vector(a).sum() for a in range(g.n_symbols)])
    return PCFGParams(binary, lexical, root / max(root.sum(), 1e-300))


def sample_trees(
    model: LPCFG, n: int, seed: int = 0, latent: bool = False, max_nodes: int = 100_000
) -> list[Tree]:
    """Draw ``n`` trees from a probabilistic-form model (labels ``A`` or ``A-h`` if latent)."""
    if model.form != "probabilistic":
        raise LpcfgError("sampling needs a probabilistic-form model (not a spectral one)")
    rng = np.random.default_rng(seed)
    g = model.grammar
    root_p = np.concatenate([model.root_vector(a) for a in range(g.n_symbols)])
    root_sym = np.repeat(np.arange(g.n_symbols), model.states)
    root_h = np.concatenate([np.arange(m) for m in model.states])
    if root_p.sum() <= 0:
        raise LpcfgError("the model has no root probabilities")
    # Per (a, h): outcome table over binary (rule, h2, h3) and lexical rules.
    tables: dict[tuple[int, int], tuple[np.ndarray, list]] = {}

    def table(a: int, h: int) -> tuple[np.ndarray, list]:
        if (a, h) not in tables:
            probs, outcomes = [], []
            for r in np.flatnonzero(g.binary[:, 0] == a):
                t = model.binary_tensor(r)[h]
                probs.append(t.ravel())
                outcomes += [
                    ("b", int(r), i, j) for i in range(t.shape[0]) for j in range(t.shape[1])
                ]
            for x in np.flatnonzero(g.lexical[:, 0] == a):
                probs.append([model.lexical_vector(x)[h]])
                outcomes.append(("l", int(x), 0, 0))
            p = np.clip(np.concatenate(probs) if probs else np.zeros(0), 0, None)
            if p.sum() <= 0:
                raise LpcfgError(f"symbol {g.symbols[a]} state {h} has no rules to sample")
            tables[(a, h)] = (p / p.sum(), outcomes)
        return tables[(a, h)]

    trees = []
    for _ in range(n):
        k = rng.choice(len(root_p), p=root_p / root_p.sum())
        trees.append(_grow(g, table, rng, int(root_sym[k]), int(root_h[k]), latent, max_nodes))
    return trees


def _grow(g, table, rng, a: int, h: int, latent: bool, max_nodes: int) -> Tree:  # noqa: ANN001
    """One tree top-down with an explicit stack (no recursion limit on deep trees)."""
    root: list = []
    stack = [(a, h, root)]
    nodes = 0
    while stack:
        a, h, slot = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise LpcfgError(f"sampled tree exceeds {max_nodes} nodes (inconsistent PCFG?)")
        p, outcomes = table(a, h)
        kind, rid, h2, h3 = outcomes[rng.choice(len(p), p=p)]
        label = f"{g.symbols[a]}-{h}" if latent else g.symbols[a]
        if kind == "l":
            slot.append(Tree(label, [g.words[g.lexical[rid, 1]]]))
            continue
        node = Tree(label, [])
        slot.append(node)
        _, b, c = g.binary[rid]
        stack.append((int(c), h3, node))  # popped second: right child after left
        stack.append((int(b), h2, node))
    return root[0]


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
    from lpcfg_cli.engine.trees import tree_scores
    from lpcfg_cli.grammar import compile_trees

    trees = sample_trees(truth, n, seed=seed)
    true_bank, _ = compile_trees(truth.grammar, trees)
    bank, dropped = compile_trees(model.grammar, trees)
    if dropped:
        raise LpcfgError(f"{dropped} held-out trees use rules the model lacks")
    lp_true = tree_scores(truth, true_bank)[0]
    return float(np.abs(tree_scores(model, bank)[0] - lp_true).mean())
