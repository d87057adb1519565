"""An lpcfg model as an nltk parser: ``NltkParser`` implements ``nltk.parse.api.ParserI``
(``grammar``, ``parse``, ``parse_sents``, ``parse_one``, ``parse_all``) as nltk's
probabilistic parsers do (``ViterbiParser``, the ``pchart`` parsers), so that code written
for them uses an lpcfg model unchanged: trees are ``nltk.tree.ProbabilisticTree`` carrying
the model's probability of the tree (``parsing.tree_probability``), ``grammar()`` is an
``nltk.grammar.PCFG``, and a sentence is a list of tokens (a string is a ``TypeError``).
nltk is imported with this module only."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from nltk.parse.api import ParserI
from nltk.tree import ProbabilisticTree

from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import Parser
from lpcfg_cli.parsing.parser_options import ParserOptions
from lpcfg_cli.parsing.tree_probability import TreeProbabilities, treebank_pcfg
from lpcfg_cli.treebank.nltk_trees import to_nltk
from lpcfg_cli.treebank.sentences import check_sentence
from lpcfg_cli.treebank.tree import Tree


class NltkParser(ParserI):
    """Parses token lists with ``model`` (a loaded ``LPCFG`` or a model file's path, whose
    arranged copy comes from the cache as for ``lpcfg parse``; ``options`` and ``jobs`` as
    for ``Parser``, which it runs).

    Each sentence gets one tree, its best parse (or the flat fallback tree the command line
    writes), as an ``nltk.tree.ProbabilisticTree``; the empty sentence gets none. The tree's
    ``prob()`` is the probability the model gives it (``logprob()``: its base-2 log, as in
    nltk, exact where ``prob()`` underflows): the joint probability of the tree and its
    words, summed over every latent assignment of its binarized nodes, the likelihood the
    training code gives a held-out tree (``parsing.tree_probability``; words as the model's
    training vocabulary reads them, rare and unknown words as their signatures). Only the
    root carries it: the subtrees are plain ``nltk.Tree`` (a latent model gives a subtree
    no probability of its own; its inside score depends on its parent's latent state).

    ``prob()`` is 0.0 for a tree the model does not derive, which is no error but says
    so: the flat fallback tree of a sentence the grammar cannot parse (or one too long or
    too large for memory), a glued tree, a tree the max-marginal and max-bracket decoders
    assembled from the best brackets with a rule the grammar lacks (they maximise the
    expected correct brackets, not the tree's probability; ``ParserOptions(decode=
    "max-rule-product")`` or ``"variational"`` build trees of the grammar's rules), and a
    tree that tags an unknown word with a tag its signature was never seen with (the
    parser backs an unknown word off to every signature; the model reads it as its own).
    A spectral (tensor-form) model's value of a tree may be negative or above 1 (its
    parameters are estimated, and defined up to linear maps): it is clipped to [0, 1], so
    a negative value gives 0.0. An ensemble (``lpcfg bundle``, a product of grammars)
    gives the geometric mean of its models' probabilities so clipped (0.0 if any model
    gives 0), which is no distribution over trees: the models' own values are
    ``parsing.tree_probability.TreeProbabilities(parser.model).scores``. The
    probabilities are computed in double precision as each tree is returned (the model's
    parameters are arranged once more, in double precision, when the first tree comes),
    so ``parse_sents`` still streams.
    """

    def __init__(
        self,
        model: LPCFG | str | os.PathLike[str],
        options: ParserOptions | None = None,
        jobs: int = 1,
    ):
        if not isinstance(model, (LPCFG, str, os.PathLike)):  # an ArrangedModel has no PCFG
            raise TypeError(
                "model must be an LPCFG or a model file's path (lpcfg_cli.load_model gives "
                f"one), not {type(model).__name__}: the trees' probabilities and "
                "grammar() read the model's parameters"
            )
        self.parser = Parser(model, options or ParserOptions(), jobs=jobs)
        self.model = self.parser.model
        self.probabilities = TreeProbabilities(self.model)
        self._grammar: Any = None

    def grammar(self) -> Any:
        """The model's treebank PCFG as an ``nltk.grammar.PCFG`` (built when first asked
        for, then kept): the grammar the model's latent grammar refines and the parser's
        coarse pass runs, not the latent grammar itself (whose split rules are in
        ``.model``). Its symbols are the model's binarized ones (collapsed unary chains
        ``S+VP``, intermediate symbols ``@NP``...), its terminals the model's vocabulary
        (known words and unknown-word signatures: map an unknown word to its signature
        before parsing with it), and its start symbol ``TOP`` (primed if the treebank has a
        ``TOP``) rewrites to each root symbol with the model's root probability; each
        left-hand side's probabilities sum to 1 (``tree_probability.treebank_pcfg``).
        ``nltk.ViterbiParser(parser.grammar())`` parses with it; for a treebank PCFG model
        (``method="pcfg"``) a tree's probability under it is the one this parser gives
        the tree (up to the single precision a compact model file stores the model's
        parameters in)."""
        if self._grammar is None:
            self._grammar = treebank_pcfg(self.model)
        return self._grammar

    def parse(self, sent: Sequence[str], *args: Any, **kwargs: Any) -> Iterator[Any]:
        """An iterator over the parses of ``sent``, a list of tokens (one: the best; none
        for the empty sentence). A string, or a token that is not a non-empty string
        without whitespace, is a ``TypeError`` or ``ValueError`` (as nltk's parsers do)."""
        _no_options("parse", args, kwargs)
        tokens = check_sentence(sent)
        (trees,) = [list(parses) for parses in self.parse_sents([tokens])]
        return iter(trees)

    def parse_sents(
        self, sents: Iterable[Sequence[str]], *args: Any, **kwargs: Any
    ) -> Iterator[Iterator[Any]]:
        """For each sentence (a list of tokens), an iterator over its parses (as
        ``parse``), parsed in blocks as a stream: sentences are read as they are needed
        and each tree comes as soon as its block is parsed. A string for ``sents`` or for
        a sentence is a ``TypeError`` when it is reached."""
        _no_options("parse_sents", args, kwargs)
        for tree in self.parser.trees(sents):
            yield iter([] if tree is None else [self._probabilistic(tree)])

    def _probabilistic(self, tree: Tree) -> Any:
        """``tree`` as an nltk tree whose root is a ``ProbabilisticTree`` with the model's
        probability of it (see the class)."""
        log_p = float(self.probabilities.log_probabilities([tree])[0])
        plain = to_nltk(tree)
        return ProbabilisticTree(plain.label(), list(plain), logprob=log_p / math.log(2))


def _no_options(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``TypeError`` for arguments beyond the sentences: the parser's options are given
    once, to ``NltkParser``."""
    if args or kwargs:
        given = ", ".join([*(repr(a) for a in args), *kwargs])
        raise TypeError(
            f"NltkParser.{method} takes the sentences only, not {given}: give ParserOptions "
            "to NltkParser"
        )
