"""From treebank files (or plain sentences) to the arrays every learner trains on.

PTB text -> normalised trees -> binarized trees -> indexed grammar + compiled treebank.
The binarization options and the data summary travel with the model in its metadata, so
parsing can invert the binarization without being told again.

Text (one sentence per line, tokens separated by spaces: ``prepare_text``, ``text_data``)
gives the single-symbol grammar (``grammar.indexed.single_symbol_grammar``) and the distinct
sentences as word-id arrays with their counts, for EM from strings; bracketed sentences
(``bracketed_data``) give the same grammar with a compiled treebank, for EM on the observed
skeletal trees of that very model class.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import DEFAULT_ENCODING
from lpcfg_cli.grammar.compiled import CompiledTreebank, build_grammar, compile_brackets
from lpcfg_cli.grammar.indexed import Grammar, single_symbol_grammar
from lpcfg_cli.grammar.lexicon import Lexicon, Signatures, is_signature, known_spelling
from lpcfg_cli.hyperparams import Checked, hyper
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import read_treebank
from lpcfg_cli.treebank.sentences import read_sentences
from lpcfg_cli.treebank.tree import Tree, leaves


@dataclass(frozen=True)
class DataOptions(Checked):
    """How training trees become a grammar (besides their binarization)."""

    rare: int = hyper(
        1,
        "Words seen at most this often are trained as unknown-word signatures, and known "
        "again when parsing (with --input text the default is 0: every word is kept).",
        min=0,
    )


@dataclass
class Sentences:
    """Distinct sentences as arrays of word ids, and how often each was seen."""

    ids: list[np.ndarray]
    counts: np.ndarray  # (S,) float: the weight of each sentence in EM

    @property
    def total(self) -> float:
        return float(self.counts.sum())


@dataclass
class TrainingData:
    """A grammar, its compiled training treebank (or, from text, its distinct sentences)
    and a summary for the model's metadata."""

    grammar: Grammar
    bank: CompiledTreebank | None
    summary: dict[str, Any]
    originals: list[Tree] | None = None  # normalised, unbinarized; tree t of ``bank``
    text: Sentences | None = None  # training sentences without trees (``bank`` is None)
    # (trees,) how often tree t of ``bank`` was seen (merged identical trees); None: once
    weights: np.ndarray | None = None

    def meta(self) -> dict[str, Any]:
        """What a model trained on this data records of it."""
        return {"training": self.summary}


def _read_binarized(
    paths: Sequence[str],
    options: BinarizeOptions,
    skip_bad: bool,
    on_bad: Callable[[LpcfgError], None] | None,
    encoding: str,
    conventions: Conventions,
) -> tuple[list[Tree], list[Tree], int]:
    """(normalised trees, binarized trees, trees dropped: no words once normalised) of the
    treebank files."""
    if not paths:
        raise LpcfgError("no treebank files given")
    records = read_treebank(list(paths), skip_bad=skip_bad, on_bad=on_bad, encoding=encoding)
    trees = [rec.tree for rec in records]
    normal, binary, dropped = _normal_and_binary(trees, options, conventions)
    if not binary:
        why = f" (all {dropped} have no words once empty elements are removed)" if dropped else ""
        raise LpcfgError("no usable trees in " + ", ".join(map(str, paths)) + why)
    return normal, binary, dropped


def _normal_and_binary(
    trees: Sequence[Tree], options: BinarizeOptions, conventions: Conventions
) -> tuple[list, list, int]:
    """(normalised trees, binarized trees, trees dropped: no words once normalised)."""
    normal, binary = [], []
    dropped = 0
    for raw in trees:
        tree = normalize(raw, conventions)
        if tree is None:
            dropped += 1
            continue
        normal.append(tree)
        binary.append(binarize(tree, options))
    return normal, binary, dropped


def prepare(
    paths: Sequence[str],
    options: BinarizeOptions,
    *,
    rare: int = DataOptions.rare,
    skip_bad: bool = False,
    on_bad: Callable[[LpcfgError], None] | None = None,
    encoding: str = DEFAULT_ENCODING,
    conventions: Conventions = PTB,
) -> TrainingData:
    """Read, normalise (by the treebank's ``conventions``), binarize and index the training
    treebank files (a folder stands for its treebank files: ``ptb.read_treebank``)."""
    t0 = time.perf_counter()
    normal, trees, dropped = _read_binarized(
        paths, options, skip_bad, on_bad, encoding, conventions
    )
    files = [str(p) for p in paths]
    return _indexed(normal, trees, options, rare, files, t0, dropped, conventions)


def prepare_trees(
    trees: Sequence[Tree],
    options: BinarizeOptions,
    *,
    rare: int = DataOptions.rare,
    conventions: Conventions = PTB,
) -> TrainingData:
    """``prepare`` for trees already read (``Tree``s, e.g. converted with
    ``treebank.nltk_trees.from_nltk``): normalised, binarized and indexed."""
    t0 = time.perf_counter()
    normal, binary, dropped = _normal_and_binary(trees, options, conventions)
    if not binary:
        raise LpcfgError("no usable trees (every tree is empty once normalised)")
    return _indexed(normal, binary, options, rare, [], t0, dropped, conventions)


def _indexed(
    normal: list[Tree],
    trees: list[Tree],
    options: BinarizeOptions,
    rare: int,
    files: list[str],
    t0: float,
    dropped: int = 0,
    conventions: Conventions = PTB,
) -> TrainingData:
    grammar, bank = build_grammar(trees, rare=rare, binarization=options.to_dict())
    summary = {
        "input": "trees",
        "files": files,
        "trees": len(trees),
        "dropped_trees": dropped,  # no words once empty elements were removed
        "words": int(sum(len(leaves(t)) for t in trees)),
        "symbols": grammar.n_symbols,
        "binary_rules": grammar.n_binary,
        "lexical_rules": grammar.n_lexical,
        "vocabulary": len(grammar.words),
        "rare_threshold": rare,
        "conventions": conventions.to_dict(),  # what parse reads sentences with
        "prepare_seconds": round(time.perf_counter() - t0, 3),
    }
    return TrainingData(grammar, bank, summary, normal)


def text_data(
    sentences: Iterable[Sequence[str]],
    *,
    rare: int = 0,
    words: Sequence[str] | None = None,
    summary: dict[str, Any] | None = None,
) -> TrainingData:
    """The single-symbol grammar of ``sentences`` and their distinct word-id sequences with
    their counts (empty sentences are skipped: no tree yields them).

    Words are kept as they are spelt and tokens counted under the entry the parser looks
    them up as (``Lexicon.training_token``: a bracket's other spelling stands for it when
    only that one is known). Words seen at most ``rare`` times become word-shape signatures
    (``lexicon``; with one symbol there are no tags to learn suffixes from, so shapes only).
    ``words`` fixes the vocabulary and its order (every token must be in it under one of its
    spellings; no signatures, ``rare`` is not used), so that models of different samples
    share word ids.
    """
    t0 = time.perf_counter()
    seen: Counter[tuple[str, ...]] = Counter()
    empty = 0
    for sentence in sentences:
        if sentence:
            seen[tuple(sentence)] += 1
        else:
            empty += 1
    if not seen:
        raise LpcfgError("no sentences to train on (every line is empty)")
    tokens: Counter[str] = Counter()
    for sentence, count in seen.items():
        for w in sentence:
            tokens[w] += count
    if words is not None:
        vocab = _vocabulary(words)
        missing = sorted(w for w in tokens if known_spelling(w, vocab) is None)
        if missing:
            raise LpcfgError(f"word {missing[0]!r} is not in the given vocabulary")
        known, scheme = set(vocab), Signatures()
    else:
        vocab = {}
        known = {w for w, c in tokens.items() if c > rare and not is_signature(w)}
        scheme = Signatures()
    distinct: Counter[tuple[int, ...]] = Counter()
    for sentence, count in seen.items():
        entries = (Lexicon.training_token(w, t, known, scheme) for t, w in enumerate(sentence))
        distinct[tuple(vocab.setdefault(e, len(vocab)) for e in entries)] += count
    counts = np.zeros(len(vocab), dtype=np.int64)
    for ids, count in distinct.items():
        np.add.at(counts, list(ids), count)
    grammar = single_symbol_grammar(list(vocab), counts.tolist())
    grammar.rare = rare
    text = Sentences(
        [np.asarray(ids, dtype=np.int64) for ids in distinct],
        np.asarray(list(distinct.values()), dtype=np.float64),
    )
    summary = {
        "input": "text",
        **(summary or {}),
        "sentences": int(text.total),
        "distinct_sentences": len(text.ids),
        "empty_lines": empty,
        "words": int(counts.sum()),
        "vocabulary": len(vocab),
        "rare_threshold": rare,
        "prepare_seconds": round(time.perf_counter() - t0, 3),
    }
    return TrainingData(grammar, None, summary, text=text)


def _vocabulary(words: Sequence[str]) -> dict[str, int]:
    """The id of each of ``words`` (a fixed vocabulary: every entry must be new)."""
    vocab: dict[str, int] = {}
    for w in words:
        if w in vocab:
            raise LpcfgError(f"word {w!r} is twice in the given vocabulary")
        vocab[w] = len(vocab)
    return vocab


def prepare_text(
    paths: Sequence[str], *, rare: int = 0, encoding: str = DEFAULT_ENCODING
) -> TrainingData:
    """``text_data`` of text files (one sentence per line, tokens separated by spaces)."""
    return text_data(
        read_sentences(paths, encoding), rare=rare, summary={"files": [str(p) for p in paths]}
    )


def bracketed_data(
    sentences: Sequence[Sequence[str]],
    brackets: Sequence[Sequence[tuple[int, int, int]]],
    words: Sequence[str] | None = None,
    *,
    merge: bool = False,
) -> TrainingData:
    """Bracketed sentences as single-symbol training data: the grammar of ``text_data``
    and a compiled treebank whose every node is ``X`` (``grammar.compiled.compile_brackets``:
    ``brackets[s]`` lists the ``(start, split, end)`` binary nodes of sentence ``s``).

    EM on it is EM on observed skeletal trees ("supervised EM") for the very model class
    EM from strings learns. (A treebank file whose every label is X, read by
    ``build_grammar``, would instead give X two symbols, a phrase and a pre-terminal
    ``X%t``: a symbol of the treebank's normal form never rewrites both to words and to
    symbols.) ``words`` fixes the vocabulary and its order (default: order of appearance).
    With ``merge`` identical samples (same words, same set of brackets) are compiled once,
    in order of first appearance, and ``TrainingData.weights`` counts them: a sample of
    short sentences repeats many trees, and EM then runs each once (learners that do not
    take weights refuse such data).
    """
    if len(sentences) != len(brackets):
        raise LpcfgError(f"{len(sentences)} sentences but {len(brackets)} bracketings")
    if words is None:
        words = list(dict.fromkeys(w for s in sentences for w in s))
    vocab = _vocabulary(words)
    missing = sorted({w for s in sentences for w in s if known_spelling(w, vocab) is None})
    if missing:
        raise LpcfgError(f"word {missing[0]!r} is not in the given vocabulary")
    ids = [[vocab[known_spelling(w, vocab)] for w in s] for s in sentences]
    counts = np.bincount(
        np.fromiter((i for s in ids for i in s), dtype=np.int64), minlength=len(vocab)
    )
    grammar = single_symbol_grammar(list(vocab), counts.tolist())
    grammar.rare = 0
    weights = None
    if merge:
        seen: Counter[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]] = Counter()
        for x, nodes in zip(ids, brackets, strict=True):
            seen[tuple(x), tuple(sorted(tuple(int(v) for v in node) for node in nodes))] += 1
        try:
            bank = compile_brackets(grammar, [x for x, _ in seen], [b for _, b in seen])
        except LpcfgError:
            compile_brackets(grammar, ids, brackets)  # the error, numbered as given
            raise
        weights = np.fromiter(seen.values(), dtype=np.float64, count=len(seen))
    else:
        bank = compile_brackets(grammar, ids, brackets)
    summary = {
        "input": "brackets",
        "trees": len(ids),
        "words": int(counts.sum()),
        "vocabulary": len(vocab),
    }
    if merge:
        summary["distinct_trees"] = bank.n_trees
    return TrainingData(grammar, bank, summary, weights=weights)
