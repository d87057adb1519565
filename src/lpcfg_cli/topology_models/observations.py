"""The observation functions of Hsu et al. (2012), section 4.1, as blocks of moment rows.

An observation function phi(x) of a length-``L`` sentence is seen only through its moments
``E[phi(x)]``. Each function here is a list of *blocks*: a set of distinct positions ``U``
(0-based, increasing) and one operation per position applied to the moment tensor
``E[(x) x_u for u in U]``:

- ``full``: the axis stays (one row per word);
- ``eta``: the axis is contracted with ``eta`` (``eta^T x_u``);
- ``scale``: the axis stays, each entry times ``eta`` at that word (``x_u (eta^T x_u)``,
  where a position is both a matrix index and the sliced one).

Moment entries that are repeated or identically zero are dropped, which keeps the row
space (so the Jacobian's rank) of the paper's definition: ``x_j (x) x_i`` is the transpose
of ``x_i (x) x_j``; ``x_i (x) x_i`` is ``diag(x_i)`` (its ``d`` diagonal entries are the
rows of ``E[x_i]``); a repeated index in a triple likewise leaves the rows of a pair or a
single position. ``phi***`` is thus every set of one to three distinct positions.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError

# name -> (paper's symbol, fewest words it needs)
OBSERVATIONS: dict[str, tuple[str, int]] = {
    "phi12": ("x1 (x) x2", 2),
    "phi123": ("x1 (x) x2 (x) x3", 3),
    "phi123eta": ("(x1 (x) x2)(eta^T x3)", 3),
    "phi**": ("x_i (x) x_j, all i, j", 1),
    "phi***": ("x_i (x) x_j (x) x_k, all i, j, k", 1),
    "phi***eta": ("(x_i (x) x_j)(eta^T x_k), all i, j, k", 1),
    "phiall": ("x_1 (x) ... (x) x_L", 1),
}


@dataclass(frozen=True)
class Block:
    """Moment rows: positions ``U`` and one operation per position (module docstring)."""

    positions: tuple[int, ...]
    ops: tuple[str, ...]


ETAS = ("e1", "random")  # the slicing vectors ``eta_vector`` draws


def blocks(name: str, length: int) -> list[Block]:
    """The blocks of observation function ``name`` on sentences of ``length`` words."""
    if name not in OBSERVATIONS:
        raise LpcfgError(
            f"unknown observation function {name!r} (choose from {', '.join(OBSERVATIONS)})"
        )
    need = OBSERVATIONS[name][1]
    if length < need:
        raise LpcfgError(f"{name} needs sentences of at least {need} words, not {length}")
    if name == "phi12":
        return [Block((0, 1), ("full", "full"))]
    if name == "phi123":
        return [Block((0, 1, 2), ("full",) * 3)]
    if name == "phi123eta":
        return [Block((0, 1, 2), ("full", "full", "eta"))]
    if name == "phiall":
        return [Block(tuple(range(length)), ("full",) * length)]
    pos = range(length)
    if name == "phi**":
        return [
            Block(u, ("full",) * len(u)) for r in (1, 2) for u in itertools.combinations(pos, r)
        ]
    if name == "phi***":
        return [
            Block(u, ("full",) * len(u)) for r in (1, 2, 3) for u in itertools.combinations(pos, r)
        ]
    out: list[Block] = []  # phi***eta: (x_i (x) x_j)(eta^T x_k), i <= j (transposes dropped)
    for i, j in itertools.combinations_with_replacement(pos, 2):
        for k in pos:
            ops = {i: "full", j: "full"}
            ops[k] = "scale" if k in (i, j) else "eta"
            u = tuple(sorted(ops))
            out.append(Block(u, tuple(ops[q] for q in u)))
    return list(dict.fromkeys(out))


def apply(block: Block, tensor: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """The block's rows from its moment tensor (..., d, ..., d): flattened (..., rows)."""
    r = len(block.positions)
    batch = tensor.ndim - r
    t = tensor
    for axis in reversed(range(r)):  # last axis first, so earlier axis numbers stay valid
        op = block.ops[axis]
        if op == "eta":
            t = np.tensordot(t, eta, axes=([batch + axis], [0]))
        elif op == "scale":
            shape = [1] * t.ndim
            shape[batch + axis] = len(eta)
            t = t * eta.reshape(shape)
    return t.reshape(*t.shape[:batch], -1)


def eta_vector(kind: str, d: int, rng: np.random.Generator) -> np.ndarray:
    """``e1`` (the paper's Figure 2) or ``random``: a uniformly random unit vector."""
    if kind == "e1":
        eta = np.zeros(d)
        eta[0] = 1.0
        return eta
    if kind == "random":
        eta = rng.standard_normal(d)
        return eta / np.linalg.norm(eta)
    raise ParameterError("{eta} must be e1 or random, not {kind!r}", kind=kind)
