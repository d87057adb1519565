#!/usr/bin/env python3
"""K-fold cross-validation over a training treebank: a comparison with 3,253 held-out
sentences instead of dev's 316.

The training trees are cut into --folds contiguous blocks (in file order, so that each
block is whole documents, as dev and test are); fold k trains on the others with
``lpcfg train --config CONFIG --seed k [EXTRA...]`` (the config's ``dev`` still chooses
iterations or cycles) and parses block k. The parses of every block, put back in order, are
scored together against the training file (strict F1, ``lpcfg evaluate``): one figure over
every training sentence, from K models of K seeds, which averages over both the sentences
and the seeds. Two settings compare, sentence by sentence, with ``--against NAME``
(``lpcfg evaluate --against``: paired bootstrap and approximate randomization).

With --berkeley DIR, NAME is the Berkeley parser (its GrammarTrainer on each fold's trees
as lpcfg normalises them, ROOT-wrapped, ``--berkeley-cycles`` split-merge cycles; its parser
on block k), scored the same way.

Each fold's parse is kept in OUT/NAME, so a re-run resumes; the record (pooled and per-fold
F1, the commands, seconds) is written to --json under NAME.

    python scripts/crossval.py --name splitmerge --config configs/splitmerge.toml
    python scripts/crossval.py --name untied --config configs/splitmerge.toml \\
        --against splitmerge -- --no-unaries
    python scripts/crossval.py --name berkeley --berkeley /path/to/berkeley --against splitmerge
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import records

from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, read_treebank
from lpcfg_cli.treebank.tree import words

STRICT = re.compile(r"Strict FMeasure \(all.*?=\s+([0-9.]+)")


def lpcfg(*args: str) -> subprocess.CompletedProcess:
    """``lpcfg ARGS`` with this interpreter; an error stops the script."""
    done = subprocess.run(
        [sys.executable, "-m", "lpcfg_cli", *args], capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"crossval: lpcfg {shlex.join(args)} failed:\n{done.stderr[-2000:]}")
    return done


def strict_f1(gold: Path, parsed: Path) -> float:
    match = STRICT.search(lpcfg("evaluate", str(gold), str(parsed)).stdout)
    assert match is not None
    return float(match.group(1))


def folds(lines: list[str], k: int) -> list[tuple[int, int]]:
    """The ``k`` contiguous blocks ``[lo, hi)`` of ``len(lines)`` trees."""
    n = len(lines)
    bounds = [round(i * n / k) for i in range(k + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def write_fold(lines: list[str], lo: int, hi: int, folder: Path, k: int) -> tuple[Path, Path]:
    """Fold ``k``'s training trees and its held-out words (one sentence per line)."""
    train, held = folder / f"train{k}.mrg", folder / f"held{k}.txt"
    with atomic_output(train) as fh:
        fh.write("".join(line + "\n" for line in lines[:lo] + lines[hi:]))
    gold = folder / f"held{k}.mrg"
    with atomic_output(gold) as fh:
        fh.write("".join(line + "\n" for line in lines[lo:hi]))
    with atomic_output(held) as fh:
        fh.writelines(" ".join(words(r.tree)) + "\n" for r in read_treebank([str(gold)]))
    return train, held


def lpcfg_fold(args: argparse.Namespace, train: Path, held: Path, out: Path, k: int) -> dict:
    """Train fold ``k`` with lpcfg and parse its block."""
    model = out.with_suffix(".npz")
    cmd = ["train", "--config", args.config, "--seed", str(k), *args.extra, str(train)]
    t0 = time.perf_counter()
    lpcfg(*cmd, "-o", str(model))
    seconds = time.perf_counter() - t0
    lpcfg("parse", str(model), str(held), "-o", str(out))
    model.unlink()
    return {"train": "lpcfg " + shlex.join(cmd), "seconds": round(seconds, 1)}


def root_wrapped(train: Path, rooted: Path) -> Path:
    """``train``'s trees as lpcfg normalises them, ``(ROOT ...)``-wrapped, at ``rooted``: what
    the Berkeley parser's GrammarTrainer reads."""
    with atomic_output(rooted) as fh:
        for rec in read_treebank([str(train)]):
            tree = normalize(rec.tree)
            if tree is not None:
                fh.write(format_tree(tree, root="ROOT") + "\n")
    return rooted


def train_berkeley(
    jar: Path, rooted: Path, grammar: Path, cycles: int, seed: int | None = None
) -> tuple[list[str], float]:
    """The Berkeley parser's GrammarTrainer on ``rooted`` for ``cycles`` split-merge cycles
    (its ``-randSeed`` where ``seed`` is given; else its default): (the command, seconds).
    Besides ``grammar`` it leaves each cycle's grammar, ``GRAMMAR_N_smoothing.gr``."""
    cmd = ["java", "-Xmx4g", "-cp", str(jar), "edu.berkeley.nlp.PCFGLA.GrammarTrainer",
           "-path", str(rooted), "-out", str(grammar), "-treebank", "SINGLEFILE",
           "-SMcycles", str(cycles)]  # fmt: skip
    if seed is not None:
        cmd += ["-randSeed", str(seed)]
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True)
    return cmd, time.perf_counter() - t0


def parse_berkeley(jar: Path, grammar: Path, words: Path, out: Path) -> None:
    """``words`` (one sentence per line) parsed with ``grammar`` into ``out``, its
    ``( (S ...) )`` roots written ``(TOP (S ...))``."""
    raw = out.with_suffix(out.suffix + ".raw")
    subprocess.run(
        ["java", "-Xmx4g", "-jar", str(jar), "-gr", str(grammar), "-inputFile", str(words),
         "-outputFile", str(raw)],
        capture_output=True, check=True,
    )  # fmt: skip
    with atomic_output(out) as fh:
        fh.writelines(
            re.sub(r"^\(\s*\(", "(TOP (", line) for line in raw.read_text().splitlines(True)
        )


def berkeley_fold(args: argparse.Namespace, train: Path, held: Path, out: Path, k: int) -> dict:
    """Train fold ``k``'s Berkeley grammar on its trees as lpcfg normalises them and parse
    its block."""
    jar = next(Path(args.berkeley).glob("*.jar"))
    rooted = root_wrapped(train, train.with_suffix(".root.mrg"))
    grammar = out.with_suffix(".gr")
    cmd, seconds = train_berkeley(jar, rooted, grammar, args.berkeley_cycles)
    parse_berkeley(jar, grammar, held, out)
    return {"train": shlex.join(cmd), "seconds": round(seconds, 1)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="the setting's name (its folder and record)")
    ap.add_argument("--config", default="configs/splitmerge.toml", help="lpcfg train --config")
    ap.add_argument("--train", default="data/train.mrg", help="the treebank cut into folds")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--out", default="out/crossval", help="folds, parses")
    ap.add_argument("--json", default="docs/figures/crossval.json", help="the records")
    ap.add_argument("--berkeley", default=None, help="the Berkeley parser's folder")
    ap.add_argument("--berkeley-cycles", type=int, default=4)
    ap.add_argument("--against", default=None, help="a setting run before, to compare with")
    ap.add_argument("--limit", type=int, default=0, help="the first N trees only (a check)")
    ap.add_argument("extra", nargs="*", help="after --: more lpcfg train options")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lines = Path(args.train).read_text(encoding="utf-8").splitlines()
    if args.limit:
        lines = lines[: args.limit]
    root = Path(args.out)
    folder = root / args.name
    folder.mkdir(parents=True, exist_ok=True)
    record: dict = {
        **records.provenance(java=bool(args.berkeley)),
        "name": args.name,
        "folds": [],
        "trees": len(lines),
    }
    if args.berkeley:
        record["method"] = f"Berkeley parser, {args.berkeley_cycles} cycles"
    else:
        record["config"], record["extra"] = args.config, args.extra
    parsed = []
    for k, (lo, hi) in enumerate(folds(lines, args.folds)):
        out = folder / f"held{k}.parsed"
        gold = folder / f"held{k}.mrg"
        train, held = write_fold(lines, lo, hi, folder, k)
        done = out.with_suffix(".json")  # the fold's training record, beside its parse
        if out.exists() and done.exists():
            info = json.loads(done.read_text())
        else:
            run = berkeley_fold if args.berkeley else lpcfg_fold
            info = run(args, train, held, out, k)
            done.write_text(json.dumps(info))
            print(f"crossval: {args.name} fold {k}: {info['seconds']} s", flush=True)
        info["f1"] = strict_f1(gold, out)
        record["folds"].append(info)
        parsed.append(out)
    every = folder / "all.parsed"
    every.write_text("".join(p.read_text() for p in parsed))
    gold_all = folder / "all.mrg"
    gold_all.write_text("".join(line + "\n" for line in lines))
    record["pooled_f1"] = strict_f1(gold_all, every)
    line = f"{args.name}: pooled strict F1 {record['pooled_f1']:.2f} over {len(lines)} trees"
    line += " (folds " + ", ".join(f"{f['f1']:.2f}" for f in record["folds"]) + ")"
    print(line)
    if args.against:
        other = root / args.against / "all.parsed"
        report = lpcfg("evaluate", str(gold_all), str(every), "--against", str(other)).stdout
        comparison = report[report.index("-- Paired comparison") :]
        print(comparison)
        record["against"] = {"name": args.against, "report": comparison.strip().splitlines()}
    path = Path(args.json)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[args.name] = record
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
