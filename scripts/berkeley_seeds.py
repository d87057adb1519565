#!/usr/bin/env python3
"""The Berkeley parser's own seed spread on the standard split, chosen on dev as lpcfg's
models are: its GrammarTrainer with ``-randSeed S`` for each seed (6 split-merge cycles,
defaults otherwise, on ``train.mrg`` as lpcfg normalises it, ROOT-wrapped), each cycle's
grammar parsing ``dev.txt``, the cycle with the best dev strict F1 parsing ``test.txt``.

The anchor grammars in the parser's folder were trained once, with its default seed; this
says how far another seed of the same trainer moves, so that one lpcfg model's mean over
seeds can be set beside the Berkeley parser's mean over seeds. Each seed's figures are kept
in ``OUT/seedS.json`` as it ends (a rerun resumes); the record goes to --json.

    python scripts/berkeley_seeds.py --berkeley DIR --seeds 0,1,2 [--jobs 2]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import records
from bench_parse import f1
from crossval import parse_berkeley, root_wrapped, train_berkeley


def one_seed(jar: Path, data: Path, out: Path, seed: int, cycles: int) -> dict:
    """Train seed ``seed``, parse dev with every cycle's grammar, test with dev's choice."""
    done = out / f"seed{seed}.json"
    if done.exists():
        return records.read(done.stem, out)
    rooted = out / "train.root.mrg"  # written once by main
    grammar = out / f"seed{seed}.gr"
    cmd, seconds = train_berkeley(jar, rooted, grammar, cycles, seed)
    dev: dict[int, float] = {}
    for cycle in range(1, cycles + 1):
        parsed = out / f"seed{seed}-cycle{cycle}.dev"
        parse_berkeley(jar, Path(f"{grammar}_{cycle}_smoothing.gr"), data / "dev.txt", parsed)
        dev[cycle] = f1(data / "dev.mrg", parsed)[1]
    chosen = max(dev, key=lambda c: (dev[c], -c))  # a tie keeps the earlier cycle
    parsed = out / f"seed{seed}-cycle{chosen}.test"
    parse_berkeley(jar, Path(f"{grammar}_{chosen}_smoothing.gr"), data / "test.txt", parsed)
    evalb, strict = f1(data / "test.mrg", parsed)
    record = {
        "seed": seed,
        "train": shlex.join(cmd).replace(str(jar.parent), "BERKELEY").replace(str(out), "OUT"),
        "train_seconds": round(seconds, 1),
        "dev_f1_by_cycle": {str(c): v for c, v in dev.items()},
        "cycle": chosen,
        "dev_f1": dev[chosen],
        "test_f1": strict,
        "test_evalb_f1": evalb,
    }
    records.write(done, record)
    return record


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--berkeley", type=Path, required=True, help="the Berkeley parser's folder")
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--out", type=Path, default=Path("out/berkeley_seeds"))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--cycles", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=2, help="seeds trained at once")
    ap.add_argument("--json", type=Path, default=records.FIGURES / "berkeley_seeds.json")
    args = ap.parse_args()
    if not (args.data / "train.mrg").exists():
        print(f"berkeley_seeds: {args.data}/train.mrg missing: run `make data`", file=sys.stderr)
        return 2
    jar = next(args.berkeley.glob("*.jar"))
    args.out.mkdir(parents=True, exist_ok=True)
    root_wrapped(args.data / "train.mrg", args.out / "train.root.mrg")
    seeds = [int(s) for s in args.seeds.split(",")]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda s: one_seed(jar, args.data, args.out, s, args.cycles), seeds))
    for r in runs:
        print(
            f"berkeley seed {r['seed']}: cycle {r['cycle']}, dev {r['dev_f1']:.2f}, "
            f"test {r['test_f1']:.2f}, trained in {r['train_seconds']:.0f} s"
        )
    tests = [r["test_f1"] for r in runs]
    record = {
        **records.provenance(java=True),
        "runs": runs,
        "test_f1": {
            "mean": statistics.fmean(tests),
            "sd": statistics.stdev(tests) if len(tests) > 1 else 0.0,
            "min": min(tests),
            "max": max(tests),
        },
        "dev_f1_mean": statistics.fmean(r["dev_f1"] for r in runs),
    }
    print(records.write(args.json, record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
