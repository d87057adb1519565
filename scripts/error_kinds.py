#!/usr/bin/env python3
"""Errors by kind on the standard test split (Kummerfeld et al. 2012), model by model.

Each model parses the test split (`lpcfg parse`), and every bracket error is classified by
the repair that fixes it (``analysis.error_kinds``, as `lpcfg evaluate --errors` does).
Writes the record (``--json``: per model, strict F1 and each kind's repairs and brackets), a
bar chart of the brackets each kind costs (``--plot``, PNG) and, for one test sentence
(``--example``), the gold tree and each model's parse drawn with their wrong and missing
brackets marked (SVG, in the folder of ``--plot``); with ``--screenshot``, `lpcfg report`'s
page of the parses as headless Chromium shows it, filtered by ``--view``.

With ``--berkeley DIR`` (the folder of its jar and grammars, as for ``bench_parse.py``) the
Berkeley parser parses the test split too and is classified beside the models: with
``--berkeley-grammar`` the grammar dev picks (``out/berkeley_seeds/dev-choice.gr``, as for
``bench_parse.py``), otherwise the folder's 4-cycle grammar (``bench_parse.BERKELEY_GRAMMAR``).
The record names the grammar (``berkeley_grammar``).

With ``--analyser DIR`` (a checkout of github.com/jkkummerfeld/berkeley-parser-analyser), its
``classify_english.py`` also classifies the same parse files, and the record says, per model,
how many of the brackets both put under the same kind (the classifier's check against the
paper's own program; it is not part of lpcfg and not needed otherwise).

    python scripts/error_kinds.py --data data --models out/ptb/models/em16-s0.npz,\\
        out/ptb/models/splitmerge-s0.npz,out/ptb/models/best-s0.npz \\
        --json docs/figures/error_kinds.json --plot docs/figures/error_kinds --example 5 \\
        --screenshot docs/figures/report_example.png --berkeley DIR \\
        --berkeley-grammar out/berkeley_seeds/dev-choice.gr
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench_parse import BERKELEY_GRAMMAR
from crossval import parse_berkeley
from records import lpcfg, provenance
from records import write as write_record

from lpcfg_cli.analysis.drawing import phrase_positions, tree_svg
from lpcfg_cli.analysis.error_kinds import KINDS, ErrorAnalysis, classify_errors
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.treebank.ptb import parse_tree

# The analyser's names of the kinds (XoverX unaries are unaries; UNSET is other).
ANALYSER_KINDS = {
    "PP Attachment": "PP attachment",
    "Clause Attachment": "clause attachment",
    "Different label": "different label",
    "Modifier Attachment": "modifier attachment",
    "NP Attachment": "NP attachment",
    "Co-ordination": "coordination",
    "Single Word Phrase": "single word phrase",
    "Unary": "unary",
    "XoverX Unary": "unary",
    "NP Internal Structure": "NP internal",
    "VP Attachment": "VP attachment",
}


def name_of(model: str) -> str:
    """``em16`` of ``out/ptb/models/em16-s0.npz``."""
    return Path(model).stem.split("-s")[0]


def analyser_kinds(analyser: Path, gold: Path, parses: Path, out: Path) -> dict[int, Counter]:
    """Each sentence's brackets by kind as the analyser's ``classify_english.py`` gives them
    (its ``.out`` file: a line ``N Error:KIND`` per repair, under ``Sentence I:``)."""
    program = analyser / "berkeley_parse_analyser" / "classify_english.py"
    prefix = out.resolve() / f"analyser-{parses.stem}"
    files = [str(p.resolve()) for p in (gold, parses)]
    subprocess.run(
        [sys.executable, str(program), *files, str(prefix)],
        check=True,
        cwd=program.parent,
        capture_output=True,
    )
    kinds: dict[int, Counter] = {}
    sentence = 0
    for line in Path(f"{prefix}.out").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"Sentence (\d+):", line):
            sentence = int(m[1])
            kinds[sentence] = Counter()
        elif (m := re.match(r"(\d+) Error:(.*)", line)) and sentence:
            kinds[sentence][ANALYSER_KINDS.get(m[2].strip(), "other")] += int(m[1])
    return kinds


def agreement(ours: ErrorAnalysis, theirs: dict[int, Counter]) -> dict:
    """How many brackets both classifiers put under the same kind, sentence by sentence."""
    same = 0
    totals: Counter = Counter()
    for s in ours.sentences:
        mine, other = s.kinds(), theirs.get(s.id, Counter())
        same += sum(min(mine[k], other[k]) for k in KINDS)
        totals.update(other)
    return {
        "brackets": ours.brackets,
        "same_kind": same,
        "analyser_brackets": sum(totals.values()),
        "analyser_kinds": {k: totals[k] for k in KINDS},
    }


def plot(record: dict, path: Path) -> None:
    """Brackets each kind costs per sentence, one bar per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    models = record["models"]
    names = list(models)
    kinds = list(KINDS)
    y = np.arange(len(kinds))
    height = 0.8 / max(len(names), 1)
    fig, ax = plt.subplots(figsize=(8, 6))
    for i, name in enumerate(names):
        m = models[name]
        values = [m["kinds"][k]["brackets"] / m["scored"] for k in kinds]
        ax.barh(y + i * height, values, height, label=f"{name} (strict F1 {m['strict_f1']:.2f})")
    ax.set_yticks(y + height * (len(names) - 1) / 2, kinds)
    ax.invert_yaxis()
    ax.set_xlabel("bracket errors per sentence")
    ax.set_title("Errors by kind, standard test split (345 sentences)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.4, -0.1), ncol=len(names), fontsize=8)
    fig.tight_layout()
    fig.savefig(path.with_suffix(".png"), dpi=110)
    plt.close(fig)


def draw_example(
    gold_line: str, parses: dict[str, list[str]], analyses: dict[str, ErrorAnalysis], sid: int,
    folder: Path,
) -> list[str]:  # fmt: skip
    """The gold tree with each model's missing brackets marked, and each parse with its
    wrong ones: ``error_example_gold_<model>.svg``, ``error_example_<model>.svg``."""
    gold = parse_tree(gold_line)
    written = []
    for name, lines in parses.items():
        s = analyses[name].sentences[sid - 1]
        test = parse_tree(lines[sid - 1])
        gold_pos, test_pos = phrase_positions(gold), phrase_positions(test)
        pictures = {
            f"error_example_gold_{name}.svg": tree_svg(
                gold, marks={gold_pos[k]: "missing" for k in s.missing}, title="gold"
            ),
            f"error_example_{name}.svg": tree_svg(
                test, marks={test_pos[k]: "extra" for k in s.extra}, title=name
            ),
        }
        for file, svg in pictures.items():
            (folder / file).write_text(svg + "\n", encoding="utf-8")
            written.append(file)
    return written


def screenshot(data: Path, parses: dict[str, Path], out: Path, png: Path, view: str) -> None:
    """`lpcfg report` of the parses (``out/report.html``), and a picture of it filtered to
    ``view`` (the page's address fragment) as headless Chromium shows it."""
    page = out.resolve() / "report.html"
    names = [a for name, path in parses.items() for a in (str(path), "--name", name)]
    lpcfg("report", str(data / "test.mrg"), *names, "-o", str(page), "-q")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("error_kinds: --screenshot needs Chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", f"--screenshot={png.resolve()}",
             "--window-size=1300,1400", "--virtual-time-budget=5000", f"{page.as_uri()}#{view}"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--models", required=True, help="comma-separated model files")
    ap.add_argument("--out", default="out/errors", help="folder for the parses")
    ap.add_argument("--json", default=None, help="also write the record here")
    ap.add_argument("--plot", default=None, help="draw PLOT.png (and the example's SVGs)")
    ap.add_argument("--example", type=int, default=None, help="test sentence to draw (1-based)")
    ap.add_argument("--analyser", type=Path, default=None, help="checkout of the analyser")
    ap.add_argument("--screenshot", type=Path, default=None, help="PNG of `lpcfg report`'s page")
    ap.add_argument("--view", default="test=1&kind=coordination&max=25", help="its filter")
    ap.add_argument(
        "--berkeley", type=Path, default=None, help="also the Berkeley parser (its folder)"
    )
    ap.add_argument(
        "--berkeley-grammar",
        type=Path,
        default=None,
        help=f"with --berkeley: its grammar (default: the folder's {BERKELEY_GRAMMAR})",
    )
    args = ap.parse_args()
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gold_path = data / "test.mrg"
    gold = gold_path.read_text(encoding="utf-8").splitlines()
    record: dict = {**provenance(), "test": str(gold_path), "models": {}}
    parses: dict[str, list[str]] = {}
    analyses: dict[str, ErrorAnalysis] = {}
    runs = [(name_of(m), m) for m in args.models.split(",")]
    if args.berkeley is not None:
        # a link (berkeley_seeds.py's dev-choice.gr) is named by what it links to
        grammar = (args.berkeley_grammar or args.berkeley / BERKELEY_GRAMMAR).resolve()
        record["berkeley_grammar"] = grammar.name
        runs.append(("berkeley", str(grammar)))
    for name, model in runs:
        parsed = out / f"{name}.parsed"
        if name == "berkeley":
            jar = args.berkeley / "BerkeleyParser-1.7.jar"
            parse_berkeley(jar, Path(model), data / "test.txt", parsed)
        else:
            lpcfg("parse", model, str(data / "test.txt"), "-o", str(parsed))
        parses[name] = parsed.read_text(encoding="utf-8").splitlines()
        analyses[name] = classify_errors(gold, parses[name])
        entry = {
            "model": model,
            "strict_f1": evaluate_lines(gold, parses[name]).strict_f1,
            **analyses[name].to_dict(),
        }
        if args.analyser is not None:
            theirs = analyser_kinds(args.analyser, gold_path, parsed, out)
            entry["analyser"] = agreement(analyses[name], theirs)
        record["models"][name] = entry
        print(f"{name}: {entry['brackets']} bracket errors", file=sys.stderr)
    if args.plot:
        path = Path(args.plot)
        path.parent.mkdir(parents=True, exist_ok=True)
        plot(record, path)
        if args.example:
            record["example"] = {
                "sentence": args.example,
                "pictures": draw_example(
                    gold[args.example - 1], parses, analyses, args.example, path.parent
                ),
            }
    if args.screenshot:
        files = {name: out / f"{name}.parsed" for name in parses}
        screenshot(data, files, out, args.screenshot, args.view)
        record["screenshot"] = {"picture": args.screenshot.name, "view": args.view}
        # What the picture shows, beside it (as every figure of the docs has its JSON).
        shown = {**provenance(), "page": "lpcfg report", "gold": str(gold_path),
                 "parses": {n: str(f) for n, f in files.items()}, "view": args.view}  # fmt: skip
        write_record(args.screenshot.with_suffix(".json"), shown)
    write_record(out / "error_kinds.json", record, also=args.json)


if __name__ == "__main__":
    main()
