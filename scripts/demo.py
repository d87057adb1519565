#!/usr/bin/env python3
"""The whole job end to end: data -> train -> parse -> evaluate, one row per method.

With the NLTK Penn Treebank sample installed (``NLTK_DATA`` or nltk's default folders) it
runs on the standard split, prepared in ``--data``. Without it, it says so in one line (with
the command that gets the sample) and runs on a synthetic treebank sampled from a built-in
random L-PCFG, kept apart from real data: the treebank in ``--synthetic-data``, models and
outputs in a ``synthetic`` subfolder of ``--models`` and ``--out``, and every figure (the
table's rows and headers, the training logs) labelled synthetic. Prints a markdown table of
EVALB F1, strict F1, training time and parsing speed, also written to OUT/results.md.

    python scripts/demo.py --data data --models models --jobs 2 [--methods pcfg,em]
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from prepare_data import SOURCE_FILE, STANDARD_SOURCE, folder_source, write_split

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.ptb_sample import standard_split
from lpcfg_cli.treebank.tree import leaves

AVAILABLE = ["pcfg", "em", "spectral", "pivot", "pivot+em"]
# The shipped config of each method's standard experiment (the issues' acceptance runs);
# the demo only points --dev and --jobs at its own data and settings.
CONFIGS = Path(__file__).resolve().parent.parent / "configs"
TRAIN_CONFIG = {
    "pcfg": "standard",
    "em": "em16",
    "spectral": "spectral16",
    "pivot": "pivot16",
    "pivot+em": "pivot_em16",
}


def train_args(method: str, data: Path, jobs: str) -> list[str]:
    """``--config`` of ``method``'s shipped config, with --dev and --jobs for this run."""
    path = CONFIGS / f"{TRAIN_CONFIG[method]}.toml"
    table = tomllib.loads(path.read_text(encoding="utf-8")).get("train", {})
    if table.get("method") != method:
        raise SystemExit(f"demo: {path} does not train --method {method}")
    args = ["--config", os.path.relpath(path)]
    if "dev" in table:
        args += ["--dev", str(data / "dev.mrg"), "--jobs", jobs]
    return args


GET_SAMPLE = "python -m nltk.downloader treebank"
SYNTHETIC_SOURCE = (
    "SYNTHETIC treebank (2000 train / 300 dev / 300 test trees sampled from a "
    "random L-PCFG, seed 1), not English"
)
LABEL = "[synthetic] "  # starts every line of a synthetic run's logs


@dataclass(frozen=True)
class Data:
    """The treebank a run uses: its folder, what it is, and whether it is synthetic."""

    folder: Path
    source: str
    synthetic: bool


def choose_data(data: Path, synthetic_data: Path) -> Data:
    """The standard split in ``data`` (prepared now if need be, the sample fetched with
    nltk's downloader when it is not installed) or, without the sample, the synthetic
    treebank in ``synthetic_data``. ``data`` is trusted only if its provenance line says it
    is the standard split: an older demo left synthetic trees there."""
    if folder_source(data) == STANDARD_SOURCE:
        return Data(data, f"{STANDARD_SOURCE}, prepared earlier in {data}", synthetic=False)
    try:
        split = standard_split(fetch=True, report=lambda line: print(f"demo: {line}"))
    except LpcfgError as err:
        reason = err.message if GET_SAMPLE in err.message else f"{err} (get it: `{GET_SAMPLE}`)"
        print(
            f"demo: {reason}; running on a SYNTHETIC treebank in {synthetic_data} instead, "
            "whose figures say nothing about English parsing",
            file=sys.stderr,
        )
        return Data(synthetic_data, write_synthetic(synthetic_data), synthetic=True)
    write_split(split, data)
    return Data(data, STANDARD_SOURCE, synthetic=False)


def write_synthetic(folder: Path) -> str:
    """Write (or reuse) the synthetic treebank in ``folder``; returns its description."""
    if folder_source(folder) == SYNTHETIC_SOURCE:
        return SYNTHETIC_SOURCE
    folder.mkdir(parents=True, exist_ok=True)
    grammar = random_lpcfg(
        inter=8, pre=8, words=200, states=2, rules_per_symbol=5, words_per_tag=40, seed=1
    )
    trees = sample_trees(grammar, 2600, seed=2)
    parts = {"train": trees[:2000], "dev": trees[2000:2300], "test": trees[2300:]}
    for name, part in parts.items():
        with atomic_output(folder / f"{name}.mrg") as fh:
            fh.writelines(format_tree(t, "TOP") + "\n" for t in part)
        with atomic_output(folder / f"{name}.txt") as fh:
            fh.writelines(" ".join(leaves(t)) + "\n" for t in part)
    with atomic_output(folder / SOURCE_FILE) as fh:  # last: only a complete folder is reused
        fh.write(SYNTHETIC_SOURCE + "\n")
    return SYNTHETIC_SOURCE


def relay(stream: IO[bytes], label: str) -> None:
    """Copy a child's stderr to ours, starting each line (and progress-bar redraw) with
    ``label``, so that no figure of a synthetic run can pass for a real one."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    at_start = True
    while chunk := stream.read1(4096):  # type: ignore[attr-defined]
        for piece in re.split(r"([\r\n])", decoder.decode(chunk)):
            if piece in ("\r", "\n"):
                at_start = True
            elif piece and at_start:
                sys.stderr.write(label)
                at_start = False
            sys.stderr.write(piece)
        sys.stderr.flush()


def lpcfg(*args: str, label: str = "") -> float:
    """Run one lpcfg command (stderr passes through, each line starting with ``label``);
    returns its wall time."""
    t0 = time.perf_counter()
    command = [sys.executable, "-m", "lpcfg_cli", *args]
    if label:
        # Its stderr is now a pipe, where progress bars would be drawn glued to the log
        # lines; the synthetic runs take seconds, so no bars (tqdm >= 4.66 reads this).
        env = {**os.environ, "TQDM_DISABLE": "1"}
        with subprocess.Popen(command, stderr=subprocess.PIPE, env=env) as proc:
            assert proc.stderr is not None
            relay(proc.stderr, label)
        code = proc.returncode
    else:
        code = subprocess.run(command).returncode
    if code != 0:
        raise SystemExit(f"demo: `lpcfg {' '.join(args)}` failed with status {code}")
    return time.perf_counter() - t0


def table(data: Data, rows: list[tuple[str, float, float, float, float]], jobs: str) -> str:
    """The results as markdown; a synthetic run says so in its title, F1 headers and rows."""
    tag = " (SYNTHETIC)" if data.synthetic else ""
    title = f"Data: {data.source}; parse with --jobs {jobs}"
    if data.synthetic:
        title = (
            "SYNTHETIC DATA, not the Penn Treebank: these figures only show that the "
            f"pipeline runs (get the real data: `{GET_SAMPLE}`).\n\n{title}"
        )
    lines = [
        title,
        "",
        f"| method | options | EVALB F1{tag} | strict F1{tag} | train (s) | parse "
        "(sentences/s, incl. loading) |",
        "|---|---|---|---|---|---|",
    ]
    for method, f1, strict, train_s, rate in rows:
        opts = " ".join(train_args(method, data.folder, jobs))
        opts = f"`{opts}`" if opts else "(defaults)"
        lines.append(
            f"| {method}{tag} | {opts} | {f1:.2f} | {strict:.2f} | {train_s:.1f} | {rate:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="Folder of the standard split.")
    ap.add_argument(
        "--synthetic-data",
        default="data-synthetic",
        help="Folder of the synthetic treebank, used without the sample.",
    )
    ap.add_argument("--models", default="models")
    ap.add_argument("--out", default="out")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--methods", default=",".join(AVAILABLE))
    ap.add_argument("--table", help="Write the markdown table here (default OUT/results.md).")
    args = ap.parse_args()
    data = choose_data(Path(args.data), Path(args.synthetic_data))
    models, out = Path(args.models), Path(args.out)
    if data.synthetic:  # never beside (or over) models and outputs of the real data
        models, out = models / "synthetic", out / "synthetic"
    models.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    label = LABEL if data.synthetic else ""
    folder = data.folder
    n_test = sum(1 for _ in (folder / "test.txt").open())
    rows = []
    for method in args.methods.split(","):
        model = models / f"{method.replace('+', '_')}.npz"
        extra = train_args(method, folder, args.jobs)
        train_s = lpcfg("train", *extra, str(folder / "train.mrg"), "-o", str(model), label=label)
        parsed = out / f"{method.replace('+', '_')}.test.parsed"
        parse_s = lpcfg(
            "parse",
            str(model),
            str(folder / "test.txt"),
            "-o",
            str(parsed),
            "--jobs",
            args.jobs,
            "--no-progress",
            label=label,
        )
        report = subprocess.run(
            [
                sys.executable,
                "-m",
                "lpcfg_cli",
                "evaluate",
                "--json",
                str(folder / "test.mrg"),
                str(parsed),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        fig = json.loads(report.stdout)["all"]
        rows.append((method, fig["fmeasure"], fig["strict_fmeasure"], train_s, n_test / parse_s))
    text = table(data, rows, args.jobs)
    print("\n" + text)
    destination = Path(args.table) if args.table else out / "results.md"
    try:
        with atomic_output(destination) as fh:
            fh.write(text)
    except LpcfgError as err:
        raise SystemExit(f"demo: error: {err}") from None
    print(f"demo: table written to {destination}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
