"""The indexed grammar: the symbols, rules and vocabulary of a binarized treebank as arrays.

Binarized trees (strict normal form: every node is a pre-terminal over one word or has two
nonterminal children) are turned once into integer arrays (``grammar.compiled``); every
learner and the parser work on these arrays, never on ``Tree`` objects again.

- ``Grammar``: symbol table, binary rules ``a -> b c`` (``binary[r] = (a, b, c)``), lexical
  rules ``a -> x`` (``lexical[l] = (a, word)``), the vocabulary (known words and unknown-word
  signatures, see ``lexicon``) and the binarization options used. A label that is a
  pre-terminal in some trees and a phrase in others gets two symbols (``labels.preterminal``):
  a symbol of the normal form rewrites either to a word or to two symbols.
- ``single_symbol_grammar``: one symbol ``X`` with ``X -> X X`` and ``X -> w`` for every
  word, the grammar of inside-outside from strings and of the algebraic WCFG (see there).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.lexicon import CharacterEvidence, Lexicon, RareWords, is_signature
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.tree import Tree, is_preterminal


@dataclass
class Grammar:
    """Symbols, rules and vocabulary shared by every model trained on one treebank."""

    symbols: list[str]
    words: list[str]
    known_words: list[str]
    binary: np.ndarray  # (R, 3) int: a, b, c
    lexical: np.ndarray  # (L, 2) int: a, word id
    binarization: dict[str, Any] = field(default_factory=dict)
    rare: int = 1
    word_counts: list[int] | None = None  # training tokens per vocabulary entry
    # The words trained as their signatures, which the parser gives back (``rarewords``).
    rare_words: RareWords = field(default_factory=RareWords)

    def __post_init__(self) -> None:
        self.binary = np.asarray(self.binary, dtype=np.int64).reshape(-1, 3)
        self.lexical = np.asarray(self.lexical, dtype=np.int64).reshape(-1, 2)
        self.symbol_index = {s: i for i, s in enumerate(self.symbols)}
        self.lexicon = Lexicon(self.words, self.known_words, self.word_counts, self.rare)
        self._rule_index: dict[tuple[int, int, int], int] | None = None
        self._lex_index: dict[tuple[int, int], int] | None = None

    def symbol_of(self, node: Tree) -> int:
        """Id of the symbol of a binarized tree's node (``KeyError`` if it has none): a
        pre-terminal uses the pre-terminal symbol of its label if the grammar has one."""
        if is_preterminal(node):
            marked = self.symbol_index.get(labels.preterminal(node.label()))
            if marked is not None:
                return marked
        return self.symbol_index[node.label()]

    @property
    def n_symbols(self) -> int:
        return len(self.symbols)

    @property
    def n_binary(self) -> int:
        return len(self.binary)

    @property
    def n_lexical(self) -> int:
        return len(self.lexical)

    @property
    def is_preterminal(self) -> np.ndarray:
        """(N,) bool: the symbol has lexical rules."""
        out = np.zeros(self.n_symbols, dtype=bool)
        out[self.lexical[:, 0]] = True
        return out

    @property
    def is_interterminal(self) -> np.ndarray:
        """(N,) bool: the symbol has binary rules."""
        out = np.zeros(self.n_symbols, dtype=bool)
        out[self.binary[:, 0]] = True
        return out

    @functools.cached_property
    def characters(self) -> CharacterEvidence | None:
        """What the characters of an unknown uncased word say about its emission group,
        from the rare training words (``lexicon.CharacterEvidence``); None without any."""
        return CharacterEvidence.count(self.rare_words, self.emission_groups())

    def emission_groups(self) -> np.ndarray:
        """(N,) id shared by pre-terminals that end in the same part-of-speech tag.

        A collapsed unary chain ``NP+NNP`` emits words like ``NNP`` does (tied emissions);
        the id of a symbol is that of its ``labels.emission_tag``, the key ``build_grammar``
        ties emissions by (``NP%t``, the pre-terminal use of a label that is also a phrase,
        is in the group of ``S+NP``).
        """
        bases = [labels.emission_tag(s) for s in self.symbols]
        ids = {b: i for i, b in enumerate(dict.fromkeys(bases))}
        return np.array([ids[b] for b in bases], dtype=np.int64)

    def rule_id(self, a: int, b: int, c: int) -> int | None:
        if self._rule_index is None:
            self._rule_index = {tuple(map(int, r)): i for i, r in enumerate(self.binary)}
        return self._rule_index.get((a, b, c))

    def lexical_id(self, a: int, word: int) -> int | None:
        if self._lex_index is None:
            self._lex_index = {(int(a), int(w)): i for i, (a, w) in enumerate(self.lexical)}
        return self._lex_index.get((a, word))

    def validate(self) -> None:
        """Raise LpcfgError if the arrays do not describe a consistent grammar."""
        n, v = self.n_symbols, len(self.words)
        if self.binary.size and (self.binary.min() < 0 or self.binary.max() >= n):
            raise LpcfgError("binary rule refers to an unknown symbol")
        if self.lexical.size and (
            self.lexical[:, 0].min() < 0
            or self.lexical[:, 0].max() >= n
            or self.lexical[:, 1].min() < 0
            or self.lexical[:, 1].max() >= v
        ):
            raise LpcfgError("lexical rule refers to an unknown symbol or word")
        if len(set(self.symbols)) != n or len(set(self.words)) != v:
            raise LpcfgError("duplicate symbol or word")
        rare = self.rare_words.words
        if not all(isinstance(w, str) for w in rare) or len(set(rare)) != len(rare):
            raise LpcfgError("rare words must be distinct strings")
        table = self.rare_words.table
        if table.size and (
            table.min() < 0
            or table[:, 0].max() >= len(self.rare_words)
            or table[:, 1].max() >= n
            or table[:, 2].max() >= v
            or table[:, 3].min() < 1
        ):
            raise LpcfgError("rare-word table refers to an unknown word, symbol or signature")

    @classmethod
    def from_json(
        cls, gj: dict[str, Any], binary: np.ndarray, lexical: np.ndarray, rare_table: np.ndarray
    ) -> Grammar:
        """The grammar ``to_json`` and its three arrays describe (``validate`` it after)."""
        return cls(
            symbols=list(gj["symbols"]),
            words=list(gj["words"]),
            known_words=list(gj["known_words"]),
            binary=binary,
            lexical=lexical,
            binarization=dict(gj.get("binarization", {})),
            rare=int(gj.get("rare", 1)),
            word_counts=gj.get("word_counts"),
            rare_words=RareWords(list(gj.get("rare_words", [])), rare_table),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "symbols": self.symbols,
            "words": self.words,
            "known_words": sorted(self.known_words),
            "binarization": self.binarization,
            "rare": self.rare,
            "word_counts": self.word_counts,
            "rare_words": self.rare_words.words,
        }


SINGLE_SYMBOL = "X"


def single_symbol_grammar(
    words: Sequence[str],
    word_counts: Sequence[int] | None = None,
    known: Sequence[str] | None = None,
) -> Grammar:
    """The grammar with one symbol ``X``, the rule ``X -> X X`` and ``X -> w`` for each of
    ``words`` (lexical rule ``l`` rewrites to word ``l``).

    With ``m`` latent states it is a PCFG in Chomsky normal form with ``m`` nonterminals,
    each of which may rewrite to two nonterminals or to a word: the setting of inside-outside
    from strings (Baker 1979; Lari & Young 1990) and the WCFG in algebraic form of Bailly et
    al. (2013, section 2.2): the root vector is ``alpha_star``, the lexical vector of word
    ``sigma`` is ``beta_sigma`` and the ``(m, m, m)`` tensor of ``X -> X X`` is ``A``.
    Entries of ``words`` that are unknown-word signatures (``lexicon``) are not known words,
    unless ``known`` says which are (an alphabet of tags has no signatures, and a tag spelt
    ``UNK`` is a tag); ``word_counts`` (training tokens per word) weighs the signatures'
    back-off.
    """
    words = list(words)
    if known is None:
        known = [w for w in words if not is_signature(w)]
    ids = np.arange(len(words), dtype=np.int64)
    return Grammar(
        symbols=[SINGLE_SYMBOL],
        words=words,
        known_words=list(known),
        binary=np.zeros((1, 3), dtype=np.int64),
        lexical=np.stack([np.zeros_like(ids), ids], axis=1),
        word_counts=None if word_counts is None else [int(c) for c in word_counts],
    )
