#!/usr/bin/env python3
"""Consistency of the spectral and pivot learners on synthetic L-PCFGs.

Samples 10^3, 10^4, 10^5 (``--sizes``) trees from a known L-PCFG (it satisfies the pivot
assumption and the spectral rank conditions) and reports how far the learned models are
from the truth: the mean |log p_hat(tree) - log p(tree)| on held-out trees (both learners)
and, for the pivot learner, the largest parameter error up to a permutation of latent
states. Theory (Cohen et al. 2014, theorem 3; Cohen & Collins 2014, theorem 1) predicts
errors falling like 1/sqrt(M), and none from the population moments (M -> infinity).

``--target finite`` (the default) is ``finite_pivot_lpcfg``: its support is finite, so each
learner is also given the exact moments (``exact_support``: every tree weighted by its
probability times ``--nominal``, the sample size the count-based constants such as
smoothing, the CCA ridge and ``min_count`` see), and the pivot learner is rerun from them
with its suspect constants varied (``PIVOT_VARIANTS``). ``--target recursive`` is
``pivot_lpcfg`` (infinite support: samples only). The unit tests check 10^3 -> 10^4 and
the exact moments; ``--plot PATH`` draws the errors against the number of trees on log-log
axes with the 1/sqrt(M) slope and each learner's exact-moment error as a dashed line
(PATH.png, and PATH.json with the numbers, the variants under ``data``).

    python scripts/bench_consistency.py --sizes 1000,10000,100000 [--plot out/consistency]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.latent_pcfg.consistency import (
    ENGINEERED_SPECTRAL,
    PAPER_SPECTRAL,
    PURE_PIVOT,
    exact_support,
    finite_pivot_lpcfg,
    held_out_error,
    parameter_error,
    pivot_lpcfg,
)
from lpcfg_cli.latent_pcfg.features import OUTSIDE, TreeSample
from lpcfg_cli.latent_pcfg.pivot import PivotEstimator
from lpcfg_cli.latent_pcfg.spectral import SpectralEstimator
from lpcfg_cli.model.sampling import sample_trees
from lpcfg_cli.treebank.tree import Tree

SPECTRAL = {"spectral (paper)": PAPER_SPECTRAL, "spectral (engineered)": ENGINEERED_SPECTRAL}
# ``ancestor_head`` is not a function of the outside tree alone (whether an ancestor's head
# tag "differs" depends on the node's own head tag), which the estimators assume.
PURE_OUTSIDE = tuple(t for t in OUTSIDE if t != "ancestor_head")
# Exact-moment reruns: the two suspects of the pivot floor, and the other constants that do
# not vanish with M (the rule EM's iteration count and the uniform floor mixed into it).
SPECTRAL_VARIANTS = {
    "spectral (engineered), no ancestor_head": replace(
        ENGINEERED_SPECTRAL, outside_features=PURE_OUTSIDE
    ),
}
PIVOT_VARIANTS = {
    "pivot, cca_ridge 0": replace(PURE_PIVOT, cca_ridge=0.0),
    "pivot, 2000 Frank-Wolfe iterations": replace(PURE_PIVOT, frank_wolfe_iterations=2000),
    "pivot, 300 rule EM iterations": replace(PURE_PIVOT, rule_iterations=300),
    "pivot, no ancestor_head": replace(PURE_PIVOT, outside_features=PURE_OUTSIDE),
    "pivot, no ancestor_head, 1000 rule EM iterations, floor 0": replace(
        PURE_PIVOT, outside_features=PURE_OUTSIDE, rule_iterations=1000, floor=0.0
    ),
}
# A row: (learner, training trees or None for the exact moments, held-out error,
# parameter error or None, seconds).
Row = tuple[str, int | None, float, float | None, float]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--target", choices=("finite", "recursive"), default="finite")
    ap.add_argument(
        "--nominal", type=float, default=1e18, help="exact moments: the sample size they stand for"
    )
    ap.add_argument("--plot", default=None, help="draw PLOT.png (and PLOT.json)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    # The rank conditions must hold for the features used: in both targets every symbol
    # with two states has states differing in inside and outside features (a random grammar
    # where a symbol occurs in one context only gives that symbol one state, and a floor).
    truth = finite_pivot_lpcfg() if args.target == "finite" else pivot_lpcfg()
    rows: list[Row] = []
    variants: list[Row] = []
    runs: list[tuple[int | None, list[Tree], np.ndarray | None]] = [
        (n, sample_trees(truth, n, seed=n), None) for n in sizes
    ]
    if args.target == "finite":
        support = exact_support(truth)
        print(f"exact support: {len(support.trees)} trees, mass left out {support.left_out:.1e}",
              file=sys.stderr)  # fmt: skip
        runs.append((None, support.trees, support.probs * args.nominal))
    for n, trees, weights in runs:
        grammar, bank = build_grammar(trees, rare=0)
        learners = {**SPECTRAL, **(SPECTRAL_VARIANTS if n is None else {})}
        for name, opts in learners.items():
            t0 = time.perf_counter()
            model = SpectralEstimator(TreeSample(grammar, bank, trees, weights), opts).model(2)
            sec = time.perf_counter() - t0
            row = (name, n, held_out_error(truth, model, seed=99), None, sec)
            (rows if name in SPECTRAL else variants).append(row)
            print(row, file=sys.stderr, flush=True)
        pivots = {"pivot": PURE_PIVOT, **(PIVOT_VARIANTS if n is None else {})}
        for name, opts in pivots.items():
            t0 = time.perf_counter()
            model = PivotEstimator(TreeSample(grammar, bank, trees), opts, weights).model(2)
            sec = time.perf_counter() - t0
            errors = held_out_error(truth, model), parameter_error(truth, model)
            row = (name, n, *errors, sec)
            (rows if name == "pivot" else variants).append(row)
            print(row, file=sys.stderr, flush=True)
    print(f"target: {args.target}")
    print("| learner | trees | held-out mean abs log-prob error | max parameter error | s |")
    print("|---|---|---|---|---|")
    order = {name: i for i, name in enumerate(dict.fromkeys(r[0] for r in rows))}
    for name, n, lp_err, p_err, sec in sorted(rows, key=lambda r: order[r[0]]) + variants:
        perr = "" if p_err is None else f"{p_err:.3g}"
        trees = "exact" if n is None else str(n)
        print(f"| {name} | {trees} | {lp_err:.3g} | {perr} | {sec:.1f} |")
    if args.plot:
        print(plot(Path(args.plot), rows, variants, args.target))
    return 0


def plot(
    path: Path, rows: Sequence[Row], variants: Sequence[Row] = (), target: str = "finite"
) -> Path:
    """Each learner's errors against the number of trees, log-log, with a 1/sqrt(M) line
    through its first point (theory's rate: a parallel line is a consistent estimator) and
    its error from the exact moments (rows with trees None) as a dashed line of its colour.
    ``variants`` (exact-moment reruns) go to the JSON only."""
    from plots import Panel, Series, draw, level_line, slope_line

    held = Panel("held-out error", "training trees M", "mean |log p_hat - log p|",
                 logx=True, logy=True)  # fmt: skip
    param = Panel("pivot: parameter error", "training trees M",
                  "max parameter error (up to a permutation)", logx=True, logy=True)  # fmt: skip
    sampled = [r for r in rows if r[1] is not None]
    span = [r[1] for r in sampled] or [1]
    for i, name in enumerate(dict.fromkeys(r[0] for r in rows)):
        mine = [r for r in sampled if r[0] == name]
        exact = [r for r in rows if r[0] == name and r[1] is None]
        ns = [r[1] for r in mine]
        held.series.append(Series(name, ns, [r[2] for r in mine], style=f"C{i}o-"))
        if exact:
            held.series.append(level_line(f"{name}, exact moments", span, exact[0][2], f"C{i}--"))
        if (mine or exact)[0][3] is not None:
            param.series.append(Series(name, ns, [r[3] for r in mine], style=f"C{i}o-"))
            if mine:
                param.series.append(slope_line("1/sqrt(M)", ns, mine[0][3], -0.5))
            if exact:
                param.series.append(
                    level_line(f"{name}, exact moments", span, exact[0][3], f"C{i}--")
                )
    if sampled:
        first = sampled[0]
        held.series.append(slope_line("1/sqrt(M)", [r[1] for r in sampled if r[0] == first[0]],
                                      first[2], -0.5))  # fmt: skip
    if sampled:  # an exact-moments error of zero up to rounding (1e-15) drawn at a floor
        held.ymin = 10.0 ** math.floor(math.log10(min(r[2] for r in sampled) / 100))
    title = {"finite": "a finite-support", "recursive": "a recursive"}[target]
    table = [
        {"learner": r[0], "trees": r[1], "held_out": r[2], "parameter": r[3], "seconds": r[4]}
        for r in [*rows, *variants]
    ]
    return draw(path, [held, param], f"Consistency on {title} two-state L-PCFG",
                data={"target": target, "rows": table})  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
