#!/usr/bin/env python3
"""Learning curves: dev F1 after every EM iteration (em, pivot+em) and every split-merge
cycle (splitmerge), from `lpcfg train --log` of the shipped configs on the standard split.

Each config is trained as shipped, with ``--dev`` scored after every iteration
(``--dev-f1-every 1`` where the method takes it) and no early stop (``--patience`` as large
as the iterations: the shipped configs stop after 2 dev scores without improvement, which
would cut the curve where early iterations are level), its log kept in ``OUT/NAME.jsonl``; the
figure (``--plot PATH``) shows dev F1 and the train log-likelihood per step, one line per config,
and marks the step each run keeps.

    python scripts/learning_curves.py --data data --out out/learning_curves \\
        --configs em16,pivot_em16,splitmerge --plot docs/figures/learning_curves
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

from plots import Panel, Series, draw

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
# The methods whose dev F1 is scored every --dev-f1-every iterations (the rest score every
# step they take).
EVERY = {"em", "pivot+em"}


def train(config: str, data: Path, out: Path, jobs: str) -> Path:
    """Train ``configs/CONFIG.toml`` on ``data`` with a log; returns the log's path."""
    path = CONFIGS / f"{config}.toml"
    settings = tomllib.loads(path.read_text(encoding="utf-8"))["train"]
    method = settings["method"]
    log = out / f"{config}.jsonl"
    command = [
        sys.executable, "-m", "lpcfg_cli", "train", "--config", str(path),
        str(data / "train.mrg"), "--dev", str(data / "dev.mrg"), "--jobs", jobs,
        "--log", str(log), "-o", str(out / f"{config}.npz"), "-q",
    ]  # fmt: skip
    if method in EVERY:
        command += ["--dev-f1-every", "1", "--patience", str(settings["iterations"])]
    subprocess.run(command, check=True)
    (out / f"{config}.npz").unlink()
    return log


def read_log(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def curves(logs: dict[str, list[dict]]) -> list[Panel]:
    """Dev F1 and train log-likelihood per step of each log: EM iterations for the EM
    learners, cycles for split-merge (whose steps are then the x of its line)."""
    f1 = Panel("dev F1 (strict) per step", "EM iteration / split-merge cycle", "dev F1")
    ll = Panel("train log-likelihood per step", "EM iteration / split-merge cycle",
               "log-likelihood of the training set")  # fmt: skip
    for name, records in logs.items():
        step = "cycle" if "cycle" in records[0] else "iteration"
        scored = [r for r in records if r.get("dev_f1") is not None]
        x = [r[step] for r in scored]
        f1.series.append(Series(f"{name} (per {step})", x, [r["dev_f1"] for r in scored]))
        if scored:  # matplotlib leaves labels starting with "_" out of the legend
            best = max(scored, key=lambda r: r["dev_f1"])
            kept = "_kept" if any(s.style == "k*" for s in f1.series) else "kept (best dev F1)"
            f1.series.append(Series(kept, [best[step]], [best["dev_f1"]], style="k*"))
        with_ll = [r for r in records if r.get("train_loglik") is not None]
        ll.series.append(Series(name, [r[step] for r in with_ll],
                                [r["train_loglik"] for r in with_ll]))  # fmt: skip
    return [f1, ll]


def summary(logs: dict[str, list[dict]]) -> list[dict]:
    """Per config: the steps it ran, dev F1 after the first, the best step and its F1 (the
    one the run keeps), and dev F1 after the last."""
    rows = []
    for name, records in logs.items():
        step = "cycle" if "cycle" in records[0] else "iteration"
        scored = [r for r in records if r.get("dev_f1") is not None]
        best = max(scored, key=lambda r: r["dev_f1"])
        rows.append({
            "config": name, "unit": step, "steps": len(records),
            "first": scored[0]["dev_f1"], "best_step": best[step], "best": best["dev_f1"],
            "last": scored[-1]["dev_f1"],
        })  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--configs", default="em16,pivot_em16,splitmerge")
    ap.add_argument("--out", default="out/learning_curves", help="folder of the logs")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--plot", default=None, help="draw PLOT.png (and PLOT.json)")
    ap.add_argument("--reuse", action="store_true", help="plot the logs already in OUT")
    args = ap.parse_args()
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logs = {}
    for config in args.configs.split(","):
        log = out / f"{config}.jsonl"
        if not (args.reuse and log.exists()):
            log = train(config, data, out, args.jobs)
        logs[config] = read_log(log)
        best = max((r for r in logs[config] if r.get("dev_f1") is not None),
                   key=lambda r: r["dev_f1"], default=None)  # fmt: skip
        print(f"{config}: {len(logs[config])} steps, best dev F1 {best and best['dev_f1']}")
    if args.plot:
        title = "Learning curves on the standard split"
        print(draw(args.plot, curves(logs), title, data={"runs": summary(logs)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
