"""One way to run a model: ``Parser``.

A ``Parser`` is built from a trained model (``LPCFG``), a model arranged for parsing
(``ArrangedModel``) or a model file's path (arranged through the cache of arranged models,
``parsing.arranged_cache``, so that a later run starts sooner), with ``ParserOptions`` and a
number of worker processes. It

- parses (``parse``: one ``ParseResult`` per sentence, in order, as a stream; ``trees``: the
  trees alone), through the tiers of ``parsing.tiers`` in blocks, in one process or several
  (``parsing.streaming``);
- scores (``score``: the probability of each sentence, summed over every tree and latent
  assignment, ``engine.string_charts``), in blocks within the same memory budget, a block
  whose chart does not fit split until each sentence that fits is scored;
- adds every run's statistics to ``stats`` (parsing) and ``score_stats`` (scoring).

``lpcfg_cli.parse``, ``lpcfg_cli.score``, ``NltkParser``, the learners' dev F1
(``parsing.dev_f1``) and the ``parse`` and ``score`` commands are thin wrappers over it; the
block parser is built nowhere else.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from lpcfg_cli.engine.batching import SPAN_BUDGET, blocks, split_on_memory_error
from lpcfg_cli.engine.string_charts import StringScorer
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import Pause, display_name
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.arranged import ArrangedModel
from lpcfg_cli.parsing.arranged_cache import arrange
from lpcfg_cli.parsing.parser_options import ParserOptions, chart_length_limit
from lpcfg_cli.parsing.run_stats import ParseStats, ScoreStats
from lpcfg_cli.parsing.streaming import SERIAL_BLOCK, check_count, stream
from lpcfg_cli.parsing.tiers import OUT_OF_MEMORY, BlockParser, ParseResult
from lpcfg_cli.treebank.sentences import checked_sentences
from lpcfg_cli.treebank.tree import Tree

# Sentences scored at once: at most ``SPAN_BUDGET`` spans (as the parser's blocks) or this
# many sentences, so that memory stays flat on any input.
SCORE_BLOCK = 1_000


@dataclass(frozen=True)
class SentenceScore:
    """The probability of one sentence: ``log_prob`` is log |p| (``-inf`` where p is 0,
    ``nan`` where it was not scored), ``sign`` that of p (a spectral model's may be
    negative; 0 where p is 0 or not scored); ``skipped`` says why a sentence was not scored
    (longer than the length limit, or its chart too large for memory)."""

    log_prob: float
    sign: int
    words: int
    skipped: str | None = None

    @property
    def prob(self) -> float:
        """p itself (0.0 where it underflows, is 0 or was not scored)."""
        return self.sign * float(np.exp(self.log_prob)) if self.sign != 0 else 0.0


class Parser:
    """Runs ``model`` (an ``LPCFG``, an ``ArrangedModel`` or a model file's path, ``-`` for
    stdin) with ``options``, in ``jobs`` processes and blocks of ``block`` sentences (see
    the module). The model is loaded and arranged when first needed: scoring never
    arranges it, parsing never loads more than its arranged copy from the cache."""

    def __init__(
        self,
        model: LPCFG | ArrangedModel | str | os.PathLike[str],
        options: ParserOptions | None = None,
        *,
        jobs: int = 1,
        block: int | None = None,
    ):
        if not isinstance(model, (LPCFG, ArrangedModel, str, os.PathLike)):
            raise TypeError(
                "model must be a model file's path or a parsing model (lpcfg_cli.load_model "
                f"gives one), not {type(model).__name__}"
            )
        if options is not None and not isinstance(options, ParserOptions):
            raise TypeError(f"options must be ParserOptions, not {type(options).__name__}")
        self.options = options or ParserOptions()
        self.jobs = check_count("jobs", jobs)
        self.block = SERIAL_BLOCK if block is None else check_count("block", block)
        self.path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else None
        self._model = model if isinstance(model, LPCFG) else None
        self._arranged = model if isinstance(model, ArrangedModel) else None
        if self.path == "-":  # stdin is read once, for both
            self._model = LPCFG.load(self.path)
        self.stats = ParseStats()
        self.score_stats = ScoreStats()

    # ------------------------------------------------------------------ the model

    @property
    def model(self) -> LPCFG:
        """The trained model (loaded from the path when first asked for); a ``TypeError``
        for a parser built from an arranged model, which holds no probabilities."""
        if self._model is None:
            if self.path is None:
                raise TypeError(
                    "this Parser was built from an ArrangedModel, which parses but holds no "
                    "model to score with: build it from an LPCFG or a model file's path"
                )
            self._model = LPCFG.load(self.path)
        return self._model

    @property
    def arranged(self) -> ArrangedModel:
        """The model arranged for parsing (through the cache for a path, the model already
        loaded from it, if it was, arranged on a miss)."""
        if self._arranged is None:
            if self.path is not None:
                self._arranged = arrange(self.path, self._model)
            else:
                self._arranged = ArrangedModel.of(self._model)  # type: ignore[arg-type]
        return self._arranged

    @cached_property
    def blocks(self) -> BlockParser:
        """The block parser (``parsing.tiers``) every parse of this parser runs."""
        return BlockParser(self.arranged, self.options)

    # ------------------------------------------------------------------ parsing

    def parse(
        self,
        sentences: Iterable[Sequence[str] | Pause],
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[ParseResult]:
        """One result per sentence (a list of tokens), in input order, as their blocks
        finish; ``sentences`` is read as it is needed and may carry ``fileio.PAUSE`` (see
        ``parsing.streaming``); ``progress(n)`` is called as sentences finish. The run's
        statistics are added to ``stats``."""
        parser = self.blocks  # built (and the options checked) before the first sentence
        return stream(
            parser,
            checked_sentences(sentences),
            self.stats,
            jobs=self.jobs,
            block=self.block,
            progress=progress,
        )

    def trees(self, sentences: Iterable[Sequence[str]]) -> Iterator[Tree | None]:
        """The tree of each sentence, in order, as ``parse`` gives them: its best parse, or
        a flat fallback tree when it has none (``parse`` says why); None for the empty
        sentence."""
        return (result.tree for result in self.parse(sentences))

    def warm_up(self) -> None:
        """Load the compiled kernels now (``BlockParser.warm_up``)."""
        self.blocks.warm_up()

    # ------------------------------------------------------------------ scoring

    def score(
        self,
        sentences: Iterable[Sequence[str]],
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[SentenceScore]:
        """The probability of each sentence (a list of tokens) under the model, in order,
        as its block is scored (see the module; an empty sentence has probability 0). A
        sentence longer than ``options.max_length`` (by default the longest whose latent
        chart fits the memory budget) or whose chart this machine cannot hold is not
        scored. An ensemble gives no probability of a sentence: ``LpcfgError``."""
        model = self.model
        if model.members:
            raise LpcfgError(
                "an ensemble model (lpcfg bundle) gives no probability of a sentence: "
                "score one of the models it bundles",
                source=display_name(self.path) if self.path else None,
            )
        scorer = StringScorer(model)
        # The latent chart holds every state of every symbol of each span.
        limit = self.options.max_length or chart_length_limit(int(model.states.sum()))
        return self._score(scorer, checked_sentences(sentences), limit, progress)

    def _score(self, scorer, sentences, limit, progress) -> Iterator[SentenceScore]:
        totals = self.score_stats
        for block in blocks(sentences, size=SCORE_BLOCK, span_budget=SPAN_BUDGET):
            t0 = time.perf_counter()
            scores = _score_block(scorer, block, limit)
            totals.seconds += time.perf_counter() - t0
            for s in scores:
                totals.sentences += 1
                if s.skipped is not None:
                    totals.reasons[s.skipped] = totals.reasons.get(s.skipped, 0) + 1
                elif s.sign > 0:
                    totals.scored += 1
                    totals.words += s.words
                    totals.log_prob += s.log_prob
                else:
                    totals.nonpositive += 1
            if progress:
                progress(len(block))
            yield from scores


def _score_block(
    scorer: StringScorer, block: Sequence[Sequence[str]], max_length: int
) -> list[SentenceScore]:
    """Each sentence of ``block`` scored: one longer than ``max_length``, or whose chart
    does not fit in memory even alone (``engine.batching.split_on_memory_error``), is not
    scored and says why."""

    def run(some: Sequence[Sequence[str]]) -> list[SentenceScore]:
        log_p, sign = scorer(list(some))
        return [
            SentenceScore(float(lp), int(sg), len(words))
            for words, lp, sg in zip(some, log_p, sign, strict=True)
        ]

    def not_scored(words: Sequence[str], why: str) -> SentenceScore:
        return SentenceScore(float("nan"), 0, len(words), why)

    fits = [words for words in block if len(words) <= max_length]
    scored = iter(
        split_on_memory_error(run, fits, lambda words: not_scored(words, OUT_OF_MEMORY))
        if fits
        else []
    )
    return [
        next(scored) if len(words) <= max_length
        else not_scored(words, f"longer than {max_length} words")
        for words in block
    ]  # fmt: skip


def parse(
    model: LPCFG | ArrangedModel | str | os.PathLike[str],
    sentences: Iterable[Sequence[str]],
    options: ParserOptions | None = None,
    *,
    jobs: int = 1,
) -> Iterator[Tree | None]:
    """The tree of each sentence (a list of tokens) under ``model`` (a model, or a model
    file's path), in order, as they are parsed: ``Parser(model, options, jobs=jobs).trees``.
    A stream: sentences are read as they are needed."""
    return Parser(model, options, jobs=jobs).trees(sentences)


def score(
    model: LPCFG | str | os.PathLike[str],
    sentences: Iterable[Sequence[str]],
    options: ParserOptions | None = None,
) -> Iterator[SentenceScore]:
    """The probability of each sentence (a list of tokens) under ``model`` (a model, or a
    model file's path), in order: ``Parser(model, options).score``."""
    return Parser(model, options).score(sentences)
