"""The treebank PCFG (one latent state per symbol): relative-frequency estimates.

It is the baseline every latent method is measured against, and the coarse grammar every
model carries for coarse-to-fine pruning. Lexical smoothing comes from the lexicon: rare
words are counted under their word-shape signatures (see ``lexicon``), so unseen test words
get the pre-terminal distribution of rare training words of the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.grammar import CompiledTreebank, Grammar
from lpcfg_cli.learners.base import Learner, Progress
from lpcfg_cli.model import LPCFG, PCFGParams
from lpcfg_cli.selection import DevSet
from lpcfg_cli.training import TrainingData


def rule_counts(
    grammar: Grammar, bank: CompiledTreebank
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of binary rules, lexical rules and root symbols in the treebank."""
    binary = np.bincount(bank.rule[bank.rule >= 0], minlength=grammar.n_binary).astype(float)
    lexical = np.bincount(bank.lex[bank.lex >= 0], minlength=grammar.n_lexical).astype(float)
    root = np.bincount(bank.symbol[bank.roots], minlength=grammar.n_symbols).astype(float)
    return binary, lexical, root


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


def estimate_pcfg(grammar: Grammar, bank: CompiledTreebank) -> PCFGParams:
    """Maximum-likelihood PCFG of the treebank, with emissions tied across unary chains."""
    binary, lexical, root = rule_counts(grammar, bank)
    pb, pl = normalise_rules(grammar, binary, tied_lexical(grammar, lexical))
    return PCFGParams(pb, pl, root / max(root.sum(), 1.0))


def train_pcfg(grammar: Grammar, bank: CompiledTreebank, meta: dict[str, Any]) -> LPCFG:
    """The PCFG as a model with ``m_a = 1`` (its own coarse grammar)."""
    params = estimate_pcfg(grammar, bank)
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


@dataclass(frozen=True)
class PCFGOptions:
    """The treebank PCFG has no hyper-parameters (smoothing comes from the lexicon)."""


class PCFGLearner(Learner):
    """Relative frequencies of the training trees (deterministic; nothing to select)."""

    method = "pcfg"
    Options = PCFGOptions
    takes_dev = False

    def inert(self, dev: bool, start: str | None) -> dict[str, str]:
        return {
            "states": "with --method pcfg (the treebank PCFG has one state per symbol)",
            "seed": "with --method pcfg (it is deterministic)",
        }

    def _fit(
        self, data: TrainingData, dev: DevSet | None, start: LPCFG | None, progress: Progress
    ) -> LPCFG:
        return train_pcfg(data.grammar, data.bank, data.meta())
