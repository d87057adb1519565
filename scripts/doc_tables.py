#!/usr/bin/env python3
"""The tables of README.md and the docs pages, drawn from the results records.

A page marks each table that quotes a record:

    <!-- table NAME -->
    | ... |
    <!-- end table -->

and ``TABLES[NAME]`` makes that table's markdown from the records in ``docs/figures/``
(``records.read``). Changing a figure means re-running the script that writes its record,
then this one; a table typed by hand differs from its record and fails the test that runs
``--check`` (``tests/scripts/test_doc_tables.py``).

    python scripts/doc_tables.py            # rewrite every marked table from the records
    python scripts/doc_tables.py --check    # print what differs; exit 1 if anything does
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import random
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import records

ROOT = records.ROOT
PAGES = ["README.md", "docs/**/*.md"]
MARK = re.compile(
    r"^<!-- table (?P<name>[\w-]+) -->\n(?P<body>.*?)^<!-- end table -->$", re.M | re.S
)

TABLES: dict[str, Callable[[Path], str]] = {}


def table(name: str) -> Callable[[Callable[[Path], str]], Callable[[Path], str]]:
    """Register ``function(figures folder) -> markdown`` as the table ``name``."""

    def register(function: Callable[[Path], str]) -> Callable[[Path], str]:
        TABLES[name] = function
        return function

    return register


def pages(root: Path = ROOT) -> list[Path]:
    return sorted({p for pattern in PAGES for p in root.glob(pattern)})


def rendered(text: str, figures: Path) -> str:
    """``text`` with every marked table drawn anew from the records in ``figures``."""

    def draw(match: re.Match) -> str:
        name = match["name"]
        if name not in TABLES:
            raise KeyError(f"no table named {name!r} in scripts/doc_tables.py")
        return f"<!-- table {name} -->\n{TABLES[name](figures).rstrip()}\n<!-- end table -->"

    return MARK.sub(draw, text)


def differences(root: Path = ROOT, figures: Path | None = None) -> list[str]:
    """A unified diff per page whose marked tables differ from their records."""
    figures = figures or root / "docs" / "figures"
    out = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        new = rendered(text, figures)
        if new != text:
            name = str(page.relative_to(root))
            out.append(
                "".join(
                    difflib.unified_diff(
                        text.splitlines(True), new.splitlines(True), name, f"{name} (records)"
                    )
                )
            )
    return out


def marked(root: Path = ROOT) -> dict[str, list[str]]:
    """The tables each page marks, by page."""
    return {
        str(p.relative_to(root)): names
        for p in pages(root)
        if (names := [m["name"] for m in MARK.finditer(p.read_text(encoding="utf-8"))])
    }


# --- figures as the tables write them -------------------------------------------------


def f2(x: float) -> str:
    return f"{x:.2f}"


def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def span(stat: dict, show: Callable[[float], str]) -> str:
    """One seed's value, or the seeds' range."""
    low, high = show(stat["min"]), show(stat["max"])
    if low == high:
        return low
    unit = low.split()[-1] if " " in low else ""
    if unit and high.endswith(" " + unit):
        return f"{low[: -len(unit) - 1]}-{high}"
    return f"{low}-{high}"


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def mean_sd(stat: dict) -> str:
    if len(stat["values"]) == 1:
        return f2(stat["mean"])
    return f"{f2(stat['mean'])} ± {f2(stat['sd'])}"


# --- the Penn Treebank: README and docs/experiments/ptb.md ------------------------------

PTB_ROWS = {
    "standard": "treebank PCFG (`configs/standard.toml`)",
    "em16": "EM, 16 states (`configs/em16.toml`)",
    "pivot_em16": "pivot+EM, 16 states (`configs/pivot_em16.toml`)",
    "pivot16": "pivot, 16 states (`configs/pivot16.toml`)",
    "spectral16": "spectral, 16 states (`configs/spectral16.toml`)",
    "splitmerge": "one split-merge grammar (`configs/splitmerge.toml`)",
    "best": "six split-merge, a pivot+EM and an EM grammar as a product (`configs/best.toml`)",
}
BERKELEY_ROWS = {
    "4 cycles": "the Berkeley parser, 4 cycles (its folder's grammar: the run's best on test)",
    "6 cycles": "the Berkeley parser, 6 cycles (its default)",
}


def berkeley_anchor(figures: Path) -> dict:
    """The Berkeley parser chosen on dev as lpcfg's models are: of the cycles of the trainer
    run its folder's grammars come from (the run of ``berkeley_seeds.json`` whose
    ``same_as`` names them: ``-randSeed 2``, the trainer's default), the one dev picks
    (its record, ``grammar`` naming that cycle's file), with its row ``label`` added."""
    runs = [r for r in records.read("berkeley_seeds", figures)["runs"] if r.get("same_as")]
    if len(runs) != 1:
        raise SystemExit(
            "doc_tables: berkeley_seeds.json needs the one run the Berkeley parser's folder "
            "grammars come from (same_as): python scripts/berkeley_seeds.py --seeds 2"
        )
    run = runs[0]
    return {
        **run,
        "label": f"the Berkeley parser, dev's choice of its {len(run['dev_f1_by_cycle'])} "
        f"cycles (cycle {run['cycle']})",
    }


def berkeley_label(grammar: str, figures: Path) -> str:
    """The row label of the Berkeley grammar file named ``grammar`` that a record's run
    parsed with (``bench_parse.py``, ``error_kinds.py``)."""
    anchor = berkeley_anchor(figures)
    if grammar == anchor["grammar"]:
        return anchor["label"]
    shipped = records.read("ptb", figures).get("berkeley", {})
    for key, label in BERKELEY_ROWS.items():
        if shipped.get(key, {}).get("grammar") == grammar:
            return label
    return f"the Berkeley parser, `{grammar}`"


def speed_row(speed: dict, config: str) -> dict | None:
    for path, row in speed.get("models", {}).items():
        if Path(path).name == f"{config}-s0.npz":
            return row
    return None


def seeds_note(cell: dict) -> str:
    seeds = cell["seeds"]
    return f", seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else ""


@table("ptb-readme")
def ptb_readme(figures: Path) -> str:
    """README's results: test F1 (mean over seeds where a row has several), training time,
    the seed-0 model's parsing speed beside the Berkeley parser's, model file size."""
    ptb, speed = records.read("ptb", figures), records.read("speed", figures)
    lines = [
        "| model | dev F1 | test F1 | training | sentences/s | vs Berkeley | model file |",
        "|---|---|---|---|---|---|---|",
    ]
    best = max(ptb["configs"].values(), key=lambda c: c["dev_f1"]["mean"])
    for config, label in PTB_ROWS.items():
        cell = ptb["configs"].get(config)
        if cell is None:
            continue
        seeds = len(cell["seeds"])
        name = label if seeds == 1 else f"{label}, {seeds} seeds"
        test = f2(cell["test_f1"]["mean"])
        if cell is best:
            name, test = f"**{name}**", f"**{test}**"
        row = speed_row(speed, config)
        rate = f"{row['jobs1']['rate']:.1f}" if row else ""
        ratio = f"{row['vs_berkeley']:.1f}x" if row and "vs_berkeley" in row else ""
        lines.append(
            f"| {name} | {f2(cell['dev_f1']['mean'])} | {test} | "
            f"{span(cell['train_seconds'], minutes)} | {rate} | {ratio} | "
            f"{megabytes(cell['model_bytes'])} |"
        )
    anchor = berkeley_anchor(figures)
    timed = speed["berkeley"]["grammar"] if "berkeley" in speed else None
    berkeley = [(f"**{anchor['label']}**", anchor, anchor["grammar_bytes"], anchor["grammar"])]
    for key, label in BERKELEY_ROWS.items():
        b = ptb.get("berkeley", {}).get(key)
        if b is not None:
            berkeley.append((label, b, b["model_bytes"], b["grammar"]))
    for name, b, size, grammar in berkeley:
        test = f"**{f2(b['test_f1'])}**" if b is anchor else f2(b["test_f1"])
        rate = f"{speed['berkeley']['rate']:.1f}" if grammar == timed else ""
        lines.append(
            f"| {name} | {f2(b['dev_f1'])} | {test} | | {rate} | {'1x' if rate else ''} | "
            f"{megabytes(size)} |"
        )
    return "\n".join(lines)


def above(x: float) -> str:
    return f"{abs(x):.2f} {'above' if x >= 0 else 'below'}"


@table("ptb-summary")
def ptb_summary(figures: Path) -> str:
    """One split-merge grammar and the product against the Berkeley parser's choice on dev,
    and against its folder's 4-cycle grammar."""
    ptb = records.read("ptb", figures)
    sm, best = ptb["configs"]["splitmerge"], ptb["configs"]["best"]
    b, four = berkeley_anchor(figures), ptb["berkeley"]["4 cycles"]
    many = records.read("splitmerge_seeds", figures)["configs"]["splitmerge"]
    text = (
        f"One lpcfg split-merge grammar (mean of seeds {sm['seeds'][0]}-{sm['seeds'][-1]}) is "
        f"{above(sm['dev_f1']['mean'] - b['dev_f1'])} the Berkeley parser's dev-selected "
        f"grammar on dev and {above(sm['test_f1']['mean'] - b['test_f1'])} it on test (its "
        f"seeds score {f2(sm['test_f1']['min'])}-{f2(sm['test_f1']['max'])} there; over "
        f"{len(many['seeds'])} seeds {mean_sd(many['test_f1'])}, "
        f"{above(many['test_f1']['mean'] - b['test_f1'])} it); the product of "
        f"`configs/best.toml` is {above(best['test_f1']['mean'] - b['test_f1'])} it."
    )
    cycle = b["same_as"][four["grammar"]]
    by_test = b.get("test_f1_by_cycle", {})
    best_on_test = by_test and max(by_test, key=by_test.get) == str(cycle)
    text += (
        f" The 4-cycle grammar of the Berkeley parser's folder is cycle {cycle} of the same "
        f"run, which dev ranks below cycle {b['cycle']} ({f2(four['dev_f1'])} against "
        f"{f2(b['dev_f1'])})"
        + (" and which scores best of the run's cycles on test" if best_on_test else "")
        + f" ({f2(four['test_f1'])}; EVALB {f2(four['test_evalb_f1'])}, as EVALB skips a "
        f"sentence whose lengths no longer match where strict F1 counts it wrong): one "
        f"split-merge grammar is {above(sm['test_f1']['mean'] - four['test_f1'])} it, the "
        f"product {above(best['test_f1']['mean'] - four['test_f1'])} it."
    )
    return text


@table("ptb-models")
def ptb_models(figures: Path) -> str:
    """docs/experiments/ptb.md: every shipped config and the Berkeley parser's grammars, dev
    and test strict F1 (mean ± sd and range over seeds), EVALB F1 on test, training time."""
    ptb = records.read("ptb", figures)
    lines = [
        "| model | seeds | dev F1 | test F1 | test F1 by seed | test EVALB F1 | training |",
        "|---|---|---|---|---|---|---|",
    ]
    for config, label in PTB_ROWS.items():
        cell = ptb["configs"].get(config)
        if cell is None:
            continue
        seeds = cell["seeds"]
        by_seed = ", ".join(f2(v) for v in cell["test_f1"]["values"]) if len(seeds) > 1 else ""
        lines.append(
            f"| {label} | {', '.join(map(str, seeds))} | {mean_sd(cell['dev_f1'])} | "
            f"{mean_sd(cell['test_f1'])} | {by_seed} | {mean_sd(cell['test_evalb_f1'])} | "
            f"{span(cell['train_seconds'], minutes)} |"
        )
    anchor = berkeley_anchor(figures)
    berkeley = [(anchor["label"], anchor)]
    berkeley += [(label, ptb.get("berkeley", {}).get(key)) for key, label in BERKELEY_ROWS.items()]
    for label, b in berkeley:
        if b is not None:
            lines.append(
                f"| {label} | | {f2(b['dev_f1'])} | {f2(b['test_f1'])} | | "
                f"{f2(b['test_evalb_f1'])} | |"
            )
    return "\n".join(lines)


def seeds_table(figures: Path, config: str) -> str:
    """One shipped config's runs on the standard split, seed by seed (``ptb_results.py``):
    dev and test strict F1, test EVALB F1, training time, and their mean ± sd."""
    cell = records.read("ptb", figures)["configs"][config]
    lines = ["| seed | dev F1 | test F1 | test EVALB F1 | training |", "|---|---|---|---|---|"]
    keys = ("dev_f1", "test_f1", "test_evalb_f1")
    for i, seed in enumerate(cell["seeds"]):
        row = [f2(cell[k]["values"][i]) for k in keys]
        row.append(minutes(cell["train_seconds"]["values"][i]))
        lines.append(f"| {seed} | " + " | ".join(row) + " |")
    if len(cell["seeds"]) > 1:
        row = [f"**{mean_sd(cell[k])}**" for k in keys[:2]] + [mean_sd(cell[keys[2]])]
        lines.append("| mean ± sd | " + " | ".join(row) + " | |")
    return "\n".join(lines)


for _config in ("standard", "em16", "pivot_em16", "pivot16", "spectral16", "splitmerge"):
    table(f"seeds-{_config}")(lambda figures, config=_config: seeds_table(figures, config))


@table("pivot-paper")
def pivot_paper(figures: Path) -> str:
    """Cohen & Collins's table 1 (WSJ 2-21, in ``table1.json``) beside the shipped pivot and
    pivot+EM configs at m = 16 (``ptb.json``, mean over seeds)."""
    paper = records.read("table1", figures)["paper"]
    ptb = records.read("ptb", figures)["configs"]
    states = [8, 16, 24, 32]
    lines = ["| | | " + " | ".join(f"m = {m}" for m in states) + " | test |",
             "|---|---|" + "---|" * (len(states) + 1)]  # fmt: skip
    for i, (method, label) in enumerate([("pivot", "pivot"), ("pivot+em", "pivot+EM")]):
        its = paper[method].get("iterations")
        cells = [
            f"{f2(v)} ({its[k]})" if its else f2(v) for k, v in enumerate(paper[method]["dev"])
        ]
        who = "Cohen & Collins, table 1 (WSJ 2-21, dev section 22)" if i == 0 else ""
        name = f"{label} (EM iterations)" if its else label
        lines.append(
            f"| {who} | {name} | " + " | ".join(cells) + f" | {f2(paper[method]['test'])} |"
        )
    for i, (config, label) in enumerate([("pivot16", "pivot"), ("pivot_em16", "pivot+EM")]):
        cell = ptb[config]
        seeds = len(cell["seeds"])
        who = "lpcfg (PTB sample, standard split)" if i == 0 else ""
        name = f"{label} ({'mean of ' + str(seeds) + ' seeds' if seeds > 1 else 'one run'})"
        cells = ["", f2(cell["dev_f1"]["mean"]), "", ""]
        lines.append(
            f"| {who} | {name} | " + " | ".join(cells) + f" | {f2(cell['test_f1']['mean'])} |"
        )
    return "\n".join(lines)


# --- parsing speed: docs/experiments/speed.md (``bench_parse.py --json``) ---------------


def config_of(path: str) -> str:
    """``em16`` of ``out/ptb/models/em16-s0.npz``."""
    return Path(path).name.removesuffix(".npz").rsplit("-s", 1)[0]


def short_label(path: str) -> str:
    label = PTB_ROWS.get(config_of(path))
    return f"lpcfg {label}" if label else f"lpcfg `{Path(path).name}`"


@table("speed-models")
def speed_models(figures: Path) -> str:
    """Whole ``lpcfg parse`` commands on the test split beside the Berkeley parser's."""
    speed = records.read("speed", figures)
    b = speed["berkeley"]
    lines = [
        "| parser (test split, 345 sentences) | sentences/s, one process | vs Berkeley | "
        "`--jobs 2` vs `--jobs 1` (at most, start-up serial) | start-up (arranging the model "
        "anew) | peak memory | strict F1 |",
        "|---|---|---|---|---|---|---|",
        f"| {berkeley_label(b['grammar'], figures)} | {b['rate']:.1f} | 1x | | | | "
        f"{f2(b['f1'][1])} |",
    ]
    for path, row in speed["models"].items():
        lines.append(
            f"| {short_label(path)} | {row['jobs1']['rate']:.1f} | **{row['vs_berkeley']:.2f}x** | "
            f"{row['jobs_speedup']:.2f}x ({row['jobs2_bound']:.2f}x) | "
            f"{row['startup']['seconds']:.2f} s ({row['startup_uncached']['seconds']:.2f} s) | "
            f"{row['jobs1']['max_rss_mb']:.0f} MB | {f2(row['jobs1']['f1'][1])} |"
        )
    return "\n".join(lines)


@table("speed-run")
def speed_run(figures: Path) -> str:
    """What else the run of ``speed-models`` measured: the machine's matrix-product rate
    and a longer input with two jobs."""
    speed = records.read("speed", figures)
    first = short_label(next(iter(speed["models"])))
    text = [
        f"In this run numpy's float32 matrix product ran at {speed['gemm32_1thread']:.1f} "
        f"GFLOP/s on one thread and {speed['gemm32_all']:.1f} on both cores."
    ]
    scaling = speed.get("scaling")
    if scaling:
        text.append(
            f"On the test split repeated to {scaling['sentences']:,} sentences, {first} took "
            f"{scaling['jobs1']:.2f} s with `--jobs 1` and {scaling['jobs2']:.2f} s with "
            f"`--jobs 2` (**{scaling['jobs_speedup']:.2f}x**); two independent `--jobs 1` "
            f"processes on the two halves at once, the most two processes get from this "
            f"machine, {scaling['two_processes']:.2f} s ({scaling['two_processes_speedup']:.2f}x)."
        )
    return "\n".join(text)


@table("speed-long")
def speed_long(figures: Path) -> str:
    """The longest sentence of the sample with both parsers (``bench_parse.py --berkeley``)."""
    speed = records.read("speed", figures)
    long = speed["long_sentence"]
    return (
        f"The {long['words']}-word sentence of the sample (training tree 1855), whole "
        f"commands in the run above: {short_label(next(iter(speed['models'])))} "
        f"{long['lpcfg']:.2f} s, the Berkeley parser {long['berkeley']:.2f} s "
        f"(**{long['lpcfg'] / long['berkeley']:.2f}x** its time)."
    )


@table("speed-large")
def speed_large(figures: Path) -> str:
    """``bench_parse.py --large``: a treebank PCFG of over a thousand symbols."""
    speed = records.read("speed", figures)
    large, b = speed["large"], speed["berkeley"]
    return "\n".join([
        "| parser | sentences/s, one process | vs Berkeley | peak memory | strict F1 |",
        "|---|---|---|---|---|",
        f"| {berkeley_label(b['grammar'], figures)} | {b['rate']:.1f} | 1x | | "
        f"{f2(b['f1'][1])} |",
        f"| lpcfg treebank PCFG of `--vertical 2 --horizontal 2` ({large['symbols']:,} symbols, "
        f"{large['binary_rules']:,} binary rules) | {large['rate']:.1f} | "
        f"{large['rate'] / b['rate']:.2f}x | {large['max_rss_mb']:.0f} MB | "
        f"{f2(large['f1'][1])} |",
    ])  # fmt: skip


@table("speed-by-length")
def speed_by_length(figures: Path) -> str:
    """Speed per length bucket, start-up subtracted (``bench_parse.py --by-length``)."""
    speed = records.read("speed", figures)
    lines = [
        "| words | sentences | mean words | lpcfg ms/sentence | Berkeley ms/sentence | "
        "lpcfg sentences/s | Berkeley sentences/s | lpcfg vs Berkeley |",
        "|---|---|---|---|---|---|---|---|",
    ]
    table = speed["by_length"]
    unmeasured = f"under {table.get('resolution', 0.1):g} s in all"

    def ms(value: float | None) -> str:
        return unmeasured if value is None else f"{1000 * value:.1f}"

    def rate(value: float | None) -> str:
        return unmeasured if value is None else f"{value:.1f}"

    for r in table["rows"]:
        ours, theirs = r["lpcfg_rate"], r["berkeley_rate"]
        ratio = f"**{ours / theirs:.2f}x**" if ours and theirs else ""
        lines.append(
            f"| {r['bucket']} | {r['sentences']} | {r['mean_words']:.1f} | "
            f"{ms(r['lpcfg_seconds_per_sentence'])} | {ms(r['berkeley_seconds_per_sentence'])} | "
            f"{rate(ours)} | {rate(theirs)} | {ratio} |"
        )
    return "\n".join(lines)


@table("speed-latent")
def speed_latent(figures: Path) -> str:
    """The latent pass's work and rate per model, and the coarse pass's time."""
    speed = records.read("speed", figures)
    lines = [
        "| model | latent pass | its rate | of one-thread float32 matrix product | coarse pass |",
        "|---|---|---|---|---|",
    ]
    for path, row in speed["models"].items():
        if not row["latent_gflop"]:  # the treebank PCFG: no latent pass
            lines.append(f"| {short_label(path)} | none | | | {row['coarse_seconds']:.2f} s |")
            continue
        lines.append(
            f"| {short_label(path)} | {row['latent_gflop']:.1f} GFLOP in "
            f"{row['latent_seconds']:.2f} s | {row['latent_gflops']:.1f} GFLOP/s | "
            f"{row['latent_gflops'] / speed['gemm32_1thread']:.3f} | "
            f"{row['coarse_seconds']:.2f} s |"
        )
    return "\n".join(lines)


# --- Cohen & Collins' table 1: docs/experiments/ptb.md ----------------------------------


def _table1(figures: Path) -> tuple[dict, list[int]]:
    data = records.read("table1", figures)
    table = {m: {int(k): v for k, v in row.items()} for m, row in data["table"].items()}
    states = sorted({m for row in table.values() for m in row})
    return table, states


@table("table1")
def table1_dev(figures: Path) -> str:
    """Dev F1 per m beside the paper's, and test F1 of the m best on dev (``table1.py``)."""
    import table1

    table, states = _table1(figures)
    return table1.markdown(table, states)


@table("table1-times")
def table1_times(figures: Path) -> str:
    """Training time and test F1 per method and m (``table1.py``)."""
    import table1

    table, states = _table1(figures)
    return table1.times_markdown(table, states)


@table("learning-curves")
def learning_curves(figures: Path) -> str:
    """Each learning curve's first, best and last dev F1 (``learning_curves.py``)."""
    runs = records.read("learning_curves", figures)["data"]["runs"]
    lines = [
        "| config | steps run | dev F1 after the first | best (kept) | dev F1 after the last |",
        "|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| `{r['config']}` | {r['steps']} {r['unit']}s | {f2(r['first'])} "
            f"| {f2(r['best'])} ({r['unit']} {r['best_step']}) | {f2(r['last'])} |"
        )
    return "\n".join(lines)


def row(*cells: str) -> str:
    """One markdown table row."""
    return "| " + " | ".join(cells) + " |"


def best_of_dev(dev: list[float], test: list[float], k: int) -> float:
    """The mean test F1 of the seed dev F1 picks among ``k`` of them, over every ``k`` of
    the seeds (a tie on dev keeps the earlier seed): what choosing among ``k`` random
    restarts on dev gives, against ``statistics.fmean(test)`` for one."""
    picks = [
        test[max(group, key=lambda i: (dev[i], -i))]
        for group in itertools.combinations(range(len(dev)), k)
    ]
    return statistics.fmean(picks)


def resampled(values: list, rng: random.Random) -> list:
    """``values`` drawn again with replacement, as many."""
    return [rng.choice(values) for _ in values]


def interval(draws: list[float]) -> tuple[float, float]:
    """The 95 % percentile interval of bootstrap ``draws``."""
    ordered = sorted(draws)
    return ordered[int(0.025 * len(ordered))], ordered[int(0.975 * len(ordered)) - 1]


@table("berkeley-seeds")
def berkeley_seeds(figures: Path) -> str:
    """The Berkeley parser trained with several seeds, each cycle chosen on dev
    (``berkeley_seeds.py``), beside its shipped grammar and lpcfg's split-merge seeds: the
    three of README's row and the twelve of ``splitmerge_seeds.json``."""
    data = records.read("berkeley_seeds", figures)
    ptb = records.read("ptb", figures)
    many = records.read("splitmerge_seeds", figures)["configs"]["splitmerge"]
    b, sm = ptb["berkeley"]["4 cycles"], ptb["configs"]["splitmerge"]
    t = data["test_f1"]

    def seeds(stat: dict) -> str:
        return f"seeds {stat['seeds'][0]}-{stat['seeds'][-1]}"

    rows = [
        row("grammar", "cycle (dev's choice)", "dev F1", "test F1"),
        row(*["---"] * 4),
        *(
            row(f"the Berkeley parser, `-randSeed {r['seed']}`"
                + (" (the run of its folder's grammars)" if r.get("same_as") else ""),
                str(r["cycle"]), f2(r["dev_f1"]), f2(r["test_f1"]))
            for r in data["runs"]
        ),
        row("the Berkeley parser, mean ± sd of the seeds", "", f2(data["dev_f1_mean"]),
            f"**{f2(t['mean'])} ± {f2(t['sd'])}**"),
        row("the Berkeley parser's folder grammar of 4 cycles (`-randSeed 2`, cycle 4)", "",
            f2(b["dev_f1"]), f2(b["test_f1"])),
        row(f"one lpcfg split-merge grammar, mean ± sd of {seeds(sm)} (README's row)", "",
            mean_sd(sm["dev_f1"]), f"**{mean_sd(sm['test_f1'])}**"),
        row(f"one lpcfg split-merge grammar, mean ± sd of {seeds(many)}", "",
            mean_sd(many["dev_f1"]), f"**{mean_sd(many['test_f1'])}**"),
    ]  # fmt: skip
    ours, theirs = many["test_f1"]["values"], [r["test_f1"] for r in data["runs"]]
    rng = random.Random(0)  # the seeds of each parser drawn again, 1,000 times
    gap = interval([
        statistics.fmean(resampled(ours, rng)) - statistics.fmean(resampled(theirs, rng))
        for _ in range(1000)
    ])  # fmt: skip
    dev, rng = many["dev_f1"]["values"], random.Random(1)  # lpcfg's (dev, test) pairs, 300 times
    pairs = [resampled(list(zip(dev, ours, strict=True)), rng) for _ in range(300)]
    gain = best_of_dev(dev, ours, 3) - statistics.fmean(ours)
    gains = interval([
        best_of_dev([d for d, _ in p], [x for _, x in p], 3) - statistics.fmean(x for _, x in p)
        for p in pairs
    ])  # fmt: skip
    rows.append("")
    rows.append(
        f"The Berkeley parser's seeds score {f2(t['min'])}-{f2(t['max'])} on test; its "
        f"folder's 4-cycle grammar is {above(b['test_f1'] - t['mean'])} their mean. lpcfg's "
        f"split-merge mean over {len(ours)} seeds is "
        f"{above(many['test_f1']['mean'] - t['mean'])} it (the seeds of both drawn again, "
        f"95 % interval {gap[0]:+.2f} to {gap[1]:+.2f}); over the three of README's row, "
        f"{above(sm['test_f1']['mean'] - t['mean'])} it. Over lpcfg's {len(ours)} seeds dev "
        f"and test F1 correlate (r = {statistics.correlation(dev, ours):.2f}): the seed that "
        f"dev picks among three scores {f2(best_of_dev(dev, ours, 3))} on test on average "
        f"(every three of the {len(ours)}), {gain:+.2f} over one seed (95 % interval "
        f"{gains[0]:+.2f} to {gains[1]:+.2f})."
    )
    return "\n".join(rows)


# What each product of ``product_members.py`` bundles: split-merge grammars alone, or six
# with the members named in the variant (``sm6+pivot_em16+em16``).
PRODUCT_LABELS = {
    "sm6": "six split-merge grammars (`configs/best.toml`'s, without members)",
    "sm7": "seven split-merge grammars",
    "sm8": "eight split-merge grammars",
}
MEMBER_LABELS = {
    "pivot_em16": ("a pivot+EM", "configs/pivot_em16.toml"),
    "em16": ("an EM", "configs/em16.toml"),
    "pivot16": ("a pivot", "configs/pivot16.toml"),
}


def product_label(name: str) -> str:
    """``sm6+em16`` -> six split-merge grammars and an EM grammar (`configs/em16.toml`);
    ``smu6...``: the six with latent unary rules."""
    if name in PRODUCT_LABELS:
        return PRODUCT_LABELS[name]
    six, *names = name.split("+")
    six = "six split-merge grammars" + (" with unary rules" if six == "smu6" else "")
    if not names:
        return six
    members = [MEMBER_LABELS[m] for m in names]
    if len(members) == 1:
        return f"{six} and {members[0][0]} grammar (`{members[0][1]}`)"
    listed = ", ".join(m[0] for m in members[:-1]) + f" and {members[-1][0]}"
    return f"{six}, {listed} grammar"


@table("product-members")
def product_members(figures: Path) -> str:
    """Products of split-merge grammars with more seeds or with grammars of other methods,
    dev and test strict F1 per repetition (``product_members.py``); the one
    ``configs/best.toml`` trains in bold."""
    data = records.read("product_members", figures)
    variants = data["variants"]
    best = shipped_product()
    reps = ", ".join(str(r["rep"]) for r in variants["sm6"]["runs"])
    rows = [
        row("product", f"dev, first split-merge seed {reps}", "dev mean ± sd",
            "test, the same", "test mean ± sd"),
        row(*["---"] * 5),
    ]  # fmt: skip
    for name, v in variants.items():
        dev = f"{f2(v['dev_f1']['mean'])} ± {f2(v['dev_f1']['sd'])}"
        rows.append(
            row(
                product_label(name),
                ", ".join(f2(r["dev_f1"]) for r in v["runs"]),
                f"**{dev}**" if name == best else dev,
                ", ".join(f2(r["test_f1"]) for r in v["runs"]),
                f"{f2(v['test_f1']['mean'])} ± {f2(v['test_f1']['sd'])}",
            )
        )
    base = [r["dev_f1"] for r in variants["sm6"]["runs"]]
    gains = [r["dev_f1"] - b for r, b in zip(variants[best]["runs"], base, strict=True)]
    more = max(
        abs(r["dev_f1"] - b)
        for name in ("sm7", "sm8")
        for r, b in zip(variants[name]["runs"], base, strict=True)
    )
    rows.append("")
    rows.append(
        f"Against the six split-merge grammars alone, `configs/best.toml`'s product gains "
        f"{', '.join(f'{g:+.2f}' for g in gains)} dev F1 in the three repetitions and "
        f"{variants[best]['test_f1']['mean'] - variants['sm6']['test_f1']['mean']:+.2f} test F1 "
        f"on average; one or two more split-merge seeds move dev by {more:.2f} at most."
    )
    six, _, members = best.partition("+")
    other = "+".join([{"sm6": "smu6", "smu6": "sm6"}[six], members])  # unary rules or not
    if other in variants:
        diffs = [
            a["dev_f1"] - b["dev_f1"]
            for a, b in zip(variants[other]["runs"], variants[best]["runs"], strict=True)
        ]
        rows[-1] += (
            f" Its split-merge members {'with' if other.startswith('smu') else 'without'} "
            f"unary rules move dev by {', '.join(f'{d:+.2f}' for d in diffs)} (mean "
            f"{statistics.fmean(diffs):+.2f}, sd {statistics.stdev(diffs):.2f}) and test by "
            f"{variants[other]['test_f1']['mean'] - variants[best]['test_f1']['mean']:+.2f}."
        )
    return "\n".join(rows)


def shipped_product() -> str:
    """The ``product_members.py`` variant ``configs/best.toml`` trains: its six split-merge
    grammars (``smu6`` with unary rules, else ``sm6``) and its members, in order."""
    from ptb_results import train_options

    train = train_options("best")
    six = "smu6" if train.get("unaries", True) else "sm6"
    return "+".join([six, *(Path(m).stem for m in train.get("member", []))])


@table("crossval")
def crossval(figures: Path) -> str:
    """5-fold cross-validation of the training set, lpcfg beside the Berkeley parser
    (``crossval.py``): pooled strict F1 over every training sentence, and the paired test."""
    data = records.read("crossval", figures)
    rows = [row("setting", "pooled strict F1", "folds", "training per fold"), row(*["---"] * 4)]
    for name, label in (
        ("splitmerge", "one lpcfg split-merge grammar (`configs/splitmerge.toml`, fold k: seed k)"),
        ("berkeley", "the Berkeley parser, 4 split-merge cycles in every fold"),
    ):
        r = data[name]
        f1s = [f["f1"] for f in r["folds"]]
        secs = [f["seconds"] / 60 for f in r["folds"]]
        rows.append(
            row(label, f"**{f2(r['pooled_f1'])}**", f"{f2(min(f1s))}-{f2(max(f1s))}",
                f"{min(secs):.1f}-{max(secs):.1f} min")
        )  # fmt: skip
    report = data["splitmerge"]["against"]["report"]
    diff = next(x for x in report if x.startswith("difference")).split()[-1]
    boot = next(x for x in report if x.startswith("paired bootstrap"))
    interval = boot[boot.index("95% interval") + len("95% interval ") :]
    p_value = next(x for x in report if x.startswith("approximate randomization")).split()[-1]
    rows.append("")
    rows.append(
        f"lpcfg minus the Berkeley parser over the {data['splitmerge']['trees']:,} sentences: "
        f"{diff} (paired bootstrap, 95 % interval {interval}; approximate randomization "
        f"p = {p_value})."
    )
    return "\n".join(rows)


@table("scale")
def scale(figures: Path) -> str:
    """Every learner trained on the sampled full-treebank-size set (``bench_scale.py``)."""
    import bench_scale

    return bench_scale.markdown(records.read("scale", figures)["rows"]).rstrip()


@table("scale-run")
def scale_run(figures: Path) -> str:
    """What the scale table's run was: its training set, and the parsers' times beside."""
    data = records.read("scale", figures)
    rows = data["rows"]
    berkeley = [r["berkeley_seconds"] for r in rows if "berkeley_seconds" in r]
    train = sum(r["train_seconds"] for r in rows)
    text = (
        f"Training set: {data['trees']:,} trees of at most {data['max_words']} words; the "
        f"learners' training took {train / 60:.0f} min together."
    )
    if berkeley:
        text += (
            f" The Berkeley parser took {min(berkeley):.1f}-{max(berkeley):.1f} s on the same "
            "words, once beside each model."
        )
    return text


# --- consistency on synthetic L-PCFGs: docs/learners/spectral.md ------------------------

CONSISTENCY = {
    "spectral (paper)": "spectral, the paper's features and no smoothing (`PAPER_SPECTRAL`)",
    "spectral (engineered)": "spectral, lpcfg's features (`ENGINEERED_SPECTRAL`)",
    "pivot": "pivot, held-out error (`PURE_PIVOT`)",
}


def g3(x: float) -> str:
    """Three significant digits, trailing zeros kept: 0.150, 3.48e-15."""
    return f"{x:#.3g}".replace("e-0", "e-")


def consistency_table(figures: Path, name: str) -> str:
    """Held-out error per sample size (and from exact moments where the target's support is
    finite) of ``bench_consistency.py``'s figure JSON ``name``; pivot's parameter error."""
    rows = records.read(name, figures)["data"]["rows"]
    sizes = sorted({r["trees"] for r in rows if r["trees"] is not None})
    exact = {r["learner"]: r for r in rows if r["trees"] is None}
    cell = {(r["learner"], r["trees"]): r for r in rows}
    heads = [f"M = 10^{len(str(n)) - 1}" if i == 0 else f"10^{len(str(n)) - 1}"
             for i, n in enumerate(sizes)]  # fmt: skip
    heads += ["exact moments"] if exact else []
    lines = ["| learner | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for learner, label in [*CONSISTENCY.items(), ("pivot", None)]:
        key = "held_out" if label else "parameter"
        label = label or "pivot, largest parameter error (up to a permutation of states)"
        row = [g3(cell[learner, n][key]) for n in sizes]
        row += [g3(exact[learner][key])] if exact else []
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    return "\n".join(lines)


table("consistency")(lambda figures: consistency_table(figures, "consistency"))
table("consistency-recursive")(lambda figures: consistency_table(figures, "consistency_recursive"))


@table("consistency-exact")
def consistency_exact(figures: Path) -> str:
    """The reruns from exact moments that find what sets the error floors."""
    rows = records.read("consistency", figures)["data"]["rows"]
    lines = ["| rerun from exact moments | held-out error | parameter error |", "|---|---|---|"]
    for r in rows:
        if r["trees"] is None and r["learner"] not in CONSISTENCY:
            parameter = "" if r["parameter"] is None else g3(r["parameter"])
            lines.append(f"| {r['learner']} | {g3(r['held_out'])} | {parameter} |")
    return "\n".join(lines)


# --- the parser's settings: docs/parsing.md ---------------------------------------------

SWEPT = {"standard": "treebank PCFG", "em16": "em16", "pivot_em16": "pivot_em16",
         "spectral16": "spectral16", "pivot16": "pivot16", "splitmerge": "split-merge, seed 0",
         "best": "`configs/best.toml`"}  # fmt: skip


def sweep_head(sweep: dict, first: str) -> list[str]:
    """A sweep table's header: its values, the default in bold."""
    heads = [f"**{v}** (the default)" if v == sweep["default"] else v for v in sweep["values"]]
    return [f"| {first} | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]


def sweep_cells(runs: list[dict]) -> list[str]:
    """Strict F1 per value, the trees changed against the first in brackets ("-": refused)."""
    return [
        "-" if "error" in c else f2(c["f1"]) if i == 0 else f"{f2(c['f1'])} ({c['changed']})"
        for i, c in enumerate(runs)
    ]


def sweep_table(figures: Path, option: str, timed: tuple[str, ...] = ("em16",)) -> str:
    """Dev strict F1 per model and value of ``--option`` (trees changed against the first
    value in brackets), and the whole dev parse's seconds for the models ``timed``
    (``parse_settings.py``)."""
    sweep = records.read("parse_settings", figures)["sweeps"][option]
    lines = sweep_head(sweep, f"`--{option}`")
    for config, parts in sweep["configs"].items():
        row = sweep_cells(parts["dev"])
        lines.append(f"| {SWEPT[config]} | " + " | ".join(row) + " |")
    for config in timed:
        if config in sweep["configs"]:
            row = [f"{c['seconds']:.1f}" if "seconds" in c else "-"
                   for c in sweep["configs"][config]["dev"]]  # fmt: skip
            lines.append(f"| {SWEPT[config]}, seconds to parse dev | " + " | ".join(row) + " |")
    return "\n".join(lines)


for _option, _timed in [("prune", ("em16", "best")), ("coarse-beam", ("em16", "best")),
                        ("outside-cut", ("em16", "best")), ("bracket-threshold", ())]:  # fmt: skip
    table(f"parse-{_option}")(
        lambda figures, option=_option, timed=_timed: sweep_table(figures, option, timed)
    )


def bundle_sweep(figures: Path, option: str) -> str:
    """One bundle's sweep of ``--option`` on dev and test: strict F1 (trees changed against
    the first value) and the whole command's seconds (``parse_settings.py``)."""
    sweep = records.read("parse_settings", figures)["sweeps"][option]
    ((config, parts),) = sweep["configs"].items()
    lines = sweep_head(sweep, f"{SWEPT[config]}, `--{option}`")
    for part in ("dev", "test"):
        lines.append(f"| {part} strict F1 | " + " | ".join(sweep_cells(parts[part])) + " |")
    for part in ("dev", "test"):
        cells = [f"{c['seconds']:.1f}" for c in parts[part]]
        lines.append(f"| {part}, seconds (whole command, `--jobs 1`) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


for _option in ("product-prune", "combine"):
    table(f"parse-{_option}")(lambda figures, option=_option: bundle_sweep(figures, option))


@table("parse-decode")
def parse_decode(figures: Path) -> str:
    """Each model decoded every way, dev / test strict F1; the decoder ``auto`` gives the
    model is marked, the best on dev in bold (``parse_settings.py``)."""
    sweep = records.read("parse_settings", figures)["sweeps"]["decode"]
    values = sweep["values"][1:]  # the first is auto: the others' trees are compared with it
    lines = ["| model | " + " | ".join(f"`{v}`" for v in values) + " |",
             "|---|" + "---|" * len(values)]  # fmt: skip
    for config, parts in sweep["configs"].items():
        dev, test = parts["dev"][1:], parts["test"][1:]
        cells = []
        for d, t in zip(dev, test, strict=True):
            cell = "-" if "error" in d else f"{f2(d['f1'])} / {f2(t['f1'])}"
            own = "error" not in d and d["changed"] == 0 and t["changed"] == 0
            cells.append(f"{cell} (auto)" if own else cell)
        best = max((i for i, c in enumerate(dev) if "f1" in c), key=lambda i: dev[i]["f1"])
        cells[best] = f"**{cells[best]}**"
        lines.append(f"| {SWEPT[config]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- the papers' other experiments: docs/experiments/ ----------------------------------


def lm_table(figures: Path, name: str) -> str:
    """``lm_table2.py``'s table of the record ``name``, at every m it ran."""
    import lm_table2

    data = records.read(name, figures)
    states = sorted({row["states"] for row in data["rows"]})
    return lm_table2.markdown(data, states).rstrip()


@table("brown")
def brown(figures: Path) -> str:
    """Table 2 of Cohen & Collins's pivot paper on Brown, beside the paper's (``lm_table2.py``)."""
    return lm_table(figures, "lm_brown")


@table("brown-prior")
def brown_prior(figures: Path) -> str:
    """MAP EM on Brown, beside the run without the prior (``lm_table2.py --prior 5``)."""
    import lm_table2

    prior, without = records.read("lm_brown_prior", figures), records.read("lm_brown", figures)
    return lm_table2.prior_markdown(prior, without).rstrip()


@table("brown-sizes")
def brown_sizes(figures: Path) -> str:
    """Training time against corpus size on Brown (``lm_table2.py --fractions``)."""
    import lm_table2

    return lm_table2.sizes_markdown(records.read("lm_brown_sizes", figures)).rstrip()


@table("brown-anchors")
def brown_anchors(figures: Path) -> str:
    """The pivot method's anchors in EM's solution (``lm_anchors.py``)."""
    import lm_anchors

    return lm_anchors.markdown(records.read("lm_anchors", figures)["rows"]).rstrip()


@table("unmix-error")
def unmix_error(figures: Path) -> str:
    """UNMIX's parameter error against the number of sentences (``unmix_error.py``)."""
    import unmix_error

    return unmix_error.error_table(records.read("unmix_error", figures))


@table("unmix-timings")
def unmix_timings(figures: Path) -> str:
    import unmix_error

    return unmix_error.timing_table(records.read("unmix_error", figures))


@table("unmix-lengths")
def unmix_lengths(figures: Path) -> str:
    import unmix_error

    difference = unmix_error.lengths_difference(records.read("unmix_error", figures))
    return (
        "PCFG-IE: sentences of length 3, `L_max = 3` (longer ones add nothing: with `L_max = "
        f"10` the estimates on the same 10^6 sentences differ by {difference:.2e} at most)."
    )


@table("wcfg-dyck")
def wcfg_dyck(figures: Path) -> str:
    """The Dyck language, section 5.2 of Bailly et al. (``wcfg_dyck.py``)."""
    import wcfg_dyck

    return wcfg_dyck.markdown(records.read("wcfg_dyck", figures)).rstrip()


@table("wcfg-wsj10")
def wcfg_wsj10(figures: Path) -> str:
    """Tables 1 and 2 of Bailly et al. on WSJ10 (``wcfg_wsj10.py``)."""
    import wcfg_wsj10

    return wcfg_wsj10.markdown(records.read("wcfg_wsj10", figures)).rstrip()


# --- other languages: docs/experiments/languages.md -----------------------------------


@table("languages")
def languages(figures: Path) -> str:
    """Every model on every treebank (``bench_languages.py --table-only``)."""
    import bench_languages

    data = records.read("languages", figures)
    names = bench_languages.columns(data, list(bench_languages.TREEBANKS))
    return bench_languages.markdown(data, names, [0, 1, 2]).rstrip()


@table("languages-splits")
def languages_splits(figures: Path) -> str:
    """What each treebank's split holds (``prepare_languages.audit``, kept in the record)."""
    import bench_languages

    data = records.read("languages", figures)
    read_with = {m[1] for run in data["runs"].values()
                 if (m := re.search(r"with nltk (\d+\.\d+)", run.get("source", "")))}  # fmt: skip
    nltk = f" (nltk {', '.join(sorted(read_with))})" if read_with else ""
    lines = [
        f"| treebank | language | trees read{nltk} | left out | usable | stride | words per "
        "training sentence | longest sentence |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, treebank in bench_languages.TREEBANKS.items():
        audit = data["runs"].get(name, {}).get("audit")
        if audit is None:
            continue
        left = sum(audit["left_out"].values())
        longest = max(part["max_words"] for part in audit["parts"].values())
        lines.append(
            f"| {name} | {treebank.language} | {audit['read']:,} | {left:,} | "
            f"{audit['read'] - left:,} | {treebank.stride} | "
            f"{audit['parts']['train']['mean_words']:.1f} | {longest} |"
        )
    return "\n".join(lines)


@table("languages-gains")
def languages_gains(figures: Path) -> str:
    """One split-merge grammar (mean of its seeds) against the treebank PCFG and the
    Berkeley parser's dev-selected grammar, per treebank reading."""
    import statistics

    import bench_languages

    data = records.read("languages", figures)
    lines = [
        "| treebank | split-merge config, seeds | split-merge dev / test (mean) | treebank PCFG "
        "dev / test | split-merge - PCFG, test | the Berkeley parser dev / test | split-merge - "
        "Berkeley, test |",
        "|---|---|---|---|---|---|---|",
    ]
    names = bench_languages.columns(data, list(bench_languages.TREEBANKS))
    names.sort(key=lambda n: "(" in n)  # the treebanks as distributed first
    for name in names:
        models = data["runs"][name]["models"]
        runs = [v for k, v in sorted(models.items()) if k.startswith("splitmerge-s")]
        runs = [r for r in runs if r.get("status") == "ok"]
        pcfg, berkeley = models.get("pcfg"), models.get("berkeley")
        if not runs or pcfg is None or berkeley is None:
            continue
        dev = statistics.fmean(r["dev_f1"] for r in runs)
        test = statistics.fmean(r["test_f1"] for r in runs)
        label = name
        if "(" in name:
            base, conventions = name.rstrip(")").split(" (", 1)
            label = f"{base}, read `--conventions {conventions}`"
        lines.append(
            f"| {label} | `{Path(runs[0]['config']).name}`, {len(runs)} | {f2(dev)} / {f2(test)} | "
            f"{f2(pcfg['dev_f1'])} / "
            f"{f2(pcfg['test_f1'])} | {test - pcfg['test_f1']:+.2f} | "
            f"{f2(berkeley['dev_f1'])} / {f2(berkeley['test_f1'])} (cycle "
            f"{berkeley['chosen_cycle']}) | {test - berkeley['test_f1']:+.2f} |"
        )
    return "\n".join(lines)


# --- errors by kind: docs/experiments/errors.md ------------------------------------------

MODEL_NAMES = {"em16": "EM, 16 states", "splitmerge": "one split-merge grammar",
               "best": "the product of `configs/best.toml`"}  # fmt: skip


def error_model_names(figures: Path) -> dict[str, str]:
    """``MODEL_NAMES`` with the Berkeley parser's row named by the grammar ``error_kinds.py``
    parsed with (the record's ``berkeley_grammar``), as the speed tables name theirs."""
    grammar = records.read("error_kinds", figures)["berkeley_grammar"]
    return {**MODEL_NAMES, "berkeley": berkeley_label(grammar, figures)}


@table("unknown-characters")
def unknown_characters(figures: Path) -> str:
    """Sinica's dev F1 without and with the characters of unknown words
    (``unknown_characters.py``)."""
    import unknown_characters

    return unknown_characters.markdown(records.read("unknown_characters", figures)).rstrip()


@table("errors-by-kind")
def errors_by_kind(figures: Path) -> str:
    """Brackets each kind costs per test sentence, and its repairs, model by model
    (``error_kinds.py``)."""
    models, label = records.read("error_kinds", figures)["models"], error_model_names(figures)
    names = list(models)
    rows = [
        row("kind", *(f"{label.get(n, n)}: brackets per sentence (repairs)" for n in names)),
        row("---", *["---:"] * len(names)),
    ]
    for kind in models[names[0]]["kinds"]:
        cells = []
        for n in names:
            m = models[n]
            k = m["kinds"][kind]
            cells.append(f"{k['brackets'] / m['scored']:.2f} ({k['repairs']})")
        rows.append(row(kind, *cells))
    rows.append(row("**all bracket errors**", *(
        f"**{models[n]['brackets'] / models[n]['scored']:.2f}** ({models[n]['brackets']})"
        for n in names)))  # fmt: skip
    rows.append(row("strict F1", *(f2(models[n]["strict_f1"]) for n in names)))
    return "\n".join(rows)


@table("errors-analyser")
def errors_analyser(figures: Path) -> str:
    """The same parses classified by Kummerfeld et al.'s own analyser: brackets both put
    under the same kind (``error_kinds.py --analyser``)."""
    models, label = records.read("error_kinds", figures)["models"], error_model_names(figures)
    rows = [
        row("parses of", "bracket errors (lpcfg)", "bracket errors (the analyser)",
            "under the same kind"),
        row("---", "---:", "---:", "---:"),
    ]  # fmt: skip
    for name, m in models.items():
        a = m.get("analyser")
        if a is None:
            continue
        share = 100 * a["same_kind"] / max(a["brackets"], 1)
        same = f"{a['same_kind']} ({share:.1f} %)"
        rows.append(row(label.get(name, name), str(a["brackets"]),
                        str(a["analyser_brackets"]), same))  # fmt: skip
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say what differs (exit 1)")
    args = ap.parse_args()
    diffs = differences()
    if args.check:
        sys.stdout.write("".join(diffs))
        return 1 if diffs else 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = rendered(text, ROOT / "docs" / "figures")
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
