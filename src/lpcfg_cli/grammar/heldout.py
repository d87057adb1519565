"""Held-out data for model selection: dev trees and dev sentences.

- ``DevTrees``: dev trees read once, as ``evaluate`` reads a gold file; their sentences and
  gold lines for scoring parses, their normalised trees for compiling against a training
  grammar (dev log-likelihoods). How a model is scored on them (parse, then strict EVALB F1)
  is not this stage's business: a ``scorer`` is handed in (``parsing.dev_f1.DevF1``, or any
  callable), so that learners select on dev F1 without importing the parser.
- ``DevText``: dev sentences without trees (``--input text``, language models): they give a
  dev log-likelihood, not F1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import DEFAULT_ENCODING
from lpcfg_cli.grammar.compiled import CompiledTreebank, compile_trees
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, read_treebank
from lpcfg_cli.treebank.sentences import read_sentences
from lpcfg_cli.treebank.tree import ROOT_LABELS, Tree, words

# A scorer: (model, the dev trees) -> strict F1 of the model's parses of them, decoded as
# ``DevTrees.decode`` says (None: as the model's file says).
Scorer = Callable[[Any, "DevTrees"], float]


@dataclass(frozen=True)
class DevTrees:
    """Dev trees for model selection: gold lines, sentences, the normalised trees, and the
    ``scorer`` that gives a model's dev F1 (``f1``)."""

    paths: tuple[str, ...]
    gold: list[str]
    sentences: list[list[str]]
    trees: list[Tree]  # normalised (unbinarized)
    scorer: Scorer | None = None
    # The decoder the models being selected will be parsed with: the first learner of a fit
    # to ask sets it (``decoding``), so a chain's steps score as the chain's models parse.
    decode: str | None = None

    @classmethod
    def read(
        cls,
        paths: Sequence[str],
        *,
        scorer: Scorer | None = None,
        encoding: str = DEFAULT_ENCODING,
    ) -> DevTrees:
        """Read (and check: readable, well-formed, not empty) the dev treebank files.

        The gold trees are scored as read (EVALB's parameters drop what it ignores), exactly
        as ``evaluate`` scores the gold file."""
        raw = [_unwrap(rec.tree) for rec in read_treebank(list(paths), encoding=encoding)]
        normal = [t for t in map(normalize, raw) if t is not None]
        if not normal:
            raise LpcfgError("no usable trees in " + ", ".join(map(str, paths)))
        gold = [format_tree(t, root="TOP") for t in raw]
        sentences = [words(t) for t in raw]
        return cls(tuple(paths), gold, sentences, normal, scorer)

    def decoding(self, decode: str | None) -> DevTrees:
        """These dev trees scored with ``decode`` unless an earlier learner of the fit set
        the decoder (the first to ask wins)."""
        return self if self.decode is not None or decode is None else replace(self, decode=decode)

    @property
    def scores_f1(self) -> bool:
        """Whether a scorer was given (without one only log-likelihoods can select)."""
        return self.scorer is not None

    def f1(self, model: Any) -> float:
        """Strict F1 of ``model``'s parses of the dev sentences (``scorer``)."""
        if self.scorer is None:
            raise LpcfgError("dev trees without a scorer give no F1 (see parsing.dev_f1)")
        return self.scorer(model, self)

    def compiled(self, grammar: Grammar) -> tuple[CompiledTreebank, int]:
        """The dev trees binarized as ``grammar``'s training trees were and compiled against
        it: ``(treebank, trees left out because they use rules it lacks)``."""
        options = BinarizeOptions(**grammar.binarization)
        return compile_trees(grammar, [binarize(t, options) for t in self.trees])


@dataclass(frozen=True)
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
