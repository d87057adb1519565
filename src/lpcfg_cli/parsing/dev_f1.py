"""Scoring models on dev trees by parsing them: the scorer learners select with.

``DevF1`` parses a ``grammar.heldout.DevTrees``' sentences with the real parser and scores
them with the real evaluator (strict EVALB F1: a failed sentence counts as wrong), decoded
as the finished model will be. It is handed to the dev trees (``read_dev_trees``), so that
learners call ``dev.f1(model)`` without importing this stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.files.streams import DEFAULT_ENCODING
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.parsing.parser import Parser
from lpcfg_cli.parsing.parser_options import ParserOptions, resolve_decoder
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.ptb import format_tree


@dataclass(frozen=True)
class DevF1:
    """Strict EVALB F1 of a model's parses of dev trees, with ``options`` (the decoder
    resolved for the model, or as the dev trees say while a learner fits it) in ``jobs``
    worker processes."""

    options: ParserOptions = field(default_factory=ParserOptions)
    jobs: int = 1

    def __call__(self, model: Any, dev: DevTrees) -> float:
        options = replace(
            self.options, decode=resolve_decoder(self.options, model.decoders(), dev.decode)
        )
        trees = Parser(model, options, jobs=self.jobs).trees(dev.sentences)
        test = [format_tree(t, root="TOP") if t is not None else "()" for t in trees]
        return evaluate_lines(dev.gold, test).all.figures()["strict_fmeasure"]


def read_dev_trees(
    paths: Sequence[str],
    *,
    options: ParserOptions | None = None,
    jobs: int = 1,
    encoding: str = DEFAULT_ENCODING,
    conventions: Conventions = PTB,
) -> DevTrees:
    """Dev trees scored by parsing them (``DevF1``): what a learner selecting on dev F1
    takes (read with the training treebank's ``conventions``)."""
    scorer = DevF1(options or ParserOptions(), jobs)
    return DevTrees.read(paths, scorer=scorer, encoding=encoding, conventions=conventions)
