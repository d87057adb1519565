"""Target grammars of the WCFG experiments (Bailly et al. 2013, sections 5.1 and 5.2).

- ``random_pcfg``: a PCFG with ``n`` nonterminals and ``d`` symbols whose parameters are
  drawn uniformly in [0, 1] and normalised (section 5.1). Drawn this way most grammars are
  supercritical (a nonterminal rewrites to two nonterminals with probability about
  ``n^2 / (n^2 + d)``, so each node has more than one child on average) and put
  probability on infinite derivations; the paper says only that it normalises "in order to
  get a probability distribution". We condition on finite derivations, the standard fix:
  with ``q_i`` the probability that nonterminal ``i`` derives a finite tree (the least
  fixed point of ``q = t + R(q (x) q)``), the grammar ``r'(i -> j k) = r(i -> j k) q_j q_k /
  q_i``, ``t'(i -> s) = t(i -> s) / q_i``, ``pi'(i) = pi(i) q_i / sum(pi q)`` generates
  exactly the finite trees of the drawn one, renormalised, and is subcritical.
- ``dyck_pcfg``: ``S -> S S (0.2) | a S b (0.4) | a b (0.4)`` (section 5.2) in Chomsky
  normal form with the states ``S``, ``C`` (``C -> S b``), ``A`` (``-> a``), ``B`` (``-> b``).
"""

from __future__ import annotations

import numpy as np

from lpcfg_cli.wcfg.algebraic import WCFG


def finite_probabilities(w: WCFG, tol: float = 1e-15, max_iter: int = 100_000) -> np.ndarray:
    """``q_i``: the probability that state ``i`` of a PCFG derives a finite tree (least
    fixed point of ``q = t + A (q (x) q)``, by iteration from 0, which increases to it)."""
    q = np.zeros(w.n)
    t = w.terminals.sum(axis=0)
    for _ in range(max_iter):
        new = t + w.compose(q[None, :], q[None, :])[0]
        if np.max(np.abs(new - q)) <= tol:
            return new
        q = new
    return q


def conditioned_on_finite(w: WCFG) -> WCFG:
    """The PCFG of ``w``'s finite derivations (see the module docstring)."""
    q = finite_probabilities(w)
    if np.any(q <= 0):
        raise ValueError("a nonterminal derives no finite tree")
    binary = w.binary * q[None, :, None] * q[None, None, :] / q[:, None, None]
    terminals = w.terminals / q[None, :]
    start = w.start * q
    return WCFG(start / start.sum(), terminals, binary)


def mean_matrix(w: WCFG) -> np.ndarray:
    """``M[i, j]``: expected number of children in state ``j`` of a node in state ``i``; the
    PCFG is subcritical (finite expected size) when its spectral radius is below 1."""
    return w.binary.sum(axis=2) + w.binary.sum(axis=1)


def expected_length(w: WCFG) -> float:
    """Expected string length of a subcritical PCFG (inf otherwise)."""
    m = mean_matrix(w)
    if np.max(np.abs(np.linalg.eigvals(m))) >= 1:
        return float("inf")
    leaves = w.terminals.sum(axis=0)  # probability that a node is a leaf
    visits = np.linalg.solve(np.eye(w.n) - m.T, w.start)  # expected nodes per state
    return float(visits @ leaves)


def random_pcfg(n: int, d: int, rng: np.random.Generator) -> WCFG:
    """A random PCFG as in section 5.1: uniform [0, 1] weights, normalised per nonterminal,
    conditioned on finite derivations."""
    binary = rng.random((n, n, n))
    terminals = rng.random((d, n))
    start = rng.random(n)
    total = binary.sum(axis=(1, 2)) + terminals.sum(axis=0)
    w = WCFG(start / start.sum(), terminals / total[None, :], binary / total[:, None, None])
    return conditioned_on_finite(w)


def dyck_pcfg() -> WCFG:
    """``S -> S S (0.2) | a S b (0.4) | a b (0.4)`` over ``a = 0``, ``b = 1``; states
    ``S, C, A, B`` = 0, 1, 2, 3."""
    s, c, a, b = range(4)
    binary = np.zeros((4, 4, 4))
    binary[s, s, s] = 0.2
    binary[s, a, c] = 0.4  # S -> A C, C -> S B: a S b
    binary[s, a, b] = 0.4
    binary[c, s, b] = 1.0
    terminals = np.zeros((2, 4))
    terminals[0, a] = 1.0
    terminals[1, b] = 1.0
    return WCFG(np.eye(4)[s], terminals, binary)
