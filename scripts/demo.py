#!/usr/bin/env python3
"""The whole job end to end: data -> train -> parse -> evaluate, one row per method.

Uses the NLTK Penn Treebank sample (standard split) when it is installed; otherwise says
so and runs on a synthetic treebank sampled from a built-in random L-PCFG. Prints a table
(markdown) of EVALB F1, strict F1, training time and parsing speed.

    python scripts/demo.py --data data --models models --jobs 2 [--methods pcfg,em]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.synthetic import random_lpcfg, sample_trees
from lpcfg_cli.trees import format_tree, standard_split

AVAILABLE = ["pcfg", "em", "spectral", "pivot", "pivot+em"]
# Per-method training options of the standard experiment (the issues' acceptance runs).
TRAIN_ARGS = {
    "em": ["--states", "16", "--iterations", "40", "--dev", "{data}/dev.mrg", "--jobs", "{jobs}"],
    "spectral": ["--states", "16", "--dev", "{data}/dev.mrg", "--jobs", "{jobs}"],
    "pivot": ["--states", "16"],
    "pivot+em": ["--states", "16", "--iterations", "3", "--dev", "{data}/dev.mrg", "--jobs",
                 "{jobs}"],
}  # fmt: skip


def lpcfg(*args: str) -> float:
    """Run one lpcfg command (stderr passes through); returns its wall time."""
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lpcfg_cli", *args])
    if res.returncode != 0:
        raise SystemExit(f"demo: `lpcfg {' '.join(args)}` failed with status {res.returncode}")
    return time.perf_counter() - t0


def prepare(data: Path) -> str:
    """Make sure ``data`` holds train/dev/test; returns a description of the data."""
    if (data / "train.mrg").exists() and (data / "test.txt").exists():
        return f"{data} (prepared earlier)"
    try:
        standard_split()
    except LpcfgError as err:
        print(f"demo: {err}", file=sys.stderr)
        print(
            "demo: running on a SYNTHETIC treebank sampled from a built-in random L-PCFG "
            "instead; its figures say nothing about English parsing",
            file=sys.stderr,
        )
        return synthetic(data)
    subprocess.run([sys.executable, str(Path(__file__).with_name("prepare_data.py")),
                    "--out", str(data)], check=True)  # fmt: skip
    return "NLTK Penn Treebank sample, standard split (train 0001-0149, test 0175-0199)"


def synthetic(data: Path) -> str:
    data.mkdir(parents=True, exist_ok=True)
    grammar = random_lpcfg(n_inter=8, n_pre=8, n_words=200, states=2, rules_per_symbol=5,
                           words_per_tag=40, seed=1)  # fmt: skip
    trees = sample_trees(grammar, 2600, seed=2)
    parts = {"train": trees[:2000], "dev": trees[2000:2300], "test": trees[2300:]}
    for name, part in parts.items():
        (data / f"{name}.mrg").write_text("".join(format_tree(t, "TOP") + "\n" for t in part))
        (data / f"{name}.txt").write_text("".join(" ".join(t.leaves()) + "\n" for t in part))
    return "synthetic treebank (2000 train / 300 test trees from a random L-PCFG, seed 1)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--models", default="models")
    ap.add_argument("--out", default="out")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--methods", default=",".join(AVAILABLE))
    ap.add_argument("--table", help="Also write the markdown table to this file.")
    args = ap.parse_args()
    data, models, out = Path(args.data), Path(args.models), Path(args.out)
    models.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    source = prepare(data)
    n_test = sum(1 for _ in (data / "test.txt").open())
    rows = []
    for method in args.methods.split(","):
        model = models / f"{method.replace('+', '_')}.npz"
        extra = [a.format(data=data, jobs=args.jobs) for a in TRAIN_ARGS.get(method, [])]
        train_s = lpcfg("train", "--method", method, *extra, str(data / "train.mrg"), "-o",
                        str(model))  # fmt: skip
        parsed = out / f"{method.replace('+', '_')}.test.parsed"
        parse_s = lpcfg("parse", str(model), str(data / "test.txt"), "-o", str(parsed),
                        "--jobs", args.jobs, "--no-progress")  # fmt: skip
        report = subprocess.run(
            [sys.executable, "-m", "lpcfg_cli", "evaluate", "--json", str(data / "test.mrg"),
             str(parsed)], capture_output=True, text=True, check=True,
        )  # fmt: skip
        fig = json.loads(report.stdout)["all"]
        rows.append((method, fig["fmeasure"], fig["strict_fmeasure"], train_s, n_test / parse_s))
    lines = [
        f"Data: {source}; parse with --jobs {args.jobs}",
        "",
        "| method | options | EVALB F1 | strict F1 | train (s) | parse (sentences/s, incl. "
        "loading) |",
        "|---|---|---|---|---|---|",
    ]
    for method, f1, strict, train_s, rate in rows:
        opts = " ".join(a.format(data=data, jobs=args.jobs) for a in TRAIN_ARGS.get(method, []))
        opts = f"`{opts}`" if opts else "(defaults)"
        lines.append(f"| {method} | {opts} | {f1:.2f} | {strict:.2f} | {train_s:.1f} | "
                     f"{rate:.1f} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    if args.table:
        Path(args.table).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
