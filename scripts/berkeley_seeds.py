#!/usr/bin/env python3
"""The Berkeley parser's own seed spread on the standard split, chosen on dev as lpcfg's
models are: its GrammarTrainer with ``-randSeed S`` for each seed (6 split-merge cycles,
defaults otherwise, on ``train.mrg`` as lpcfg normalises it, ROOT-wrapped), each cycle's
grammar parsing ``dev.txt``, the cycle with the best dev strict F1 kept (every cycle's test F1
recorded beside, never used to choose).

The grammars in the parser's folder were trained once, with the trainer's default seed
(``-randSeed 2``; its source: "Two works well for English"): each run records which of its
cycles are byte for byte a grammar of the folder (``same_as``), so the run of seed 2 says
which cycle dev picks for the folder's own run (the fifth; the folder holds the fourth and
the sixth). The other seeds say how far another seed of the same trainer moves, so that one
lpcfg model's mean over seeds can be set beside the Berkeley parser's mean over seeds. Each
seed's figures are kept in ``OUT/seedS.json`` as it ends (a rerun resumes); the record goes
to --json, and ``OUT/dev-choice.gr`` links to the grammar dev picks in the folder's run.

    python scripts/berkeley_seeds.py --berkeley DIR --seeds 0,1,2,3,4,5 [--jobs 2]
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

# In OUT, a link to the grammar dev picks among the cycles of the run the parser's folder
# grammars come from: what ``bench_parse.py --berkeley-grammar`` times as the anchor.
DEV_CHOICE = "dev-choice.gr"


def by_cycle(jar: Path, data: Path, grammar: Path, cycles: int, out: Path, part: str) -> dict:
    """Strict and EVALB F1 of each cycle's grammar of the run ``grammar`` on ``part``
    (``dev`` or ``test``), its parses in ``OUT-cycleN.PART``: cycle -> (EVALB, strict)."""
    scores = {}
    for cycle in range(1, cycles + 1):
        parsed = Path(f"{out}-cycle{cycle}.{part}")
        parse_berkeley(jar, Path(f"{grammar}_{cycle}_smoothing.gr"), data / f"{part}.txt", parsed)
        scores[cycle] = f1(data / f"{part}.mrg", parsed)
    return scores


def chosen_on_dev(jar: Path, data: Path, grammar: Path, cycles: int, out: Path) -> dict:
    """The cycle of a GrammarTrainer run (its grammars ``GRAMMAR_N_smoothing.gr``) whose
    grammar parses ``dev.txt`` best, as lpcfg's split-merge keeps its best cycle on dev
    (a tie keeps the earlier cycle), and its test F1; every cycle's test F1 is recorded too
    (``test_f1_by_cycle``: what the choice on dev gives up or gains against the cycle best
    on test), never used to choose."""
    dev = {c: strict for c, (_, strict) in by_cycle(jar, data, grammar, cycles, out, "dev").items()}
    test = by_cycle(jar, data, grammar, cycles, out, "test")
    chosen = max(dev, key=lambda c: (dev[c], -c))
    chosen_grammar = Path(f"{grammar}_{chosen}_smoothing.gr")
    return {
        "dev_f1_by_cycle": {str(c): v for c, v in dev.items()},
        "test_f1_by_cycle": {str(c): strict for c, (_, strict) in test.items()},
        "cycle": chosen,
        "dev_f1": dev[chosen],
        "test_f1": test[chosen][1],
        "test_evalb_f1": test[chosen][0],
        "grammar": chosen_grammar.name,
        "grammar_bytes": chosen_grammar.stat().st_size,
    }


def shipped_cycles(folder: Path, grammar: Path, cycles: int) -> dict[str, int]:
    """The grammars in the parser's ``folder`` (``*.gr``) that are, byte for byte, a cycle's
    grammar of the run ``grammar``: file name -> cycle. The folder's grammars were trained
    with the trainer's defaults; this says which seed's run they are."""
    shipped = {g.name: g.read_bytes() for g in sorted(folder.glob("*.gr"))}
    return {
        name: cycle
        for cycle in range(1, cycles + 1)
        for name, content in shipped.items()
        if Path(f"{grammar}_{cycle}_smoothing.gr").read_bytes() == content
    }


def one_seed(jar: Path, data: Path, out: Path, seed: int, cycles: int) -> dict:
    """Train seed ``seed``, parse dev with every cycle's grammar, test with dev's choice."""
    done = out / f"seed{seed}.json"
    if done.exists():
        return records.read(done.stem, out)
    rooted = out / "train.root.mrg"  # written once by main
    grammar = out / f"seed{seed}.gr"
    cmd, seconds = train_berkeley(jar, rooted, grammar, cycles, seed)
    record = {
        "seed": seed,
        "train": shlex.join(cmd).replace(str(jar.parent), "BERKELEY").replace(str(out), "OUT"),
        "train_seconds": round(seconds, 1),
        **chosen_on_dev(jar, data, grammar, cycles, out / f"seed{seed}"),
        "same_as": shipped_cycles(jar.parent, grammar, cycles),
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
        if r.get("same_as"):  # the folder's run: its dev choice is the anchor bench_parse times
            link = args.out / DEV_CHOICE
            link.unlink(missing_ok=True)
            link.symlink_to(r["grammar"])
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
