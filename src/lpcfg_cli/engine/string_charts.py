"""Sentences as charts over all their trees: string probabilities and EM's E-step from
strings (the inside-outside algorithm of Baker 1979 and Lari & Young 1990).

A sentence's chart holds every item that can be part of one of its trees, so that the latent
pass (``engine.latent``) sums over every bracketing and every latent assignment:

- for the single-symbol grammar (``grammar.indexed.single_symbol_grammar``: ``X -> X X`` and
  ``X -> w``, the algebraic WCFG of Bailly et al. 2013, section 2.2) every span, with ``X``;
- for any other grammar (a treebank L-PCFG) the items with a nonzero posterior under the
  model's coarse PCFG (``engine.coarse``): coarse-to-fine without pruning. A model's rules
  are its coarse PCFG's, so an item the coarse pass rules out has no mass in the model.

Words are given as ids of the grammar's vocabulary (training sentences, already mapped) or
as tokens, scored through the grammar's lexicon as the parser scores them (``engine.tokens``;
``Lexicon.lookup_weighted``: an unknown word by its signature, backed off to every
signature), so unknown words behave as in parsing. Sentences go in blocks of at most
``MAX_SPANS`` spans, one latent pass each, so memory stays bounded; span scaling
(``engine.scaling``) keeps a sentence of hundreds of words from underflowing or
overflowing. ``weights`` count a sentence as many times as it was seen: a sample of 10^6
strings is run once per distinct string.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.engine.batching import blocks
from lpcfg_cli.engine.chart_grammars import CoarseGrammar, LatentGrammar
from lpcfg_cli.engine.coarse import coarse_posteriors
from lpcfg_cli.engine.latent import ItemChart, PlanBudget, PlanCache
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.tokens import RulesByWord, Triples, empty_triples, token_words
from lpcfg_cli.engine.tree_charts import ExpectedCounts
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams

# Spans per latent pass: the inside and outside charts of a block hold (items, M) floats.
MAX_SPANS = 1 << 17


@dataclass
class Block(ItemChart):
    """Sentences ``first:first + size`` of a ``StringCharts``, as the items of one chart."""

    first: int
    layout: SpanLayout
    keys: np.ndarray  # sorted span * N + symbol
    lexical: Triples  # (item, lexical rule, weight)

    @property
    def size(self) -> int:
        return len(self.layout.lengths)

    def root_items(self, n_symbols: int) -> tuple[np.ndarray, np.ndarray]:
        """(items of the whole-sentence spans, the sentence of each, within the block)."""
        roots = self.layout.root_spans()
        is_root = np.zeros(self.layout.n_spans, dtype=bool)
        is_root[roots[roots >= 0]] = True
        span = self.keys // n_symbols
        items = np.flatnonzero(is_root[span])
        return items, self.layout.span_sent[span[items]]


@dataclass
class StringCharts:
    """The charts of a list of sentences over all their trees, in blocks (computed once and
    reused with any parameters of the grammar: EM builds them once for every iteration)."""

    blocks: list[Block]
    n_sentences: int

    @classmethod
    def from_ids(
        cls,
        grammar: Grammar,
        sentences: Sequence[Sequence[int]],
        coarse: PCFGParams | None = None,
        max_spans: int = MAX_SPANS,
    ) -> StringCharts:
        """Charts of sentences given as word ids of ``grammar`` (each scored by its own
        lexical rules with weight 1); ``coarse`` is needed unless the grammar has one symbol."""
        ids = [np.asarray(s, dtype=np.int64) for s in sentences]

        def words(first: int, layout: SpanLayout) -> Triples:
            part = ids[first : first + len(layout.lengths)]
            spans = [layout.base[1, s] + np.arange(len(w)) for s, w in enumerate(part) if len(w)]
            if not spans:
                return empty_triples()
            word = np.concatenate([w for w in part if len(w)])
            return np.concatenate(spans), word, np.ones(len(word))

        return cls._build(grammar, [len(s) for s in ids], words, coarse, max_spans)

    @classmethod
    def from_tokens(
        cls,
        grammar: Grammar,
        sentences: Sequence[Sequence[str]],
        coarse: PCFGParams | None = None,
        max_spans: int = MAX_SPANS,
    ) -> StringCharts:
        """Charts of sentences given as tokens, looked up in ``grammar``'s lexicon as the
        parser looks them up; ``coarse`` is needed unless the grammar has one symbol."""
        tokens = [list(s) for s in sentences]

        def words(first: int, layout: SpanLayout) -> tuple[np.ndarray, ...]:
            return token_words(grammar, layout, tokens[first : first + len(layout.lengths)])

        return cls._build(grammar, [len(s) for s in tokens], words, coarse, max_spans)

    @classmethod
    def _build(
        cls,
        grammar: Grammar,
        lengths: list[int],
        words: Callable[[int, SpanLayout], tuple[np.ndarray, ...]],
        coarse: PCFGParams | None,
        max_spans: int,
    ) -> StringCharts:
        """Blocks of consecutive sentences of at most ``max_spans`` spans (a longer sentence
        is a block of its own; ``engine.batching.blocks``); ``words(first, layout)`` gives
        a block's (span, word id, weight) triples."""
        n_sym = grammar.n_symbols
        if n_sym > 1 and coarse is None:
            raise ValueError("a grammar of several symbols needs its coarse PCFG")
        cg = CoarseGrammar.build(n_sym, grammar.binary, coarse.binary) if n_sym > 1 else None
        by_word = RulesByWord(grammar)
        out = []
        for part in blocks(range(len(lengths)), span_budget=max_spans, length=lengths.__getitem__):
            first = part[0]
            layout = SpanLayout(lengths[first : first + len(part)])
            span, rule, weight = by_word.expand(*words(first, layout))
            if cg is None:
                keys = np.arange(layout.n_spans, dtype=np.int64)  # every span, symbol X
            else:
                keys = _coarse_items(grammar, cg, coarse, layout, span, rule, weight)
            want = span * n_sym + grammar.lexical[rule, 0]
            pos = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
            ok = keys[pos] == want if len(keys) else np.zeros(len(want), dtype=bool)
            out.append(Block(first, layout, keys, (pos[ok], rule[ok], weight[ok])))
        return cls(out, len(lengths))

    def plan_caches(self, budget: PlanBudget | None = None) -> list[PlanCache]:
        """One empty ``latent.PlanCache`` per block, sharing one budget, for repeated
        passes over these charts (EM)."""
        budget = budget if budget is not None else PlanBudget()
        return [PlanCache(budget) for _ in self.blocks]


def _coarse_items(
    grammar: Grammar,
    cg: CoarseGrammar,
    coarse: PCFGParams,
    layout: SpanLayout,
    span: np.ndarray,
    rule: np.ndarray,
    weight: np.ndarray,
) -> np.ndarray:
    """The items with a nonzero coarse posterior (sorted keys), as the parser scores them."""
    if not layout.max_length:
        return np.zeros(0, dtype=np.int64)
    n1 = layout.block(1)
    scores = np.zeros((n1.stop - n1.start, grammar.n_symbols))
    np.add.at(scores, (span - n1.start, grammar.lexical[rule, 0]), coarse.lexical[rule] * weight)
    return coarse_posteriors(cg, layout, scores, coarse.root)[0]


def expected_counts(
    g: LatentGrammar,
    charts: StringCharts,
    weights: np.ndarray | None = None,
    caches: Sequence[PlanCache] | None = None,
) -> ExpectedCounts:
    """EM's E-step from strings: the weighted log-likelihood ``sum_s w_s log p(s)`` and the
    expected counts of every rule, lexical rule and root, each sentence counted ``w_s``
    times (default 1). Raises ``ValueError`` if a sentence of nonzero weight has
    probability zero. ``g`` in double precision (no flushing). ``caches``: one
    ``latent.PlanCache`` per block (``plan_caches``), kept by the caller across passes."""
    n = charts.n_sentences
    w_all = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w_all.shape != (n,):
        raise ValueError(f"{w_all.shape} weights for {n} sentences")
    n_sym, m = g.n_symbols, g.m
    binary = np.zeros((len(g.rule_order), m, m * m))
    lexical = np.zeros(g.lexical.shape)
    root = np.zeros(g.root.shape)
    loglik = 0.0
    for b, block in enumerate(charts.blocks):
        w = w_all[block.first : block.first + block.size]
        cache = None if caches is None else caches[b]
        chart = block.outside(g, counts=True, weights=w, cache=cache)
        if np.any(~np.isfinite(chart.log_z) & (w != 0)):
            raise ValueError("a training sentence has probability zero under the model")
        used = w != 0
        loglik += float(w[used] @ chart.log_z[used])
        binary += chart.rule_counts
        # A pre-terminal item's posterior, shared among the lexical rules summed into it:
        # rule l gave weight * q_l / exp(sc) of its scaled inside vector.
        items, rules, lw = block.lexical
        mx = np.exp(chart.sc[block.keys[items] // n_sym])
        share = np.divide(lw, mx, out=np.zeros(len(lw)), where=mx > 0)
        np.add.at(lexical, rules, share[:, None] * g.lexical[rules] * chart.beta[items])
        top, _ = block.root_items(n_sym)
        np.add.at(root, block.keys[top] % n_sym, chart.alpha[top] * chart.beta[top])
    return ExpectedCounts(loglik, binary, lexical, root)


def log_probabilities(
    g: LatentGrammar, charts: StringCharts, caches: Sequence[PlanCache] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(log |p|, sign p)`` of every sentence, summed over all its trees (inside pass only;
    ``(-inf, 0)`` where p is 0, e.g. an empty sentence or a word with no lexical rule).
    ``caches``: as for ``expected_counts``."""
    log_p, sign = np.full(charts.n_sentences, -np.inf), np.zeros(charts.n_sentences)
    for b, block in enumerate(charts.blocks):
        chart = block.inside(g, cache=None if caches is None else caches[b])
        items, sent = block.root_items(g.n_symbols)
        sym = block.keys[items] % g.n_symbols
        z = np.zeros(block.size)
        np.add.at(z, sent, np.einsum("nh,nh->n", chart.alpha[items], g.root[sym], dtype=np.float64))
        ok = np.isfinite(chart.log_z)
        part = slice(block.first, block.first + block.size)
        log_p[part] = chart.log_z
        sign[part] = np.where(ok, np.sign(z), 0.0)
    return log_p, sign


class StringScorer:
    """``(log |p|, sign p)`` of tokenised sentences under a model (either form), summed
    over every tree with no pruning, in double precision; reusable across blocks of a long
    input (``lpcfg score``)."""

    def __init__(self, model: LPCFG):
        if model.members:
            raise ValueError(
                "an ensemble (a product of grammars) gives no probability of a sentence"
            )
        self.grammar = model.grammar
        self.coarse = model.coarse
        self.latent = LatentGrammar.from_model(model, np.float64)

    def __call__(self, sentences: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        charts = StringCharts.from_tokens(self.grammar, sentences, self.coarse)
        return log_probabilities(self.latent, charts)
