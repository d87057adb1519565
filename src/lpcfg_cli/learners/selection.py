"""Model selection on dev trees: the one place where learners choose among candidates.

- ``DevSet``: dev trees read once, scored as ``parse`` + ``evaluate`` would score them
  (strict EVALB F1 with the real parser and evaluator; failed sentences count as wrong),
  and compiled against a training grammar for dev log-likelihoods.
- ``DevText``: dev sentences without trees (``--input text``): EM from strings selects its
  iteration by their log-likelihood.
- ``Patience``: the best candidate so far of a sequence (EM iterations, split-merge cycles),
  and when to stop after ``patience`` candidates without improvement.
- ``best_of``: the best of a finite set of candidates (a spectral state grid, ensembles).
- ``search_states``: per-nonterminal state counts by coordinate ascent on dev F1 (Narayan &
  Cohen 2016), for learners that can build a model for any state-count vector.

Every learner that selects uses these, so ``--states 8,16 --dev`` or EM with early stopping
is three lines of Python (see README) and not a loop in the command line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.files.streams import DEFAULT_ENCODING
from lpcfg_cli.grammar.indexed import CompiledTreebank, Grammar, compile_trees
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import ParserOptions, decoder
from lpcfg_cli.parsing.streaming import parse_sentences
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize
from lpcfg_cli.treebank.ptb import ROOT_LABELS, format_tree, normalize, read_treebank, words
from lpcfg_cli.treebank.sentences import read_sentences
from lpcfg_cli.treebank.tree import Tree


@dataclass
class DevSet:
    """Dev trees for model selection: gold lines, sentences, and the normalised trees."""

    paths: tuple[str, ...]
    gold: list[str]
    sentences: list[list[str]]
    trees: list[Tree]  # normalised (unbinarized)
    parser: ParserOptions = field(default_factory=ParserOptions)
    jobs: int = 1  # worker processes parsing the dev sentences
    method: str | None = None  # the learner scoring its models: ``--decode auto`` follows it

    @classmethod
    def read(
        cls,
        paths: Sequence[str],
        *,
        parser: ParserOptions | None = None,
        jobs: int = 1,
        encoding: str = DEFAULT_ENCODING,
    ) -> DevSet:
        """Read (and check: readable, well-formed, not empty) the dev treebank files.

        The gold trees are scored as read (EVALB's parameters drop what it ignores), exactly
        as ``evaluate`` scores the gold file."""
        raw = [_unwrap(rec.tree) for rec in read_treebank(list(paths), encoding=encoding)]
        normal = [t for t in map(normalize, raw) if t is not None]
        if not normal:
            raise LpcfgError("no usable trees in " + ", ".join(map(str, paths)))
        gold = [format_tree(t, root="TOP") for t in raw]
        sentences = [words(t) for t in raw]
        return cls(tuple(paths), gold, sentences, normal, parser or ParserOptions(), jobs)

    def for_method(self, method: str) -> DevSet:
        """These dev trees scored for a learner of ``method`` (the first one to ask: a
        chain's steps score with the decoder of the chain's models, pivot+em's EM with
        pivot+em's)."""
        return self if self.method is not None else replace(self, method=method)

    def f1(self, model: LPCFG) -> float:
        """Strict EVALB F1 of ``model``'s parses of the dev sentences, decoded as the
        finished model will be (``parser.decoder``)."""
        options = replace(self.parser, decode=decoder(self.parser, model, self.method))
        results = parse_sentences(model, self.sentences, options, jobs=self.jobs)[0]
        test = [format_tree(r.tree, root="TOP") if r.tree is not None else "()" for r in results]
        return evaluate_lines(self.gold, test).all.figures()["strict_fmeasure"]

    def compiled(self, grammar: Grammar) -> tuple[CompiledTreebank, int]:
        """The dev trees binarized as ``grammar``'s training trees were and compiled against
        it: ``(treebank, trees left out because they use rules it lacks)``."""
        options = BinarizeOptions(**grammar.binarization)
        return compile_trees(grammar, [binarize(t, options) for t in self.trees])


@dataclass
class DevText:
    """Dev sentences without trees: they give a dev log-likelihood, not F1."""

    paths: tuple[str, ...]
    sentences: list[list[str]]

    @classmethod
    def read(cls, paths: Sequence[str], encoding: str = DEFAULT_ENCODING) -> DevText:
        """Read (and check: readable text, not empty) the dev text files, one sentence per
        line; empty lines are skipped."""
        sentences = [s for s in read_sentences(list(paths), encoding) if s]
        if not sentences:
            raise LpcfgError("no sentences in " + ", ".join(map(str, paths)))
        return cls(tuple(paths), sentences)


def _unwrap(tree: Tree) -> Tree:
    if tree.label() in ROOT_LABELS and len(tree) == 1 and isinstance(tree[0], Tree):
        return tree[0]
    return tree


def best_of(
    candidates: Iterable[tuple[dict[str, Any], LPCFG]],
    dev: DevSet | None,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[LPCFG, list[dict[str, Any]]]:
    """The candidate model with the best dev F1 (the first one without ``dev``).

    ``candidates`` yields ``(record, model)``, built lazily so that only one model of a grid
    is in memory at a time besides the best; each record gets its ``dev_f1`` and is passed
    to ``report``. Returns the chosen model and every record.
    """
    best: LPCFG | None = None
    best_f1 = float("-inf")
    history: list[dict[str, Any]] = []
    for record, model in candidates:
        if dev is not None:
            t0 = time.perf_counter()
            record["dev_f1"] = round(dev.f1(model), 2)
            record["dev_seconds"] = round(time.perf_counter() - t0, 3)
        history.append(record)
        if report:
            report(record)
        if record.get("dev_f1", 0.0) > best_f1:  # ties keep the earlier candidate
            best, best_f1 = model, record.get("dev_f1", 0.0)
        if dev is None:
            break
    if best is None:
        raise ValueError("best_of needs at least one candidate")
    return best, history


def search_states(
    build: Callable[[np.ndarray], LPCFG],
    start: np.ndarray,
    symbols: Sequence[int],
    values: Sequence[Sequence[int]],
    dev: DevSet,
    passes: int = 1,
    report: Callable[[dict[str, Any]], None] | None = None,
    scored: tuple[LPCFG, float] | None = None,
) -> tuple[LPCFG, np.ndarray, list[dict[str, Any]]]:
    """Per-nonterminal state counts chosen on dev F1 by coordinate ascent, in the spirit of
    Narayan & Cohen (2016, "Optimizing spectral learning of latent-variable PCFGs"): from
    ``start``, for each symbol of ``symbols`` in turn (most frequent first is the caller's
    order) every count of ``values[i]`` is tried with the others fixed, and the best dev F1
    is kept (a tie keeps the current count); ``passes`` rounds, stopping early after a round
    that changed nothing. ``build(states)`` makes the model of a state-count vector. A vector
    is scored once, however often the search reaches it; ``scored``: the start's model and
    dev F1 when the caller has them (a grid's best), so it is not parsed again.

    Returns the best model, its counts and one record per model scored (``symbol``: the
    index tried, ``None`` for the start; ``states``: its count; ``dev_f1``; ``kept``)."""
    if len(symbols) != len(values):
        raise ValueError("one list of candidate counts per symbol")
    states = np.asarray(start, dtype=np.int64).copy()
    seen: dict[tuple[int, ...], float] = {}
    history: list[dict[str, Any]] = []

    def score(vector: np.ndarray, symbol: int | None) -> tuple[float, LPCFG]:
        t0 = time.perf_counter()
        model = build(vector)
        f1 = round(dev.f1(model), 2)
        seen[tuple(vector.tolist())] = f1
        record = {
            "symbol": symbol,
            "states": int(vector[symbol]) if symbol is not None else None,
            "total_states": int(vector.sum()),
            "dev_f1": f1,
            "seconds": round(time.perf_counter() - t0, 3),
        }
        history.append(record)
        if report:
            report(record)
        return f1, model

    if scored is None:
        best_f1, best = score(states, None)
    else:
        best, best_f1 = scored
        seen[tuple(states.tolist())] = best_f1
        history.append(
            {"symbol": None, "states": None, "total_states": int(states.sum()), "dev_f1": best_f1}
        )
    kept = len(history) - 1  # the record of the best so far
    for _ in range(passes):
        changed = False
        for a, options in zip(symbols, values, strict=True):
            for v in options:
                trial = states.copy()
                trial[a] = v
                if tuple(trial.tolist()) in seen:
                    continue
                f1, model = score(trial, a)
                if f1 > best_f1:
                    best_f1, best, states, changed = f1, model, trial, True
                    kept = len(history) - 1
                del model
        if not changed:
            break
    for i, record in enumerate(history):
        record["kept"] = i == kept
    return best, states, history
