"""Random L-PCFGs and sampling from probabilistic-form models.

Used by ``lpcfg sample`` (trees of a model file, or of a random grammar), by the tests
(brute-force checks of inside-outside, consistency of the learners) and by ``make demo``
when the Penn Treebank sample is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper, switch
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams, check_size
from lpcfg_cli.treebank.tree import Tree


@dataclass(frozen=True)
class RandomGrammarOptions(Checked):
    """The sizes of a random L-PCFG (``random_lpcfg``, ``lpcfg sample --random-grammar``);
    the plain fields are internal constants, settable from Python."""

    inter: int = hyper(6, "Random grammar: in-terminal symbols.", min=1)
    pre: int = hyper(6, "Random grammar: pre-terminal symbols.", min=1)
    words: int = hyper(50, "Random grammar: vocabulary size.", min=1)
    states: int = hyper(2, "Random grammar: latent states per symbol.", min=1)
    seed: int = hyper(0, SEED_HELP, min=0)
    rules_per_symbol: int = field(default=3)
    words_per_tag: int = field(default=4)
    concentration: float = field(default=1.0)  # of the Dirichlet draws of each distribution


@dataclass(frozen=True)
class SampleOptions(Checked):
    """What ``lpcfg sample`` draws from a model: how many trees (sentences, from a topology
    model), from which seed, labelled how, and of which length (topology models)."""

    count: int = hyper(
        10, "Number of trees (sentences, for a topology model) to draw.", min=0, flag="-n"
    )
    seed: int = hyper(0, SEED_HELP, min=0)
    latent: bool = switch("Label every node with its latent state (A-h); implies --binarized.")
    binarized: bool = switch("Write the trees in the model's binarized label space (A+B, @A).")
    length: int | None = hyper(
        None,
        "Topology model: every sentence has this many words [default: lengths drawn from "
        "the model's training length distribution].",
        min=1,
        kind="int",
    )


def random_lpcfg(options: RandomGrammarOptions | None = None, /, **values: Any) -> LPCFG:
    """A random probabilistic L-PCFG whose trees are always finite, of the sizes of
    ``options`` (``RandomGrammarOptions``' defaults when None) with ``values`` replacing
    fields by name (``random_lpcfg(inter=3, states=4)``).

    In-terminals ``N0 .. N{k-1}`` only rewrite to pre-terminals ``P*`` or to in-terminals with
    a larger index, so every derivation terminates; ``N0`` is the root. Each in-terminal
    gets ``rules_per_symbol`` binary rules, each pre-terminal ``words_per_tag`` words.
    """
    o = replace(options or RandomGrammarOptions(), **values)
    n_inter, n_pre, n_words, states = o.inter, o.pre, o.words, o.states
    rng = np.random.default_rng(o.seed)
    symbols = [f"N{i}" for i in range(n_inter)] + [f"P{i}" for i in range(n_pre)]
    words = [f"w{i}" for i in range(n_words)]
    binary = []
    for a in range(n_inter):
        children = [n_inter + p for p in range(n_pre)] + list(range(a + 1, n_inter))
        pairs = {
            (int(rng.choice(children)), int(rng.choice(children)))
            for _ in range(o.rules_per_symbol * 3)
        }
        for b, c in sorted(pairs)[: o.rules_per_symbol]:
            binary.append((a, b, c))
    lexical = []
    for p in range(n_pre):
        for w in rng.choice(n_words, size=min(o.words_per_tag, n_words), replace=False):
            lexical.append((n_inter + p, int(w)))
    grammar = Grammar(symbols, words, words, np.array(binary), np.array(lexical))
    check_size(grammar, states, copies=2)  # the parameters and their normalised draws
    m = np.full(len(symbols), states, dtype=np.int64)
    root = np.zeros(len(symbols))
    root[0] = 1.0
    model = LPCFG.zeros(
        grammar,
        m,
        PCFGParams(np.zeros(len(binary)), np.zeros(len(lexical)), root),
        meta={"method": "random"},
    )
    for a in range(len(symbols)):
        rules = np.flatnonzero(grammar.binary[:, 0] == a)
        lex = np.flatnonzero(grammar.lexical[:, 0] == a)
        for h in range(states):
            sizes = [states * states] * len(rules) + [1] * len(lex)
            probs = rng.dirichlet(np.full(sum(sizes), o.concentration))
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
    return list(iter_trees(model, n, seed, latent, max_nodes))


def iter_trees(
    model: LPCFG, n: int, seed: int = 0, latent: bool = False, max_nodes: int = 100_000
) -> Iterator[Tree]:
    """``sample_trees``, one tree at a time as it is drawn (the same trees for one seed):
    memory stays flat however many are asked for."""
    if model.form != "probabilistic":
        raise LpcfgError("sampling needs a probabilistic-form model (not a spectral one)")
    rng = np.random.default_rng(seed)
    g = model.grammar
    root_p = np.concatenate([model.root_vector(a) for a in range(g.n_symbols)])
    root_sym = np.repeat(np.arange(g.n_symbols), model.states)
    root_h = np.concatenate([np.arange(m) for m in model.states])
    if root_p.sum() <= 0:
        raise LpcfgError("the model has no root probabilities")
    # Per (a, h): the cumulative distribution over its outcomes, binary (rule, h2, h3) and
    # lexical rules, drawn from as ``Generator.choice(p=...)`` draws (one ``random()`` per
    # draw, ``searchsorted`` of the normalised cumulative sum: the same trees for a seed),
    # without ``choice`` summing and checking the whole table at every node (thousands of
    # outcomes for a pre-terminal).
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
            tables[(a, h)] = (_cdf(p / p.sum()), outcomes)
        return tables[(a, h)]

    root_cdf = _cdf(root_p / root_p.sum())
    for _ in range(n):
        k = _draw(root_cdf, rng)
        yield _grow(g, table, rng, int(root_sym[k]), int(root_h[k]), latent, max_nodes)


def _cdf(p: np.ndarray) -> np.ndarray:
    """The cumulative distribution ``Generator.choice`` draws from for probabilities ``p``."""
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    return cdf


def _draw(cdf: np.ndarray, rng: np.random.Generator) -> int:
    """``rng.choice(len(p), p=p)`` for ``cdf = _cdf(p)``: the same draw from the same stream."""
    return int(cdf.searchsorted(rng.random(), side="right"))


def _grow(g, table, rng, a: int, h: int, latent: bool, max_nodes: int) -> Tree:
    """One tree top-down with an explicit stack (no recursion limit on deep trees)."""
    root: list = []
    stack = [(a, h, root)]
    nodes = 0
    while stack:
        a, h, slot = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise LpcfgError(f"sampled tree exceeds {max_nodes} nodes (inconsistent PCFG?)")
        cdf, outcomes = table(a, h)
        kind, rid, h2, h3 = outcomes[_draw(cdf, rng)]
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
