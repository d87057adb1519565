#!/usr/bin/env python3
"""Cohen & Collins (2014), table 1, in kind: dev and test F1 of EM, spectral, pivot and
pivot+EM at m = 8, 16, 24, 32 on the standard split, 3 seeds, the paper's figures beside.

Every run trains the method's shipped config (``configs/em16.toml``, ``spectral16.toml``,
``pivot16.toml``, ``pivot_em16.toml``) with ``--states M --seed S``; pivot+EM may run up to
10 EM iterations (the paper reports up to 6; the shipped config stops at 3), each scored on
dev, the best kept, as for EM (scored every 5 iterations as shipped). Each run then parses
dev and test and is scored with strict F1. A run's figures are written to
``OUT/runs/METHOD-mM-sS.json`` as soon as it ends, so an interrupted table resumes where it
stopped; models are deleted once scored. The table (markdown, ``OUT/table1.md``) and its
numbers (``OUT/table1.json``) are written from the runs present, seeds in the order given
(seed-major: a partial run has whole seeds).

    python scripts/table1.py --data data --out out/table1 [--jobs 2] [--plot PATH]

The paper trained on WSJ sections 2-21 (about 40k trees, 12 times our 3,253) and tested on
section 23; its EM and spectral rows are from Cohen et al. (2013).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from demo import CONFIGS, TRAIN_CONFIG
from plots import Panel, Series, draw
from records import lpcfg, provenance

from lpcfg_cli.files.streams import atomic_output

METHODS = {k: TRAIN_CONFIG[k] for k in ("em", "spectral", "pivot", "pivot+em")}
EXTRA = {"pivot+em": ["--iterations", "10"]}
# Cohen & Collins (2014), table 1: dev F1 (section 22) per m, with the EM iterations that
# reached it for EM and pivot+EM, and test F1 (section 23) of the row's model best on dev.
PAPER = {
    "em": {"dev": [86.69, 88.32, 88.35, 88.56], "iterations": [40, 30, 30, 20], "test": 87.76},
    "spectral": {"dev": [85.60, 87.77, 88.53, 88.82], "test": 88.05},
    "pivot": {"dev": [83.56, 86.00, 86.87, 86.40], "test": 85.83},
    "pivot+em": {"dev": [86.83, 88.14, 88.64, 88.55], "iterations": [2, 6, 2, 2], "test": 88.03},
}
PAPER_STATES = [8, 16, 24, 32]
HEADER = (
    "Strict F1 on the standard split of the NLTK sample (train wsj_0001-0149, 3,253 trees; "
    "dev 0150-0174; test 0175-0199), mean ± sd over the seeds; the paper's rows (Cohen & "
    "Collins 2014, table 1) trained on WSJ sections 2-21, about 12 times as many trees, and "
    "scored section 22 (dev) and 23 (test).\n"
)


def strict_f1(gold: Path, parsed: Path) -> float:
    report = json.loads(lpcfg("evaluate", "--json", str(gold), str(parsed)).stdout)
    return report["all"]["strict_fmeasure"]


def run(method: str, states: int, seed: int, data: Path, out: Path, jobs: str) -> dict:
    """Train, parse dev and test, score; the run's record (written to ``out/runs``)."""
    name = f"{method.replace('+', '_')}-m{states}-s{seed}"
    (out / "runs").mkdir(parents=True, exist_ok=True)
    model = out / f"{name}.npz"
    t0 = time.perf_counter()
    lpcfg(
        "train", "--config", str(CONFIGS / f"{METHODS[method]}.toml"),
        "--states", str(states), "--seed", str(seed), "--jobs", jobs, *EXTRA.get(method, []),
        *(["--dev", str(data / "dev.mrg")] if method != "pivot" else []),
        str(data / "train.mrg"), "-o", str(model), "-q",
    )  # fmt: skip
    train_seconds = time.perf_counter() - t0
    record = {"method": method, "states": states, "seed": seed, "train_seconds": train_seconds}
    record.update(em_iterations(model))
    for part in ("dev", "test"):
        parsed = out / f"{name}.{part}.parsed"
        lpcfg("parse", "--jobs", jobs, "--no-progress", str(model), str(data / f"{part}.txt"),
              "-o", str(parsed))  # fmt: skip
        record[f"{part}_f1"] = strict_f1(data / f"{part}.mrg", parsed)
        parsed.unlink()
    model.unlink()
    with atomic_output(out / "runs" / f"{name}.json") as fh:
        fh.write(json.dumps(record) + "\n")
    return record


def em_iterations(model: Path) -> dict:
    """The EM iteration the model keeps and how many ran (EM and pivot+EM), from its file."""
    from lpcfg_cli import load_model

    meta = load_model(str(model)).meta
    if "selected_iteration" not in meta:
        return {}
    history = meta.get("history")
    ran = len(history) if isinstance(history, list) else None
    return {"em_iterations": meta["selected_iteration"], "em_iterations_run": ran}


def mean_sd(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def aggregate(records: list[dict], states: list[int]) -> dict:
    """Per method and m: dev and test F1 (mean, sd over seeds), EM iterations, train time."""
    table: dict = {}
    for method in METHODS:
        for m in states:
            runs = [r for r in records if r["method"] == method and r["states"] == m]
            if not runs:
                continue
            cell = {"seeds": sorted(r["seed"] for r in runs)}
            for key in ("dev_f1", "test_f1", "train_seconds"):
                cell[key] = mean_sd([r[key] for r in runs])
            if all("em_iterations" in r for r in runs):
                cell["em_iterations"] = [r["em_iterations"] for r in runs]
            table.setdefault(method, {})[m] = cell
    return table


def figure(value: tuple[float, float], seeds: list[int]) -> str:
    """``mean ± sd``, or the one value with its seed when a single seed ran."""
    if len(seeds) == 1:
        return f"{value[0]:.2f} (seed {seeds[0]} only)"
    return f"{value[0]:.2f} ± {value[1]:.2f}"


def markdown(table: dict, states: list[int]) -> str:
    """Dev F1 per m (mean ± sd over seeds; EM iterations kept per seed in parentheses), and
    test F1 of the m best on dev, the paper's row above ours."""
    head = "| | " + " | ".join(f"m = {m}" for m in states) + " | test (m best on dev) |"
    lines = [head, "|---" * (len(states) + 2) + "|"]
    for method, paper in PAPER.items():
        cells = []
        for m in states:
            if m not in PAPER_STATES:
                cells.append("")
                continue
            i = PAPER_STATES.index(m)
            text = f"{paper['dev'][i]:.2f}"
            if "iterations" in paper:
                text += f" ({paper['iterations'][i]})"
            cells.append(text)
        lines.append(f"| **paper** {method} | " + " | ".join(cells) + f" | {paper['test']:.2f} |")
        ours = table.get(method, {})
        cells = []
        for m in states:
            cell = ours.get(m)
            if cell is None:
                cells.append("")
                continue
            text = figure(cell["dev_f1"], cell["seeds"])
            if "em_iterations" in cell:
                text += f" ({', '.join(map(str, cell['em_iterations']))})"
            cells.append(text)
        best = max(ours, key=lambda m: ours[m]["dev_f1"][0], default=None)
        test = (
            f"{figure(ours[best]['test_f1'], ours[best]['seeds'])} (m = {best})"
            if best is not None
            else ""
        )
        lines.append(f"| lpcfg {method} | " + " | ".join(cells) + f" | {test} |")
    return "\n".join(lines) + "\n"


def times_markdown(table: dict, states: list[int]) -> str:
    """Training time (s, mean over seeds; dev scoring included) and test F1 per m."""
    head = "| method | " + " | ".join(f"m = {m}: train s / test F1" for m in states) + " |"
    lines = [head, "|---" * (len(states) + 1) + "|"]
    for method, row in table.items():
        cells = [
            f"{row[m]['train_seconds'][0]:.0f} / {figure(row[m]['test_f1'], row[m]['seeds'])}"
            if m in row
            else ""
            for m in states
        ]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(path: Path, table: dict, states: list[int]) -> Path:
    """F1 against m per method (mean ± sd over seeds), dev and test; the paper's dev F1
    dashed."""
    seeds = sorted({s for row in table.values() for cell in row.values() for s in cell["seeds"]})
    dev = Panel(f"dev F1 against m (ours: mean ± sd over seeds {', '.join(map(str, seeds))})",
                "latent states m", "dev F1")  # fmt: skip
    test = Panel("test F1 against m", "latent states m", "test F1")
    for i, (method, row) in enumerate(table.items()):
        ms = [m for m in states if m in row]
        ours, paper = f"C{i}o-", f"C{i}x--"  # one colour per method, the paper's dashed
        dev.series.append(Series(f"lpcfg {method}", ms, [row[m]["dev_f1"][0] for m in ms],
                                 [row[m]["dev_f1"][1] for m in ms], style=ours))  # fmt: skip
        test.series.append(Series(f"lpcfg {method}", ms, [row[m]["test_f1"][0] for m in ms],
                                  [row[m]["test_f1"][1] for m in ms], style=ours))  # fmt: skip
        dev.series.append(Series(f"paper {method} (sec. 22, 12x data)", PAPER_STATES,
                                 PAPER[method]["dev"], style=paper))  # fmt: skip
    return draw(path, [dev, test], "Cohen & Collins (2014) table 1, in kind")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--out", default="out/table1")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--states", default="8,16,24,32")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--table-only", action="store_true", help="only tabulate the runs present")
    ap.add_argument("--plot", default=None, help="draw F1 against m: PLOT.png and PLOT.json")
    args = ap.parse_args()
    data, out = Path(args.data), Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    states = [int(m) for m in args.states.split(",")]
    methods = args.methods.split(",")
    for method in methods:
        if method not in METHODS:
            ap.error(f"--methods: {method!r} is not one of {', '.join(METHODS)}")
    for seed in (int(s) for s in args.seeds.split(",")):
        for m in states:
            for method in methods:
                done = out / "runs" / f"{method.replace('+', '_')}-m{m}-s{seed}.json"
                if args.table_only or done.exists():
                    continue
                r = run(method, m, seed, data, out, args.jobs)
                print(f"{method} m={m} seed={seed}: dev {r['dev_f1']:.2f} test "
                      f"{r['test_f1']:.2f} ({r['train_seconds']:.0f} s)", flush=True)  # fmt: skip
    records = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*.json"))]
    table = aggregate(records, states)
    text = HEADER + "\n" + markdown(table, states) + "\n" + times_markdown(table, states)
    with atomic_output(out / "table1.md") as fh:
        fh.write(text)
    with atomic_output(out / "table1.json") as fh:
        json.dump({**provenance(), "runs": records, "table": {k: {str(m): c for m, c in v.items()}
                   for k, v in table.items()}, "paper": PAPER}, fh, indent=1)  # fmt: skip
    print(text)
    if args.plot:
        print(plot(Path(args.plot), table, states))
    return 0


if __name__ == "__main__":
    sys.exit(main())
