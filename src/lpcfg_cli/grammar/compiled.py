"""The compiled treebank: every node of every binarized tree as arrays, and the grammar a
treebank defines (``build_grammar``).

- ``CompiledTreebank``: every node of every tree, children before parents, with its symbol,
  rule, children, parent and span.
- ``build_grammar``: the ``grammar.indexed.Grammar`` of binarized training trees and the
  trees compiled against it; ``compile_trees`` compiles further trees (dev data) against an
  existing grammar; ``compile_brackets`` compiles bracketed sentences against the
  single-symbol grammar (every node labelled X).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.lexicon import Lexicon, RareWords, Signatures, known_spelling
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.tree import Tree, is_preterminal, iter_nodes, leaves


@dataclass
class CompiledTreebank:
    """All nodes of all trees as arrays; children come before their parents.

    Node ``n`` of tree ``t`` lies in ``tree_start[t] <= n < tree_start[t + 1]``; a binary node
    has ``rule >= 0`` and children ``left``/``right``, a pre-terminal has ``lex >= 0``.
    Spans are word positions within the tree, ``[start, end)``.
    """

    tree_start: np.ndarray
    symbol: np.ndarray
    rule: np.ndarray
    lex: np.ndarray
    left: np.ndarray
    right: np.ndarray
    parent: np.ndarray
    start: np.ndarray
    end: np.ndarray
    height: np.ndarray

    @property
    def n_trees(self) -> int:
        return len(self.tree_start) - 1

    @property
    def n_nodes(self) -> int:
        return len(self.symbol)

    @property
    def roots(self) -> np.ndarray:
        """Index of the root node of every tree (the last node of each tree)."""
        return self.tree_start[1:] - 1

    def by_symbol(self, n_symbols: int) -> list[np.ndarray]:
        """Node indices of each symbol ``0 .. n_symbols - 1`` (in node order)."""
        order = np.argsort(self.symbol, kind="stable")
        bounds = np.searchsorted(self.symbol[order], np.arange(n_symbols + 1))
        return [order[bounds[a] : bounds[a + 1]] for a in range(n_symbols)]

    def levels(self) -> list[np.ndarray]:
        """Node indices grouped by height (1 = pre-terminals), for bottom-up batching."""
        order = np.argsort(self.height, kind="stable")
        bounds = np.searchsorted(self.height[order], np.arange(1, self.height.max() + 2))
        return [order[bounds[h] : bounds[h + 1]] for h in range(len(bounds) - 1)]


_NODE_FIELDS = ("symbol", "rule", "lex", "left", "right", "parent", "start", "end", "height")


def _check_normal_form(tree: Tree, index: int) -> None:
    for node in iter_nodes(tree):
        if is_preterminal(node):
            continue
        if len(node) != 2 or any(isinstance(ch, str) for ch in node):
            raise LpcfgError(
                f"tree {index + 1} is not binarized: node {node.label()!r} has {len(node)} children"
            )


def build_grammar(
    trees: Sequence[Tree],
    *,
    rare: int = 1,
    binarization: dict[str, Any] | None = None,
    tie_emissions: bool = True,
) -> tuple[Grammar, CompiledTreebank]:
    """Index the rules of binarized ``trees`` and compile them into arrays.

    Words seen at most ``rare`` times are counted under their signature (and recorded in
    ``Grammar.rare_words``, for the parser to give them back: ``rarewords``). With
    ``tie_emissions``, every pre-terminal gets a lexical rule for each word its final
    part-of-speech tag emits anywhere in the treebank (``NP+NNP -> Vinken`` exists if
    ``NNP -> Vinken`` was seen), so collapsed unary chains do not make the lexicon sparse.
    """
    if not trees:
        raise LpcfgError("no training trees")
    for i, tree in enumerate(trees):
        _check_normal_form(tree, i)
    all_words = [w for t in trees for w in leaves(t)]
    known = Lexicon.known_words(all_words, rare)
    # A rare word is one that no known spelling stands for (``lexicon.known_spelling``: a
    # bracket seen once as "{" is the word "-LCB-" if that spelling is known).
    rare_of = {w: known_spelling(w, known) is None for w in set(all_words)}
    scheme = Signatures.learn(
        [
            (node[0], node.label())
            for tree in trees
            for node in iter_nodes(tree)
            if is_preterminal(node) and rare_of[node[0]]
        ]
    )
    # A label that is a phrase somewhere gets a symbol of its own for its pre-terminal uses.
    phrases = {n.label() for t in trees for n in iter_nodes(t) if not is_preterminal(n)}

    def symbol(node: Tree) -> int:
        name = node.label()
        if name in phrases and is_preterminal(node):
            name = labels.preterminal(name)
        return symbols.setdefault(name, len(symbols))

    symbols: dict[str, int] = {}
    words: dict[str, int] = {}
    rules: dict[tuple[int, int, int], int] = {}
    lexrules: dict[tuple[int, int], int] = {}
    token_counts: Counter[int] = Counter()
    rare_tokens: list[tuple[str, int, int]] = []
    for tree in trees:
        position = 0
        for node in iter_nodes(tree):  # pre-order: leaves come left to right
            a = symbol(node)
            if is_preterminal(node):
                token = Lexicon.training_token(node[0], position, known, scheme)
                w = words.setdefault(token, len(words))
                lexrules.setdefault((a, w), len(lexrules))
                token_counts[w] += 1
                if rare_of[node[0]]:
                    rare_tokens.append((node[0], a, w))
                position += 1
            else:
                rules.setdefault((a, symbol(node[0]), symbol(node[1])), len(rules))
    if tie_emissions:
        _tie_emissions(symbols, lexrules)
    grammar = Grammar(
        symbols=list(symbols),
        words=list(words),
        known_words=sorted(known),
        binary=np.array(list(rules), dtype=np.int64).reshape(-1, 3),
        lexical=np.array(list(lexrules), dtype=np.int64).reshape(-1, 2),
        binarization=dict(binarization or {}),
        rare=rare,
        word_counts=[token_counts[i] for i in range(len(words))],
        rare_words=RareWords.count(rare_tokens),
    )
    bank, dropped = compile_trees(grammar, trees)
    assert dropped == 0, "training trees must compile against their own grammar"
    return grammar, bank


def _tie_emissions(symbols: dict[str, int], lexrules: dict[tuple[int, int], int]) -> None:
    """Add (pre-terminal, word) rules for every word its emission group has seen (the
    pre-terminals of one ``labels.emission_tag``, as ``Grammar.emission_groups``)."""
    base = {i: labels.emission_tag(s) for s, i in symbols.items()}
    words_of: dict[str, set[int]] = {}
    members: dict[str, set[int]] = {}
    for a, w in lexrules:
        words_of.setdefault(base[a], set()).add(w)
        members.setdefault(base[a], set()).add(a)
    for tag, syms in members.items():
        for a in sorted(syms):
            for w in sorted(words_of[tag]):
                lexrules.setdefault((a, w), len(lexrules))


def compile_trees(grammar: Grammar, trees: Sequence[Tree]) -> tuple[CompiledTreebank, int]:
    """Compile further binarized trees (e.g. dev data) against an existing grammar.

    Trees that use a symbol or rule the grammar lacks are left out; returns the treebank and
    how many trees were left out.
    """
    parts = []
    for tree in trees:
        try:
            parts.append(_compile_one(grammar, tree))
        except KeyError:
            continue
    return _concat(parts), len(trees) - len(parts)


def _compile_one(grammar: Grammar, tree: Tree) -> dict[str, list[int]]:
    """The node arrays of one tree, children before parents (no recursion: any depth)."""
    cols: dict[str, list[int]] = {k: [] for k in _NODE_FIELDS}
    position = 0
    frames: list[tuple[Tree, list[int]]] = [(tree, [])]  # node, its compiled children
    while frames:
        node, done = frames[-1]
        preterminal = is_preterminal(node)
        if not preterminal and len(done) < 2:
            frames.append((node[len(done)], []))
            continue
        frames.pop()
        a = grammar.symbol_of(node)
        if preterminal:
            ids = grammar.lexicon.lookup(node[0], position)
            found = [grammar.lexical_id(a, w) for w in ids]
            lex = next((x for x in found if x is not None), None)
            if lex is None:
                raise KeyError(node[0])
            rule, left, right, height = -1, -1, -1, 1
            start, end = position, position + 1
            position += 1
        else:
            left, right = done
            b, c = cols["symbol"][left], cols["symbol"][right]
            r = grammar.rule_id(a, b, c)
            if r is None:
                raise KeyError((a, b, c))
            rule, lex = r, -1
            start, end = cols["start"][left], cols["end"][right]
            height = 1 + max(cols["height"][left], cols["height"][right])
        idx = len(cols["symbol"])
        values = (a, rule, lex, left, right, -1, start, end, height)
        for key, value in zip(_NODE_FIELDS, values, strict=True):
            cols[key].append(value)
        if left >= 0:
            cols["parent"][left] = idx
            cols["parent"][right] = idx
        if frames:
            frames[-1][1].append(idx)
    return cols


def _concat(parts: list[dict[str, list[int]]]) -> CompiledTreebank:
    offsets = np.cumsum([0] + [len(p["symbol"]) for p in parts])
    arrays: dict[str, np.ndarray] = {}
    for key in _NODE_FIELDS:
        chunks = []
        for off, p in zip(offsets[:-1], parts, strict=True):
            arr = np.asarray(p[key], dtype=np.int64)
            if key in ("left", "right", "parent"):
                arr = np.where(arr >= 0, arr + off, -1)
            chunks.append(arr)
        arrays[key] = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return CompiledTreebank(tree_start=offsets.astype(np.int64), **arrays)


def compile_brackets(
    grammar: Grammar,
    sentences: Sequence[Sequence[int]],
    brackets: Sequence[Sequence[tuple[int, int, int]]],
) -> CompiledTreebank:
    """Bracketed sentences as a treebank of ``grammar`` (a ``single_symbol_grammar``): every
    node is labelled ``X``.

    ``sentences[s]`` holds word ids; ``brackets[s]`` the binary nodes of its tree as
    ``(start, split, end)`` triples (children ``[start, split)`` and ``[split, end)``), one
    per node above the words: ``n - 1`` of them for ``n`` words, the root ``(0, ., n)``
    among them. Raises ``LpcfgError`` for brackets that do not form one binary tree.
    """
    if len(sentences) != len(brackets):
        raise LpcfgError(f"{len(sentences)} sentences but {len(brackets)} bracketings")
    rule = grammar.rule_id(0, 0, 0)
    if grammar.n_symbols != 1 or rule is None:
        raise LpcfgError("bracketed sentences need the single-symbol grammar (X -> X X)")
    lex = {int(w): i for i, (_, w) in enumerate(grammar.lexical)}
    parts = []
    for s, (ids, nodes) in enumerate(zip(sentences, brackets, strict=True)):
        try:
            parts.append(_compile_bracketed(list(map(int, ids)), nodes, lex, rule))
        except (KeyError, ValueError, TypeError) as exc:
            raise LpcfgError(f"sentence {s + 1}: {exc}") from None
    return _concat(parts)


def _compile_bracketed(
    ids: list[int], nodes: Sequence[tuple[int, int, int]], lex: dict[int, int], rule: int
) -> dict[str, list[int]]:
    """The node arrays of one bracketed sentence, children before parents (no recursion)."""
    n = len(ids)
    if n == 0:
        raise ValueError("empty sentence")
    unknown = [w for w in ids if w not in lex]
    if unknown:
        raise ValueError(f"word id {unknown[0]} has no lexical rule")
    split: dict[tuple[int, int], int] = {}
    for node in nodes:
        i, k, j = (int(x) for x in node)
        if not 0 <= i < k < j <= n:
            raise ValueError(f"bracket {(i, k, j)} is not a binary split of a span of {n} words")
        if (i, j) in split:
            raise ValueError(f"two brackets over span ({i}, {j})")
        split[(i, j)] = k
    if len(split) != n - 1:
        raise ValueError(f"{len(split)} brackets for {n} words (a binary tree has {n - 1})")
    cols: dict[str, list[int]] = {k: [] for k in _NODE_FIELDS}
    done: dict[tuple[int, int], int] = {}
    stack = [(0, n, False)]
    while stack:
        i, j, expanded = stack.pop()
        if j - i > 1 and (i, j) not in split:
            raise ValueError(f"no bracket over span ({i}, {j}), which a bracket splits off")
        if j - i > 1 and not expanded:
            k = split[(i, j)]
            stack += [(i, j, True), (k, j, False), (i, k, False)]
            continue
        idx = len(cols["symbol"])
        if j - i == 1:
            values = (0, -1, lex[ids[i]], -1, -1, -1, i, j, 1)
        else:
            k = split[(i, j)]
            left, right = done[(i, k)], done[(k, j)]
            height = 1 + max(cols["height"][left], cols["height"][right])
            values = (0, rule, -1, left, right, -1, i, j, height)
            cols["parent"][left] = cols["parent"][right] = idx
        for key, value in zip(_NODE_FIELDS, values, strict=True):
            cols[key].append(value)
        done[(i, j)] = idx
    return cols  # n - 1 distinct brackets, all reached from the root: every one is used
