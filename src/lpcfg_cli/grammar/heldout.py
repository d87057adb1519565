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

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.files.streams import DEFAULT_ENCODING
from lpcfg_cli.grammar.compiled import CompiledTreebank, compile_trees
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.treebank.binarize import BinarizeOptions, binarize
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, read_treebank
from lpcfg_cli.treebank.sentences import read_sentences
from lpcfg_cli.treebank.tree import ROOT_LABELS, Tree, iter_nodes, words

# Dev trees are held-out trees of the training treebank when most of their tokens are
# training words and nearly all their node labels training labels (held out from the same
# treebank: 77-90 % of the tokens and every label on the five treebanks of
# docs/experiments/languages.md; another language's: 0-47 % of the tokens, 0-39 % of the
# labels). Below either share they are another treebank's, e.g. a config's English dev set
# given for a Chinese treebank, and dev F1 would be near 0 for every model.
MIN_TOKEN_SHARE = 0.25
MIN_LABEL_SHARE = 0.8

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
        conventions: Conventions = PTB,
    ) -> DevTrees:
        """Read (and check: readable, well-formed, not empty) the dev treebank files.

        The gold trees are scored as ``evaluate`` scores the gold file with the same
        ``conventions``: for the Penn Treebank's, as read (EVALB's parameters drop what it
        ignores); for others, normalised by them (the words then those of the normalised
        trees: no empty elements, no lemmas)."""
        records = read_treebank(list(paths), encoding=encoding)
        raw = [_unwrap(rec.tree) for rec in records]
        cleaned = [normalize(t, conventions) for t in raw]
        normal = [t for t in cleaned if t is not None]
        if not normal:
            raise LpcfgError("no usable trees in " + ", ".join(map(str, paths)))
        if conventions == PTB:
            gold = [format_tree(t, root="TOP") for t in raw]
            sentences = [words(t) for t in raw]
        else:
            gold = [format_tree(t, root="TOP") for t in cleaned]
            sentences = [words(t) if t is not None else [] for t in cleaned]
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

    def overlap(self, grammar: Grammar, training: Sequence[Tree] | None) -> tuple[float, float]:
        """(share of the dev tokens that are training words of ``grammar``, share of the dev
        trees' node labels that label nodes of the ``training`` trees, 1.0 without them)."""
        vocabulary = set(grammar.known_words) | set(grammar.rare_words.words)
        tokens = [w for t in self.trees for w in words(t)]
        token_share = sum(w in vocabulary for w in tokens) / max(len(tokens), 1)
        if training is None:
            return token_share, 1.0
        seen = {n.label() for t in training for n in iter_nodes(t) if isinstance(n, Tree)}
        labels = [n.label() for t in self.trees for n in iter_nodes(t) if isinstance(n, Tree)]
        return token_share, sum(a in seen for a in labels) / max(len(labels), 1)

    def check_matches(self, grammar: Grammar, training: Sequence[Tree] | None) -> None:
        """``ParameterError`` if these dev trees are not of the training treebank's language
        and annotation (``overlap`` below ``MIN_TOKEN_SHARE`` or ``MIN_LABEL_SHARE``):
        selecting on them would choose on an F1 near 0."""
        tokens, labels = self.overlap(grammar, training)
        if tokens < MIN_TOKEN_SHARE or labels < MIN_LABEL_SHARE:
            raise ParameterError(
                "{dev}: {paths} do not look like held-out trees of the training treebank: "
                "{tokens:.0%} of its tokens are training words and {labels:.0%} of its node "
                "labels training labels (held-out trees of the same treebank have most of "
                "both); give the dev trees of this treebank",
                paths=", ".join(self.paths),
                tokens=tokens,
                labels=labels,
            )

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
