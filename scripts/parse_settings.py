#!/usr/bin/env python3
"""How the parser's settings were chosen, measured: each pruning and decoding option swept
over the shipped models on dev, into the record ``docs/figures/parse_settings.json``.

The models are ``ptb_results.py``'s seed-0 models of the shipped configs
(``out/ptb/models/CONFIG-s0.npz``). Each sweep parses ``dev.txt`` once per value of one
option of ``lpcfg parse`` (the config's own parse options otherwise, ``--jobs 1``, whole
command), with its strict F1, the trees that differ from the sweep's first value, and the
command's wall seconds; the decoder sweep parses ``test.txt`` too (reported, not used to
choose), first with ``auto`` (the decoder the model file names), so that the decoder whose
trees change none of ``auto``'s is the model's own. ``docs/parsing.md`` draws its tables
from the record (``doc_tables.py``). Each parse is kept in ``OUT/runs`` as it ends, so an
interrupted run resumes.

    python scripts/parse_settings.py --data data --models out/ptb/models --out out/parse_settings

About 20 minutes on 2 cores with nothing else running.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import records
from bench_parse import f1
from records import lpcfg

LATENT = ["em16", "pivot_em16", "spectral16", "pivot16", "splitmerge", "best"]
# option -> (values, the shipped default, the configs swept, parse test too)
SWEEPS: dict[str, tuple[list[str], str, list[str], bool]] = {
    "prune": (["1e-5", "1e-4", "3e-4", "1e-3"], "3e-4", LATENT, False),
    "coarse-beam": (["0", "3e-4", "5e-4", "1e-3", "2e-3", "3e-3"], "3e-4", LATENT, False),
    "outside-cut": (["0", "0.1", "0.3", "1"], "0.1", LATENT, False),
    "decode": (
        ["auto", "max-marginal", "max-bracket", "max-rule-product", "variational"],
        "auto",
        ["standard", *LATENT],
        True,
    ),
    "bracket-threshold": (
        ["0.35", "0.4", "0.45", "0.5"],
        "0.4",
        ["em16", "pivot_em16", "splitmerge"],
        False,
    ),
    "product-prune": (["0", "1e-6", "1e-5", "1e-4", "1e-3"], "1e-5", ["best"], True),
    "combine": (["product", "mean"], "product", ["best"], True),
}
# Options a sweep needs beside its own (the bracket threshold only acts on max-bracket).
WITH = {"bracket-threshold": ["--decode", "max-bracket"]}


def parse(model: Path, config: str, part: str, data: Path, out: Path, option: list[str]) -> dict:
    """One whole ``lpcfg parse`` command: its strict F1, seconds and output lines (kept in
    ``out/runs``)."""
    name = f"{config}.{part}." + "_".join(x.lstrip("-") for x in option)
    done = out / "runs" / f"{name}.json"
    if done.exists():
        return json.loads(done.read_text())
    parsed = out / "parsed" / f"{name}.parsed"
    parsed.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    toml = str(records.ROOT / "configs" / f"{config}.toml")
    lpcfg("parse", "--config", toml, "--jobs", "1", "--no-progress", *option,
          str(model), str(data / f"{part}.txt"), "-o", str(parsed))  # fmt: skip
    seconds = time.perf_counter() - t0
    result = {
        "f1": f1(data / f"{part}.mrg", parsed)[1],
        "seconds": seconds,
        "trees": parsed.read_text().splitlines(),
    }
    records.write(done, result)
    return result


def sweep(
    option: str, models: Path, data: Path, out: Path, configs: list[str] | None = None
) -> dict:
    """Per config (the sweep's own, or ``configs``) and part, per value: strict F1,
    seconds, trees changed from the first value."""
    values, default, swept, test = SWEEPS[option]
    configs = swept if configs is None else configs
    result: dict = {"values": values, "default": default, "configs": {}}
    for config in configs:
        model = models / f"{config}-s0.npz"
        if not model.exists():
            raise SystemExit(f"parse_settings: {model} missing: run ptb_results.py first")
        cells: dict = {}
        for part in ["dev", "test"] if test else ["dev"]:
            runs = []
            for value in values:
                try:
                    runs.append(parse(model, config, part, data, out,
                                      [*WITH.get(option, []), f"--{option}", value]))  # fmt: skip
                except SystemExit as err:  # a decoder the model does not take
                    runs.append({"error": str(err).splitlines()[-1]})
            first = next((r["trees"] for r in runs if "trees" in r), [])
            cells[part] = [
                r if "error" in r else {
                    "f1": r["f1"], "seconds": r["seconds"],
                    "changed": sum(a != b for a, b in zip(r["trees"], first, strict=True)),
                }
                for r in runs
            ]  # fmt: skip
        result["configs"][config] = cells
        print(f"parse_settings: --{option} {config}: "
              + " ".join(f"{c.get('f1', 'x')}" for c in cells["dev"]), flush=True)  # fmt: skip
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--models", type=Path, default=Path("out/ptb/models"))
    ap.add_argument("--out", type=Path, default=Path("out/parse_settings"))
    ap.add_argument("--sweeps", default=",".join(SWEEPS), help="comma-separated options")
    ap.add_argument("--json", type=Path, default=records.FIGURES / "parse_settings.json")
    args = ap.parse_args()
    names = args.sweeps.split(",")
    if unknown := [n for n in names if n not in SWEEPS]:
        ap.error(f"--sweeps: {', '.join(unknown)} not among {', '.join(SWEEPS)}")
    record = {**records.provenance(), "sentences": {}, "sweeps": {}}
    for part in ("dev", "test"):
        record["sentences"][part] = len((args.data / f"{part}.txt").read_text().splitlines())
    for name in names:
        record["sweeps"][name] = sweep(name, args.models, args.data, args.out)
    records.write(args.json, record)
    print(f"parse_settings: wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
