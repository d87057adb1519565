#!/usr/bin/env python3
"""Consistency of the spectral and pivot learners on synthetic L-PCFGs.

Samples 10^3, 10^4, 10^5 (``--sizes``) trees from a known two-state L-PCFG (it satisfies the
pivot assumption and the spectral rank conditions) and reports how far the learned models
are from the truth: the mean |log p_hat(tree) - log p(tree)| on held-out trees (both
learners) and, for the pivot learner, the largest parameter error up to a permutation of
latent states. Theory (Cohen et al. 2014, theorem 3; Cohen & Collins 2014, theorem 1)
predicts errors falling like 1/sqrt(n). The unit tests check 10^3 -> 10^4; this script
adds the slower 10^5. ``--plot PATH`` draws the errors against the number of trees on
log-log axes with the 1/sqrt(n) slope (PATH.png, and PATH.json with the numbers).

    python scripts/bench_consistency.py --sizes 1000,10000,100000 [--plot out/consistency]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.learners.consistency import (
    ENGINEERED_SPECTRAL,
    PAPER_SPECTRAL,
    PURE_PIVOT,
    held_out_error,
    parameter_error,
    pivot_lpcfg,
)
from lpcfg_cli.learners.pivot import PivotEstimator
from lpcfg_cli.learners.spectral import SpectralEstimator
from lpcfg_cli.model.sampling import sample_trees

SPECTRAL = {"spectral (paper)": PAPER_SPECTRAL, "spectral (engineered)": ENGINEERED_SPECTRAL}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--plot", default=None, help="draw PLOT.png (and PLOT.json)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    # The rank conditions must hold for the features used: in pivot_lpcfg every symbol's
    # states differ in inside and outside features (a random grammar where a symbol occurs
    # in one context only gives that symbol one state, and an error floor).
    truth = pivot_lpcfg()
    for n in sizes:
        trees = sample_trees(truth, n, seed=n)
        grammar, bank = build_grammar(trees, rare=0)
        for name, opts in SPECTRAL.items():
            t0 = time.perf_counter()
            model = SpectralEstimator(grammar, bank, trees, opts).model(2)
            sec = time.perf_counter() - t0
            rows.append((name, n, held_out_error(truth, model, seed=99), None, sec))
            print(rows[-1], file=sys.stderr, flush=True)
    for n in sizes:
        trees = sample_trees(truth, n, seed=n)
        grammar, bank = build_grammar(trees, rare=0)
        t0 = time.perf_counter()
        model = PivotEstimator(grammar, bank, trees, PURE_PIVOT).model(2)
        sec = time.perf_counter() - t0
        rows.append(("pivot", n, held_out_error(truth, model), parameter_error(truth, model), sec))
        print(rows[-1], file=sys.stderr, flush=True)
    print("| learner | trees | held-out mean abs log-prob error | max parameter error | s |")
    print("|---|---|---|---|---|")
    for name, n, lp_err, p_err, sec in rows:
        perr = "" if p_err is None else f"{p_err:.4f}"
        print(f"| {name} | {n} | {lp_err:.4f} | {perr} | {sec:.1f} |")
    if args.plot:
        print(plot(Path(args.plot), rows))
    return 0


def plot(path: Path, rows: list[tuple]) -> Path:
    """Each learner's errors against the number of trees, log-log, with a 1/sqrt(n) line
    through its first point (theory's rate: a parallel line is a consistent estimator)."""
    from plots import Panel, Series, draw, slope_line

    held = Panel("held-out error", "training trees M", "mean |log p_hat - log p|",
                 logx=True, logy=True)  # fmt: skip
    param = Panel("pivot: parameter error", "training trees M",
                  "max parameter error (up to a permutation)", logx=True, logy=True)  # fmt: skip
    for name in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == name]
        ns = [r[1] for r in mine]
        held.series.append(Series(name, ns, [r[2] for r in mine]))
        if mine[0][3] is not None:
            param.series.append(Series(name, ns, [r[3] for r in mine]))
            param.series.append(slope_line("1/sqrt(M)", ns, mine[0][3], -0.5))
    first = rows[0]
    held.series.append(slope_line("1/sqrt(M)", [r[1] for r in rows if r[0] == first[0]],
                                  first[2], -0.5))  # fmt: skip
    return draw(path, [held, param], "Consistency on a synthetic two-state L-PCFG")


if __name__ == "__main__":
    sys.exit(main())
