#!/usr/bin/env python3
"""Reproduce Table 2 of Cohen & Collins (2014): the aggregate bigram model learned by EM,
pivot and pivot+EM for every m, with Kneser-Ney baselines, on Brown or on the stand-in for
the paper's NYT corpus (``--corpus``, the folder ``scripts/lm_data.py`` writes).

Each aggregate model picks its EM iterations (and the pivot step's smoothing) on the first
half of dev; the table gives the perplexity of the second half, the EM iterations chosen, the
training time, and for each method the test perplexity of its model best on dev (second
half), as the paper does. Each corpus is prepared as the paper prepares it (section 8):

* Brown: training words seen once are ``<unk>``; perplexity counts every word and every
  ``</s>``, unknown words as ``<unk>`` (``lpcfg_cli.lm.perplexity``).
* the stand-in (NYT): training words seen fewer than 20 times are ``<unk>``; unknown words
  of dev and test are left out of perplexity (``Vocabulary.events(skip_unknown=True)``).

The same for every method, Kneser-Ney included. Writes markdown and JSON.

    python scripts/lm_table2.py --data data/brown --out out/lm_brown [--plot PATH]
    python scripts/lm_table2.py --prior 5 --out out/lm_brown_prior   # MAP EM (not the paper's)
    python scripts/lm_table2.py --fractions 0.25,0.5,1 --states 128 --out out/lm_brown_sizes
    python scripts/lm_table2.py --corpus standin --out out/lm_standin

With ``--fractions`` it writes instead the time-against-corpus-size table of the paper's
large-data claim (section 8: the pivot method's cost grows more slowly with the corpus
than EM's): every method at the one m of ``--states``, trained on the first fraction of
the training sentences (its own vocabulary, as a user with that much text would have),
with its tokens, distinct bigrams, training seconds, EM iterations and dev perplexity.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from records import provenance, write

from lpcfg_cli.lm import kneserney
from lpcfg_cli.lm.aggregate import OPTIONS, fit_aggregate
from lpcfg_cli.lm.corpus import Events, Vocabulary, brown_split, read_corpus
from lpcfg_cli.lm.kneserney import KNOptions
from lpcfg_cli.lm.perplexity import halves, perplexity

STATES = (2, 4, 8, 16, 32, 128, 256)
METHODS = ("em", "pivot", "pivot+em")
# Table 2 of the paper: perplexity of the second half of dev per m, then test; EM
# iterations (None where the paper gives none); the Kneser-Ney baselines (dev, test). The
# text of the table as extracted also holds four stray figures (5, 504, "1 35 257", 201)
# that fit no cell; they are left out. Brown's pivot+EM test figure sits among them in the
# garbled text: 337 is the likeliest reading, not a certain one, hence "337?" (PAPER_UNSURE).
PAPER_UNSURE = (
    "337? (Brown, pivot+EM, test): the paper's text is garbled around this cell; the likeliest "
    "reading of the figures there, not a certain one."
)
PAPER_TABLES = {
    "brown": {
        "em": ([737, 599, 488, 468, 430, 388, 365], 364),
        "pivot": ([852, 718, 605, 559, 537, 426, 597], 560),
        "pivot+em": ([758, 582, 502, 425, 374, 310, 327], "337?"),
    },
    "standin": {  # the paper's NYT column
        "em": ([926, 733, 562, 420, 361, 284, 265], 267),
        "pivot": ([1227, 1264, 896, 717, 738, 782, 886], 715),
        "pivot+em": ([898, 754, 553, 441, 394, 279, 292], 281),
    },
}
PAPER_ITERATIONS_TABLES = {
    "brown": {"em": [14, 14, 19, 12, 10, 9, 8], "pivot+em": [2, 3, 2, 1, 1, 1, None]},
    "standin": {"em": [36, 39, 42, 33, 38, 35, 32], "pivot+em": [20, 14, 13, 15, 10, 19, 12]},
}
PAPER_KN_TABLES = {
    "brown": {"kn2": (408, 415), "kn3": (386, 394)},
    "standin": {"kn2": (271, 279), "kn3": (150, 158)},
}
PAPER_NAME = {"brown": "Brown", "standin": "NYT"}
# The paper's preparation of each corpus (section 8): the vocabulary's threshold (words
# seen at least this often) and whether unknown words are left out of perplexity.
MIN_COUNT = {"brown": 2, "standin": 20}
SKIP_UNKNOWN = {"brown": False, "standin": True}


def load(folder: Path) -> dict[str, list[list[str]]]:
    """The split written by ``scripts/lm_data.py`` (train, dev1, dev2, test; dev = dev1 then
    dev2), or Brown's made from nltk's corpus if the folder has none. A folder without the
    dev halves has them cut from dev.txt by ``halves``."""
    if not (folder / "train.txt").exists():
        parts = brown_split()
    else:
        names = ["train", "dev", "test"]
        if (folder / "dev1.txt").exists() and (folder / "dev2.txt").exists():
            names = ["train", "dev1", "dev2", "test"]
        parts = {name: read_corpus(folder / f"{name}.txt") for name in names}
    if "dev1" in parts:
        parts["dev"] = parts["dev1"] + parts["dev2"]
    else:
        parts["dev1"], parts["dev2"] = halves(parts["dev"])
    return parts


@dataclass(frozen=True)
class Setting:
    """How a run prepares and scores its corpus: the vocabulary's threshold and whether
    unknown words are left out of perplexity."""

    min_count: int
    skip_unknown: bool

    def vocabulary(self, sentences: list[list[str]]) -> Vocabulary:
        return Vocabulary.build(sentences, self.min_count)

    def events(self, vocab: Vocabulary, sentences: list[list[str]], order: int = 2) -> Events:
        return vocab.events(sentences, order, skip_unknown=self.skip_unknown)

    def baseline(self, train: list[list[str]], order: int) -> Any:
        return kneserney.estimate(train, KNOptions(order=order, rare=self.min_count - 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--corpus",
        choices=("brown", "standin"),
        default="brown",
        help="the paper's column beside ours and the corpus's preparation (default: brown)",
    )
    ap.add_argument("--data", default=None, help="folder written by lm_data.py (data/CORPUS)")
    ap.add_argument("--out", default=None, help="writes OUT.md and OUT.json (out/lm_CORPUS)")
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="also write the record here (docs/figures/lm_brown.json)",
    )
    ap.add_argument(
        "--min-count",
        type=int,
        default=None,
        help="training words seen fewer times are <unk> (default: brown 2, standin 20)",
    )
    ap.add_argument("--states", default=",".join(map(str, STATES)), help="values of m")
    ap.add_argument("--seeds", default="0,1,2", help="seeds; each cell is their mean and sd")
    ap.add_argument(
        "--prior",
        type=float,
        default=0.0,
        help="every method's EM with this Dirichlet pseudo-count on r (0: the paper's EM)",
    )
    ap.add_argument("--plot", default=None, help="draw PLOT.png (and PLOT.json)")
    ap.add_argument(
        "--fractions",
        default=None,
        help="comma-separated fractions of the training text: the time-against-corpus-size "
        "table at the one m of --states, instead of the perplexity table",
    )
    args = ap.parse_args()
    states = [int(x) for x in args.states.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    min_count = MIN_COUNT[args.corpus] if args.min_count is None else args.min_count
    if min_count < 1:
        ap.error("--min-count: at least 1")
    setting = Setting(min_count, SKIP_UNKNOWN[args.corpus])
    args.data = args.data or f"data/{args.corpus}"
    args.out = args.out or f"out/lm_{args.corpus}"

    t0 = time.perf_counter()
    parts = load(Path(args.data))
    if args.fractions is not None:
        if len(states) != 1:
            ap.error("--fractions takes one value of m (--states M)")
        fractions = [float(x) for x in args.fractions.split(",")]
        if not fractions or any(not 0 < f <= 1 for f in fractions):
            ap.error("--fractions: each fraction in (0, 1]")
        result = corpus_sizes(parts, fractions, states[0], seeds, args.prior, setting)
        result["seconds"] = time.perf_counter() - t0
        result["corpus"] = args.corpus
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write(out.with_suffix(".json"), {**provenance(), **result}, also=args.json)
        out.with_suffix(".md").write_text(sizes_markdown(result))
        print(sizes_markdown(result))
        return 0
    train, dev, test = parts["train"], parts["dev"], parts["test"]
    vocab = setting.vocabulary(train)
    counts = vocab.bigram_counts(train)
    dev1_events = setting.events(vocab, parts["dev1"])
    dev2_events = setting.events(vocab, parts["dev2"])
    test_events = setting.events(vocab, test)
    print(
        f"lm_table2: {sum(map(len, train))} / {sum(map(len, dev))} / {sum(map(len, test))} "
        f"tokens, {len(vocab)} ids, {counts.nnz} distinct training bigrams "
        f"({time.perf_counter() - t0:.1f} s)",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
    tests: dict[str, list[float]] = {method: [] for method in METHODS}
    for seed in seeds:
        best: dict[str, tuple[float, Any]] = {}
        for m in states:
            em_best = float("inf")
            for method in METHODS:
                model, row = fit_row(
                    method, m, seed, args.prior, vocab, counts, dev1_events, dev2_events
                )
                if method == "em":
                    em_best = min(h["dev_perplexity"] for h in model.meta["history"])
                    row["dev1_best"] = em_best
                if method == "pivot+em":
                    row["dev1_history"] = [h["dev_perplexity"] for h in model.meta["history"]]
                    row["reach_em_best"] = reach(row["dev1_history"], em_best)
                rows.append(row)
                print(f"lm_table2: {json.dumps(row)}", flush=True)
                if method not in best or row["dev2"] < best[method][0]:
                    best[method] = (row["dev2"], model)
        for method, (_, model) in best.items():
            tests[method].append(perplexity(model, test_events).perplexity)
    baselines = {}
    for order in (2, 3):
        t1 = time.perf_counter()
        kn = setting.baseline(train, order)
        baselines[f"kn{order}"] = {
            "dev2": perplexity(kn, setting.events(kn.vocab, parts["dev2"], order)).perplexity,
            "test": perplexity(kn, setting.events(kn.vocab, test, order)).perplexity,
            "seconds": time.perf_counter() - t1,
        }
    scored = {"dev2": dev2_events, "test": test_events}
    result = {
        "corpus": args.corpus,
        "min_count": min_count,
        "skip_unknown": setting.skip_unknown,
        "scored": {k: {"predictions": len(e), "oov": e.oov} for k, e in scored.items()},
        "rows": rows,
        "test": tests,
        "baselines": baselines,
        "seconds": time.perf_counter() - t0,
        "tokens": {name: sum(map(len, parts[name])) for name in ("train", "dev", "test")},
        "vocabulary": len(vocab),
        "seeds": seeds,
        "prior": args.prior,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write(out.with_suffix(".json"), {**provenance(), **result}, also=args.json)
    out.with_suffix(".md").write_text(markdown(result, states))
    print(markdown(result, states))
    if args.plot:
        print(plot(Path(args.plot), result, states))
    return 0


def fit_row(
    method: str,
    m: int,
    seed: int,
    prior: float,
    vocab: Vocabulary,
    counts: Any,
    dev1_events: Events,
    dev2_events: Events,
) -> tuple[Any, dict[str, Any]]:
    """One aggregate model trained (EM iterations chosen on ``dev1_events``) and its row:
    seed, method, m, training seconds (scoring left out), EM iterations, the pivot step's
    smoothing and the perplexity of dev's second half; for the pivot methods also the
    seconds of the pivot step (moments, CCA, anchors) and of each smoothing run."""
    opts = OPTIONS[method](states=m, seed=seed, prior=prior)
    t1 = time.perf_counter()
    model = fit_aggregate(method, vocab, counts, dev1_events, opts)
    seconds = time.perf_counter() - t1
    return model, {
        "seed": seed,
        "method": method,
        "states": m,
        "dev2": perplexity(model, dev2_events).perplexity,
        "em_iterations": model.meta.get("em_iterations"),
        "smoothing": model.meta.get("smoothing"),
        "seconds": seconds,
        **{k: model.meta[k] for k in ("pivot_seconds", "smoothing_runs") if k in model.meta},
    }


def corpus_sizes(
    parts: dict[str, list[list[str]]],
    fractions: list[float],
    m: int,
    seeds: list[int],
    prior: float = 0.0,
    setting: Setting = Setting(2, False),
) -> dict[str, Any]:
    """Every method at ``m`` trained on the first ``fraction`` of the training sentences,
    each with the vocabulary of its own text; per (method, fraction, seed): training
    seconds, EM iterations, perplexity of the second half of dev. Each seed trains all three
    methods on every fraction before the next seed, so that a drift in the machine's speed
    hits every cell alike."""
    train = parts["train"]
    sizes, rows = [], []
    prepared = []
    for f in sorted(fractions):
        part = train[: max(1, round(f * len(train)))]
        vocab = setting.vocabulary(part)
        counts = vocab.bigram_counts(part)
        events = [setting.events(vocab, parts[name]) for name in ("dev1", "dev2")]
        prepared.append((f, vocab, counts, events))
        sizes.append(
            {
                "fraction": f,
                "sentences": len(part),
                "tokens": sum(map(len, part)),
                "vocabulary": len(vocab),
                "distinct_bigrams": int(counts.nnz),
            }
        )
    for seed in seeds:
        for f, vocab, counts, (dev1_events, dev2_events) in prepared:
            for method in METHODS:
                _, row = fit_row(method, m, seed, prior, vocab, counts, dev1_events, dev2_events)
                row["fraction"] = f
                rows.append(row)
                print(f"lm_table2: {json.dumps(row)}", flush=True)
    return {"states": m, "seeds": seeds, "prior": prior, "sizes": sizes, "rows": rows}


def sizes_markdown(result: dict[str, Any]) -> str:
    """The time-against-corpus-size table: a column per fraction; per method its training
    seconds (mean over the seeds), the time relative to the smallest fraction's, EM
    iterations and dev perplexity; for the pivot methods the part of their time the pivot
    step took and what one smoothing run's fit of ``r`` took (seconds, iterations); the
    pivot method's time over EM's."""
    sizes = result["sizes"]
    head = "| | " + " | ".join(f"{s['fraction']:g} of train" for s in sizes) + " |"
    lines = [head, "|---" * (len(sizes) + 1) + "|"]
    lines.append("| tokens | " + " | ".join(f"{s['tokens']:,}" for s in sizes) + " |")
    lines.append(
        "| distinct bigrams | " + " | ".join(f"{s['distinct_bigrams']:,}" for s in sizes) + " |"
    )
    lines.append("| vocabulary (ids) | " + " | ".join(f"{s['vocabulary']:,}" for s in sizes) + " |")
    mean_secs: dict[str, list[float]] = {}
    for method in METHODS:
        rs = {s["fraction"]: [r for r in result["rows"] if r["method"] == method
                              and r["fraction"] == s["fraction"]] for s in sizes}  # fmt: skip
        secs = [float(np.mean([r["seconds"] for r in rs[s["fraction"]]])) for s in sizes]
        mean_secs[method] = secs
        lines.append(
            f"| {method} seconds (x smallest) | "
            + " | ".join(f"{t:.1f} ({t / secs[0]:.1f}x)" for t in secs)
            + " |"
        )
        if all("pivot_seconds" in r for f in rs for r in rs[f]):
            lines.append(
                f"| {method}: the pivot step (moments, CCA, anchors) | "
                + " | ".join(
                    f"{np.mean([r['pivot_seconds'] for r in rs[s['fraction']]]):.1f} s"
                    for s in sizes
                )
                + " |"
            )
            lines.append(
                f"| {method}: one fit of r (iterations) | "
                + " | ".join(_r_fit(rs[s["fraction"]]) for s in sizes)
                + " |"
            )
        if method != "pivot":
            lines.append(
                f"| {method} EM iterations | "
                + " | ".join(
                    "/".join(str(r["em_iterations"]) for r in rs[s["fraction"]]) for s in sizes
                )
                + " |"
            )
        lines.append(
            f"| {method} dev perplexity | "
            + " | ".join(_mean_sd([r["dev2"] for r in rs[s["fraction"]]]) for s in sizes)
            + " |"
        )
    lines.append(
        "| pivot seconds / EM seconds | "
        + " | ".join(
            f"{p / e:.1f}" for p, e in zip(mean_secs["pivot"], mean_secs["em"], strict=True)
        )
        + " |"
    )
    lines.append("")
    lines.append(
        f"m = {result['states']}, seeds {', '.join(map(str, result['seeds']))} (seconds: "
        f"their mean); perplexity of the second half of dev. Whole run "
        f"{result['seconds'] / 60:.1f} min."
    )
    return "\n".join(lines) + "\n"


def _r_fit(rows: list[dict[str, Any]]) -> str:
    """Mean seconds of one smoothing run's fit of ``r`` over ``rows``' runs, and the range
    of its iterations."""
    runs = [run for r in rows for run in r["smoothing_runs"]]
    its = [run["r_iterations"] for run in runs]
    seconds = np.mean([run["r_seconds"] for run in runs])
    return f"{seconds:.1f} s ({min(its)}-{max(its)})"


def plot(path: Path, result: dict[str, Any], states: list[int]) -> Path:
    """Dev perplexity (second half) against m per method, mean ± sd over the seeds, the
    Kneser-Ney lines and the paper's figures (dashed; NB the paper's vocabulary handling
    differs, see the table's notes)."""
    from plots import Panel, Series, draw, level_line

    ours = Panel("lpcfg (mean ± sd over seeds)", "latent states m", "perplexity, dev 2nd half",
                 logx=True)  # fmt: skip
    corpus = result.get("corpus", "brown")
    paper_table, paper_kn = PAPER_TABLES[corpus], PAPER_KN_TABLES[corpus]
    paper = Panel(f"Cohen & Collins (2014), table 2, {PAPER_NAME[corpus]}", "latent states m",
                  "perplexity, dev 2nd half", logx=True)  # fmt: skip
    for method in METHODS:
        ms = [m for m in states if any(r["method"] == method and r["states"] == m
                                       for r in result["rows"])]  # fmt: skip
        values = [[r["dev2"] for r in result["rows"] if r["method"] == method
                   and r["states"] == m] for m in ms]  # fmt: skip
        ours.series.append(Series(method, ms, [float(np.mean(v)) for v in values],
                                  [float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
                                   for v in values]))  # fmt: skip
        paper.series.append(Series(method, list(STATES), paper_table[method][0]))
    for name, b in result["baselines"].items():
        label = {"kn2": "bigram KN", "kn3": "trigram KN"}[name]
        ours.series.append(level_line(label, states, b["dev2"]))
        paper.series.append(level_line(label, STATES, paper_kn[name][0]))
    title = {"brown": "Brown perplexity", "standin": "The NYT stand-in: perplexity"}[corpus]
    return draw(path, [ours, paper], f"{title} against m")


def reach(history: list[float], target: float) -> int | None:
    """The first EM iteration of pivot+EM (0: the pivot start; ``history[i]`` is the dev
    perplexity after ``i`` iterations) within 2 % of ``target``, or None."""
    return next((i for i, ppl in enumerate(history) if ppl <= 1.02 * target), None)


def _mean_sd(values: list[float]) -> str:
    v = np.asarray(values, dtype=float)
    sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return f"{v.mean():.0f} ± {sd:.0f}" if len(v) > 1 else f"{v.mean():.0f}"


def markdown(result: dict[str, Any], states: list[int]) -> str:
    """The table beside the paper's (paper figures in parentheses where m matches); each
    cell is the mean (and standard deviation) over the seeds."""
    cells: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in result["rows"]:
        cells.setdefault((r["method"], r["states"]), []).append(r)
    head = "| method | " + " | ".join(f"m = {m}" for m in states) + " | test |"
    lines = [head, "|---" * (len(states) + 2) + "|"]
    paper_m = {m: i for i, m in enumerate(STATES)}
    corpus = result.get("corpus", "brown")
    paper_table, paper_kn = PAPER_TABLES[corpus], PAPER_KN_TABLES[corpus]
    paper_iterations = PAPER_ITERATIONS_TABLES[corpus]
    for method in METHODS:
        ppl, its, secs = [], [], []
        for m in states:
            rs = cells.get((method, m), [])
            paper = paper_table[method][0][paper_m[m]] if m in paper_m else None
            ppl.append(f"{_mean_sd([r['dev2'] for r in rs])} ({paper})" if rs else "")
            if method != "pivot":
                p_it = paper_iterations[method][paper_m[m]] if m in paper_m else None
                mine = "/".join(str(r["em_iterations"]) for r in rs)
                its.append(f"{mine} ({p_it if p_it is not None else '-'})")
            secs.append(f"{np.mean([r['seconds'] for r in rs]):.0f} s" if rs else "")
        test = _mean_sd(result["test"][method]) if result["test"][method] else ""
        lines.append(f"| {method} | " + " | ".join(ppl) + f" | {test} ({paper_table[method][1]}) |")
        if its:
            lines.append(f"| {method} EM iterations | " + " | ".join(its) + " | |")
        lines.append(f"| {method} training time | " + " | ".join(secs) + " | |")
    for name, b in result["baselines"].items():
        paper_dev, paper_test = paper_kn[name]
        row = [f"{b['dev2']:.0f} ({paper_dev})"] + [""] * (len(states) - 1)
        row.append(f"{b['test']:.0f} ({paper_test})")
        lines.append(f"| {name} (interpolated, modified KN) | " + " | ".join(row) + " |")
    if any(isinstance(v[1], str) for v in paper_table.values()):
        lines += ["", PAPER_UNSURE]
    reached = {}
    for r in result["rows"]:
        if r["method"] == "pivot+em":
            reached.setdefault(r["states"], []).append(str(r["reach_em_best"]))
    lines.append("")
    lines.append(
        "EM iterations pivot+EM needs to come within 2 % of EM's best perplexity on the first "
        "half of dev (None: never), per seed: "
        + ", ".join(f"m = {m}: {'/'.join(v)}" for m, v in reached.items())
        + "."
    )
    em_mean = {
        m: float(np.mean([r["dev1_best"] for r in rs]))
        for (method, m), rs in cells.items()
        if method == "em"
    }
    to_mean = {
        m: "/".join(str(reach(r["dev1_history"], em_mean[m])) for r in cells[("pivot+em", m)])
        for m in states
        if ("pivot+em", m) in cells and m in em_mean
    }
    lines.append(
        "Against the mean of EM's best over the seeds: "
        + ", ".join(f"m = {m}: {v}" for m, v in to_mean.items())
        + "."
    )
    lines.append("")
    lines.append(
        f"Perplexity of the second half of dev, mean ± sd over seeds "
        f"{', '.join(map(str, result['seeds']))} (the paper's in parentheses); test: each "
        f"seed's model best on dev. Whole run {result['seconds'] / 60:.1f} min, "
        f"{result['vocabulary']} ids (training words seen at least "
        f"{result.get('min_count', 2)} times); unknown words "
        f"{'left out' if result.get('skip_unknown') else 'scored as <unk>'}."
        + (
            f" EM with prior {result['prior']:g} (MAP; the paper's is 0)."
            if result.get("prior")
            else ""
        )
    )
    return "\n".join(lines) + "\n"


def prior_markdown(result: dict[str, Any], without: dict[str, Any]) -> str:
    """The MAP-EM table: ``result`` (a run with ``--prior``) per method and m, mean ± sd over
    its seeds, with ``without``'s figure (the same run at prior 0) in parentheses; EM
    iterations per seed; then how soon pivot+EM comes within 2 % of EM's best."""
    states = sorted({r["states"] for r in result["rows"]})

    def cells(run: dict[str, Any], method: str, m: int) -> list[dict[str, Any]]:
        return [r for r in run["rows"] if r["method"] == method and r["states"] == m]

    head = f"| `--prior {result['prior']:g}` | " + " | ".join(f"m = {m}" for m in states)
    lines = [head + " | test |", "|---" * (len(states) + 2) + "|"]
    for method in METHODS:
        ppl = []
        for m in states:
            base = cells(without, method, m)
            paren = f" ({_mean_sd([r['dev2'] for r in base])})" if base else ""
            ppl.append(_mean_sd([r["dev2"] for r in cells(result, method, m)]) + paren)
        test = _mean_sd(result["test"][method])
        if without["test"][method]:
            test += f" ({_mean_sd(without['test'][method])})"
        lines.append(f"| {method} | " + " | ".join(ppl) + f" | {test} |")
        if method != "pivot":
            its = ["/".join(str(r["em_iterations"]) for r in cells(result, method, m))
                   for m in states]  # fmt: skip
            lines.append(f"| {method} EM iterations | " + " | ".join(its) + " | |")
    reached = ", ".join(
        f"m = {m}: " + "/".join(str(r["reach_em_best"]) for r in cells(result, "pivot+em", m))
        for m in states
    )
    lines += [
        "",
        "EM iterations pivot+EM needs to come within 2 % of EM's best perplexity on the first "
        f"half of dev (None: never), per seed: {reached}. Perplexity of the second half of "
        f"dev, mean ± sd over seeds {', '.join(map(str, result['seeds']))}; in parentheses "
        f"the same run without the prior. Whole run {result['seconds'] / 60:.1f} min.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
