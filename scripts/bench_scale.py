#!/usr/bin/env python3
"""Training at full-treebank size: every learner on a 40,000-tree training set.

The Penn Treebank sample has 3,253 training trees; users train on the full WSJ (about
40,000) or SPMRL treebanks (5-50k). Without those here, the training set is built honestly
from what there is: ``--trees`` trees drawn (``lpcfg sample``, ``--seed``) from an EM model
with 16 states trained on the standard split (``configs/em16.toml``), trees of more than
``--max-words`` words left out (the first ``--trees`` that fit are kept). They follow that
model's distribution, not English (their words include the model's unknown-word
signatures), so the F1 figures only say the pipeline holds at this size; the times, memory
and model sizes are the point.

For each learner (its shipped config, ``--dev`` the standard dev split, ``--jobs``) it
reports the whole ``lpcfg train`` command's wall time and peak memory, the seconds per
EM iteration or split-merge cycle (from ``train --log``), the model file's size, and the
model parsing the standard test split with ``--jobs 1`` (whole command, loading included,
after a first parse has kept the model's arrangement: ``parsing.arranged_cache``) beside
the Berkeley parser (``--berkeley``) in the same run, with strict F1.

    python scripts/bench_scale.py --data data --out out/scale --trees 40000 \\
        --berkeley DIR [--learners pcfg,em,spectral,pivot+em,splitmerge]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from bench_parse import CACHE_ENV, berkeley_command, f1, spawner
from demo import CONFIGS, TRAIN_CONFIG
from records import provenance, write

from lpcfg_cli.files.streams import atomic_output

LEARNERS = {k: TRAIN_CONFIG[k] for k in ("pcfg", "em", "spectral", "pivot+em", "splitmerge")}


def run(command: list[str], log: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of ``command`` (the largest of it and the
    worker processes it waited for, as Linux's wait4 reports); its stderr goes to ``log``.
    Started by ``bench_parse``'s small spawner, so that the peak is the command's own, not
    this process's (which holds the sampled training set)."""
    return spawner().run((command,), log)


def lpcfg(*args: str) -> list[str]:
    return [sys.executable, "-m", "lpcfg_cli", *args]


def training_set(data: Path, out: Path, trees: int, max_words: int, seed: int) -> Path:
    """``trees`` trees of at most ``max_words`` words drawn from EM m = 16 trained on the
    standard split (reused when ``out`` has them)."""
    path = out / f"train{trees}.mrg"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    source = out / "source_em16.npz"
    if not source.exists():
        config = str(CONFIGS / "em16.toml")
        dev, treebank = str(data / "dev.mrg"), str(data / "train.mrg")
        command = lpcfg("train", "--config", config, "--dev", dev, treebank, "-o", str(source))
        run(command + ["-q"], out / "source.train.err")
    kept: list[str] = []
    drawn = 0
    while len(kept) < trees:
        n = max(1000, 2 * (trees - len(kept)))
        done = subprocess.run(
            lpcfg("sample", str(source), "-n", str(n), "--seed", str(seed + drawn), "-q"),
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        drawn += 1
        for line in done.stdout.splitlines():
            if _words(line) <= max_words:
                kept.append(line)
    with atomic_output(path) as fh:
        fh.writelines(line + "\n" for line in kept[:trees])
    return path


def _words(tree: str) -> int:
    """Leaves of a one-line PTB tree: the tokens that close a bracket."""
    return sum(1 for token in tree.split() if token.endswith(")") and not token.startswith("("))


def seconds_per_step(log: Path) -> tuple[int, float]:
    """Steps in a ``train --log`` file and their median seconds (0, 0.0 without steps)."""
    steps = [json.loads(line)["seconds"] for line in log.read_text().splitlines() if line]
    if not steps:
        return 0, 0.0
    return len(steps), sorted(steps)[len(steps) // 2]


def bench(learner: str, train: Path, data: Path, out: Path, jobs: str, berkeley: Path | None):
    """One learner's row: train, then parse test beside the Berkeley parser."""
    model, log = out / f"{learner.replace('+', '_')}.npz", out / f"{learner}.jsonl"
    config = CONFIGS / f"{LEARNERS[learner]}.toml"
    command = lpcfg("train", "--config", str(config), str(train), "-o", str(model), "-q")
    if learner != "pcfg":
        command += ["--dev", str(data / "dev.mrg"), "--jobs", jobs, "--log", str(log)]
    train_s, train_mb = run(command, out / f"{learner}.train.err")
    steps, per_step = seconds_per_step(log) if log.exists() else (0, 0.0)
    parsed = out / f"{learner}.test.parsed"
    # A first, untimed parse of one sentence arranges the model and keeps the arrangement
    # (the bench's own cache folder, as a user's first parse does), as in bench_parse.
    one = out / "one.txt"
    one.write_text((data / "test.txt").read_text().splitlines(keepends=True)[0])
    run(lpcfg("parse", "-q", str(model), str(one), "-o", str(out / "one.parsed")))
    parse_s, parse_mb = run(lpcfg("parse", "--jobs", "1", "--no-progress", str(model),
                                  str(data / "test.txt"), "-o", str(parsed)))  # fmt: skip
    row = {
        "learner": learner,
        "config": config.name,
        "train_seconds": train_s,
        "train_peak_mb": train_mb,
        "steps": steps,
        "seconds_per_step": per_step,
        "model_mb": model.stat().st_size / 1e6,
        "parse_seconds": parse_s,
        "parse_peak_mb": parse_mb,
        "strict_f1": f1(data / "test.mrg", parsed)[1],
    }
    if berkeley is not None:
        b_out = out / "berkeley.test.parsed"
        row["berkeley_seconds"], _ = run(berkeley_command(berkeley, data / "test.txt", b_out))
        row["vs_berkeley"] = row["berkeley_seconds"] / parse_s
    return row


def markdown(rows: list[dict]) -> str:
    """The table of ``rows`` (``bench``'s), drawn again from the record by ``doc_tables.py``."""
    lines = [
        "| learner (config) | training | seconds per EM iteration / split-merge cycle (median) "
        "| training peak memory | model file | parsing test, `--jobs 1` | the Berkeley parser "
        "| vs Berkeley | parsing peak memory | strict F1 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        unit = "cycles" if r["learner"] == "splitmerge" else "iterations"
        step = f"{r['seconds_per_step']:.1f} ({r['steps']} {unit})" if r["steps"] else ""
        berkeley = f"{r['berkeley_seconds']:.2f} s" if "berkeley_seconds" in r else ""
        vs = f"{r['vs_berkeley']:.2f}x" if "vs_berkeley" in r else ""
        lines.append(
            f"| {r['learner']} (`{r['config']}`) | {r['train_seconds'] / 60:.1f} min | {step} "
            f"| {r['train_peak_mb'] / 1024:.1f} GB | {r['model_mb']:.1f} MB | "
            f"{r['parse_seconds']:.2f} s | {berkeley} | {vs} | {r['parse_peak_mb']:.0f} MB | "
            f"{r['strict_f1']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--out", default="out/scale")
    ap.add_argument("--json", type=Path, default=None, help="also write the record here")
    ap.add_argument("--trees", type=int, default=40_000)
    ap.add_argument("--max-words", type=int, default=100, help="longest sampled tree kept")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sampled training set")
    ap.add_argument("--learners", default=",".join(LEARNERS))
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--berkeley", default=None, help="folder with parse.sh and its grammars")
    args = ap.parse_args()
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ[CACHE_ENV] = str(out.resolve() / "arranged")  # before the spawner starts
    for learner in args.learners.split(","):
        if learner not in LEARNERS:
            ap.error(f"--learners: {learner!r} is not one of {', '.join(LEARNERS)}")
    train = training_set(data, out, args.trees, args.max_words, args.seed)
    berkeley = Path(args.berkeley) if args.berkeley else None
    rows = []
    for learner in args.learners.split(","):
        rows.append(bench(learner, train, data, out, args.jobs, berkeley))
        print(json.dumps(rows[-1]), flush=True)
    text = markdown(rows)
    with atomic_output(out / "scale.md") as fh:
        fh.write(text)
    record = {**provenance(java=bool(args.berkeley)), "trees": args.trees,
              "max_words": args.max_words, "rows": rows}  # fmt: skip
    write(out / "scale.json", record, also=args.json)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
