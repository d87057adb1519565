"""From treebank files to the arrays every learner trains on.

PTB text -> normalised trees -> binarized trees -> indexed grammar + compiled treebank.
The binarization options and the data summary travel with the model in its metadata, so
parsing can invert the binarization without being told again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lpcfg_cli.binarize import BinarizeOptions, binarize
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.grammar import CompiledTreebank, Grammar, build_grammar, compile_trees
from lpcfg_cli.parallel import parse_sentences
from lpcfg_cli.parser import PRUNE
from lpcfg_cli.tree import Tree
from lpcfg_cli.trees import ROOT_LABELS, format_tree, leaves, normalize, read_treebank, words


@dataclass
class TrainingData:
    """A grammar, its compiled training treebank and a summary for the model's metadata."""

    grammar: Grammar
    bank: CompiledTreebank
    summary: dict[str, Any]
    originals: list[Tree] | None = None  # normalised, unbinarized; tree t of ``bank``


def binarized_trees(
    paths: Sequence[str],
    options: BinarizeOptions,
    *,
    skip_bad: bool = False,
    on_bad: Callable[[LpcfgError], None] | None = None,
) -> tuple[list[Tree], list[Tree]]:
    """(normalised trees, binarized trees) of the treebank files; empty trees are dropped."""
    records = read_treebank(list(paths), skip_bad=skip_bad, on_bad=on_bad)
    normal, binary = [], []
    for rec in records:
        tree = normalize(rec.tree)
        if tree is None:
            continue
        normal.append(tree)
        binary.append(binarize(tree, options))
    if not binary:
        raise LpcfgError("no usable trees in " + ", ".join(map(str, paths)))
    return normal, binary


def prepare(
    paths: Sequence[str],
    options: BinarizeOptions,
    *,
    rare: int = 1,
    skip_bad: bool = False,
    on_bad: Callable[[LpcfgError], None] | None = None,
) -> TrainingData:
    """Read, normalise, binarize and index the training treebank."""
    t0 = time.perf_counter()
    normal, trees = binarized_trees(paths, options, skip_bad=skip_bad, on_bad=on_bad)
    grammar, bank = build_grammar(trees, rare=rare, binarization=options.to_dict())
    summary = {
        "files": [str(p) for p in paths],
        "trees": len(trees),
        "words": int(sum(len(leaves(t)) for t in trees)),
        "symbols": grammar.n_symbols,
        "binary_rules": grammar.n_binary,
        "lexical_rules": grammar.n_lexical,
        "vocabulary": len(grammar.words),
        "rare_threshold": rare,
        "prepare_seconds": round(time.perf_counter() - t0, 3),
    }
    return TrainingData(grammar, bank, summary, normal)


def compile_dev(
    grammar: Grammar, paths: Sequence[str], options: BinarizeOptions
) -> tuple[list[Tree], CompiledTreebank, int]:
    """Dev trees: (normalised trees, compiled treebank, trees the grammar cannot derive)."""
    normal, trees = binarized_trees(paths, options)
    bank, dropped = compile_trees(grammar, trees)
    return normal, bank, dropped


def dev_scorer(
    paths: Sequence[str], *, prune: float = PRUNE, max_length: int | None = None, jobs: int = 1
) -> Callable[[Any], float]:
    """A function giving a model's strict EVALB F1 on the dev trees in ``paths``.

    The dev sentences are parsed with the real parser (``jobs`` worker processes forked with
    the model) and scored with the real evaluator (skipped or failed sentences count as
    wrong), as ``parse`` + ``evaluate`` would.
    """
    records = read_treebank(list(paths))
    gold, sentences = [], []
    for rec in records:
        tree = rec.tree
        if tree.label() in ROOT_LABELS and len(tree) == 1 and isinstance(tree[0], Tree):
            tree = tree[0]
        gold.append(format_tree(tree, root="TOP"))
        sentences.append(words(tree))

    def score(model: Any) -> float:
        results = parse_sentences(model, sentences, prune=prune, jobs=jobs,
                                  max_length=max_length)[0]  # fmt: skip
        test = [format_tree(r.tree, root="TOP") if r.tree is not None else "()" for r in results]
        return evaluate_lines(gold, test).all.figures()["strict_fmeasure"]

    return score
