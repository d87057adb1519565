#!/usr/bin/env python3
"""README's results, measured: every shipped config on the standard split, and the Berkeley
parser's grammars on the same sentences, into the record ``docs/figures/ptb.json``.

Each config (``configs/NAME.toml``) is trained on ``train.mrg`` with each seed (the treebank
PCFG and the product of ``best.toml``, which take no seed of their own or hold six, once), parses
``dev.txt`` and ``test.txt`` with its config's parse options and is scored with strict and
EVALB F1; its training time (the whole ``lpcfg train`` command) and model file size are
recorded. With ``--berkeley DIR`` (the folder of ``parse.sh`` and the grammars trained on the
standard split) the 4- and 6-cycle grammars parse dev and test too. A run's figures are
written to ``OUT/runs/NAME-sS.json`` as it ends, so an interrupted run resumes; seed 0's
models stay in ``OUT/models`` (what ``bench_parse.py`` times for the speed columns).

    python scripts/ptb_results.py --data data --out out/ptb --berkeley DIR [--jobs 2]

Hours on 2 cores (the split-merge rows the most).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import records
from bench_parse import f1, unparsed
from records import lpcfg

CONFIGS = records.ROOT / "configs"
# The README's rows, in order, with the seeds each is run with by default.
ROWS = {
    "standard": [0],  # the treebank PCFG: no random choice
    "em16": [0, 1, 2],
    "pivot_em16": [0, 1, 2],
    "pivot16": [0],  # the moment method alone: deterministic up to its randomized SVD
    "spectral16": [0, 1, 2],
    "splitmerge": [0, 1, 2],
    "best": [0],  # six split-merge grammars (seeds 0-5 of their own) and two members
}
BERKELEY = {"4 cycles": "train0001-0149-sm4.gr", "6 cycles": "train0001-0149-sm6.gr"}


def train_options(config: str) -> dict:
    with open(CONFIGS / f"{config}.toml", "rb") as fh:
        return tomllib.load(fh).get("train", {})


def scores(data: Path, part: str, parsed: Path) -> dict:
    evalb, strict = f1(data / f"{part}.mrg", parsed)
    return {f"{part}_f1": strict, f"{part}_evalb_f1": evalb}


def run(config: str, seed: int, data: Path, out: Path, jobs: int) -> dict:
    """Train, parse dev and test, score: the run's figures (also in ``out/runs``)."""
    done = out / "runs" / f"{config}-s{seed}.json"
    if done.exists():
        return json.loads(done.read_text())
    (out / "models").mkdir(parents=True, exist_ok=True)
    model = out / "models" / f"{config}-s{seed}.npz"
    toml = str(CONFIGS / f"{config}.toml")
    t0 = time.perf_counter()
    # The config's own dev set, where it selects on one, is this data's.
    dev = ["--dev", str(data / "dev.mrg")] if "dev" in train_options(config) else []
    lpcfg("train", "--config", toml, "--seed", str(seed), "--jobs", str(jobs), *dev,
          str(data / "train.mrg"), "-o", str(model), "-q")  # fmt: skip
    record = {
        "config": config,
        "seed": seed,
        "train_seconds": time.perf_counter() - t0,
        "model_bytes": model.stat().st_size,
    }
    for part in ("dev", "test"):
        parsed = out / f"{config}-s{seed}.{part}.parsed"
        lpcfg("parse", "--config", toml, "--jobs", str(jobs), "--no-progress", str(model),
              str(data / f"{part}.txt"), "-o", str(parsed))  # fmt: skip
        record.update(scores(data, part, parsed))
    if seed != 0:
        model.unlink()
    records.write(done, record)
    return record


def berkeley(folder: Path, grammar: str, data: Path, out: Path) -> dict:
    """The Berkeley parser's grammar ``grammar`` on dev and test (its parse.sh); kept in
    ``out/runs`` as for the configs."""
    done = out / "runs" / f"berkeley-{Path(grammar).stem}.json"
    if done.exists():
        return json.loads(done.read_text())
    record: dict = {"grammar": grammar, "model_bytes": (folder / grammar).stat().st_size}
    out.mkdir(parents=True, exist_ok=True)
    for part in ("dev", "test"):
        parsed = out / f"berkeley-{Path(grammar).stem}.{part}"
        subprocess.run(
            ["bash", str(folder / "parse.sh"), str(data / f"{part}.txt"), str(parsed),
             str(folder / grammar)],
            check=True, capture_output=True,
        )  # fmt: skip
        record.update(scores(data, part, parsed))
        record[f"{part}_unparsed"] = unparsed(parsed)
    records.write(done, record)
    return record


def summary(runs: list[dict]) -> dict:
    """Per figure: each seed's value, their mean, sample sd, min and max."""
    out: dict = {"seeds": [r["seed"] for r in runs]}
    for key in ("dev_f1", "test_f1", "dev_evalb_f1", "test_evalb_f1", "train_seconds"):
        values = [r[key] for r in runs]
        out[key] = {
            "values": values,
            "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
        }
    out["model_bytes"] = runs[0]["model_bytes"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--out", type=Path, default=Path("out/ptb"))
    ap.add_argument("--berkeley", type=Path, default=None, help="folder of parse.sh and grammars")
    ap.add_argument("--configs", default=",".join(ROWS), help="comma-separated config names")
    ap.add_argument("--seeds", default=None, help="seeds for every config that takes one")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, default=records.FIGURES / "ptb.json")
    args = ap.parse_args()
    if not (args.data / "train.mrg").exists():
        print(f"ptb_results: {args.data}/train.mrg missing: run `make data`", file=sys.stderr)
        return 2
    record = {**records.provenance(java=args.berkeley is not None), "configs": {}}
    if args.berkeley:  # first: only its F1 is recorded, which another job running cannot move
        record["berkeley"] = {
            name: berkeley(args.berkeley, grammar, args.data, args.out)
            for name, grammar in BERKELEY.items()
        }
    for config in args.configs.split(","):
        seeds = ROWS[config]
        if args.seeds and len(seeds) > 1:
            seeds = [int(s) for s in args.seeds.split(",")]
        runs = []
        for seed in seeds:
            runs.append(run(config, seed, args.data, args.out, args.jobs))
            r = runs[-1]
            print(f"{config} seed {seed}: dev {r['dev_f1']:.2f} test {r['test_f1']:.2f}, "
                  f"trained in {r['train_seconds']:.0f} s", flush=True)  # fmt: skip
        record["configs"][config] = summary(runs)
    print(records.write(args.json, record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
