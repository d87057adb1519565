"""Coarse-to-fine parsing with an L-PCFG, a block of sentences at a time (``BlockParser``;
``parsing.parser.Parser`` is the front that runs it).

1. The treebank PCFG (the model's coarse grammar) runs inside-outside over the full chart.
2. Items whose coarse posterior is below ``prune`` are dropped; the latent model runs
   inside-outside over the survivors only and gives the marginals ``mu(a, i, j)``.
3. Goodman's max-marginal decoding picks the binarized tree, which is debinarized.

If the pruned chart holds no complete parse the sentence is retried with a looser threshold,
then without pruning, and a grammar binarized with ancestors or sibling context backs off to
its coarser projections (``model.backoff``). That is the first of four tiers, each applied
only to the sentences the one before left without a parse, so that a sentence the grammar
derives is parsed as if the others did not exist (docs/parsing.md, Sentences the grammar
cannot derive):

1. the grammar itself, as above;
2. the smoothed grammar (``parsing.smoothed``): every token but punctuation may also take
   any open-class tag, every non-intermediate symbol may head the sentence;
3. glue (``parsing.glue``): the sentence cut into the fewest pieces the smoothed grammar
   derives, each parsed through tiers 1-2, joined under one node;
4. a sentence longer than ``max_length`` (by default the longest whose chart fits the memory
   budget ``CHART_ITEMS``) or whose chart the machine cannot hold (``MemoryError``, e.g.
   under ``ulimit -v``) gets a fallback tree: its words, tagged with their most likely
   pre-terminal, flat under the most likely root symbol.

Every sentence yields exactly one tree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from lpcfg_cli.engine.batching import SPAN_BUDGET, blocks, split_on_memory_error
from lpcfg_cli.engine.coarse import coarse_posteriors
from lpcfg_cli.engine.latent import (
    PlanCache,
    anchored_rules,
    inside_pass,
    lexical_items,
    outside_pass,
)
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.engine.result import Chart
from lpcfg_cli.engine.tokens import smoothed_token_rules, token_rules
from lpcfg_cli.model.backoff import project_pcfg
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.arranged import ArrangedModel
from lpcfg_cli.parsing.combine import combine, combine_rules, rules_over
from lpcfg_cli.parsing.decoders import (
    Brackets,
    best_labels,
    bracket_labels,
    goodman_trees,
    max_rule_trees,
)
from lpcfg_cli.parsing.glue import GlueGrammar, segment
from lpcfg_cli.parsing.parser_options import ParserOptions, chart_length_limit, resolve_decoder
from lpcfg_cli.parsing.run_stats import ParseStats
from lpcfg_cli.parsing.smoothed import SmoothedGrammar
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.binarize import debinarize
from lpcfg_cli.treebank.sentences import checked_sentences
from lpcfg_cli.treebank.tree import Tree

# Why a sentence got a fallback tree when no tree covers it (a coarser grammar may: backoff).
NO_PARSE_COARSE = "no parse under the coarse grammar"
NO_PARSE_LATENT = "no parse under the latent model"
NO_TREE = "no tree"
# The reasons the smoothed grammar and glue (tiers 2 and 3) are tried for: the grammar gave
# no tree. A sentence too long or too large for memory gets its fallback tree at once.
NO_PARSE = (NO_PARSE_COARSE, NO_PARSE_LATENT, NO_TREE)

# Why a sentence got a fallback tree when its chart did not fit in memory.
OUT_OF_MEMORY = "out of memory"


@dataclass
class ParseResult:
    """One sentence's tree (debinarized, no TOP wrapper) and how it was obtained."""

    tree: Tree | None  # None only for an empty sentence
    fallback: str | None = None  # why a fallback tree was emitted
    threshold: float | None = None  # pruning threshold that succeeded
    backoff: str | None = None  # why a coarser grammar parsed it (``backoff``)
    smoothed: bool = False  # parsed with the smoothed grammar (tier 2)
    pieces: int = 0  # glued from this many pieces (tier 3; 0: not glued)

    @property
    def tier(self) -> int:
        """Which tier gave the tree: 1 the grammar, 2 the smoothed grammar, 3 glue, 4 the
        flat fallback (see the module)."""
        if self.fallback:
            return 4
        return 3 if self.pieces else 2 if self.smoothed else 1


class BlockParser:
    """Parses blocks of token sequences with ``model`` through the four tiers (see the
    module); reusable across blocks. ``parsing.parser.Parser`` runs it over a stream of
    sentences, in one process or several; nothing else should.

    It keeps what parsing reads of the model, its grammar (``grammar``, the rare training
    words known again) and treebank PCFG (``treebank_pcfg``), besides the arranged latent
    grammars, and not the model itself."""

    def __init__(self, model: LPCFG | ArrangedModel, options: ParserOptions | None = None):
        # Arranged once per model (``parsing.arranged``; ``arranged_cache`` keeps it between
        # runs). The parser keeps what it reads of the model, not the model, whose latent
        # parameters (dense per member, with the restored words' rules) would stay in
        # memory beside their arranged copies for as long as the parser lives.
        if not isinstance(model, (LPCFG, ArrangedModel)):
            raise TypeError(
                "model must be a parsing model (lpcfg_cli.load_model gives one), "
                f"not {type(model).__name__}"
            )
        if options is not None and not isinstance(options, ParserOptions):
            raise TypeError(f"options must be ParserOptions, not {type(options).__name__}")
        arranged = model if isinstance(model, ArrangedModel) else ArrangedModel.of(model)
        self.grammar = g = arranged.grammar
        self.treebank_pcfg = arranged.treebank_pcfg
        self.options = options or ParserOptions()
        self.prune = self.options.prune
        self.max_length = self.options.max_length or chart_length_limit(g.n_symbols)
        self.decode = resolve_decoder(self.options, arranged.decoders)
        self.symbols = g.symbols
        self.coarse = arranged.coarse
        # One latent grammar per model of an ensemble; none for the bare treebank PCFG,
        # whose coarse pass already gives the posteriors (the rule-product decoders need the
        # rule posteriors of a latent pass, which for it has one state per symbol).
        self.latent = (
            []
            if self.decode in ("max-marginal", "max-bracket") and arranged.bare_pcfg
            else arranged.latent
        )
        self.rules_by_word = arranged.rules_by_word
        self.coarse_lexical = arranged.coarse_lexical
        # The members of a product or ensemble trained on one treebank have the same rules,
        # so the chunk plans of their latent passes over the same allowed items are the same
        # but for the span scales: the first member plans, the others refresh its plans
        # (``engine.latent.PlanCache``; docs/parsing.md, Ensembles and products of grammars).
        self.shared_plans = len(self.latent) > 1 and all(
            np.array_equal(lg.rules, self.latent[0].rules) for lg in self.latent[1:]
        )
        # A product's members after the first run over the items whose posterior under
        # the first is at least this (``ParserOptions.product_prune``; 0: all the items).
        self.product_prune = (
            self.options.product_prune
            if len(self.latent) > 1 and self.options.combine == "product"
            else 0.0
        )
        self.root_ok = np.array([not labels.is_intermediate(s) for s in g.symbols])
        self.brackets = (
            Brackets.of(g.symbols, g.is_preterminal) if self.decode == "max-bracket" else None
        )
        self.stats = ParseStats()
        self._backoff: BlockParser | None | bool = False  # built when first needed

    @property
    def backoff(self) -> BlockParser | None:
        """The parser of the grammar one level coarser than this one's (``backoff``: for the
        sentences no tree of this grammar covers; it backs off in turn); None for a grammar
        binarized ``--vertical 1 --horizontal 0``."""
        if self._backoff is False:
            projected = project_pcfg(self.grammar, self.treebank_pcfg)
            self._backoff = (
                None
                if projected is None
                else BlockParser(projected, replace(self.options, decode=self._marginal_decode()))
            )
        return self._backoff  # type: ignore[return-value]

    @cached_property
    def smoothed(self) -> SmoothedGrammar:
        """The smoothed roots of the grammar (``parsing.smoothed``), for the sentences it
        cannot derive: built when the first such sentence comes."""
        return SmoothedGrammar.build(
            self.treebank_pcfg.root, self.coarse.prior, self.latent, self.heads
        )

    @cached_property
    def glue(self) -> GlueGrammar:
        """The glue grammar (``parsing.glue``) over the smoothed grammar, for the sentences
        even that cannot derive: built when the first such sentence comes."""
        weight = np.where(self.heads, self.smoothed.coarse_root, 0.0)
        return GlueGrammar.build(self.grammar.binary, self.treebank_pcfg.binary, weight)

    @cached_property
    def heads(self) -> np.ndarray:
        """``(N,)`` bool: the symbols the smoothed grammar lets head a sentence or a glued
        piece: the non-intermediate ones but ``labels.WORD`` (a word beside phrases, which
        has no label of its own)."""
        return self.root_ok & (np.asarray(self.symbols, dtype=object) != labels.WORD)

    @cached_property
    def fallback_label(self) -> str:
        """The label a fallback tree and a glued sentence are headed by: the top of the
        phrase symbol most probable as a root ("S" where no phrase is a root)."""
        g = self.grammar
        roots = np.where(self.root_ok & g.is_interterminal, self.treebank_pcfg.root, -1.0)
        return labels.top_label(g.symbols[int(np.argmax(roots))]) if roots.max() > 0 else "S"

    def _marginal_decode(self) -> str:
        """This parser's decoder if it needs only item posteriors (a bare PCFG has no rule
        posteriors), else max-marginal."""
        return self.decode if self.decode in ("max-marginal", "max-bracket") else "max-marginal"

    # ------------------------------------------------------------------ public

    def parse(
        self,
        sentences: Sequence[Sequence[str]],
        progress: Callable[[int], None] | None = None,
    ) -> list[ParseResult]:
        """Parse every sentence (a list of tokens; in order); ``progress(n)`` is called as
        sentences finish."""
        sentences = list(checked_sentences(sentences))
        t0 = time.perf_counter()
        out = self._parse_plain(sentences, progress)
        self._beyond_grammar(sentences, out)
        self.stats.sentences += len(sentences)
        self.stats.seconds += time.perf_counter() - t0
        for r in out:
            if r.fallback:
                self.stats.fallbacks += 1
                self.stats.reasons[r.fallback] = self.stats.reasons.get(r.fallback, 0) + 1
            elif r.pieces:
                self.stats.glued += 1
            elif r.smoothed:
                self.stats.smoothed += 1
            elif r.backoff:
                self.stats.backoffs += 1
        return out

    # ------------------------------------------------------------------ internals

    def _parse_plain(
        self,
        sentences: Sequence[Sequence[str]],
        progress: Callable[[int], None] | None = None,
    ) -> list[ParseResult]:
        """Tier 1: every sentence parsed with the grammar (backing off to its coarser
        projections), in order; a sentence it cannot derive gets its fallback tree, with a
        reason in ``NO_PARSE``."""
        results, todo = self._triage(sentences)
        done = len(sentences) - len(todo)
        if progress and done:
            progress(done)
        # Similar lengths together keeps batches dense; results go back in input order.
        todo.sort(key=lambda i: len(sentences[i]))
        batches = blocks(todo, span_budget=SPAN_BUDGET, length=lambda i: len(sentences[i]))
        for idxs in batches:
            for idx, res in zip(idxs, self._parse_or_fall_back(sentences, idxs), strict=True):
                results[idx] = res
            if progress:
                progress(len(idxs))
        out = [r for r in results if r is not None]
        assert len(out) == len(sentences)
        self._back_off(sentences, out)
        return out

    def _triage(
        self, sentences: Sequence[Sequence[str]]
    ) -> tuple[list[ParseResult | None], list[int]]:
        """The results of the sentences no grammar is asked about (empty: no tree; longer
        than ``max_length``: a fallback tree) and the indices of the others, to parse."""
        results: list[ParseResult | None] = [None] * len(sentences)
        todo = []
        for idx, words in enumerate(sentences):
            if len(words) == 0:
                results[idx] = ParseResult(None)
            elif len(words) > self.max_length:
                results[idx] = self.fallback(words, f"longer than {self.max_length} words")
            else:
                todo.append(idx)
        return results, todo

    def _parse_smoothed(self, sentences: Sequence[Sequence[str]]) -> list[ParseResult]:
        """Tier 2: every sentence parsed with the smoothed grammar (``smoothed``; backing
        off to the coarser projections' smoothed grammars as tier 1 does), in order; one it
        cannot derive keeps a fallback tree with a reason in ``NO_PARSE``."""
        # Tier 1 keeps empty and overlong sentences (it never asks for them): as it gives them.
        results, todo = self._triage(sentences)
        todo.sort(key=lambda i: len(sentences[i]))
        for idxs in blocks(todo, span_budget=SPAN_BUDGET, length=lambda i: len(sentences[i])):
            for idx, res in zip(
                idxs, self._parse_or_fall_back(sentences, idxs, smooth=True), strict=True
            ):
                results[idx] = res
        out = [r for r in results if r is not None]
        failed = [i for i, r in enumerate(out) if r.fallback in NO_PARSE]
        if failed and self.backoff is not None:
            again = self.backoff._parse_smoothed([sentences[i] for i in failed])
            for i, r in zip(failed, again, strict=True):
                if r.fallback is None:
                    out[i] = replace(r, backoff=r.backoff or out[i].fallback)
        return [r if r.fallback else replace(r, smoothed=True) for r in out]

    def _beyond_grammar(
        self, sentences: Sequence[Sequence[str]], results: list[ParseResult]
    ) -> None:
        """Tiers 2 and 3 for the sentences tier 1 left without a parse (their results
        replaced in place): the smoothed grammar, then glue; what neither parses keeps its
        fallback tree (tier 4)."""
        todo = [i for i, r in enumerate(results) if r.fallback in NO_PARSE]
        if not todo:
            return
        for i, r in zip(todo, self._parse_smoothed([sentences[i] for i in todo]), strict=True):
            if r.fallback is None or r.fallback not in NO_PARSE:
                results[i] = r
        todo = [i for i in todo if results[i].fallback in NO_PARSE]
        if not todo:
            return
        for i, r in zip(todo, self._glue([sentences[i] for i in todo]), strict=True):
            if r is not None:
                results[i] = r

    def _glue(self, sentences: Sequence[Sequence[str]]) -> list[ParseResult | None]:
        """Tier 3: each sentence cut into the fewest, most probable pieces the smoothed
        grammar derives (``parsing.glue``), each piece of two or more words parsed as a
        sentence of its own through tiers 1-2 and a one-word piece tagged with its
        pre-terminal, the pieces joined under ``fallback_label``; None for a sentence that
        could not be glued (its chart too large for memory; a piece with no parse)."""
        cuts: list[list[tuple[int, int]] | None] = [None] * len(sentences)
        tags: list[np.ndarray | None] = [None] * len(sentences)
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        for idxs in blocks(order, span_budget=SPAN_BUDGET, length=lambda i: len(sentences[i])):
            for i, (cut, tag) in zip(idxs, self._cut_or_none(sentences, idxs), strict=True):
                cuts[i], tags[i] = cut, tag
        # Every piece of two or more words, parsed at once: the grammar, then the smoothed
        # grammar for those it cannot derive.
        wanted = [
            (s, i, j) for s, cut in enumerate(cuts) if cut is not None for i, j in cut if j - i > 1
        ]
        pieces = [list(sentences[s][i:j]) for s, i, j in wanted]
        parsed = self._parse_plain(pieces)
        again = [k for k, r in enumerate(parsed) if r.fallback in NO_PARSE]
        if again:
            for k, r in zip(again, self._parse_smoothed([pieces[k] for k in again]), strict=True):
                parsed[k] = r
        trees = {
            (s, i): r.tree for (s, i, _), r in zip(wanted, parsed, strict=True) if not r.fallback
        }
        out: list[ParseResult | None] = []
        for s, (cut, tag) in enumerate(zip(cuts, tags, strict=True)):
            if cut is None or tag is None:
                out.append(None)
                continue
            kids: list[Tree] = []
            for i, j in cut:
                if j - i == 1:
                    symbol = self.grammar.symbols[int(tag[i])]
                    kids.append(Tree(labels.bottom_label(symbol), [sentences[s][i]]))
                elif (s, i) in trees:
                    kids.append(trees[s, i])  # type: ignore[arg-type]
                else:
                    break
            else:
                out.append(ParseResult(Tree(self.fallback_label, kids), pieces=len(cut)))
                continue
            out.append(None)
        return out

    def _cut_or_none(
        self, sentences: Sequence[Sequence[str]], idxs: list[int]
    ) -> list[tuple[list[tuple[int, int]] | None, np.ndarray | None]]:
        """``_cut`` of ``sentences[idxs]``; if their charts do not fit in memory, each
        sentence alone, and one whose chart alone does not fit gets (None, None)."""
        return split_on_memory_error(
            lambda some: self._cut([sentences[i] for i in some]), idxs, lambda i: (None, None)
        )

    def _cut(
        self, sentences: Sequence[Sequence[str]]
    ) -> list[tuple[list[tuple[int, int]] | None, np.ndarray | None]]:
        """Each sentence's pieces (``glue.segment``) and, per word, the pre-terminal of the
        word as a one-word piece: one pass of the coarse kernel over the glue grammar,
        without beam or cut."""
        layout = SpanLayout([len(s) for s in sentences])
        glue = self.glue
        scores = self._lexical_scores(layout, self._lexical(layout, sentences, smooth=True))
        t0 = time.perf_counter()
        keys, mu, _ = coarse_posteriors(
            glue.coarse, layout, glue.lexical(scores), glue.root, 0.0, 0.0
        )
        self.stats.coarse_seconds += time.perf_counter() - t0
        cuts = segment(layout, keys, mu, glue.coarse.n_symbols, glue.piece)
        symbols = glue.word_symbols(scores)
        first = layout.block(1).start
        return [
            (cut, symbols[int(layout.base[1, s]) - first : int(layout.base[1, s]) - first + n])
            for s, (cut, n) in enumerate(zip(cuts, layout.lengths.tolist(), strict=True))
        ]

    def _parse_or_fall_back(
        self, sentences: Sequence[Sequence[str]], idxs: list[int], smooth: bool = False
    ) -> list[ParseResult]:
        """``_parse_batch`` of ``sentences[idxs]``; if their charts do not fit in memory,
        each sentence alone, and a sentence whose chart alone does not fit gets its
        fallback tree (the others still parse)."""
        return split_on_memory_error(
            lambda some: self._parse_batch([sentences[i] for i in some], smooth=smooth),
            idxs,
            lambda i: self.fallback(sentences[i], OUT_OF_MEMORY),
        )

    def _lexical(
        self, layout: SpanLayout, sentences, smooth: bool = False
    ) -> tuple[np.ndarray, ...]:
        """(span id, lexical rule, weight) triples scoring every word of the batch (``smooth``:
        the smoothed grammar's, ``engine.tokens.smoothed_token_rules``)."""
        if smooth:
            return smoothed_token_rules(
                self.grammar, self.rules_by_word, layout, sentences, self.coarse_lexical
            )
        return token_rules(self.grammar, self.rules_by_word, layout, sentences)

    def _lexical_scores(self, layout: SpanLayout, lex: tuple[np.ndarray, ...]) -> np.ndarray:
        """The ``(words, N)`` pre-terminal scores of the coarse pass from lexical triples."""
        lex_span, lex_rule, lex_weight = lex
        n1 = layout.block(1)
        # Duplicate (word, pre-terminal) entries add up, as a sparse matrix's would.
        lex_scores = np.zeros((n1.stop - n1.start, self.grammar.n_symbols))
        np.add.at(
            lex_scores,
            (lex_span - n1.start, self.rules_by_word.parent[lex_rule]),
            self.coarse_lexical[lex_rule] * lex_weight,
        )
        return lex_scores

    def coarse_pass(
        self,
        layout: SpanLayout,
        sentences: Sequence[Sequence[str]],
        beam: float | None = None,
        cut: float = 0.0,
        smooth: bool = False,
    ) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray]:
        """The batch's lexical triples (``_lexical``) and the coarse pass's items, posteriors
        and log Z per sentence (``coarse_posteriors``; ``beam``: the coarse beam, default
        ``--coarse-beam`` before a latent pass; ``cut``: the outside phase's cut, default
        none; ``smooth``: with the smoothed grammar's lexicon and roots)."""
        lex = self._lexical(layout, sentences, smooth)
        lex_scores = self._lexical_scores(layout, lex)
        t0 = time.perf_counter()
        # The beam prunes for the latent pass it was chosen with; a bare treebank PCFG,
        # decoded from these posteriors, keeps them exact.
        if beam is None:
            beam = self.options.coarse_beam if self.latent else 0.0
        root = self.smoothed.coarse_root if smooth else self.treebank_pcfg.root
        keys, mu, log_z = coarse_posteriors(self.coarse, layout, lex_scores, root, beam, cut)
        self.stats.coarse_seconds += time.perf_counter() - t0
        return lex, keys, mu, log_z

    def _parse_batch(
        self,
        sentences: Sequence[Sequence[str]],
        beam: float | None = None,
        exact: bool = False,
        smooth: bool = False,
    ) -> list[ParseResult]:
        """Tier 1 (``smooth``: tier 2) of a batch: the coarse pass, then the latent passes
        over what it keeps, with the looser attempts for a sentence left without a parse;
        one still without gets its fallback tree, with a reason in ``NO_PARSE``. With
        ``smooth``, such a sentence that the smoothed treebank PCFG derives is decoded from
        that PCFG's posteriors: a parse under the model's own coarse grammar."""
        g = self.grammar
        layout = SpanLayout([len(s) for s in sentences])
        # The outside passes' cut (``ParserOptions.outside_cut``) leaves the coarse posteriors
        # below it out, so only the first threshold can be tried on them; a sentence left
        # without a parse is parsed again with exact posteriors (``exact``).
        cut = 0.0 if exact or not self.latent else self.options.outside_cut * self.prune
        lex, keys, mu, log_z = self.coarse_pass(layout, sentences, beam, cut, smooth)
        lex_span, lex_rule, lex_weight = lex
        results: list[ParseResult | None] = [None] * len(sentences)
        for s in np.flatnonzero(~np.isfinite(log_z)):
            results[s] = self.fallback(sentences[s], NO_PARSE_COARSE)
        ok = np.isfinite(log_z)
        n = g.n_symbols
        latent = self.smoothed.latent if smooth else self.latent
        if not latent:
            trees = self._decode(layout, keys // n, keys % n, mu, sentences)
            for s in np.flatnonzero(ok):
                results[s] = self._finish(sentences[s], trees[s], self.prune)
            return [r for r in results if r is not None]

        pending = np.flatnonzero(ok)
        thresholds = self.thresholds() if cut == 0.0 else self.thresholds()[:1]
        item_sent = layout.span_sent[keys // n]
        for attempt, thr in enumerate(thresholds):
            if len(pending) == 0:
                break
            if attempt:
                self.stats.retries += len(pending)
            keep = np.zeros(len(sentences), dtype=bool)
            keep[pending] = True
            allowed = keys[(mu >= thr) & keep[item_sent]]
            t0 = time.perf_counter()
            charts = []
            mrp = self.decode in ("max-rule-product", "variational")
            # A product's later members run only over the items the first one does not rule
            # out (on the first attempt: a sentence they cannot parse so is retried without),
            # and then share plans among themselves only: the first member's are not reused.
            narrow = attempt == 0 and self.product_prune > 0
            cache = PlanCache() if self.shared_plans and not narrow else None
            marginals = []
            for lg in latent:
                lex = lexical_items(lg, layout, allowed, (lex_span, lex_rule, lex_weight))
                # The first member's marginals also narrow the others' items at
                # ``product_prune``: below it they stay exact.
                member_cut = min(cut, self.product_prune) if narrow and not charts else cut
                chart = inside_pass(lg, layout, allowed, lex, cache=cache)
                chart = outside_pass(lg, chart, cut=member_cut)
                if mrp:
                    anchored_rules(lg, chart)
                chart.plans = None  # done with: free them before the next model's pass
                charts.append(chart)
                marginals.append(chart.marginals())
                self.stats.latent_flops += chart.flops
                if narrow and len(charts) == 1:
                    first = np.abs(marginals[0]) >= self.product_prune
                    allowed, marginals[0] = allowed[first], marginals[0][first]
                    cache = PlanCache() if self.shared_plans else None
            self.stats.latent_seconds += time.perf_counter() - t0
            trees = self._decode_latent(layout, charts, marginals, sentences)
            parsed = np.logical_and.reduce([np.isfinite(c.log_z) for c in charts])
            still = []
            for s in pending:
                if parsed[s] and trees[s] is not None:
                    results[s] = self._finish(sentences[s], trees[s], thr)
                else:
                    still.append(s)
            pending = np.asarray(still, dtype=np.int64)
        if len(pending) and cut > 0.0:  # the other thresholds, on exact posteriors
            self.stats.retries += len(pending)
            again = self._parse_batch(
                [sentences[s] for s in pending], beam=beam, exact=True, smooth=smooth
            )
            for s, result in zip(pending, again, strict=True):
                results[s] = result
            pending = pending[:0]
        if len(pending) and beam is None and self.options.coarse_beam > 0:
            # The coarse beam's chart may hold no latent parse where the whole chart does.
            self.stats.retries += len(pending)
            again = self._parse_batch(
                [sentences[s] for s in pending], beam=0.0, exact=exact, smooth=smooth
            )
            for s, result in zip(pending, again, strict=True):
                results[s] = result
            pending = pending[:0]
        if len(pending) and smooth:
            # The smoothed PCFG derives these (their coarse pass has a parse, on exact
            # posteriors here) where no latent model does: decoded from that pass.
            trees = self._decode(layout, keys // n, keys % n, mu, sentences)
            for s in pending:
                results[s] = self._finish(sentences[s], trees[s], 0.0)
            pending = pending[:0]
        for s in pending:
            results[s] = self.fallback(sentences[s], NO_PARSE_LATENT)
        return [r for r in results if r is not None]

    def _back_off(self, sentences: Sequence[Sequence[str]], results: list[ParseResult]) -> None:
        """Sentences the grammar gave no tree, parsed with its coarser grammar when it has
        one (their results replaced in place); the rest keep their fallback trees."""
        todo = [
            i for i, r in enumerate(results) if r.fallback in (NO_PARSE_COARSE, NO_PARSE_LATENT)
        ]
        if not todo or self.backoff is None:
            return
        backoff = self.backoff._parse_plain([sentences[i] for i in todo])
        for i, r in zip(todo, backoff, strict=True):
            if r.fallback is None:
                results[i] = ParseResult(r.tree, threshold=r.threshold, backoff=results[i].fallback)

    def parse_block(self, block: Sequence[Sequence[str]]) -> tuple[list[ParseResult], ParseStats]:
        """The results of ``block`` and the statistics of this block alone (what a worker
        process sends back)."""
        self.stats = ParseStats()
        return self.parse(block), self.stats

    def warm_up(self) -> None:
        """Load the compiled kernels (``engine.dispatch``: their ahead-of-time module, built
        first if missing, or numba's) by parsing two words, so that processes forked
        afterwards share them instead of each loading them."""
        stats, self.stats = self.stats, ParseStats()
        try:
            # Any words do (unknown ones get every signature); the grammar alone (tier 1)
            # loads every kernel, and what only tiers 2-3 need is built when first needed.
            self._parse_plain([["the", "."]])
        finally:
            self.stats = stats

    def thresholds(self) -> list[float]:
        """Pruning thresholds tried in turn for a sentence whose pruned chart has no parse:
        the chosen one, 1000 times looser, none."""
        return [self.prune, self.prune * 1e-3, 0.0] if self.prune > 0 else [0.0]

    def _decode_latent(
        self,
        layout: SpanLayout,
        charts: list[Chart],
        marginals: list[np.ndarray],
        sentences: Sequence[Sequence[str]],
    ) -> list[Tree | None]:
        """The trees of the latent passes' ``charts`` (one per model of the ensemble, with
        their item ``marginals``), combined and decoded."""
        n = self.grammar.n_symbols
        marg = combine(marginals, self.options.combine)
        items = charts[-1].keys  # the items of every model but (maybe) the first
        if self.decode in ("max-rule-product", "variational"):
            # Each chart's rules index its own items: the first model's, narrowed, are
            # expressed over the items of the others before the rules are matched.
            rules = [rules_over(c.rules, c.keys, items) for c in charts if c.rules is not None]
            return max_rule_trees(
                layout,
                items,
                n,
                marg,
                combine_rules(rules, self.options.combine),
                self.root_ok,
                self.symbols,
                sentences,
                variational=self.decode == "variational",
            )
        return self._decode(layout, items // n, items % n, marg, sentences)

    def _decode(self, layout, item_span, item_sym, score, sentences):
        if self.decode == "max-bracket":
            span_score, span_label = bracket_labels(
                layout,
                item_span,
                item_sym,
                score,
                self.root_ok,
                self.brackets,
                self.options.bracket_threshold,
            )
        else:
            span_score, span_label = best_labels(layout, item_span, item_sym, score, self.root_ok)
        return goodman_trees(layout, span_score, span_label, self.symbols, sentences)

    def _finish(self, words: Sequence[str], tree: Tree | None, thr: float) -> ParseResult:
        if tree is None:
            return self.fallback(words, NO_TREE)
        return ParseResult(debinarize(tree), threshold=thr)

    def fallback(self, words: Sequence[str], reason: str) -> ParseResult:
        """Words tagged with their most likely pre-terminal, flat under the best root."""
        g = self.grammar
        coarse = self.treebank_pcfg
        by_word = self.rules_by_word
        leaves = []
        for t, word in enumerate(words):
            best, tag = -1.0, None
            for w in g.lexicon.lookup(word, t):
                for rule in by_word.order[by_word.ptr[w] : by_word.ptr[w + 1]]:
                    symbol = g.symbols[g.lexical[rule, 0]]
                    if coarse.lexical[rule] > best and symbol != labels.WORD:
                        best, tag = coarse.lexical[rule], symbol
            base = labels.bottom_label(tag) if tag is not None else "XX"
            leaves.append(Tree(base, [word]))
        return ParseResult(Tree(self.fallback_label, leaves), fallback=reason)
