#!/usr/bin/env python3
"""Parser benchmark on the standard test split (wsj_0175-0199).

Trains the PCFG on the train split, builds an m-state latent model from it (the PCFG split
into m noisy states: same accuracy, the cost of a real m-state model), parses the test
sentences with each, and reports sentences/s, the multiply-adds of the latent
inside-outside, the GFLOP/s they ran at, and numpy's dense matrix-product rate on this
machine in the same run (their ratio is the efficiency figure).

    python scripts/bench_parse.py --data data --states 16
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from lpcfg_cli.binarize import BinarizeOptions
from lpcfg_cli.learners.pcfg import train_pcfg
from lpcfg_cli.parser import Parser
from lpcfg_cli.synthetic import split_model
from lpcfg_cli.training import prepare


def gemm_gflops(dtype: type, n: int = 1024, repeat: int = 5) -> float:
    """Rate numpy reaches on a dense matrix product."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)).astype(dtype), rng.random((n, n)).astype(dtype)
    a @ b
    t0 = time.perf_counter()
    for _ in range(repeat):
        a @ b
    return 2 * n**3 * repeat / (time.perf_counter() - t0) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--states", type=int, default=16)
    ap.add_argument("--prune", type=float, default=1e-5)
    ap.add_argument("--limit", type=int, default=0, help="parse only the first N sentences")
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "train.mrg").exists():
        print(f"bench_parse: {data}/train.mrg missing: run `make data` first", file=sys.stderr)
        return 2
    sentences = [line.split() for line in (data / "test.txt").read_text().splitlines()]
    if args.limit:
        sentences = sentences[: args.limit]
    prep = prepare([str(data / "train.mrg")], BinarizeOptions())
    pcfg = train_pcfg(prep.grammar, prep.bank, {})
    rows = []
    for name, model in (("pcfg", pcfg), (f"m={args.states}", split_model(pcfg, args.states))):
        parser = Parser(model, prune=args.prune)
        t0 = time.perf_counter()
        results = parser.parse(sentences)
        dt = time.perf_counter() - t0
        rows.append((name, len(results), dt, parser.stats))
    # The latent pass runs in float32: that is the peak to compare it with.
    peak64, peak32 = gemm_gflops(np.float64), gemm_gflops(np.float32)
    print(f"numpy dense matmul: {peak64:.1f} GFLOP/s float64, {peak32:.1f} GFLOP/s float32")
    for name, n, dt, st in rows:
        line = (
            f"{name:>6}: {n} sentences in {dt:.1f} s = {n / dt:.2f} sentences/s, "
            f"{st.fallbacks} fallbacks; coarse pass {st.coarse_seconds:.1f} s"
        )
        if st.latent_flops:
            rate = st.latent_flops / st.latent_seconds / 1e9
            line += (
                f"; latent pass {st.latent_seconds:.1f} s, {st.latent_flops / 1e9:.1f} GFLOP "
                f"(2 x multiply-adds) at {rate:.2f} GFLOP/s = {rate / peak32:.3f} of float32 "
                "matmul"
            )
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
