#!/usr/bin/env python3
"""The whole job end to end: data -> train -> parse -> evaluate, one row per method.

With the NLTK Penn Treebank sample installed (``NLTK_DATA`` or nltk's default folders) it
runs on the standard split, prepared in ``--data``. Without it, it says so in one line (with
the command that gets the sample) and runs on a synthetic treebank sampled from a built-in
random L-PCFG, kept apart from real data: the treebank in ``--synthetic-data``, models and
outputs in a ``synthetic`` subfolder of ``--models`` and ``--out``, and every figure (the
table's rows and headers, the training logs) labelled synthetic. Prints a markdown table of
EVALB F1, strict F1, training time and parsing speed, also written to OUT/results.md, and
writes OUT/report.html: the table, the learning curves of the methods that iterate (their
``lpcfg train --log``) and each model's parsing speed against sentence length, a page a
browser opens from disk (its figures, with the JSON drawn, in OUT/figures), which links to
OUT/parses.html (``lpcfg report``: every test sentence's gold tree and parses drawn, errors
by kind).

    python scripts/demo.py --data data --models models --jobs 2 [--methods pcfg,em]
"""

from __future__ import annotations

import argparse
import codecs
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bench_parse import by_length
from learning_curves import curves
from plots import Panel, Series, draw
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
    "splitmerge": "splitmerge",  # not in the demo (minutes), but the scripts' one list
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
    ap.add_argument(
        "--bucket-size",
        type=int,
        default=60,
        help="Sentences per length bucket of the report's speed plot (0: no speed plot).",
    )
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
    rows, logs, speed = [], {}, {}
    parses: list[str] = []
    for method in args.methods.split(","):
        model = models / f"{method.replace('+', '_')}.npz"
        extra = train_args(method, folder, args.jobs)
        if method in ITERATES:
            log = out / f"{method.replace('+', '_')}.train.jsonl"
            extra += ["--log", str(log)]
        train_s = lpcfg("train", *extra, str(folder / "train.mrg"), "-o", str(model), label=label)
        if method in ITERATES:
            logs[method] = [json.loads(line) for line in log.read_text().splitlines() if line]
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
        parses += [str(parsed), "--name", method]
        rows.append((method, fig["fmeasure"], fig["strict_fmeasure"], train_s, n_test / parse_s))
        if args.bucket_size:
            sentences = [line.split() for line in (folder / "test.txt").read_text().splitlines()]
            with tempfile.TemporaryDirectory() as tmp:
                speed[method] = by_length(str(model), None, sentences, Path(tmp), args.bucket_size)
    text = table(data, rows, args.jobs)
    print("\n" + text)
    destination = Path(args.table) if args.table else out / "results.md"
    try:
        with atomic_output(destination) as fh:
            fh.write(text)
    except LpcfgError as err:
        raise SystemExit(f"demo: error: {err}") from None
    print(f"demo: table written to {destination}", file=sys.stderr)
    # Every test sentence drawn, with each method's parse and its errors by kind.
    lpcfg("report", str(folder / "test.mrg"), *parses, "-o", str(out / "parses.html"), "-q")
    report = write_report(out, text, logs, speed, data.synthetic, parses="parses.html")
    print(f"demo: report written to {report}", file=sys.stderr)
    return 0


ITERATES = {"em", "pivot+em"}  # the demo's methods whose training has steps to plot


def write_report(
    out: Path,
    text: str,
    logs: dict[str, list[dict]],
    speed: dict[str, dict],
    synthetic: bool,
    parses: str | None = None,
) -> Path:
    """OUT/report.html: the results table, the learning curves (``logs``: each method's
    ``train --log`` records) and the speed against sentence length (``speed``: each
    method's ``bench_parse.by_length`` table), its figures in OUT/figures, and a link to
    ``parses`` (the page `lpcfg report` wrote of the test parses, beside it)."""
    tag = "SYNTHETIC data: " if synthetic else ""
    figures = []
    if logs:
        png = draw(out / "figures" / "learning_curves", curves(logs), f"{tag}learning curves")
        figures.append((png, "Dev F1 and training log-likelihood after each EM iteration."))
    if speed:
        panel = Panel(
            "seconds per sentence (start-up subtracted, --jobs 1)",
            "mean words per sentence in the bucket",
            "seconds / sentence",
            logy=True,
        )
        for method, got in speed.items():
            x = [r["mean_words"] for r in got["rows"]]
            y = [r["lpcfg_seconds_per_sentence"] for r in got["rows"]]
            panel.series.append(Series(method, x, y))
        png = draw(out / "figures" / "speed_by_length", [panel], f"{tag}parsing speed")
        figures.append((png, "Parsing time per sentence against its length, per model."))
    body = [f"<h1>lpcfg demo{' (SYNTHETIC DATA)' if synthetic else ''}</h1>"]
    for block in text.strip().split("\n\n"):
        body.append(html_table(block) if block.startswith("|") else f"<p>{html.escape(block)}</p>")
    if parses:
        body.append(
            f'<p><a href="{html.escape(parses)}">Every test sentence drawn</a>: the gold tree '
            "and each method's parse, wrong brackets marked, errors by kind (lpcfg report).</p>"
        )
    for png, caption in figures:
        src = html.escape(png.relative_to(out).as_posix())
        body.append(
            f'<figure><img src="{src}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    page = REPORT.format(body="\n".join(body))
    with atomic_output(out / "report.html") as fh:
        fh.write(page)
    return out / "report.html"


def html_table(markdown: str) -> str:
    """A markdown table (header, rule, rows) as HTML, every cell escaped."""
    rows = [
        [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        for line in markdown.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    lines = ["<table>", f"<tr>{head}</tr>"]
    for row in rows[1:]:
        lines.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    return "\n".join(lines + ["</table>"])


REPORT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>lpcfg demo report</title>
<style>
body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #bbb; padding: .3em .6em; }}
img {{ max-width: 100%; }} figcaption {{ color: #555; }}
</style></head>
<body>
{body}
</body></html>
"""


if __name__ == "__main__":
    sys.exit(main())
