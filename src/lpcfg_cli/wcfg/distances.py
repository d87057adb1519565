"""Distances between string functions, as the WCFG experiments measure them.

- ``kl_divergence`` (Bailly et al. 2013, Figures 1-2: "KL divergence for sequences up to
  length 10"): both functions are restricted to the strings up to ``max_length`` and
  renormalised there, and the model's values are floored at ``FLOOR`` first. A spectral
  WCFG is not a distribution: it gives small negative values to some strings (section
  3.2), where a logarithm is undefined; flooring counts such a string as very unlikely,
  and renormalising makes the figure a divergence between two distributions on the same
  finite set (non-negative, zero only for equal functions). ``floored`` says how many
  strings were floored.
- ``l1_distance`` (section 5.2, footnote 1): ``sum_x |f1(x) - f2(x)|`` over the strings up
  to ``max_length``, values as they are.
- ``expected_l1``: ``sum_x p_S(x) |g(x) - p_S(x)|`` over the distinct strings of a sample
  with empirical distribution ``p_S`` (our reading of Table 2's "expected L1 on the training
  set"; the paper does not define it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lpcfg_cli.wcfg.algebraic import WCFG

FLOOR = 1e-12


@dataclass(frozen=True)
class Divergence:
    value: float
    floored: int  # strings whose model value was at most FLOOR


def _values(w: WCFG, max_length: int) -> np.ndarray:
    return np.concatenate(w.values_all(max_length)[1:])


def kl_divergence(target: WCFG, model: WCFG, max_length: int = 10) -> Divergence:
    """KL(target || model) over the strings up to ``max_length`` (see the module docstring)."""
    p, q = _values(target, max_length), _values(model, max_length)
    floored = int(np.sum(q <= FLOOR))
    q = np.maximum(q, FLOOR)
    p = np.maximum(p, 0.0)
    p, q = p / p.sum(), q / q.sum()
    keep = p > 0
    return Divergence(float(np.sum(p[keep] * np.log(p[keep] / q[keep]))), floored)


def l1_distance(target: WCFG, model: WCFG, max_length: int = 7) -> float:
    """``sum |target(x) - model(x)|`` over the strings up to ``max_length``."""
    return float(np.abs(_values(target, max_length) - _values(model, max_length)).sum())


def expected_l1(model: WCFG, strings: Sequence[Sequence[int]], counts: Sequence[float]) -> float:
    """``sum_x p_S(x) |model(x) - p_S(x)|`` over the distinct ``strings`` of a sample."""
    counts = np.asarray(counts, dtype=np.float64)
    p = counts / counts.sum()
    g = np.array([model.value(x) for x in strings])
    return float(np.sum(p * np.abs(g - p)))
