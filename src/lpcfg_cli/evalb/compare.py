"""Is one parser's strict F1 better than another's on the same gold trees, or is it noise?

Two tests over sentences, both on the strict F-measure ``2M / (G + T)`` of the pooled
bracket counts (F1 is a ratio of sums, so neither averages per-sentence scores):

- a paired bootstrap (Efron & Tibshirani 1993; for parsing, Berg-Kirkpatrick, Burkett &
  Klein 2012): resample the sentences with replacement, keep each sentence's two parses
  together, and read the spread of the difference ``F1(A) - F1(B)`` off the resamples (its
  standard deviation and 95 % percentile interval);
- approximate randomization (Noreen 1989; Yeh 2000; the test of Bikel's parsing
  comparator): under the null hypothesis the two parses of a sentence are exchangeable,
  so swap each sentence's pair with probability 1/2 and count the swaps whose
  ``|F1(A') - F1(B')|`` reaches the observed one; two-sided ``p = (k + 1) / (N + 1)``.

Both run as matrix products over the sentence counts, in chunks (the multinomial draws
dominate; timings: docs/design-notes.md, Smaller notes). What a difference on the PTB's dev
and test splits can say: docs/experiments/ptb.md (Seeds, and what a difference means).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from lpcfg_cli.evalb.run import EvalResult
from lpcfg_cli.hyperparams import Checked, hyper

CHUNK = 500  # samples per matrix product: bounds memory at CHUNK x sentences


@dataclass(frozen=True)
class CompareOptions(Checked):
    """The resampling of ``compare``: samples of each test and their seed."""

    samples: int = hyper(10_000, "With --against: resamples of each test.", min=1)
    seed: int = hyper(0, "With --against: seed of the resampling.", min=0)


@dataclass(frozen=True)
class Comparison:
    """Strict F1 of two parsers on the same gold lines and the tests of their difference."""

    sentences: int
    fmeasure_a: float
    fmeasure_b: float
    difference: float  # fmeasure_a - fmeasure_b
    bootstrap_sd: float
    interval: tuple[float, float]  # 95 % percentile interval of the difference
    p_value: float  # approximate randomization, two-sided
    samples: int
    seed: int

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["interval"] = list(self.interval)
        return out


def fmeasures(totals: np.ndarray) -> np.ndarray:
    """Strict F-measure (percent) of each row of ``(matched, gold, test)`` totals."""
    totals = np.asarray(totals, dtype=float)
    m, g, t = totals[..., 0], totals[..., 1], totals[..., 2]
    return np.divide(200.0 * m, g + t, out=np.zeros_like(m), where=g + t > 0)


def paired_counts(a: EvalResult, b: EvalResult) -> tuple[np.ndarray, np.ndarray]:
    """Both results' per-sentence strict counts, ``(n, 3)`` each; they must come from the
    same gold lines."""
    ca, cb = np.array(a.strict_counts(), int), np.array(b.strict_counts(), int)
    if ca.shape != cb.shape or not np.array_equal(ca[:, 1], cb[:, 1]):
        raise ValueError("the two results do not score the same gold lines")
    return ca.reshape(-1, 3), cb.reshape(-1, 3)


def compare(
    a: EvalResult, b: EvalResult, options: CompareOptions | None = None, /, **values: Any
) -> Comparison:
    """Paired bootstrap and approximate randomization of ``F1(a) - F1(b)`` (see the module)
    with ``options`` (``CompareOptions``' defaults when None), ``values`` replacing fields by
    name (``compare(a, b, samples=1000)``)."""
    o = replace(options or CompareOptions(), **values)
    ca, cb = paired_counts(a, b)
    return compare_counts(ca, cb, o.samples, o.seed)


def compare_counts(ca: np.ndarray, cb: np.ndarray, samples: int, seed: int) -> Comparison:
    """``compare`` on per-sentence ``(matched, gold, test)`` counts of the two parsers."""
    n = len(ca)
    total_a, total_b = ca.sum(axis=0), cb.sum(axis=0)
    fa, fb = fmeasures(total_a), fmeasures(total_b)
    observed = float(fa - fb)
    rng = np.random.default_rng(seed)
    boot, extreme = [], 0
    delta = cb - ca
    for lo in range(0, samples, CHUNK):
        k = min(CHUNK, samples - lo)
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=k) if n else np.zeros((k, 0))
        boot.append(fmeasures(weights @ ca) - fmeasures(weights @ cb))
        swaps = rng.integers(0, 2, size=(k, n))
        moved = swaps @ delta
        diff = fmeasures(total_a + moved) - fmeasures(total_b - moved)
        # a tolerance, so that a swap giving back the observed split counts as reaching it
        extreme += int(np.sum(np.abs(diff) >= abs(observed) - 1e-9))
    dist = np.concatenate(boot)
    lo95, hi95 = np.percentile(dist, [2.5, 97.5])
    return Comparison(
        sentences=n,
        fmeasure_a=float(fa),
        fmeasure_b=float(fb),
        difference=observed,
        bootstrap_sd=float(dist.std(ddof=1)) if samples > 1 else 0.0,
        interval=(float(lo95), float(hi95)),
        p_value=(extreme + 1) / (samples + 1),
        samples=samples,
        seed=seed,
    )


def format_comparison(c: Comparison, name_a: str, name_b: str) -> str:
    """The text block ``lpcfg evaluate --against`` prints after the report."""
    width = max(len(name_a), len(name_b), 10)
    lo, hi = c.interval
    return (
        f"\n-- Paired comparison of strict F-measures ({c.sentences} sentences) --\n"
        f"{name_a:<{width}}  {c.fmeasure_a:6.2f}\n"
        f"{name_b:<{width}}  {c.fmeasure_b:6.2f}\n"
        f"{'difference':<{width}}  {c.difference:+6.2f}\n"
        f"paired bootstrap ({c.samples} samples, seed {c.seed}): sd {c.bootstrap_sd:.2f}, "
        f"95% interval {lo:+.2f} to {hi:+.2f}\n"
        f"approximate randomization (two-sided): p = {c.p_value:.4f}\n"
    )
