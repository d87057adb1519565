#!/usr/bin/env python3
"""The multilingual benchmark: lpcfg's learners and the Berkeley parser on the fixed splits
of nltk's four foreign treebanks (alpino, cess_esp, floresta, sinica), dev and test strict
F1 side by side.

For each treebank (--treebanks), on its split in DATA/NAME (``prepare_languages.py`` writes
it there first when it is missing), trains and scores (--only):

- ``pcfg``: the treebank PCFG (``configs/standard.toml``);
- ``em``: EM with 16 states (``configs/em16.toml``, ``--dev``);
- ``splitmerge``: one split-merge grammar (``configs/splitmerge_grid.toml``, ``--dev``:
  its smoothing and merge fraction chosen on the treebank's dev) per seed of --seeds, each
  a row and their mean ± sd another; a record of another config (``configs/splitmerge.toml``,
  before the grid) is named under the table;
- ``product``: six split-merge grammars, a pivot+EM and an EM grammar parsed as a product
  (``configs/best.toml``, ``--dev``);
- ``berkeley``: the Berkeley parser's GrammarTrainer (--berkeley: the folder of its jar)
  on the same training trees as lpcfg normalises them (``train.root.mrg``), its default 6
  split-merge cycles. Its cycle is chosen on dev as lpcfg's models choose theirs: each
  cycle's grammar (``GRAMMAR.gr_K_smoothing.gr``) parses dev, the best strict F1 is kept
  (the fewer cycles on a tie), and that grammar parses test; the 6-cycle grammar is a
  second row. Its ``( (S ...) )`` roots are written ``(TOP (S ...))`` and its ``(())``
  failures ``()`` (counted) before scoring.

Every ``lpcfg train`` gets ``--seed`` (and ``--jobs`` where it scores dev), every ``lpcfg
parse`` ``--jobs``; the Berkeley parser parses with one thread, as its parse.sh does (its
multi-threaded mode writes the ``(())`` of a sentence over its length limit out of order).
Every model is scored against ``dev.mrg`` and ``test.mrg`` with ``lpcfg evaluate``
(EVALB, COLLINS.prm; strict F1 counts failed sentences as wrong). Each model's record (dev
and test F1, fallback sentences from ``lpcfg parse``'s summary, training seconds, the
commands, the commit) goes into --json as soon as it ends, so that a re-run resumes where
it stopped (a model, or a Berkeley grammar, trained but not yet scored is scored as it
is; --fresh starts over, --redo MODELS runs those models again); a Berkeley trainer or
parser that fails is recorded with its stderr and the run goes on, an lpcfg command that
fails stops it. Models and parses stay in --out. Last, the Markdown table: one row per
model, a dev and a test column per treebank, and the fallbacks.

    python scripts/bench_languages.py --berkeley /work/shared/bench/berkeley \\
        [--treebanks sinica] [--only pcfg,berkeley] [--seeds 0,1,2] [--data data/languages] \\
        [--out out/languages] [--json docs/figures/languages.json] [--jobs 2] [--limit N]

--limit N uses the first N trees of each part (a quick check; the figures are not the
benchmark's, and the JSON says so). Wall times come from a shared 2-core machine: noisy.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from prepare_languages import folder_source, prepare
from records import commit, machine

from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.treebank.conventions import PRESETS, conventions
from lpcfg_cli.treebank.nltk_samples import TREEBANKS
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import format_tree, read_trees

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
MODELS = ("pcfg", "em", "splitmerge", "product", "berkeley")
# The shipped config each lpcfg model trains with, and whether it chooses on dev.
CONFIG = {"pcfg": "standard", "em": "em16", "splitmerge": "splitmerge_grid", "product": "best"}
USES_DEV = {"pcfg": False, "em": True, "splitmerge": True, "product": True}
LABEL = {
    "pcfg": "treebank PCFG (`configs/standard.toml`)",
    "em": "EM, 16 states (`configs/em16.toml`)",
    "splitmerge": "one split-merge grammar",
    "product": "the product of `configs/best.toml`",
    "berkeley": "the Berkeley parser, cycle chosen on dev",
    "berkeley6": "the Berkeley parser, 6 cycles",
}
JAR = "BerkeleyParser-1.7.jar"
TRAINER = "edu.berkeley.nlp.PCFGLA.GrammarTrainer"
CYCLE = re.compile(r"_(\d+)_smoothing\.gr$")
UNPARSED = re.compile(r"\(\s*\(\s*\)\s*\)")
# lpcfg parse's summary: "..., 9 fallback (9 no parse under the coarse grammar: lines 12,
# 21; 1 longer than 660 words: line 3)".
FALLBACKS = re.compile(r"(\d+) fallback(?: \((.*?)\))?(?:,|$)", re.M)
REASON = re.compile(r"(\d+) ([^:;]+): (?:tree on )?lines? ")
GRID_CHOICE = re.compile(r"selected ((?:smoothing|merge) [^\n]*)")  # lpcfg train's OptionGrid line
TAIL = 3000  # characters of a failed command's stderr kept in the record


class Bench:
    """One benchmark run: its settings, its records (the JSON) and how it writes them."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.json_path = Path(args.json)
        self.jobs = str(args.jobs)
        self.seeds = [int(s) for s in args.seeds.split(",") if s != ""]
        self.conventions = args.conventions
        self.berkeley = Path(args.berkeley) if args.berkeley else None
        self.data: dict = {"runs": {}}
        if self.json_path.exists() and not args.fresh:
            self.data = json.loads(self.json_path.read_text(encoding="utf-8"))
        self.data["about"] = (
            "scripts/bench_languages.py: strict F1 (lpcfg evaluate, COLLINS.prm) on the "
            "fixed splits of nltk's treebanks (lpcfg_cli.treebank.nltk_samples)"
        )
        self.data["limit"] = self.data.get("limit", args.limit)
        if self.data["limit"] != args.limit:
            raise SystemExit(
                f"bench_languages: {self.json_path} holds runs with --limit "
                f"{self.data['limit']}, not {args.limit}: use --fresh or another --json"
            )
        self.commit = commit()
        self.machine = machine(java=self.berkeley is not None)

    def save(self, measured: bool = True) -> None:
        """Write every record so far (atomically: an interrupted run loses none); with
        ``measured`` False (nothing was run: the audits alone were added) the commit,
        machine and settings of the runs are left as they were."""
        if measured:
            self.data["commit"] = self.commit
            self.data["machine"] = self.machine
            self.data["settings"] = {"jobs": self.args.jobs, "data": self.args.data,
                                     "out": self.args.out}  # fmt: skip
        self.json_path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(self.json_path) as fh:
            fh.write(json.dumps(self.data, indent=1, ensure_ascii=False) + "\n")

    def records(self, name: str) -> dict:
        return self.data["runs"].setdefault(name, {}).setdefault("models", {})

    def keep(self, name: str, key: str, record: dict) -> None:
        record["commit"] = self.commit["commit"]
        record["uncommitted"] = self.commit["changed"]
        record["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self.records(name)[key] = record
        self.save()

    # --- data -------------------------------------------------------------------------

    def key(self, name: str) -> str:
        """The run's name for treebank ``name``: itself when read with the Penn Treebank's
        conventions, else ``name (conventions)``, a run and a table column of its own."""
        return name if self.conventions == "ptb" else f"{name} ({self.conventions})"

    def split_folder(self, name: str) -> Path:
        """The treebank's split folder (prepared when missing), or, with --limit, a folder
        of the first N trees of each of its files; its source line is recorded."""
        folder = Path(self.args.data) / name
        source = folder_source(folder)
        if source is None:
            print(f"bench_languages: {folder}: preparing the split", flush=True)
            prepare(name, folder, report=lambda line: print(f"bench_languages: {line}"))
            source = folder_source(folder)
        run = self.data["runs"].setdefault(self.key(name), {})
        if self.conventions != "ptb":
            run["conventions"] = self.conventions
        if run.get("source", source) != source:
            raise SystemExit(
                f"bench_languages: {folder} holds another split than the one {self.json_path} "
                f"was measured on:\n  now: {source}\n  then: {run['source']}\nuse --fresh"
            )
        run["source"] = source
        self.record_audit(name)
        if not self.args.limit:
            return folder
        small = self.out / name / f"limit{self.args.limit}"
        small.mkdir(parents=True, exist_ok=True)
        for path in sorted(folder.glob("*.mrg")) + sorted(folder.glob("*.txt")):
            if path.name != "source.txt":
                lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
                (small / path.name).write_text("".join(lines[: self.args.limit]), "utf-8")
        return small

    def record_audit(self, name: str) -> bool:
        """Keep the split's ``audit.json`` (``prepare_languages.audit``: trees read, left out,
        sentence lengths) in the run's record; True if it changed."""
        path = Path(self.args.data) / name / "audit.json"
        if not path.exists():
            return False
        run = self.data["runs"].setdefault(self.key(name), {})
        audit = json.loads(path.read_text(encoding="utf-8"))
        changed = run.get("audit") != audit
        run["audit"] = audit
        return changed

    # --- lpcfg --------------------------------------------------------------------------

    def lpcfg_run(self, name: str, data: Path, model: str, seed: int) -> dict:
        """Train one lpcfg model, parse dev and test, score: its record."""
        key = model if model != "splitmerge" else f"splitmerge-s{seed}"
        folder = self.out / self.key(name)
        folder.mkdir(parents=True, exist_ok=True)
        config = shown(CONFIGS / f"{CONFIG[model]}.toml")
        path = folder / f"{key}.npz"
        train = ["train", "--config", config, "--seed", str(seed), *self.reading()]
        if USES_DEV[model]:
            train += ["--dev", shown(data / "dev.mrg"), "--jobs", self.jobs]
        train += [shown(data / "train.mrg"), "-o", shown(path)]
        record = {"model": model, "seed": seed, "config": config}
        marker = folder / f"{key}.train.json"
        if marker.exists() and path.exists() and not self.args.fresh:
            record.update(json.loads(marker.read_text(encoding="utf-8")))  # trained before
        else:
            t0 = time.perf_counter()
            done = lpcfg(*train)
            record["train_seconds"] = time.perf_counter() - t0
            record["train_summary"] = last_lines(done.stderr)
            marker.write_text(json.dumps({k: record[k] for k in ("train_seconds",
                              "train_summary")}), encoding="utf-8")  # fmt: skip
        record["commands"] = {"train": command_line(train)}
        for part in ("dev", "test"):
            parsed = folder / f"{key}.{part}.parsed"
            parse = ["parse", "--config", config, "--jobs", self.jobs, "--no-progress",
                     shown(path), shown(data / f"{part}.txt"), "-o", shown(parsed)]  # fmt: skip
            t0 = time.perf_counter()
            done = lpcfg(*parse)
            record[f"{part}_parse_seconds"] = time.perf_counter() - t0
            record[f"{part}_fallbacks"], record[f"{part}_fallback_reasons"] = fallbacks(done.stderr)
            record[f"{part}_evalb_f1"], record[f"{part}_f1"] = score(
                data / f"{part}.mrg", parsed, self.reading()
            )
            record["commands"][f"parse_{part}"] = command_line(parse)
            record["commands"][f"evaluate_{part}"] = command_line(
                ["evaluate", *self.reading(), shown(data / f"{part}.mrg"), shown(parsed)]
            )
        record["status"] = "ok"
        return record

    def reading(self) -> list[str]:
        """The ``--conventions`` arguments of the run's train and evaluate commands."""
        return [] if self.conventions == "ptb" else ["--conventions", self.conventions]

    def berkeley_trees(self, data: Path, folder: Path) -> Path:
        """The Berkeley trainer's ROOT-wrapped training trees: ``train.root.mrg`` as
        prepared, or with other conventions, those trees normalised by them (the
        trainer reads labels as written)."""
        source = data / "train.root.mrg"
        if self.conventions == "ptb":
            return source
        rules = conventions(self.conventions)
        out = folder / "train.root.mrg"
        with atomic_output(out) as fh:
            for tree in read_trees(str(source)):
                normal = normalize(tree, rules)
                if normal is not None:
                    fh.write(f"(ROOT {format_tree(normal)})\n")
        return out

    # --- the Berkeley parser --------------------------------------------------------------

    def berkeley_run(self, name: str, data: Path) -> dict:
        """Train the Berkeley parser's grammar on ``train.root.mrg``, choose its cycle on
        dev, parse test: its record (a failure is recorded, not raised)."""
        assert self.berkeley is not None
        folder = self.out / self.key(name) / "berkeley"
        grammar = folder / "grammar.gr"
        trees = folder / "train.root.mrg" if self.conventions != "ptb" else data / "train.root.mrg"
        train = ["java", "-Xmx4g", "-cp", shown(self.berkeley / JAR), TRAINER,
                 "-path", shown(trees), "-out", shown(grammar),
                 "-treebank", "SINGLEFILE"]  # fmt: skip
        record: dict = {"model": "berkeley", "commands": {"train": shlex.join(train)}}
        marker = folder / "train.json"
        if marker.exists() and not self.args.fresh:
            record.update(json.loads(marker.read_text(encoding="utf-8")))
        else:
            if folder.exists():
                shutil.rmtree(folder)  # grammars of an interrupted run: not this one's
            folder.mkdir(parents=True)
            self.berkeley_trees(data, folder)
            print(f"{name}: training the Berkeley parser's grammar ...", flush=True)
            t0 = time.perf_counter()
            with open(folder / "train.log", "w", encoding="utf-8") as log:
                done = subprocess.run(train, stdout=log, stderr=subprocess.PIPE, text=True)
            seconds = time.perf_counter() - t0
            if done.returncode != 0 or not grammar.exists():
                return failed(record, "train", done, seconds, folder / "train.log")
            record["train_seconds"] = seconds
            marker.write_text(json.dumps({"train_seconds": seconds}), encoding="utf-8")
        cycles = sorted(
            (int(m.group(1)), p) for p in folder.glob("grammar.gr_*_smoothing.gr")
            if (m := CYCLE.search(p.name))
        )  # fmt: skip
        record["grammars"] = {str(k): shown(p) for k, p in cycles}
        # The cycle is chosen as lpcfg's split-merge chooses its own (patience 1): dev is
        # parsed with each cycle's grammar until one does not improve on the best so far.
        dev: dict[str, dict] = {}
        best_f1 = None
        for k, gr in cycles:
            result = dev[str(k)] = self.berkeley_parse(name, data, gr, "dev", k)
            f1 = result.get("f1") if result["status"] == "ok" else None
            if f1 is not None and best_f1 is not None and f1 <= best_f1:
                break
            if f1 is not None:
                best_f1 = f1
        record["dev_by_cycle"], record["test_by_cycle"] = dev, {}
        scored = [(k, r) for k, r in dev.items() if r["status"] == "ok"]
        if not scored:
            record.update(status="failed", stage="parse dev", error="no cycle's grammar parsed dev")
            return record
        best = max(scored, key=lambda kr: (kr[1]["f1"], -int(kr[0])))[0]
        record["chosen_cycle"] = int(best)
        last = str(cycles[-1][0])
        for key, cycle in (("chosen", best), ("last", last)):
            if cycle not in dev:
                continue  # dev stopped before the last cycle: its grammar is not parsed
            if cycle not in record["test_by_cycle"]:
                grammar_k = dict(cycles)[int(cycle)]
                record["test_by_cycle"][cycle] = self.berkeley_parse(
                    name, data, grammar_k, "test", int(cycle)
                )
            test = record["test_by_cycle"][cycle]
            row = {"cycle": int(cycle), "test_status": test["status"]}
            for part, result in (("dev", dev[cycle]), ("test", test)):
                row[f"{part}_f1"] = result.get("f1")
                row[f"{part}_evalb_f1"] = result.get("evalb_f1")
                row[f"{part}_fallbacks"] = result.get("unparsed")
            if key == "chosen":
                record.update(row)
            else:
                record["last_cycle"] = row
        record["status"] = record["test_status"]
        return record

    def berkeley_parse(self, name: str, data: Path, grammar: Path, part: str, cycle: int) -> dict:
        """Parse ``part`` with one grammar, rewrite its roots and failures, score."""
        assert self.berkeley is not None
        raw = grammar.parent / f"cycle{cycle}.{part}.out"
        parsed = grammar.parent / f"cycle{cycle}.{part}.parsed"
        timing = grammar.parent / f"cycle{cycle}.{part}.json"
        parse = ["java", "-Xmx4g", "-jar", shown(self.berkeley / JAR), "-gr", shown(grammar),
                 "-inputFile", shown(data / f"{part}.txt"), "-outputFile", shown(raw)]  # fmt: skip
        result: dict = {"command": shlex.join(parse)}
        if timing.exists() and raw.exists() and not self.args.fresh:  # parsed before: resume
            result.update(json.loads(timing.read_text(encoding="utf-8")))
        else:
            t0 = time.perf_counter()
            done = subprocess.run(parse, capture_output=True, text=True)
            seconds = time.perf_counter() - t0
            result["parse_seconds"] = seconds
            if done.returncode != 0 or not raw.exists():
                return failed(result, f"parse {part}", done, seconds)
            timing.write_text(json.dumps({"parse_seconds": seconds}), encoding="utf-8")
        lines = raw.read_text(encoding="utf-8").splitlines()
        result["unparsed"] = sum(bool(UNPARSED.fullmatch(line.strip())) for line in lines)
        with atomic_output(parsed) as fh:
            fh.writelines(as_top(line) + "\n" for line in lines)
        result["evalb_f1"], result["f1"] = score(data / f"{part}.mrg", parsed, self.reading())
        result["status"] = "ok"
        print(f"{name}: berkeley cycle {cycle} {part} F1 {result['f1']:.2f} "
              f"({result['unparsed']} unparsed)", flush=True)  # fmt: skip
        return result

    # --- the run ------------------------------------------------------------------------

    def run(self, names: list[str], only: list[str]) -> None:
        for name in names:
            data = self.split_folder(name)
            self.save()
            done = self.records(self.key(name))
            for model in only:
                if model == "berkeley":
                    if "berkeley" in done:
                        continue
                    record = self.berkeley_run(name, data)
                    self.keep(self.key(name), "berkeley", record)
                    print(f"{name}: berkeley: {summary(record)}", flush=True)
                    continue
                for seed in self.seeds if model == "splitmerge" else [0]:
                    key = model if model != "splitmerge" else f"splitmerge-s{seed}"
                    if key in done:
                        continue
                    record = self.lpcfg_run(name, data, model, seed)
                    self.keep(self.key(name), key, record)
                    print(f"{name}: {key}: {summary(record)}", flush=True)


def failed(record: dict, stage: str, done: subprocess.CompletedProcess, seconds: float,
           log: Path | None = None) -> dict:  # fmt: skip
    """``record`` as a failure at ``stage``: exit status and the end of its stderr (and of
    its log)."""
    record.update(status="failed", stage=stage, returncode=done.returncode, seconds=seconds,
                  stderr=(done.stderr or "")[-TAIL:])  # fmt: skip
    if log is not None and log.exists():
        record["log"] = log.read_text(encoding="utf-8", errors="replace")[-TAIL:]
    print(f"bench_languages: {stage} failed (exit {done.returncode}): "
          f"{last_lines(done.stderr or '', 1)}", file=sys.stderr, flush=True)  # fmt: skip
    return record


def as_top(line: str) -> str:
    """A Berkeley parser's tree as lpcfg writes trees: ``( (S ...) )`` -> ``(TOP (S ...))``,
    a failure ``(())`` -> ``()`` (scored as a failed sentence)."""
    line = line.strip()
    if UNPARSED.fullmatch(line) or not line:
        return "()"
    return re.sub(r"^\(\s*\(", "(TOP (", line)


def lpcfg(*args: str) -> subprocess.CompletedProcess:
    """Run one lpcfg command; a failure ends the bench with the command and its stderr (the
    records so far are in the JSON: a re-run resumes)."""
    done = subprocess.run(
        [sys.executable, "-m", "lpcfg_cli", *args], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(
            f"bench_languages: `{command_line(list(args))}` failed:\n{done.stderr.strip()}"
        )
    return done


def score(gold: Path, parsed: Path, reading: list[str] = ()) -> tuple[float, float]:
    """(EVALB F1, strict F1) of ``parsed`` against ``gold``, from ``lpcfg evaluate`` (with
    ``reading``: its ``--conventions`` arguments)."""
    report = json.loads(lpcfg("evaluate", "--json", *reading, str(gold), str(parsed)).stdout)
    if report.get("aborted"):
        raise SystemExit(f"bench_languages: EVALB stopped on {parsed}: {report['messages'][:3]}")
    return report["all"]["fmeasure"], report["all"]["strict_fmeasure"]


def fallbacks(stderr: str) -> tuple[int, dict[str, int]]:
    """Fallback sentences in ``lpcfg parse``'s summary line, and their reasons."""
    matches = list(FALLBACKS.finditer(stderr))
    if not matches:
        return 0, {}
    match = matches[-1]
    reasons = {why.strip(): int(n) for n, why in REASON.findall((match.group(2) or "") + " ")}
    return int(match.group(1)), reasons


def last_lines(text: str, n: int = 3) -> str:
    return "\n".join([line for line in text.splitlines() if line.strip()][-n:])


def shown(path: Path | str) -> str:
    """A path as commands show it: relative to the working folder when under it."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def command_line(args: list[str]) -> str:
    return shlex.join(["lpcfg", *args])


def summary(record: dict) -> str:
    if record.get("status") != "ok":
        return f"failed at {record.get('stage')}: {last_lines(record.get('stderr', ''), 1)}"
    text = f"dev {record['dev_f1']:.2f}, test {record['test_f1']:.2f}"
    if "chosen_cycle" in record:
        text += f" (cycle {record['chosen_cycle']})"
    if "train_seconds" in record:
        text += f", trained in {record['train_seconds']:.0f} s"
    return text


# --- the table ------------------------------------------------------------------------


def rows(data: dict, names: list[str], seeds: list[int]) -> list[tuple[str, dict]]:
    """(row label, {treebank: (dev, test, fallbacks) or a failure text}) in table order."""
    out: list[tuple[str, dict]] = []

    def cell(record: dict | None, last: bool = False):
        if record is None:
            return None
        if record.get("status") != "ok" and "dev_f1" not in record:
            return f"failed ({record.get('stage', '?')})"
        row = record["last_cycle"] if last else record
        return (row.get("dev_f1"), row.get("test_f1"),
                (row.get("dev_fallbacks") or 0) + (row.get("test_fallbacks") or 0))  # fmt: skip

    def models(name: str) -> dict:
        return data["runs"].get(name, {}).get("models", {})

    for model in ("pcfg", "em"):
        out.append((LABEL[model], {n: cell(models(n).get(model)) for n in names}))
    present = sorted({int(k.rsplit("-s", 1)[1]) for n in names for k in models(n)
                      if k.startswith("splitmerge-s")} | set(seeds))  # fmt: skip
    for seed in present:
        cells = {n: cell(models(n).get(f"splitmerge-s{seed}")) for n in names}
        if any(c is not None for c in cells.values()):
            out.append((f"{LABEL['splitmerge']}, seed {seed}", cells))
    mean: dict = {}
    for n in names:
        runs = [models(n)[k] for k in sorted(models(n)) if k.startswith("splitmerge-s")]
        runs = [r for r in runs if r.get("status") == "ok"]
        if len(runs) > 1:
            mean[n] = tuple(
                (statistics.fmean(r[f] for r in runs), statistics.stdev(r[f] for r in runs))
                for f in ("dev_f1", "test_f1")
            ) + (sum(r["dev_fallbacks"] + r["test_fallbacks"] for r in runs), len(runs))
    if mean:
        out.append((f"{LABEL['splitmerge']}, mean ± sd", mean))
    out.append((LABEL["product"], {n: cell(models(n).get("product")) for n in names}))
    berkeley = {n: models(n).get("berkeley") for n in names}
    out.append((LABEL["berkeley"], {n: cell(r) for n, r in berkeley.items()}))
    out.append((LABEL["berkeley6"], {n: cell(r, last=True) if r and "last_cycle" in r
                                     else None for n, r in berkeley.items()}))  # fmt: skip
    return [(label, cells) for label, cells in out if any(c is not None for c in cells.values())]


def columns(data: dict, names: list[str]) -> list[str]:
    """Every reading of the treebanks ``names`` in the records: a column each."""
    return [k for n in names for k in data["runs"] if k == n or k.startswith(f"{n} (")]


def markdown(data: dict, names: list[str], seeds: list[int]) -> str:
    """The table: a dev and a test column per treebank, and the fallback sentences (dev +
    test; the Berkeley parser's ``(())``) per treebank in the same order."""
    head = "| model | " + " | ".join(f"{n} dev | {n} test" for n in names)
    head += f" | fallbacks ({', '.join(names)}) |"
    lines = [head, "|---" * (2 * len(names) + 2) + "|"]
    for label, cells in rows(data, names, seeds):
        texts, falls = [], []
        for n in names:
            c = cells.get(n)
            if c is None:
                texts += ["", ""]
                falls.append("")
            elif isinstance(c, str):
                texts += [c, ""]
                falls.append("")
            elif len(c) == 4:  # mean ± sd over seeds
                texts += [f"{c[0][0]:.2f} ± {c[0][1]:.2f}", f"{c[1][0]:.2f} ± {c[1][1]:.2f}"]
                falls.append(str(c[2]))
            else:
                texts += [fmt(c[0]), fmt(c[1])]
                falls.append(str(c[2]))
        lines.append(f"| {label} | " + " | ".join(texts) + f" | {' / '.join(falls)} |")
    chosen = [
        f"{n} {data['runs'][n]['models']['berkeley']['chosen_cycle']}"
        for n in names
        if data["runs"].get(n, {}).get("models", {}).get("berkeley", {}).get("chosen_cycle")
    ]
    text = "\n".join(lines) + "\n"
    configs = {}
    for n in names:
        for key, record in sorted(data["runs"].get(n, {}).get("models", {}).items()):
            if key.startswith("splitmerge-s") and record.get("config"):
                configs.setdefault(n, f"`{record['config']}`")
                grid = GRID_CHOICE.search(record.get("train_summary", ""))
                if grid:
                    configs[n] += f", seed {record['seed']}: {grid.group(1)}"
    if configs:
        text += "\nSplit-merge configs (and what dev chose): "
        text += "; ".join(f"{n} {c}" for n, c in configs.items()) + ".\n"
    if chosen:
        text += f"\nBerkeley cycles chosen on dev: {', '.join(chosen)}.\n"
    if data.get("limit"):
        text += f"\nWith --limit {data['limit']}: the first {data['limit']} trees of each part.\n"
    return text


def fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebanks", default=",".join(TREEBANKS), help="comma-separated names")
    ap.add_argument("--only", default=",".join(MODELS), help="comma-separated models")
    ap.add_argument("--seeds", default="0,1,2", help="split-merge seeds")
    ap.add_argument("--data", default="data/languages", help="split folders (one per treebank)")
    ap.add_argument("--out", default="out/languages", help="models and parses")
    ap.add_argument("--json", default="docs/figures/languages.json", help="the records")
    ap.add_argument("--berkeley", default=None, help=f"the folder of {JAR} (berkeley rows)")
    ap.add_argument("--jobs", type=int, default=2, help="lpcfg's --jobs (training and parsing)")
    ap.add_argument("--limit", type=int, default=None, help="the first N trees of each part")
    ap.add_argument("--fresh", action="store_true", help="start over (no resuming)")
    ap.add_argument("--redo", default="", help="comma-separated models to run again")
    ap.add_argument("--table-only", action="store_true", help="print the table of the JSON")
    ap.add_argument("--conventions", default="ptb", choices=tuple(PRESETS),
                    help="the treebanks' reading (lpcfg --conventions): runs of their own, "
                    "named 'NAME (CONVENTIONS)'")  # fmt: skip
    args = ap.parse_args(argv)
    for option, given, known in (("--treebanks", args.treebanks, TREEBANKS),
                                 ("--only", args.only, MODELS),
                                 ("--redo", args.redo, MODELS)):  # fmt: skip
        for item in filter(None, given.split(",")):
            if item not in known:
                ap.error(f"{option}: {item!r} is not one of {', '.join(known)}")
    if "berkeley" in args.only.split(",") and not args.table_only:
        if args.berkeley is None or not (Path(args.berkeley) / JAR).is_file():
            ap.error(f"the berkeley rows need --berkeley DIR, the folder of {JAR} "
                     "(or leave them out with --only)")  # fmt: skip
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = [n for n in args.treebanks.split(",") if n]
    only = [m for m in args.only.split(",") if m]
    bench = Bench(args)
    for model in filter(None, args.redo.split(",")):
        for name in names:
            records = bench.records(bench.key(name))
            for key in [k for k in records if k == model or k.startswith(f"{model}-s")]:
                del records[key]
            for marker in (bench.out / bench.key(name)).glob(f"{model}*.train.json"):
                marker.unlink()
            if model == "berkeley":
                shutil.rmtree(bench.out / bench.key(name) / "berkeley", ignore_errors=True)
    if not args.table_only:
        bench.run(names, only)
    elif any([bench.record_audit(name) for name in names]):  # each split's audit, recorded
        bench.save(measured=False)
    print(markdown(bench.data, columns(bench.data, names), bench.seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
