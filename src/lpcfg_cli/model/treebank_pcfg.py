"""The treebank PCFG (one latent state per symbol): relative-frequency estimates (the
learner is ``latent_pcfg.pcfg.PCFGLearner``).

It is the baseline every latent method is measured against, and the coarse grammar every
model carries for coarse-to-fine pruning. Lexical smoothing comes from the lexicon: rare
words are counted under their word-shape signatures (see ``lexicon``), so unseen test words
get the pre-terminal distribution of rare training words of the same shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.training_data import Sentences
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams


def rule_counts(
    grammar: Grammar, bank: CompiledTreebank, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of binary rules, lexical rules and root symbols in the treebank, tree ``t``
    counted ``weights[t]`` times (default once)."""
    if weights is None:
        binary = np.bincount(bank.rule[bank.rule >= 0], minlength=grammar.n_binary).astype(float)
        lexical = np.bincount(bank.lex[bank.lex >= 0], minlength=grammar.n_lexical).astype(float)
        root = np.bincount(bank.symbol[bank.roots], minlength=grammar.n_symbols).astype(float)
        return binary, lexical, root
    w = np.repeat(np.asarray(weights, dtype=np.float64), np.diff(bank.tree_start))
    b, lx = bank.rule >= 0, bank.lex >= 0
    binary = np.bincount(bank.rule[b], w[b], minlength=grammar.n_binary)
    lexical = np.bincount(bank.lex[lx], w[lx], minlength=grammar.n_lexical)
    root = np.bincount(bank.symbol[bank.roots], weights, minlength=grammar.n_symbols)
    return binary.astype(float), lexical.astype(float), root.astype(float)


def normalise_rules(
    grammar: Grammar, binary: np.ndarray, lexical: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Divide rule weights by the total weight of their left-hand symbol."""
    # float even when there are no binary rules (bincount of nothing gives integers)
    total = np.bincount(grammar.binary[:, 0], binary, minlength=grammar.n_symbols).astype(float)
    total += np.bincount(grammar.lexical[:, 0], lexical, minlength=grammar.n_symbols)
    total[total == 0] = 1.0
    return binary / total[grammar.binary[:, 0]], lexical / total[grammar.lexical[:, 0]]


def tied_lexical(grammar: Grammar, lexical: np.ndarray) -> np.ndarray:
    """Lexical weights with emissions pooled over pre-terminals of one final tag.

    Each pre-terminal ``a`` keeps its total lexical weight, distributed over words as its
    emission group (``emission_groups``) distributes its pooled counts.
    """
    group = grammar.emission_groups()[grammar.lexical[:, 0]]
    word = grammar.lexical[:, 1]
    key = group * len(grammar.words) + word
    uniq, inv = np.unique(key, return_inverse=True)
    pooled = np.bincount(inv, lexical)[inv]
    group_total = np.bincount(group, lexical, minlength=group.max() + 1)[group]
    own_total = np.bincount(grammar.lexical[:, 0], lexical, minlength=grammar.n_symbols)
    share = np.divide(pooled, group_total, out=np.zeros_like(pooled), where=group_total > 0)
    return share * own_total[grammar.lexical[:, 0]]


def estimate_pcfg(
    grammar: Grammar, bank: CompiledTreebank, weights: np.ndarray | None = None
) -> PCFGParams:
    """Maximum-likelihood PCFG of the treebank (tree ``t`` counted ``weights[t]`` times),
    with emissions tied across unary chains."""
    binary, lexical, root = rule_counts(grammar, bank, weights)
    pb, pl = normalise_rules(grammar, binary, tied_lexical(grammar, lexical))
    return PCFGParams(pb, pl, root / max(root.sum(), 1.0))


def train_pcfg(
    grammar: Grammar,
    bank: CompiledTreebank,
    meta: dict[str, Any],
    weights: np.ndarray | None = None,
) -> LPCFG:
    """The PCFG as a model with ``m_a = 1`` (its own coarse grammar); ``weights``: see
    ``estimate_pcfg``."""
    params = estimate_pcfg(grammar, bank, weights)
    states = np.ones(grammar.n_symbols, dtype=np.int64)
    return LPCFG(
        grammar,
        states,
        params.binary.copy(),
        params.lexical.copy(),
        params.root.copy(),
        params,
        "probabilistic",
        {**meta, "method": "pcfg"},
    )


def string_pcfg(grammar: Grammar, text: Sentences) -> LPCFG:
    """The single-symbol PCFG of sentences without trees (its own coarse grammar).

    Every binary tree over ``n`` words has ``n - 1`` nodes ``X -> X X`` and ``n`` nodes
    ``X -> w``, so the relative frequencies of a single-symbol treebank are the same for
    every bracketing: these are they, the start of EM from strings and its coarse grammar.
    """
    if grammar.n_symbols != 1 or grammar.n_binary != 1:
        raise ValueError("string_pcfg needs the single-symbol grammar")
    lengths = np.array([len(s) for s in text.ids], dtype=np.int64)
    words = np.concatenate(text.ids) if text.ids else np.zeros(0, np.int64)
    tokens = np.bincount(words, np.repeat(text.counts, lengths), len(grammar.words))
    lexical = tokens[grammar.lexical[:, 1]]
    binary = np.array([float(text.counts @ (lengths - 1))])
    pb, pl = normalise_rules(grammar, binary, lexical)
    params = PCFGParams(pb, pl, np.ones(1))
    states = np.ones(1, dtype=np.int64)
    return LPCFG(
        grammar,
        states,
        pb.copy(),
        pl.copy(),
        np.ones(1),
        params,
        "probabilistic",
        {"method": "pcfg"},
    )
