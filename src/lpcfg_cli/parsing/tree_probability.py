"""The probability a model gives a tree, and its treebank PCFG as an ``nltk.grammar.PCFG``.

``TreeProbabilities`` scores debinarized trees (what the parser returns, or any tree of the
treebank's label set) exactly as the training code scores held-out trees (EM's dev
likelihood, ``grammar.heldout.DevTrees.compiled``): the tree is binarized as the model's
training trees were (``treebank.binarize``, the options the grammar records), compiled
against the model's grammar (``grammar.compiled.compile_trees``: a known word is read as
itself, any other word as its unknown-word signature, ``Lexicon.lookup``) and its nodes run
through the latent inside pass as the chart of that tree alone
(``engine.tree_charts.log_probabilities``). The value is the joint probability of the
binarized tree and its words, summed over every latent assignment of its nodes, root
probability included: the tree's likelihood under the model. A tree the grammar cannot
derive (a symbol, rule or word-under-tag it lacks, e.g. the parser's flat fallback tree)
has probability 0. A tree is scored as it is: what a parser built it from does not count
(a max-marginal or max-bracket decoder may assemble a tree with a rule the grammar lacks,
and such a tree has probability 0).

Words are read with the training vocabulary, where a word seen at most ``rare`` times is its
signature (``model.rarewords``: only parsing gives rare words back), and without the
parser's smoothing of known words towards their signatures and of unknown words towards
every signature (``Lexicon.lookup_weighted``): it is the trained model's probability of the
tree, not the score the parser ranked trees by, nor a term of ``lpcfg score``'s sentence
probability (which reads words as the parser does). An unknown word whose signature the
model never saw is read as the first signature with a rule under its tag, as the training
code reads it.

``treebank_pcfg`` gives the model's treebank PCFG (its coarse grammar) as an
``nltk.grammar.PCFG``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.tree_charts import TreeCharts, log_probabilities
from lpcfg_cli.grammar.compiled import compile_trees
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize
from lpcfg_cli.treebank.tree import Tree

# The start symbol of ``treebank_pcfg``: it rewrites to each root symbol of the model (the
# first of these names that is not a symbol of the grammar).
START = "TOP"


class TreeProbabilities:
    """The probability ``model`` (an ``LPCFG``) gives trees (see the module): ``scores``
    per model of an ensemble as the engine computes them, ``log_probabilities`` as one
    value per tree. The model's parameters are arranged in double precision when the first
    tree is scored (about the size of its binary parameters, once per model of an
    ensemble)."""

    def __init__(self, model: LPCFG):
        if not isinstance(model, LPCFG):
            raise TypeError(f"model must be an LPCFG, not {type(model).__name__}")
        self.model = model
        self.grammar = model.grammar
        self.options = BinarizeOptions(**self.grammar.binarization)
        self._latent: list[LatentGrammar] | None = None

    @property
    def latent(self) -> list[LatentGrammar]:
        """One double-precision latent grammar per model of the ensemble (built once)."""
        if self._latent is None:
            self._latent = [
                LatentGrammar.from_model(m, np.float64) for m in (self.model, *self.model.members)
            ]
        return self._latent

    def scores(self, trees: Sequence[Tree]) -> tuple[np.ndarray, np.ndarray]:
        """``(log |p|, sign p)``, each ``(trees, models)``: every tree's value under each
        model of the ensemble (one column for a single model), as
        ``engine.tree_charts.log_probabilities`` gives it; ``(-inf, 0)`` for a tree the
        grammar cannot derive. A tensor-form (spectral) model's value may be negative or
        exceed one (its parameters are defined up to linear maps and estimated)."""
        n_models = 1 + len(self.model.members)
        log_p = np.full((len(trees), n_models), -np.inf)
        sign = np.zeros((len(trees), n_models))
        binarized = [binarize(t, self.options) for t in trees]
        # Compiled one by one to learn which compile; the ones that do, in one pass.
        kept = [i for i, t in enumerate(binarized) if compile_trees(self.grammar, [t])[1] == 0]
        if not kept:
            return log_p, sign
        bank, dropped = compile_trees(self.grammar, [binarized[i] for i in kept])
        assert dropped == 0
        charts = TreeCharts.build(bank, self.grammar.n_symbols)
        for k, g in enumerate(self.latent):
            lp, sg = log_probabilities(g, charts)
            log_p[kept, k] = np.where(sg != 0, lp, -np.inf)
            sign[kept, k] = sg
        return log_p, sign

    def log_probabilities(self, trees: Sequence[Tree]) -> np.ndarray:
        """The natural log of each tree's probability (-inf where it is 0): its value under
        the model (``scores``), 0 where that is negative (a tensor-form model's) and at most
        1 (log 0); for an ensemble, the geometric mean of its models' probabilities so
        clipped (the mean of their logs: -inf if any model gives the tree probability
        0)."""
        log_p, sign = self.scores(trees)
        log_p = np.where(sign > 0, np.minimum(log_p, 0.0), -np.inf)
        return log_p.mean(axis=1)


def start_symbol(symbols: Sequence[str]) -> str:
    """``START``, primed until it is none of ``symbols``."""
    taken = set(symbols)
    name = START
    while name in taken:
        name += "'"
    return name


def treebank_pcfg(model: LPCFG) -> Any:
    """The model's treebank PCFG (``LPCFG.coarse``, the grammar its latent grammar refines)
    as an ``nltk.grammar.PCFG`` over its binarized symbols: ``a -> b c`` and ``a -> 'w'``
    with the PCFG's probabilities, words being the model's vocabulary (known words and
    unknown-word signatures), and a start symbol (``start_symbol``, ``TOP``) with
    ``TOP -> a`` weighted by the root distribution. Rules of probability 0 are left out and
    each left-hand side's probabilities are divided by their sum (a no-op up to rounding:
    the PCFG is estimated normalised, and kept in double precision in every model file),
    so that nltk's check of the sums holds."""
    from nltk.grammar import PCFG, Nonterminal, ProbabilisticProduction

    g = model.grammar
    coarse = model.coarse
    symbols = [Nonterminal(s) for s in g.symbols]
    start = Nonterminal(start_symbol(g.symbols))
    lhs: list[Any] = []
    rhs: list[tuple[Any, ...]] = []
    prob: list[float] = []
    for (a, b, c), p in zip(g.binary.tolist(), coarse.binary.tolist(), strict=True):
        if p > 0:
            lhs.append(symbols[a])
            rhs.append((symbols[b], symbols[c]))
            prob.append(p)
    for (a, w), p in zip(g.lexical.tolist(), coarse.lexical.tolist(), strict=True):
        if p > 0:
            lhs.append(symbols[a])
            rhs.append((g.words[w],))
            prob.append(p)
    for a, p in enumerate(coarse.root.tolist()):
        if p > 0:
            lhs.append(start)
            rhs.append((symbols[a],))
            prob.append(p)
    total: dict[Any, float] = {}
    for left, p in zip(lhs, prob, strict=True):
        total[left] = total.get(left, 0.0) + p
    productions = [
        ProbabilisticProduction(left, right, prob=p / total[left])
        for left, right, p in zip(lhs, rhs, prob, strict=True)
    ]
    return PCFG(start, productions)
