"""The spectral weighted finite automaton, the baseline of Bailly et al. 2013, Figure 3.

The paper compares its WCFGs on the Dyck language with "a Weighted Finite Automata learned
using spectral methods as described in (Luque et al., 2012)": the Hankel method for string
functions (Hsu, Kakade & Zhang 2009; Bailly, Denis & Ralaivola 2009; Balle, Quattoni &
Carreras 2011). With prefixes ``P`` and suffixes ``S`` (both holding the empty string),
``H[u, v] = f(u v)``, ``H_sigma[u, v] = f(u sigma v)``, ``h_P[u] = f(u)``,
``h_S[v] = f(v)`` and the rank-``n`` SVD ``H ~ U D V^T``:

    alpha_0^T = h_S^T V,   alpha_inf = (H V)^+ h_P,   A_sigma = (H V)^+ H_sigma V,

and ``f(x_1 .. x_k) = alpha_0^T A_{x_1} .. A_{x_k} alpha_inf``. Here ``f`` is the empirical
distribution of whole strings, as for the unsupervised WCFG.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

String = tuple[int, ...]


@dataclass
class WFA:
    """``initial`` (n,), ``transitions`` (d, n, n), ``final`` (n,)."""

    initial: np.ndarray
    transitions: np.ndarray
    final: np.ndarray

    @property
    def d(self) -> int:
        return self.transitions.shape[0]

    def value(self, x: Sequence[int]) -> float:
        v = self.initial
        for s in x:
            v = v @ self.transitions[int(s)]
        return float(v @ self.final)

    def values_all(self, max_length: int) -> list[np.ndarray]:
        """``f`` of every string up to ``max_length``, by length, in the order of
        ``wcfg.algebraic.all_strings`` (entry 0 is the empty string's value)."""
        forward = self.initial[None, :]
        out = [forward @ self.final]
        for _ in range(max_length):
            # Row c * d + s extends string c by symbol s: base-d order, first symbol first.
            forward = np.einsum("ci,sij->csj", forward, self.transitions).reshape(
                -1, len(self.final)
            )
            out.append(forward @ self.final)
        return out


def select_basis(
    strings: Sequence[Sequence[int]], counts: Sequence[float], factor: float
) -> tuple[list[String], list[String]]:
    """The most frequent fraction ``factor`` of the observed prefixes and of the observed
    suffixes (weighted by the strings' counts; ties in lexicographic order), each with the
    empty string first."""
    pre: Counter[String] = Counter()
    suf: Counter[String] = Counter()
    for x, c in zip(strings, counts, strict=True):
        x = tuple(int(s) for s in x)
        for k in range(1, len(x) + 1):
            pre[x[:k]] += c
            suf[x[-k:]] += c

    def top(counter: Counter[String]) -> list[String]:
        ranked = sorted(counter, key=lambda u: (-counter[u], len(u), u))
        keep = max(1, int(round(factor * len(ranked))))
        return [(), *ranked[:keep]]

    return top(pre), top(suf)


def learn_wfa(
    strings: Sequence[Sequence[int]],
    counts: Sequence[float],
    n: int,
    d: int,
    prefixes: Sequence[String],
    suffixes: Sequence[String],
) -> WFA:
    """The rank-``n`` spectral WFA of the empirical distribution of ``strings``."""
    counts = np.asarray(counts, dtype=np.float64)
    p: dict[String, float] = {}
    for x, c in zip(strings, counts / counts.sum(), strict=True):
        key = tuple(int(s) for s in x)
        p[key] = p.get(key, 0.0) + float(c)

    def block(mid: String) -> np.ndarray:
        return np.array([[p.get(u + mid + v, 0.0) for v in suffixes] for u in prefixes])

    H = block(())
    u, sv, vt = np.linalg.svd(H, full_matrices=False)
    rank = int(np.sum(sv > sv[0] * 1e-12)) if sv.size and sv[0] > 0 else 0
    if n > rank:
        raise ValueError(f"{n} states exceed the rank of the Hankel matrix")
    v = vt[:n].T
    hv_pinv = np.linalg.pinv(H @ v)
    h_p = np.array([p.get(u_, 0.0) for u_ in prefixes])
    h_s = np.array([p.get(v_, 0.0) for v_ in suffixes])
    transitions = np.stack([hv_pinv @ block((s,)) @ v for s in range(d)])
    return WFA(h_s @ v, transitions, hv_pinv @ h_p)
