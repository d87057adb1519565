"""A latent PCFG with unary rules, compiled into the collapsed grammar the parser runs.

``ChainParams`` holds the parameters of the base grammar of ``grammar.unary_chains.UnaryChains``
(Petrov et al. 2006, section 2: latent binary, unary and lexical rules), padded to the
largest state count ``M``: for every base symbol ``A`` and state ``h`` the binary rules
``t(A -> B C)[h, i, j]``, the unary rules ``U(A -> B)[h, s]`` and the lexical rules
``e(A -> w)[h]`` sum to one. ``compile`` writes it as the parameters of the collapsed grammar
(``UnaryChains`` says how), which give every observed tree the probability the base model
gives it; ``pushed`` renormalises those (Chi 1999, weight pushing: each compiled symbol's
rules and the roots rescaled by the compiled symbols' inside masses) into a PCFG whose every
``(symbol, state)`` sums to one, the form every other model file has, with the same
distribution over the trees of the collapsed grammar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.unary_chains import UnaryChains

# Weight pushing iterates the inside masses to this relative change (or the iteration cap).
PUSH_TOL = 1e-12
PUSH_ITERATIONS = 1000


@dataclass
class ChainParams:
    """Padded parameters of a base grammar (see the module docstring); entries beyond a
    symbol's ``states`` are zero and stay zero."""

    states: np.ndarray  # (Nb,)
    binary: np.ndarray  # (Rb, M, M * M)
    unary: np.ndarray  # (U, M, M)
    lexical: np.ndarray  # (Lb, M)
    root: np.ndarray  # (Nb, M)

    @property
    def m(self) -> int:
        return int(self.lexical.shape[1])

    def copy(self) -> ChainParams:
        return ChainParams(
            self.states.copy(),
            self.binary.copy(),
            self.unary.copy(),
            self.lexical.copy(),
            self.root.copy(),
        )

    def chain_matrices(self, chains: UnaryChains) -> np.ndarray:
        """``(N_compiled, M, M)``: ``P_a``, the product of the unary matrices down compiled
        symbol ``a``'s chain (from its top's states to its bottom's), the identity on the
        top's states for a symbol that is no chain."""
        m = self.m
        n = len(chains.level_ptr) - 1
        out = np.zeros((n, m, m))
        top = chains.top
        valid = np.arange(m)[None, :] < self.states[top][:, None]
        out[:, np.arange(m), np.arange(m)] = valid
        for a in np.flatnonzero(chains.depth > 1):
            p = self.unary[chains.chain_rules(a)[0]]
            for u in chains.chain_rules(a)[1:]:
                p = p @ self.unary[u]
            out[a] = p
        return out

    def compile(
        self, chains: UnaryChains, grammar: Grammar, p: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(states, binary, lexical, root)`` of the collapsed grammar, padded: compiled
        symbol ``a`` has its chain top's states; ``binary[r] = P_a t(A_k -> B C)``,
        ``lexical[l] = P_a e(T -> w)``, ``root[a]`` the root vector of its top. ``p``: the
        ``chain_matrices`` if already computed."""
        m = self.m
        if p is None:
            p = self.chain_matrices(chains)
        top = chains.top
        a_r = grammar.binary[:, 0]
        binary = self.binary[chains.binary_of]
        chained = np.flatnonzero(chains.depth[a_r] > 1)
        if len(chained):
            binary[chained] = np.einsum(
                "rhs,rsx->rhx", p[a_r[chained]], binary[chained], optimize=True
            )
        a_l = grammar.lexical[:, 0]
        lexical = self.lexical[chains.lexical_of]
        lex_chained = np.flatnonzero(chains.depth[a_l] > 1)
        if len(lex_chained):
            lexical[lex_chained] = np.einsum(
                "lhs,ls->lh", p[a_l[lex_chained]], lexical[lex_chained]
            )
        root = self.root[top].copy()
        states = self.states[top].copy()
        assert binary.shape[1] == m
        return states, binary, lexical, root


def pushed(
    grammar: Grammar, states: np.ndarray, binary: np.ndarray, lexical: np.ndarray, root: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(binary, lexical, root)`` of a compiled weighted grammar renormalised by weight
    pushing: with ``Z[a, h]`` the total weight of the trees below ``(a, h)`` (the least
    fixed point of ``Z[a] = sum_r T_r (Z[b] x Z[c]) + sum_l E_l``, iterated from zero), rule
    ``a -> b c`` becomes ``T[h, i, j] Z[b, i] Z[c, j] / Z[a, h]``, a lexical rule ``E[h] /
    Z[a, h]`` and the root ``pi[a, h] Z[a, h] / sum pi Z``: a PCFG (each ``(a, h)`` sums to
    one) with the same distribution over trees (Chi 1999, section 4)."""
    n, m = len(states), binary.shape[1]
    a, b, c = grammar.binary[:, 0], grammar.binary[:, 1], grammar.binary[:, 2]
    lex_mass = np.zeros((n, m))
    np.add.at(lex_mass, grammar.lexical[:, 0], lexical)
    t = binary.reshape(len(a), m, m, m)
    z = np.zeros((n, m))
    for _ in range(PUSH_ITERATIONS):
        inner = np.einsum("rhij,ri,rj->rh", t, z[b], z[c], optimize=True)
        new = lex_mass.copy()
        np.add.at(new, a, inner)
        change = np.abs(new - z).max(initial=0.0)
        z = new
        if change <= PUSH_TOL * max(float(z.max(initial=0.0)), 1e-300):
            break
    safe = np.where(z > 0, z, 1.0)
    t = t * (z[b][:, None, :, None] * z[c][:, None, None, :]) / safe[a][:, :, None, None]
    lexical = lexical / safe[grammar.lexical[:, 0]]
    weighted = root * z
    total = float(weighted.sum())
    return t.reshape(len(a), m, m * m), lexical, weighted / (total if total > 0 else 1.0)


def treebank_counts(
    chains: UnaryChains, grammar: Grammar, bank: CompiledTreebank, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(binary, unary, lexical, root)`` counts of the base rules in a compiled treebank
    (tree ``t`` counted ``weights[t]`` times): every node counts its base binary or lexical
    rule and each unary rule down its chain, every root its chain's top."""
    w = (
        np.ones(bank.n_nodes)
        if weights is None
        else np.repeat(np.asarray(weights, dtype=np.float64), np.diff(bank.tree_start))
    )
    is_b, is_l = bank.rule >= 0, bank.lex >= 0
    binary = np.bincount(chains.binary_of[bank.rule[is_b]], w[is_b], minlength=len(chains.binary))
    lexical = np.bincount(chains.lexical_of[bank.lex[is_l]], w[is_l], minlength=len(chains.lexical))
    per_symbol = np.bincount(bank.symbol, w, minlength=grammar.n_symbols)
    unary = np.zeros(len(chains.unary))
    for a in np.flatnonzero(chains.depth > 1):
        np.add.at(unary, chains.chain_rules(a), per_symbol[a])
    roots = bank.roots
    root = np.bincount(
        chains.top[bank.symbol[roots]],
        None if weights is None else np.asarray(weights, dtype=np.float64),
        minlength=chains.n_symbols,
    )
    return binary.astype(float), unary, lexical.astype(float), root.astype(float)


def normalised(
    chains: UnaryChains,
    states: np.ndarray,
    binary: np.ndarray,
    unary: np.ndarray,
    lexical: np.ndarray,
    root: np.ndarray,
    n_trees: float,
) -> ChainParams:
    """Counts (padded, ``(Rb, M, M * M)``, ``(U, M, M)``, ``(Lb, M)``, ``(Nb, M)``) divided
    per base ``(symbol, state)`` by its total over binary, unary and lexical rules; the
    roots by ``n_trees``."""
    m = lexical.shape[1]
    total = symbol_totals(chains, m, binary, unary, lexical)
    total[total <= 0] = 1.0
    return ChainParams(
        np.asarray(states, dtype=np.int64),
        binary / total[chains.binary[:, 0]][:, :, None],
        unary / total[chains.unary[:, 0]][:, :, None],
        lexical / total[chains.lexical[:, 0]],
        root / (n_trees if n_trees > 0 else 1.0),
    )


def symbol_totals(
    chains: UnaryChains, m: int, binary: np.ndarray, unary: np.ndarray, lexical: np.ndarray
) -> np.ndarray:
    """``(Nb, M)``: each base ``(symbol, state)``'s total over its binary, unary and
    lexical entries."""
    total = np.zeros((chains.n_symbols, m))
    np.add.at(total, chains.binary[:, 0], binary.sum(axis=2))
    np.add.at(total, chains.unary[:, 0], unary.sum(axis=2))
    np.add.at(total, chains.lexical[:, 0], lexical)
    return total


def treebank_params(
    chains: UnaryChains, grammar: Grammar, bank: CompiledTreebank, weights: np.ndarray | None = None
) -> ChainParams:
    """The base grammar's relative-frequency PCFG (one state per symbol)."""
    b, u, lx, r = treebank_counts(chains, grammar, bank, weights)
    ones = np.ones(chains.n_symbols, dtype=np.int64)
    return normalised(
        chains, ones, b[:, None, None], u[:, None, None], lx[:, None], r[:, None], float(r.sum())
    )


def split_params(
    pcfg: ChainParams, chains: UnaryChains, states: int, noise: float, seed: int
) -> ChainParams:
    """Every base symbol of a one-state PCFG split into ``states`` states (Matsuzaki et al.
    2005, as ``latent_pcfg.split.split_model``): each rule's probability spread evenly over the
    children's states, perturbed by a relative ``noise`` and renormalised."""
    rng = np.random.default_rng(seed)
    m = int(states)
    binary = np.repeat(pcfg.binary[:, :1, :1], m, axis=1) / (m * m)
    binary = np.repeat(binary, m * m, axis=2)
    binary = binary * (1.0 + noise * rng.uniform(-1, 1, size=binary.shape))
    unary = np.repeat(np.repeat(pcfg.unary[:, :1, :1], m, axis=1), m, axis=2) / m
    unary = unary * (1.0 + noise * rng.uniform(-1, 1, size=unary.shape))
    lexical = np.repeat(pcfg.lexical[:, :1], m, axis=1)
    lexical = lexical * (1.0 + noise * rng.uniform(-1, 1, size=lexical.shape))
    root = np.repeat(pcfg.root[:, :1], m, axis=1) / m
    return normalised(chains, np.full(chains.n_symbols, m), binary, unary, lexical, root, 1.0)
