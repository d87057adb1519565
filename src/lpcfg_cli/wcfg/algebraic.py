"""The algebraic WCFG of Bailly et al. 2013, section 2.2.

A WCFG with ``n`` states over an alphabet of ``d`` symbols is ``(alpha_star, {beta_sigma},
A)``: an initial vector, one terminal vector per symbol and a bilinear operator
``A in R^{n x n^2}``, held here as the tensor ``A[i, j, k] = w_R(i -> j k)`` (eq. 13-15:
the classic WCFG with nonterminals ``1..n`` is the same device). It computes
``g(x) = alpha_star^T beta(x)`` with the inside function (eq. 8-9)

    beta(sigma) = beta_sigma,   beta(x) = sum_{x = x1 x2} A (beta(x1) (x) beta(x2)),

and the outside function (eq. 10-11)

    gamma(eps; eps) = alpha_star,
    gamma(x; z)^T = sum_{x = x1 x2, x2 != eps} gamma(x1; z)^T A (beta(x2) (x) I)
                  + sum_{z = z1 z2, z1 != eps} gamma(x; z2)^T A (I (x) beta(z1)),

so that ``gamma(x; z)^T beta(y)`` is the weight of ``x y z`` with a constituent over ``y``
(eq. 12). A probabilistic WCFG is a PCFG; a spectral one may give negative values.

In lpcfg a WCFG is the L-PCFG with one nonterminal ``X`` whose ``n`` latent states are the
WCFG's states (rule ``X -> X X`` with tensor ``A``, lexical rules ``X -> sigma`` with vectors
``beta_sigma``, root vector ``alpha_star``): ``to_model`` and ``from_model`` convert, so a
WCFG is saved, parsed with and scored by the same engine as every other model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.grammar.indexed import Grammar, single_symbol_grammar
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams

String = tuple[int, ...]


@dataclass
class WCFG:
    """``start`` (n,) = alpha_star, ``terminals`` (d, n) with row sigma = beta_sigma,
    ``binary`` (n, n, n) = A."""

    start: np.ndarray
    terminals: np.ndarray
    binary: np.ndarray
    _outside: dict[tuple[String, String], np.ndarray] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.start = np.asarray(self.start, dtype=np.float64)
        self.terminals = np.asarray(self.terminals, dtype=np.float64)
        self.binary = np.asarray(self.binary, dtype=np.float64)
        n = len(self.start)
        if self.terminals.ndim != 2 or self.terminals.shape[1] != n:
            raise ValueError(f"terminals must be (d, {n}), got {self.terminals.shape}")
        if self.binary.shape != (n, n, n):
            raise ValueError(f"binary must be ({n}, {n}, {n}), got {self.binary.shape}")

    @property
    def n(self) -> int:
        """Number of states."""
        return len(self.start)

    @property
    def d(self) -> int:
        """Alphabet size (symbols are ``0 .. d - 1``)."""
        return self.terminals.shape[0]

    def compose(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """``A (left (x) right)`` for rows of inside vectors: (N, n), (N, n) -> (N, n)."""
        n = self.n
        pairs = (left[:, :, None] * right[:, None, :]).reshape(len(left), n * n)
        return pairs @ self.binary.reshape(n, n * n).T

    def inside(self, x: Sequence[int]) -> np.ndarray:
        """``beta(x)`` by CKY over the substrings of ``x`` (eq. 9); ``x`` non-empty."""
        x = tuple(int(s) for s in x)
        if not x:
            raise ValueError("the inside function is defined on non-empty strings")
        length = len(x)
        chart: dict[tuple[int, int], np.ndarray] = {
            (i, i + 1): self.terminals[s] for i, s in enumerate(x)
        }
        for span in range(2, length + 1):
            for i in range(length - span + 1):
                j = i + span
                left = np.stack([chart[i, k] for k in range(i + 1, j)])
                right = np.stack([chart[k, j] for k in range(i + 1, j)])
                chart[i, j] = self.compose(left, right).sum(axis=0)
        return chart[0, length]

    def outside(self, x: Sequence[int], z: Sequence[int]) -> np.ndarray:
        """``gamma(x; z)`` (eq. 10-11), memoised on the pair of strings."""
        key = (tuple(int(s) for s in x), tuple(int(s) for s in z))
        got = self._outside.get(key)
        if got is not None:
            return got
        xs, zs = key
        if not xs and not zs:
            out = self.start.copy()
        else:
            out = np.zeros(self.n)
            for cut in range(len(xs)):  # x = x1 x2 with x2 = xs[cut:] non-empty
                g = self.outside(xs[:cut], zs)
                out += np.einsum("i,ijk,j->k", g, self.binary, self.inside(xs[cut:]))
            for cut in range(1, len(zs) + 1):  # z = z1 z2 with z1 = zs[:cut] non-empty
                g = self.outside(xs, zs[cut:])
                out += np.einsum("i,ikj,j->k", g, self.binary, self.inside(zs[:cut]))
        self._outside[key] = out
        return out

    def value(self, x: Sequence[int]) -> float:
        """``g(x) = alpha_star^T beta(x)`` (eq. 7); 0 for the empty string."""
        return float(self.start @ self.inside(x)) if len(x) else 0.0

    def cut_value(self, x: Sequence[int], y: Sequence[int], z: Sequence[int]) -> float:
        """``gamma(x; z)^T beta(y)``: the weight of ``x y z`` with a constituent over ``y``."""
        return float(self.outside(x, z) @ self.inside(y))

    def composed_value(
        self, x: Sequence[int], y1: Sequence[int], y2: Sequence[int], z: Sequence[int]
    ) -> float:
        """``gamma(x; z)^T A (beta(y1) (x) beta(y2))``: the weight of ``x y1 y2 z`` with a
        constituent over ``y1 y2`` whose children span ``y1`` and ``y2``."""
        inner = self.compose(self.inside(y1)[None, :], self.inside(y2)[None, :])[0]
        return float(self.outside(x, z) @ inner)

    def inside_all(self, max_length: int) -> list[np.ndarray]:
        """Inside vectors of every string up to ``max_length``: entry ``L`` is
        ``(d**L, n)`` in the order of ``all_strings(d, L)`` (entry 0 is empty)."""
        d = self.d
        out = [np.zeros((0, self.n)), self.terminals.copy()]
        for length in range(2, max_length + 1):
            codes = np.arange(d**length)
            total = np.zeros((d**length, self.n))
            for k in range(1, length):
                scale = d ** (length - k)
                total += self.compose(out[k][codes // scale], out[length - k][codes % scale])
            out.append(total)
        return out[: max_length + 1]

    def values_all(self, max_length: int) -> list[np.ndarray]:
        """``g(x)`` of every string up to ``max_length``, by length, in the order of
        ``all_strings``: entry 0 is ``[0.0]`` (the empty string has no derivation)."""
        inside = self.inside_all(max_length)
        return [np.zeros(1)] + [b @ self.start for b in inside[1:]]


def all_strings(d: int, length: int) -> np.ndarray:
    """Every string of ``length`` symbols over ``0 .. d - 1`` as rows of a
    ``(d**length, length)`` array, in lexicographic order (row ``c`` spells ``c`` in base d,
    first symbol most significant)."""
    codes = np.arange(d**length)
    powers = d ** np.arange(length - 1, -1, -1)
    return (codes[:, None] // powers[None, :]) % d


def string_code(x: Sequence[int], d: int) -> int:
    """The row of ``x`` in ``all_strings(d, len(x))``."""
    code = 0
    for s in x:
        code = code * d + int(s)
    return code


def to_model(
    w: WCFG,
    grammar: Grammar | Sequence[str],
    coarse: PCFGParams | None = None,
    form: str = "tensor",
    meta: dict[str, Any] | None = None,
) -> LPCFG:
    """The single-symbol L-PCFG computing ``w``: ``grammar`` is a single-symbol grammar
    (``grammar.indexed.single_symbol_grammar``; its lexical rule ``sigma`` spells symbol ``sigma``)
    or the list of words spelling the symbols.

    ``coarse`` is the grammar the parser prunes with; by default ``X -> X X`` has weight
    1/2 and every word ``1 / (2 d)``, so that every bracketing has the same weight.
    """
    if not isinstance(grammar, Grammar):
        grammar = single_symbol_grammar(list(grammar))
    if grammar.n_symbols != 1 or grammar.n_lexical != w.d:
        raise ValueError(f"a single-symbol grammar with {w.d} words is needed")
    if not np.array_equal(grammar.lexical[:, 1], np.arange(w.d)):
        raise ValueError("lexical rule sigma must rewrite to word sigma")
    if coarse is None:
        coarse = PCFGParams(np.array([0.5]), np.full(w.d, 0.5 / w.d), np.array([1.0]))
    return LPCFG(
        grammar,
        np.array([w.n]),
        w.binary.reshape(-1).copy(),
        w.terminals.reshape(-1).copy(),
        w.start.copy(),
        coarse,
        form,
        dict(meta or {}),
    )


def from_model(model: LPCFG) -> tuple[WCFG, list[str]]:
    """The WCFG of a single-symbol model file and the words its symbols spell."""
    g = model.grammar
    if g.n_symbols != 1 or g.n_binary != 1:
        raise ValueError("only a single-symbol model (X -> X X, X -> word) is a WCFG")
    n = int(model.states[0])
    words = [g.words[int(v)] for v in g.lexical[:, 1]]
    return (
        WCFG(
            model.root.copy(),
            model.lexical.reshape(len(words), n).copy(),
            model.binary.reshape(n, n, n).copy(),
        ),
        words,
    )
