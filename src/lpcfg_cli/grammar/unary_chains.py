"""Collapsed unary chains factored back into unary rules (Petrov et al. 2006, section 2).

The strict normal form collapses a unary chain into one symbol (``S+VP``, ``NP+PRP``:
``treebank.binarize``), so that every binary rule and every lexical rule of the chain's
bottom label exists once per chain: ``S -> NP VP``, ``S -> NP+PRP VP``, ``S -> NP+NNS VP``
... each with its own latent tensor, and ``NP+NN``'s words apart from ``NN``'s. On the PTB
sample 1,133 of the 2,492 binary rules involve a chain symbol and share the statistics of
the rule they stand for. The Berkeley parser's grammars keep unary rules instead, each with
its own latent matrix ``U(A -> B)[h, s]``, and so pool those statistics.

``UnaryChains`` is that factorisation of an indexed grammar: *base* symbols (each label of a
chain, the intermediate ``@`` symbols and the pre-terminal tags), base binary rules
``A -> B C`` (a compiled rule ``a -> b c`` is the base rule from the bottom of ``a``'s chain
to the tops of ``b``'s and ``c``'s), base unary rules between consecutive labels of a chain,
and base lexical rules ``T -> w`` from the bottom tag of a pre-terminal chain. A model over
the base symbols compiles back into the collapsed grammar exactly (``model.chain_params``): the
compiled tensor of ``a -> b c`` is ``P_a t(A_k -> B C)`` with ``P_a`` the product of the
chain's unary matrices, a compiled lexical vector ``P_a e(T -> w)``, a compiled root vector
that of the chain's top. So the parser, its coarse pass and every rule set stay those of the
collapsed grammar; only the parameters are tied.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.treebank import labels


@dataclass
class UnaryChains:
    """The base grammar of an indexed (collapsed) grammar, and the maps between them.

    Compiled symbol ``a`` is the chain ``levels[level_ptr[a]:level_ptr[a + 1]]`` of base
    symbols, top first (one level for a symbol that is no chain). Every array is indexed by
    compiled ids where it says ``compiled`` and by base ids elsewhere.
    """

    symbols: list[str]  # base symbols
    level_ptr: np.ndarray  # (N_compiled + 1,)
    levels: np.ndarray  # base symbol of each level of each compiled symbol, top first
    unary: np.ndarray  # (U, 2) base unary rules (parent, child)
    level_unary: np.ndarray  # unary rule from each level to the next (-1 at a chain's bottom)
    binary: np.ndarray  # (Rb, 3) base binary rules
    binary_of: np.ndarray  # (R_compiled,) base rule of each compiled binary rule
    lexical: np.ndarray  # (Lb, 2) base lexical rules (tag, word id)
    lexical_of: np.ndarray  # (L_compiled,) base rule of each compiled lexical rule

    @property
    def n_symbols(self) -> int:
        return len(self.symbols)

    @property
    def top(self) -> np.ndarray:
        """(N_compiled,) the base symbol at the top of each compiled symbol's chain."""
        return self.levels[self.level_ptr[:-1]]

    @property
    def bottom(self) -> np.ndarray:
        """(N_compiled,) the base symbol at the bottom of each compiled symbol's chain."""
        return self.levels[self.level_ptr[1:] - 1]

    @property
    def depth(self) -> np.ndarray:
        """(N_compiled,) the number of labels in each compiled symbol's chain."""
        return np.diff(self.level_ptr)

    def chain(self, a: int) -> np.ndarray:
        """Base symbols of compiled symbol ``a``, top first."""
        return self.levels[self.level_ptr[a] : self.level_ptr[a + 1]]

    def chain_rules(self, a: int) -> np.ndarray:
        """Base unary rules down compiled symbol ``a``'s chain, top first (none for a
        symbol that is no chain)."""
        return self.level_unary[self.level_ptr[a] : self.level_ptr[a + 1] - 1]

    @property
    def has_chains(self) -> bool:
        return bool(len(self.unary))

    @classmethod
    def of(cls, grammar: Grammar) -> UnaryChains:
        """The factorisation of ``grammar``'s chain symbols (see the module docstring)."""
        pre = grammar.is_preterminal
        parts = [_parts(s) for s in grammar.symbols]
        # A label that heads or continues a chain, or is the bottom of a chain with binary
        # rules, is a phrase; the tag at the bottom of a pre-terminal chain is a tag, marked
        # as one (``labels.preterminal``) where a phrase has the same name or the symbol
        # marks it, as the indexed grammar marks a pre-terminal use of a phrase label.
        phrases = {
            p for ps, is_pre in zip(parts, pre, strict=True) for p in ps[: -1 if is_pre else None]
        }
        names: list[list[str]] = []
        for symbol, ps, is_pre in zip(grammar.symbols, parts, pre, strict=True):
            chain = list(ps)
            if is_pre and (chain[-1] in phrases or symbol.endswith(labels.PRETERMINAL)):
                chain[-1] = labels.preterminal(chain[-1])
            names.append(chain)
        index: dict[str, int] = {}
        for chain in names:
            for name in chain:
                index.setdefault(name, len(index))
        level_ptr = np.zeros(grammar.n_symbols + 1, dtype=np.int64)
        np.cumsum([len(c) for c in names], out=level_ptr[1:])
        levels = np.array([index[n] for c in names for n in c], dtype=np.int64)
        unary_index: dict[tuple[int, int], int] = {}
        level_unary = np.full(len(levels), -1, dtype=np.int64)
        for a in range(grammar.n_symbols):
            lo, hi = level_ptr[a], level_ptr[a + 1]
            for i in range(lo, hi - 1):
                pair = (int(levels[i]), int(levels[i + 1]))
                level_unary[i] = unary_index.setdefault(pair, len(unary_index))
        top, bottom = levels[level_ptr[:-1]], levels[level_ptr[1:] - 1]
        base_binary = np.stack(
            [bottom[grammar.binary[:, 0]], top[grammar.binary[:, 1]], top[grammar.binary[:, 2]]],
            axis=1,
        ).reshape(-1, 3)
        binary, binary_of = _unique_rows(base_binary)
        base_lexical = np.stack(
            [bottom[grammar.lexical[:, 0]], grammar.lexical[:, 1]], axis=1
        ).reshape(-1, 2)
        lexical, lexical_of = _unique_rows(base_lexical)
        unary = np.array(list(unary_index), dtype=np.int64).reshape(-1, 2)
        return cls(
            list(index),
            level_ptr,
            levels,
            unary,
            level_unary,
            binary,
            binary_of,
            lexical,
            lexical_of,
        )


def _parts(symbol: str) -> list[str]:
    """The labels of a compiled symbol's chain, top first, as written in the symbol (escaped,
    with their ancestor annotations, without a pre-terminal mark); an intermediate symbol is
    one part, as it is."""
    if labels.is_intermediate(symbol):
        return [symbol]
    if symbol.endswith(labels.PRETERMINAL):
        symbol = symbol[: -len(labels.PRETERMINAL)]
    return symbol.split(labels.CHAIN)


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows in order of first appearance, and each row's index among them."""
    if not len(rows):
        return rows.copy(), np.zeros(0, dtype=np.int64)
    uniq, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return uniq[order], rank[inverse.ravel()]
