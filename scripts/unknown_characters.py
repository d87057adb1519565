#!/usr/bin/env python3
"""Dev F1 of models parsed with and without the character evidence for unknown uncased words
(``lexicon.CharacterEvidence``), at several pseudo-counts: the table of docs/treebanks.md,
Unknown words in a script without case.

The same model files are parsed each way, in one process (the evidence is a parse-time
weighting, so no model is trained again); "off" counts no training word, so that there is
no evidence. Models whose file names differ only by ``-sN`` are one column (mean ± sd). The
record (--json) holds every model's F1 per setting; the Markdown table goes to stdout.

    python scripts/unknown_characters.py --gold data/languages/sinica/dev.mrg \\
        --json docs/figures/unknown_characters.json \\
        out/languages/sinica/pcfg.npz out/languages/sinica/splitmerge-s{0,1,2}.npz
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

import records

import lpcfg_cli as lp
from lpcfg_cli.grammar.lexicon import CharacterEvidence
from lpcfg_cli.treebank.ptb import read_trees


def dev_f1(path: str, gold: list, sentences: list[list[str]]) -> float:
    """Strict F1 of the model file ``path``'s parses of ``sentences`` against ``gold``
    (arranged anew: each grammar counts its evidence once, with the settings of the time)."""
    return lp.evaluate(gold, list(lp.parse(lp.arrange(path), sentences))).strict_f1


def measure(gold_path: str, paths: list[str], smooths: list[float]) -> dict:
    """The record: ``rows``, one per setting (``off``, then each pseudo-count), each model
    file's strict F1; ``columns``: the model files of each column."""
    gold = read_trees([gold_path])
    sentences = [lp.words(t) for t in gold]
    columns: dict[str, list[str]] = {}
    for path in paths:
        columns.setdefault(re.sub(r"-s\d+$", "", Path(path).stem), []).append(path)
    default = CharacterEvidence.SMOOTH, CharacterEvidence.MAX_COUNT
    rows = []
    try:
        for smooth in [None, *smooths]:
            CharacterEvidence.SMOOTH = default[0] if smooth is None else smooth
            CharacterEvidence.MAX_COUNT = 0 if smooth is None else default[1]
            f1 = {path: round(dev_f1(path, gold, sentences), 2) for path in paths}
            rows.append({"setting": "off" if smooth is None else f"{smooth:g}", "f1": f1})
    finally:
        CharacterEvidence.SMOOTH, CharacterEvidence.MAX_COUNT = default
    return {"gold": gold_path, "columns": columns, "rows": rows, "chosen": f"{default[0]:g}"}


def markdown(record: dict) -> str:
    """One row per setting (the chosen one in bold), one column per model (mean ± sd)."""
    columns = record["columns"]
    lines = [
        "| pseudo-count | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for row in record["rows"]:
        cells = [row["setting"]]
        for paths in columns.values():
            values = [row["f1"][p] for p in paths]
            sd = f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else ""
            cells.append(f"{statistics.mean(values):.2f}{sd}")
        if row["setting"] == record["chosen"]:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", required=True, help="dev trees (one per line)")
    ap.add_argument("--smooth", default="1,3,5,10,20", help="pseudo-counts, comma-separated")
    ap.add_argument("--json", default=None, help="write the record here too")
    ap.add_argument("models", nargs="+", help="model files")
    args = ap.parse_args()
    record = {
        **records.provenance(),
        **measure(args.gold, args.models, [float(s) for s in args.smooth.split(",")]),
    }
    if args.json:
        records.write(args.json, record)
    print(markdown(record), end="")


if __name__ == "__main__":
    main()
