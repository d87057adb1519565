#!/usr/bin/env python3
"""Parser benchmark on the standard test split (wsj_0175-0199), side by side in one run.

Measures, for the chart-engine issue's acceptance figures:

1. each model given with --models: whole `lpcfg parse` commands (start-up and model loading
   included, one process and --jobs 2), sentences/s, strict and EVALB F1, peak memory;
   with --berkeley, the Berkeley parser (its parse.sh) timed in the same run, and the ratio:
   with --berkeley-grammar the grammar its dev score selects among the cycles of a trainer
   run (``scripts/berkeley_seeds.py`` keeps every cycle's grammar; on the standard split,
   cycle 5 of ``-randSeed 2``, the run the folder's grammars come from), otherwise the
   folder's 4-cycle grammar (``BERKELEY_GRAMMAR``);
2. --jobs 2 against --jobs 1, timed in alternation (one run of each per round, so a drift in
   this shared machine's speed hits both alike) with the start-up, a command on the first
   test sentence alone (with the model's arrangement cached, as after its first parse, and
   without: ``parsing.arranged_cache``), and the most --jobs 2 could give on the split with
   that start-up serial (``jobs_bound``); and, for the first model, on the test split
   repeated --copies times (a larger input, where start-up counts less), against the most two
   processes reach here: two independent `parse --jobs 1` on the two halves, at once (what
   sharding with `split` and GNU parallel does, no shared work at all);
3. the latent inside-outside's rate in the parser (multiply-adds of the rule products, as
   the engine counts them) against numpy's float32 matrix-product rate on this machine,
   measured in the same run with one BLAS thread (what one parsing process uses) and with
   all cores;
4. with --large, a treebank PCFG of over a thousand symbols (the training split binarized
   with --vertical 2 --horizontal 2) parsing the test split;
5. with --berkeley, the 249-word sentence of the sample (training tree 1855) with both
   parsers, on the first model (the Berkeley parser run with -maxLength above it: by
   default it leaves sentences over 200 words unparsed, in no time);
6. with --by-length, speed against sentence length for the first model and (with
   --berkeley) the Berkeley parser, timed in alternation: the test sentences in buckets of
   ten words, each bucket repeated to at least --bucket-size sentences, the start-up (a
   command on one one-word sentence) subtracted; --plot draws it.

    python scripts/bench_parse.py --data data --models models/em.npz,models/spectral.npz \\
        --berkeley BERKELEY_FOLDER --large [--repeat 3] [--by-length --plot out/speed]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from records import provenance
from records import write as write_record
from threadpoolctl import threadpool_limits

from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.grammar.training_data import prepare
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing.arranged_cache import ENV as CACHE_ENV
from lpcfg_cli.parsing.parser import Parser
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.ptb import read_treebank
from lpcfg_cli.treebank.tree import words


def gemm_gflops(dtype: type, n: int = 1024, seconds: float = 1.0) -> float:
    """Rate numpy reaches on a dense ``n x n`` matrix product."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)).astype(dtype), rng.random((n, n)).astype(dtype)
    a @ b
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        reps += 1
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e9


REPEAT = 1


def timed(command: list[str]) -> tuple[float, float]:
    """Median wall seconds of ``REPEAT`` runs of ``command`` and its peak resident memory
    (MB); this machine is shared, so single timings vary by 10-20 %."""
    return timed_alternating([[command]])[0]


def timed_alternating(commands: list[list[list[str]]]) -> list[tuple[float, float]]:
    """``timed`` for several commands, run in rounds (one run of each per round): ratios
    between them are then not biased by the machine's speed drifting between runs. Each
    command is a list of processes started together (wall time until all end)."""
    runs: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(REPEAT):
        for i, command in enumerate(commands):
            runs[i].append(_timed_once(*command))
    out = []
    for r in runs:
        r.sort()
        out.append((r[len(r) // 2][0], max(x[1] for x in r)))
    return out


# The timed commands are started by a small process of their own, made before this one loads
# any model: a child's peak resident memory (``ru_maxrss``) counts the image it was forked
# from until it runs its command, so children forked from this process, which grows as it
# parses in-process (``efficiency``), reported its size instead of their own.
SPAWNER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    commands, log = json.loads(line)
    t0 = time.perf_counter()
    errs = [open(log, "w") if log else subprocess.PIPE for _ in commands]
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=e)
             for c, e in zip(commands, errs)]
    rss, failed = 0.0, []
    for command, proc, e in zip(commands, procs, errs):
        _, status, usage = os.wait4(proc.pid, 0)
        rss = max(rss, usage.ru_maxrss / 1024)
        if log:
            e.close()
        err = open(log).read()[-2000:] if log else proc.stderr.read().decode()
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(" ".join(command) + " failed:\\n" + err)
    print(json.dumps([time.perf_counter() - t0, rss, failed]), flush=True)
"""


class Spawner:
    """Runs timed commands from a process that stays small (see ``SPAWNER``)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SPAWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip

    def run(self, commands: tuple[list[str], ...], log: Path | None = None) -> tuple[float, float]:
        """Wall seconds until every one of ``commands`` (started together) has ended, and
        the largest peak resident memory (MB) among them; with ``log``, their stderr goes
        there (one command), else it is read back. A command that fails stops the bench
        with its error."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([list(commands), str(log) if log else None]) + "\n")
        self.proc.stdin.flush()
        seconds, rss, failed = json.loads(self.proc.stdout.readline())
        if failed:
            raise SystemExit("bench: " + "\n".join(failed))
        return seconds, rss


_spawner: Spawner | None = None


def spawner() -> Spawner:
    """This process's ``Spawner``, made on first use (``main`` makes it before anything
    large is loaded)."""
    global _spawner
    if _spawner is None:
        _spawner = Spawner()
    return _spawner


def _timed_once(*commands: list[str]) -> tuple[float, float]:
    """Wall seconds until every one of ``commands`` (started together) has ended, and the
    largest peak resident memory (MB) among them."""
    return spawner().run(commands)


def lpcfg(*args: str) -> list[str]:
    return [sys.executable, "-m", "lpcfg_cli", *args]


def parse_command(model: str, text: Path, out: Path, jobs: int = 1) -> list[str]:
    return lpcfg("parse", model, str(text), "-o", str(out), "--jobs", str(jobs), "--no-progress")


def uncached(command: list[str]) -> list[str]:
    """``command`` with the cache of arranged models off: the model arranged from its file,
    as on its first parse (``parsing.arranged_cache``)."""
    return ["env", f"{CACHE_ENV}=off", *command]


def jobs_bound(whole: float, startup: float, jobs: int = 2) -> float:
    """The most ``jobs`` workers can speed up a command of ``whole`` seconds whose first
    ``startup`` seconds are serial (Amdahl): the rest split perfectly among them."""
    rest = max(whole - startup, 0.0)
    return whole / (startup + rest / jobs)


def warm_up(model: str, text: Path, tmp: Path) -> None:
    """One untimed parse of ``text``'s first sentence with ``model``: after a change to the
    sources the kernels are compiled again (numba's cache is per source file, and the
    kernels' ahead-of-time module per digest of the sources), which would be timed in the
    first run and counted in its peak memory."""
    one = tmp / "warm.txt"
    one.write_text(text.read_text().splitlines(keepends=True)[0])
    _timed_once(parse_command(model, one, tmp / "warm.out"))


def scaling(model: str, text: Path, copies: int, tmp: Path) -> dict:
    """``--jobs 2`` against ``--jobs 1`` on ``text`` repeated ``copies`` times, and against
    two independent one-job processes on its two halves at once: the most two processes
    reach on this machine, since they share nothing (not the model, not a pipe)."""
    lines = text.read_text().splitlines(keepends=True) * copies
    whole, half0, half1 = tmp / "scale.txt", tmp / "scale.0.txt", tmp / "scale.1.txt"
    whole.write_text("".join(lines))
    half0.write_text("".join(lines[: len(lines) // 2]))
    half1.write_text("".join(lines[len(lines) // 2 :]))
    (j1, _), (j2, _), (two, _) = timed_alternating(
        [
            [parse_command(model, whole, tmp / "scale.j1", 1)],
            [parse_command(model, whole, tmp / "scale.j2", 2)],
            [
                parse_command(model, half0, tmp / "scale.h0", 1),
                parse_command(model, half1, tmp / "scale.h1", 1),
            ],
        ]
    )
    return {
        "sentences": len(lines),
        "jobs1": j1,
        "jobs2": j2,
        "two_processes": two,
        "jobs_speedup": j1 / j2,
        "two_processes_speedup": j1 / two,
    }


def f1(gold: Path, test: Path) -> tuple[float, float]:
    """(EVALB F1, strict F1) of ``test`` against ``gold``."""
    # The Berkeley parser writes an empty root bracket, "( (S ...) )"; as TOP it is not scored.
    lines = [re.sub(r"^\(\s*\(", "(TOP (", t) for t in test.read_text().splitlines()]
    res = evaluate_lines(gold.read_text().splitlines(), lines)
    fig = res.all.figures()
    return fig["fmeasure"], fig["strict_fmeasure"]


# The Berkeley parser's grammar in its folder that a benchmark times unless given another:
# the 4-cycle grammar of its default run, the best of that run's cycles on test. The grammar
# dev picks among the run's cycles (the fifth) is not in the folder: --berkeley-grammar.
BERKELEY_GRAMMAR = "train0001-0149-sm4.gr"


def berkeley_command(
    folder: Path, words_file: Path, out: Path, max_length: int = 0, grammar: Path | None = None
) -> list[str]:
    """The Berkeley parser with ``grammar`` (default: the folder's ``BERKELEY_GRAMMAR``) on
    ``words_file``: its ``parse.sh``, or, to parse sentences over its default limit of 200
    words (beyond which it writes an empty ``(())`` without parsing), its jar with
    ``-maxLength``."""
    grammar = grammar or folder / BERKELEY_GRAMMAR
    if not max_length:
        return ["bash", str(folder / "parse.sh"), str(words_file), str(out), str(grammar)]
    jar = min(folder.glob("*.jar"))
    return ["java", "-Xmx4g", "-jar", str(jar), "-gr", str(grammar), "-maxLength",
            str(max_length), "-inputFile", str(words_file), "-outputFile", str(out)]  # fmt: skip


def berkeley(folder: Path, grammar: Path, words_file: Path, out: Path) -> float:
    """Median seconds the Berkeley parser's parse.sh takes with ``grammar`` (JVM start-up
    and grammar included) over ``REPEAT`` runs."""
    return timed(berkeley_command(folder, words_file, out, grammar=grammar))[0]


def unparsed(out: Path) -> int:
    """Lines the Berkeley parser left without a parse (it writes ``(())``)."""
    return sum(
        1 for line in out.read_text().splitlines() if re.fullmatch(r"\(\s*\(\s*\)\s*\)", line)
    )


BUCKETS = [(1, 10), (11, 20), (21, 30), (31, 40), (41, 10_000)]
# The least time a bucket's command must take beyond the start-up command's for the
# difference to be a measurement: whole commands' medians on this machine move by a few
# hundredths of a second from round to round. Below it the bucket gets no figure (None: the
# table says so, the plot leaves the point out) rather than a time of nearly zero.
RESOLUTION = 0.1


def by_length(
    model: str,
    folder: Path | None,
    sentences: list[list[str]],
    tmp: Path,
    size: int,
    grammar: Path | None = None,
) -> dict:
    """Seconds per sentence and sentences/s per length bucket, start-up subtracted, for
    ``model`` (``--jobs 1``) and, with ``folder``, the Berkeley parser: every command of a
    round (the start-up runs and each bucket, both parsers) runs once before the next round,
    so that a drift of the machine's speed hits all alike."""
    parsers = {"lpcfg": lambda text, out: parse_command(model, text, out, 1)}
    if folder is not None:
        parsers["berkeley"] = lambda text, out: berkeley_command(folder, text, out, 0, grammar)
    files, rows = [tmp / "start.txt"], []
    files[0].write_text("Yes\n")
    for low, high in BUCKETS:
        bucket = [s for s in sentences if low <= len(s) <= high]
        if not bucket:
            continue
        copies = -(-size // len(bucket))
        path = tmp / f"bucket{low}.txt"
        path.write_text("".join(" ".join(s) + "\n" for s in bucket) * copies)
        files.append(path)
        rows.append(
            {
                "bucket": f"{low}-{high}" if high < 10_000 else f"{low}+",
                "sentences": len(bucket) * copies,
                "mean_words": sum(map(len, bucket)) / len(bucket),
            }
        )
    commands = [
        [make(f, tmp / f"{name}.{f.stem}.out")] for name, make in parsers.items() for f in files
    ]
    times = iter(t for t, _ in timed_alternating(commands))
    out: dict = {"rows": rows, "resolution": RESOLUTION}
    if folder is not None:
        out["berkeley_grammar"] = (grammar or folder / BERKELEY_GRAMMAR).name
    for name in parsers:
        start = next(times)
        out[f"{name}_startup"] = start
        for row in rows:
            seconds = next(times) - start
            if seconds < RESOLUTION:  # lost in the start-up's own spread: no figure
                row[f"{name}_seconds_per_sentence"] = row[f"{name}_rate"] = None
                continue
            row[f"{name}_seconds_per_sentence"] = seconds / row["sentences"]
            row[f"{name}_rate"] = row["sentences"] / seconds
    return out


def plot_by_length(path: str, table: dict, model: str) -> Path:
    """Sentences/s and seconds per sentence against mean sentence length, both parsers."""
    from plots import Panel, Series, draw

    x = [r["mean_words"] for r in table["rows"]]
    names = [n for n in ("lpcfg", "berkeley") if f"{n}_startup" in table]
    label = {
        "lpcfg": f"lpcfg ({Path(model).name}, --jobs 1)",
        "berkeley": f"Berkeley parser ({table.get('berkeley_grammar', BERKELEY_GRAMMAR)})",
    }
    rate = Panel("sentences/s (start-up subtracted)", "mean words per sentence in the bucket",
                 "sentences/s", logy=True)  # fmt: skip
    cost = Panel("seconds per sentence", "mean words per sentence in the bucket",
                 "seconds / sentence", logy=True)  # fmt: skip
    for n in names:
        rate.series.append(Series(label[n], x, [r[f"{n}_rate"] for r in table["rows"]]))
        cost.series.append(
            Series(label[n], x, [r[f"{n}_seconds_per_sentence"] for r in table["rows"]])
        )
    return draw(path, [rate, cost], "Parsing speed against sentence length, test split, one run")


def efficiency(model_path: str, sentences: list[list[str]]) -> dict:
    """The latent pass's rate inside one parsing process (one BLAS thread)."""
    model = LPCFG.load(model_path)
    list(Parser(model).parse(sentences[:5]))  # compiled kernels loaded, caches warm
    parser = Parser(model)
    list(parser.parse(sentences))
    stats = parser.stats
    rate = stats.latent_flops / stats.latent_seconds / 1e9 if stats.latent_seconds else 0.0
    return {
        "latent_gflop": stats.latent_flops / 1e9,
        "latent_seconds": stats.latent_seconds,
        "coarse_seconds": stats.coarse_seconds,
        "parse_seconds": stats.seconds,
        "latent_gflops": rate,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data", help="folder written by `make data`")
    ap.add_argument("--models", default="", help="comma-separated model files to time")
    ap.add_argument("--berkeley", default=None, help="folder with parse.sh and its grammars")
    ap.add_argument(
        "--berkeley-grammar",
        default=None,
        help=f"with --berkeley: the grammar to time (default: the folder's {BERKELEY_GRAMMAR})",
    )
    ap.add_argument("--large", action="store_true", help="also time a >1,000-symbol PCFG")
    ap.add_argument(
        "--copies",
        type=int,
        default=4,
        help="scaling check on the test split repeated this many times (0: skip)",
    )
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    ap.add_argument("--by-length", action="store_true", help="speed per length bucket (item 6)")
    ap.add_argument("--bucket-size", type=int, default=150, help="sentences per bucket, at least")
    ap.add_argument("--plot", default=None, help="with --by-length: draw PLOT.png and PLOT.json")
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing (median kept)")
    ap.add_argument(
        "--efficiency-only",
        action="store_true",
        help="only the latent pass's rate against the GEMM rates (item 3)",
    )
    args = ap.parse_args()
    global REPEAT
    REPEAT = max(1, args.repeat)
    data = Path(args.data)
    if not (data / "train.mrg").exists():
        print(f"bench_parse: {data}/train.mrg missing: run `make data` first", file=sys.stderr)
        return 2
    test_txt, test_mrg = data / "test.txt", data / "test.mrg"
    sentences = [line.split() for line in test_txt.read_text().splitlines()]
    n = len(sentences)
    out: dict = {**provenance(java=bool(args.berkeley)), "sentences": n}
    tmp = Path(tempfile.mkdtemp(prefix="lpcfg-bench-"))
    # The timed commands keep their arranged models in the bench's own folder (each model's
    # warm-up fills it), not in the user's cache; ``uncached`` turns it off.
    os.environ[CACHE_ENV] = str(tmp / "arranged")
    spawner()  # before anything large is allocated here (see SPAWNER)
    with threadpool_limits(1):
        out["gemm32_1thread"] = gemm_gflops(np.float32)
    out["gemm32_all"] = gemm_gflops(np.float32)
    print(
        f"numpy float32 matmul: {out['gemm32_1thread']:.1f} GFLOP/s on one thread, "
        f"{out['gemm32_all']:.1f} on {os.cpu_count()} cores"
    )
    folder = Path(args.berkeley) if args.berkeley else None
    # a link (berkeley_seeds.py's dev-choice.gr) is recorded by the name of what it links to
    grammar = Path(args.berkeley_grammar).resolve() if args.berkeley_grammar else None
    if folder is not None:
        grammar = grammar or folder / BERKELEY_GRAMMAR
        seconds = berkeley(folder, grammar, test_txt, tmp / "berkeley.out")
        out["berkeley"] = {
            "grammar": grammar.name,
            "grammar_bytes": grammar.stat().st_size,
            "seconds": seconds,
            "rate": n / seconds,
            "f1": f1(test_mrg, tmp / "berkeley.out"),
            "unparsed": unparsed(tmp / "berkeley.out"),
        }
        print(
            f"berkeley ({grammar.name}): {n} sentences in {seconds:.2f} s = {n / seconds:.1f} "
            f"sentences/s, strict F1 {out['berkeley']['f1'][1]:.2f}"
        )
    models = [m for m in args.models.split(",") if m]
    out["models"] = {}
    if args.efficiency_only:
        for path in models:
            row = efficiency(path, sentences)
            out["models"][path] = row
            print(
                f"{path}: latent pass {row['latent_gflop']:.1f} GFLOP in "
                f"{row['latent_seconds']:.2f} s = {row['latent_gflops']:.1f} GFLOP/s = "
                f"{row['latent_gflops'] / out['gemm32_1thread']:.3f} of one-thread float32 "
                f"matmul; coarse pass {row['coarse_seconds']:.2f} s"
            )
        if args.json:
            write_record(args.json, out)
        return 0
    for path in models:
        row: dict = {}
        warm_up(path, test_txt, tmp)
        parsed = {jobs: tmp / f"{Path(path).stem}.j{jobs}" for jobs in (1, 2)}
        one = parse_command(path, tmp / "warm.txt", tmp / "warm.out")
        *timings, (startup, startup_rss), (cold, cold_rss) = timed_alternating(
            [[parse_command(path, test_txt, parsed[jobs], jobs)] for jobs in (1, 2)]
            + [[one], [uncached(one)]]
        )
        for jobs, (seconds, rss) in zip((1, 2), timings, strict=True):
            row[f"jobs{jobs}"] = {
                "seconds": seconds,
                "rate": n / seconds,
                "max_rss_mb": rss,
                "f1": f1(test_mrg, parsed[jobs]),
            }
        row["jobs_speedup"] = row["jobs1"]["seconds"] / row["jobs2"]["seconds"]
        row["startup"] = {"seconds": startup, "max_rss_mb": startup_rss}
        row["startup_uncached"] = {"seconds": cold, "max_rss_mb": cold_rss}
        row["jobs2_bound"] = jobs_bound(row["jobs1"]["seconds"], startup)
        row["same_output"] = (tmp / f"{Path(path).stem}.j1").read_bytes() == (
            tmp / f"{Path(path).stem}.j2"
        ).read_bytes()
        row.update(efficiency(path, sentences))
        line = (
            f"{path}: --jobs 1 {row['jobs1']['rate']:.1f} sentences/s "
            f"({row['jobs1']['seconds']:.2f} s, {row['jobs1']['max_rss_mb']:.0f} MB), "
            f"--jobs 2 {row['jobs2']['rate']:.1f} ({row['jobs_speedup']:.2f}x; start-up "
            f"{startup:.2f} s, {startup_rss:.0f} MB, {cold:.2f} s arranging the model anew, "
            f"leaves at most {row['jobs2_bound']:.2f}x), "
            f"EVALB F1 {row['jobs1']['f1'][0]:.2f} strict {row['jobs1']['f1'][1]:.2f}; "
            f"latent pass {row['latent_gflop']:.1f} GFLOP in {row['latent_seconds']:.2f} s "
            f"= {row['latent_gflops']:.1f} GFLOP/s = "
            f"{row['latent_gflops'] / out['gemm32_1thread']:.3f} of one-thread and "
            f"{row['latent_gflops'] / out['gemm32_all']:.3f} of all-core float32 matmul; "
            f"coarse pass {row['coarse_seconds']:.2f} s"
        )
        if args.berkeley:
            row["vs_berkeley"] = row["jobs1"]["rate"] / out["berkeley"]["rate"]
            line += f"; {row['vs_berkeley']:.2f}x Berkeley"
        print(line)
        out["models"][path] = row
    if models and args.copies:
        sc = scaling(models[0], test_txt, args.copies, tmp)
        out["scaling"] = sc
        print(
            f"{models[0]} on the test split x {args.copies} ({sc['sentences']} sentences): "
            f"--jobs 1 {sc['jobs1']:.2f} s, --jobs 2 {sc['jobs2']:.2f} s "
            f"({sc['jobs_speedup']:.2f}x); two independent --jobs 1 on the halves at once "
            f"{sc['two_processes']:.2f} s ({sc['two_processes_speedup']:.2f}x: this "
            f"machine's ceiling for two processes)"
        )
    if args.berkeley and models:
        trees = read_treebank([str(data / "train.mrg")])
        longest = max((words(r.tree) for r in trees), key=len)
        long_txt = tmp / "long.txt"
        long_txt.write_text(" ".join(longest) + "\n")
        long_out = tmp / "long.berkeley"
        (b, _), (ours, _) = timed_alternating(
            [
                [berkeley_command(folder, long_txt, long_out, len(longest) + 1, grammar)],
                [parse_command(models[0], long_txt, tmp / "long.out")],
            ]
        )
        if unparsed(long_out):
            raise SystemExit("bench_parse: the Berkeley parser left the long sentence unparsed")
        out["long_sentence"] = {"words": len(longest), "berkeley": b, "lpcfg": ours}
        print(
            f"{len(longest)}-word sentence: berkeley {b:.2f} s, lpcfg ({models[0]}) "
            f"{ours:.2f} s = {ours / b:.2f}x"
        )
    if args.by_length and models:
        table = by_length(models[0], folder, sentences, tmp, args.bucket_size, grammar)
        out["by_length"] = table
        for row in table["rows"]:
            ours, theirs = row["lpcfg_rate"], row.get("berkeley_rate")
            line = f"words {row['bucket']:>6} ({row['sentences']} sentences): lpcfg "
            line += f"{ours:.1f} sentences/s" if ours else "not measurable"
            if folder:
                line += f", berkeley {theirs:.1f} sentences/s" if theirs else ", berkeley -"
                line += f" = {ours / theirs:.2f}x" if ours and theirs else ""
            print(line)
        if args.plot:
            print(plot_by_length(args.plot, table, models[0]))
    if args.large:
        opts = BinarizeOptions(vertical=2, horizontal=2)
        prep = prepare([str(data / "train.mrg")], opts)
        pcfg = train_pcfg(prep.grammar, prep.bank, {})
        path = tmp / "large.npz"
        pcfg.save(path)
        g = prep.grammar
        seconds, rss = timed(
            lpcfg("parse", str(path), str(test_txt), "-o", str(tmp / "large.out"), "--no-progress")
        )
        out["large"] = {
            "symbols": g.n_symbols,
            "binary_rules": g.n_binary,
            "seconds": seconds,
            "rate": n / seconds,
            "max_rss_mb": rss,
            "f1": f1(test_mrg, tmp / "large.out"),
        }
        print(
            f"PCFG --vertical 2 --horizontal 2: {g.n_symbols} symbols, {g.n_binary} binary "
            f"rules: {n / seconds:.1f} sentences/s ({seconds:.2f} s, {rss:.0f} MB), strict "
            f"F1 {out['large']['f1'][1]:.2f}"
        )
    if args.json:
        write_record(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
