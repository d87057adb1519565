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
from lpcfg_cli.grammar import CompiledTreebank, Grammar, build_grammar
from lpcfg_cli.hyperparams import check, hyper
from lpcfg_cli.tree import Tree
from lpcfg_cli.trees import leaves, normalize, read_treebank


@dataclass(frozen=True)
class DataOptions:
    """How training trees become a grammar (besides their binarization)."""

    rare: int = hyper(1, "Words seen at most this often become unknown-word signatures.", min=0)

    def __post_init__(self) -> None:
        check(self)


@dataclass
class TrainingData:
    """A grammar, its compiled training treebank and a summary for the model's metadata."""

    grammar: Grammar
    bank: CompiledTreebank
    summary: dict[str, Any]
    originals: list[Tree] | None = None  # normalised, unbinarized; tree t of ``bank``

    def meta(self) -> dict[str, Any]:
        """What a model trained on this data records of it."""
        return {"training": self.summary}


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
    rare: int = DataOptions.rare,
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
