#!/usr/bin/env python3
"""Does hierarchical coarse-to-fine pay? An intermediate latent pass before the model's own.

The Berkeley parser prunes with grammars of 1, 2, 4, 8 states before its full one; lpcfg
prunes once, with the treebank PCFG (``parser``). The chart-engine issue asks to consider the
hierarchy "if it cuts the latent items more than it costs". On the standard test split, one
process, one BLAS thread, max-marginal decoding, this times:

- ``coarse only``: the model's latent pass over the items the coarse pass keeps (what
  ``lpcfg parse`` does);
- for each ``--intermediate`` model (a smaller latent model of the same treebank, e.g.
  ``lpcfg train --method em --states 2 --iterations 10``) and ``--thresholds`` value: that
  model's latent pass over the same items, then the model's own over the items whose
  posterior under it is at least the threshold;
- ``oracle``: the model's own posteriors as the pruner, its second pass alone: the most any
  intermediate pass could save, were it free.

Each row gives the latent seconds (intermediate + final), the items and multiply-adds of
the final pass and strict F1. The coarse pass is the same in every row and not counted.

It also bounds the latent pass's rate (the chart-engine issue's third target): an
intermediate model's pass over the same items does the same planning, look-ups and scatters
with a fraction of the arithmetic, so the model's multiply-adds divided by the fastest such
pass's time is the most the model's pass could reach were its products free; it is printed
against numpy's float32 matrix-product rate on one thread, measured in the same run.

    python scripts/bench_levels.py --data data --model models/em.npz \\
        --intermediate em2.npz,em4.npz --thresholds 1e-3,1e-4,1e-5
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from lpcfg_cli.engine.batching import SPAN_BUDGET, blocks
from lpcfg_cli.engine.latent import inside_pass, lexical_items, outside_pass
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.tiers import BlockParser
from lpcfg_cli.treebank.ptb import format_tree

Row = dict[str, float | int | str]


def gemm_gflops() -> float:
    """``bench_parse.gemm_gflops(np.float32)`` (one matrix-product benchmark for both)."""
    spec = importlib.util.spec_from_file_location(
        "bench_parse", Path(__file__).with_name("bench_parse.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.gemm_gflops(np.float32)


def run(
    parser: BlockParser,
    sentences: list[list[str]],
    gold: list[str],
    pruner: BlockParser | str | None,
    threshold: float,
) -> Row:
    """Parse ``sentences`` as the parser's batches do, with ``pruner`` (an intermediate
    model's parser, ``"oracle"``, or None) between the coarse and the latent pass."""
    n = parser.grammar.n_symbols
    fine = parser.latent[0]
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    lines = ["()"] * len(sentences)
    row: Row = {"first": 0.0, "final": 0.0, "items": 0, "kept": 0, "gflop": 0.0}
    for ids in blocks(order, span_budget=SPAN_BUDGET, length=lambda i: len(sentences[i])):
        words = [sentences[i] for i in ids]
        layout = SpanLayout([len(s) for s in words])
        lex, keys, mu, _ = parser.coarse_pass(layout, words)
        items = keys[mu >= parser.prune]
        kept = items
        if pruner is not None:
            # Timed as the final pass is (and as the parser times its latent pass): the
            # lexical items and the pass, not the words' look-up or the marginals.
            grammar, words_lex = (
                (fine, lex)
                if pruner == "oracle"
                else (pruner.latent[0], pruner._lexical(layout, words))
            )
            t0 = time.perf_counter()
            chart = inside_pass(
                grammar, layout, items, lexical_items(grammar, layout, items, words_lex)
            )
            outside_pass(grammar, chart)
            if pruner != "oracle":
                row["first"] += time.perf_counter() - t0
            kept = chart.keys[chart.marginals() >= threshold]
        t0 = time.perf_counter()
        chart = inside_pass(fine, layout, kept, lexical_items(fine, layout, kept, lex))
        outside_pass(fine, chart)
        row["final"] += time.perf_counter() - t0
        row["gflop"] += chart.flops / 1e9
        row["items"] += len(items)
        row["kept"] += len(kept)
        trees = parser._decode(layout, chart.keys // n, chart.keys % n, chart.marginals(), words)
        for k, i in enumerate(ids):
            if trees[k] is not None and np.isfinite(chart.log_z[k]):
                res = parser._finish(words[k], trees[k], threshold)
                lines[i] = format_tree(res.tree, root="TOP")
    row["seconds"] = row["first"] + row["final"]
    row["strict_f1"] = evaluate_lines(gold, lines).all.figures()["strict_fmeasure"]
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--model", required=True, help="the model parsed with")
    ap.add_argument("--intermediate", default="", help="comma-separated smaller models")
    ap.add_argument("--thresholds", default="1e-3,1e-4,1e-5", help="posterior thresholds")
    ap.add_argument("--out", help="also write the rows as JSON here")
    args = ap.parse_args()
    data = Path(args.data)
    sentences = [line.split() for line in (data / "test.txt").read_text().splitlines()]
    gold = (data / "test.mrg").read_text().splitlines()
    thresholds = [float(x) for x in args.thresholds.split(",")]
    rows = []
    with threadpool_limits(1):
        parser = BlockParser(LPCFG.load(args.model))
        parser.warm_up()
        pruners: list[tuple[str, BlockParser | str | None]] = [("coarse only", None)]
        for path in filter(None, args.intermediate.split(",")):
            mid = BlockParser(LPCFG.load(path))
            if mid.grammar.symbols != parser.grammar.symbols:
                raise SystemExit(f"{path}: not a model of {args.model}'s treebank grammar")
            mid.warm_up()
            pruners.append((path, mid))
        pruners.append(("oracle", "oracle"))
        for name, pruner in pruners:
            for thr in thresholds if pruner is not None else [0.0]:
                result = run(parser, sentences, gold, pruner, thr)
                row = {"pruner": name, "threshold": thr, **result}
                rows.append(row)
                print(
                    f"{name:>24} {thr:8.0e}: latent {row['first']:.2f} + {row['final']:.2f} = "
                    f"{row['seconds']:.2f} s, final pass {row['kept']}/{row['items']} items "
                    f"{row['gflop']:.1f} GFLOP, strict F1 {row['strict_f1']:.2f}",
                    flush=True,
                )
        gemm = gemm_gflops()
    full = rows[0]
    smaller = [r for r in rows if r["pruner"] not in ("coarse only", "oracle")]
    print(f"numpy float32 matmul on one thread: {gemm:.1f} GFLOP/s")
    print(
        f"latent pass: {full['gflop']:.1f} GFLOP in {full['final']:.2f} s = "
        f"{full['gflop'] / full['final']:.1f} GFLOP/s = {full['gflop'] / full['final'] / gemm:.3f}"
        " of matmul"
    )
    if smaller:
        floor = min(float(r["first"]) for r in smaller)
        print(
            f"fastest intermediate pass over the same items: {floor:.2f} s; the model's "
            f"multiply-adds in that time: {full['gflop'] / floor:.1f} GFLOP/s = "
            f"{full['gflop'] / floor / gemm:.3f} of matmul (the rate with free products)"
        )
    if args.out:
        Path(args.out).write_text(
            json.dumps({"gemm32_1thread": gemm, "rows": rows}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
