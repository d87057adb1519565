"""The parsing models of Hsu, Kakade & Liang (2012), section 3, and their free parameters.

Every model draws a tree topology uniformly among those over ``L`` words, then states and
words top-down. Conventions (all distributions are columns, 0-based indices):

- constituency (``pcfg``, ``pcfg-i``, ``pcfg-ie``), ``k`` states, ``d`` words:
  ``pi[s]`` the root state; ``B[s1, s2, s]`` = P(left child s1, right child s2 | parent s);
  ``O[w, s]`` = P(word w | leaf state s). PCFG-I: ``B = T1 (x)_C T2`` (children independent,
  ``T1[s1, s]``, ``T2[s2, s]``); PCFG-IE: ``T1 = T2 = T``.
- dependency (``dep-i``, ``dep-ie``, ``dep-ies``), states are the ``d`` words:
  ``pi[w]`` the root word; ``left[w', w]`` / ``right[w', w]`` = P(argument w' | head w) to
  the left / right. DEP-IE: ``left = right = A``; DEP-IES: also ``pi = A pi`` (stationary),
  so ``pi`` is not a parameter.

The free parameter vector ``theta`` (the paper's "non-redundant vectorized form") holds, for
each distribution in the order above, every entry but the last, which is one minus their
sum. It is affine in the distributions, so every moment is a polynomial in ``theta``
(rational for DEP-IES through the stationary ``pi``), and the complex-step Jacobian of
``jacobian.py`` is exact. Arrays may carry leading batch axes (``(..., k)``) and complex
entries: the moments' dynamic programs run on a batch of perturbed parameter points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError

CONSTITUENCY = ("pcfg", "pcfg-i", "pcfg-ie")
DEPENDENCY = ("dep-i", "dep-ie", "dep-ies")
FAMILIES = CONSTITUENCY + DEPENDENCY


@dataclass
class Constituency:
    """Parameters of a constituency model; ``t1``/``t2`` are set when ``B`` factorises."""

    pi: np.ndarray  # (..., k)
    b: np.ndarray  # (..., k, k, k): b[..., s1, s2, s]
    o: np.ndarray  # (..., d, k)
    t1: np.ndarray | None = None  # (..., k, k)
    t2: np.ndarray | None = None

    @property
    def k(self) -> int:
        return self.pi.shape[-1]

    @property
    def d(self) -> int:
        return self.o.shape[-2]


@dataclass
class Dependency:
    """Parameters of a dependency model over ``d`` word types."""

    pi: np.ndarray  # (..., d)
    left: np.ndarray  # (..., d, d): left[..., child, head]
    right: np.ndarray

    @property
    def d(self) -> int:
        return self.pi.shape[-1]


Params = Constituency | Dependency


def check_sizes(family: str, d: int, k: int | None) -> int:
    """Validate a family name and its sizes; return ``k`` (``d`` for dependency models).
    Errors name the sizes as ``identifiability.CheckOptions`` does: ``words`` for ``d``,
    ``states`` for ``k``, ``model`` for the family."""
    if family not in FAMILIES:
        raise LpcfgError(f"unknown model {family!r} (choose from {', '.join(FAMILIES)})")
    if d < 2:
        raise ParameterError("{words} must be at least 2, not {d}", d=d)
    if family in DEPENDENCY:
        return d
    if k is None:
        raise ParameterError("{model} {family} needs {states}", family=family)
    if k < 2:
        raise ParameterError(
            "{states} must be at least 2 for {family}, not {k}", family=family, k=k
        )
    return k


def n_params(family: str, d: int, k: int | None = None) -> int:
    """Number of free parameters (the length of ``theta``)."""
    k = check_sizes(family, d, k)
    if family == "pcfg":
        return (k - 1) + k * (k * k - 1) + k * (d - 1)
    if family == "pcfg-i":
        return (k - 1) + 2 * k * (k - 1) + k * (d - 1)
    if family == "pcfg-ie":
        return (k - 1) + k * (k - 1) + k * (d - 1)
    if family == "dep-i":
        return (d - 1) + 2 * d * (d - 1)
    if family == "dep-ie":
        return (d - 1) + d * (d - 1)
    return d * (d - 1)


def _blocks(family: str, d: int, k: int) -> list[tuple[str, int, int]]:
    """(name, support size, number of distributions) of each parameter block, in order."""
    if family == "pcfg":
        return [("pi", k, 1), ("b", k * k, k), ("o", d, k)]
    if family == "pcfg-i":
        return [("pi", k, 1), ("t1", k, k), ("t2", k, k), ("o", d, k)]
    if family == "pcfg-ie":
        return [("pi", k, 1), ("t", k, k), ("o", d, k)]
    if family == "dep-i":
        return [("pi", d, 1), ("left", d, d), ("right", d, d)]
    if family == "dep-ie":
        return [("pi", d, 1), ("a", d, d)]
    return [("a", d, d)]


def random_theta(family: str, d: int, k: int | None, rng: np.random.Generator) -> np.ndarray:
    """A parameter point drawn uniformly: every distribution uniform on its simplex."""
    k = check_sizes(family, d, k)
    parts = []
    for _, size, count in _blocks(family, d, k):
        cols = rng.dirichlet(np.ones(size), size=count)  # (count, size)
        parts.append(cols[:, :-1].reshape(-1))
    return np.concatenate(parts)


def _columns(theta: np.ndarray, size: int, count: int) -> np.ndarray:
    """Free entries (..., count * (size - 1)) -> distributions as columns (..., size, count)."""
    free = theta.reshape(*theta.shape[:-1], count, size - 1)
    last = 1 - free.sum(axis=-1, keepdims=True)
    return np.swapaxes(np.concatenate([free, last], axis=-1), -1, -2)


def unpack(family: str, theta: np.ndarray, d: int, k: int | None = None) -> Params:
    """``theta`` (..., n) -> the model's distributions (complex ``theta`` stays complex)."""
    k = check_sizes(family, d, k)
    theta = np.asarray(theta)
    if theta.shape[-1] != n_params(family, d, k):
        raise ValueError(
            f"theta has {theta.shape[-1]} entries, {family} needs {n_params(family, d, k)}"
        )
    blocks: dict[str, np.ndarray] = {}
    at = 0
    for name, size, count in _blocks(family, d, k):
        n = count * (size - 1)
        cols = _columns(theta[..., at : at + n], size, count)
        blocks[name] = cols[..., 0] if name == "pi" else cols
        at += n
    if family in CONSTITUENCY:
        if family == "pcfg":
            b = blocks["b"].reshape(*theta.shape[:-1], k, k, k)
            return Constituency(blocks["pi"], b, blocks["o"])
        t1 = blocks.get("t1", blocks.get("t"))
        t2 = blocks.get("t2", t1)
        return Constituency(blocks["pi"], factor_product(t1, t2), blocks["o"], t1, t2)
    if family == "dep-i":
        return Dependency(blocks["pi"], blocks["left"], blocks["right"])
    a = blocks["a"]
    pi = blocks["pi"] if family == "dep-ie" else stationary(a)
    return Dependency(pi, a, a)


def pack(family: str, params: Params) -> np.ndarray:
    """The free vector of unbatched ``params`` (inverse of ``unpack``)."""
    if isinstance(params, Constituency):
        k = params.k
        if family == "pcfg":
            mats = [params.pi[:, None], params.b.reshape(k * k, k), params.o]
        elif family == "pcfg-i":
            mats = [params.pi[:, None], params.t1, params.t2, params.o]
        else:
            mats = [params.pi[:, None], params.t1, params.o]
    elif family == "dep-i":
        mats = [params.pi[:, None], params.left, params.right]
    elif family == "dep-ie":
        mats = [params.pi[:, None], params.left]
    else:
        mats = [params.left]
    return np.concatenate([np.asarray(m).T[:, :-1].reshape(-1) for m in mats])


def factor_product(t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """``T1 (x)_C T2`` as a tensor: ``b[..., s1, s2, s] = t1[..., s1, s] * t2[..., s2, s]``."""
    return t1[..., :, None, :] * t2[..., None, :, :]


def stationary(a: np.ndarray) -> np.ndarray:
    """The stationary distribution ``pi = A pi`` of column-stochastic ``a`` (..., d, d).

    Solved as a linear system (``(A - I) pi = 0`` with the last equation replaced by
    ``sum(pi) = 1``), so it is a rational, complex-differentiable function of ``a``."""
    d = a.shape[-1]
    m = a - np.eye(d)
    m = np.concatenate([m[..., :-1, :], np.ones_like(m[..., -1:, :])], axis=-2)
    rhs = np.zeros(a.shape[:-1], dtype=m.dtype)
    rhs[..., -1] = 1
    return np.linalg.solve(m, rhs[..., None])[..., 0]


def random_params(family: str, d: int, k: int | None, rng: np.random.Generator) -> Params:
    """A random model of ``family`` (uniform on each simplex), unbatched."""
    return unpack(family, random_theta(family, d, k, rng), d, k)
