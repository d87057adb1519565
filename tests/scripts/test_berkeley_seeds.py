"""scripts/berkeley_seeds.py: the Berkeley parser trained with each seed, each seed's cycle
chosen on dev, through a stand-in ``java`` whose grammar of cycle 2 parses perfectly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import leaves
from tests.support import SCRIPTS, synthetic_treebank

SCRIPT = SCRIPTS / "berkeley_seeds.py"

# The trainer writes one grammar per cycle (its number inside); the parser copies the gold
# trees beside its input for the cycle-2 grammar and brackets every word flat for the others.
FAKE_JAVA = """#!/usr/bin/env python3
import sys
a = sys.argv[1:]
with open(sys.argv[0] + ".calls", "a") as log:
    log.write(" ".join(a) + "\\n")
if "-path" in a:
    out, cycles = a[a.index("-out") + 1], int(a[a.index("-SMcycles") + 1])
    assert open(a[a.index("-path") + 1]).readline().startswith("(ROOT ")
    for n in range(1, cycles + 1):
        open(f"{out}_{n}_smoothing.gr", "w").write(str(n))
    open(out, "w").write(str(cycles))
else:
    cycle = int(open(a[a.index("-gr") + 1]).read())
    words = a[a.index("-inputFile") + 1]
    with open(a[a.index("-outputFile") + 1], "w") as fh:
        if cycle == 2:
            fh.write(open(words[: -len(".txt")] + ".mrg").read())
        else:
            for line in open(words):
                fh.write("( (S " + " ".join(f"(X {w})" for w in line.split()) + ") )\\n")
"""


def _setup(tmp_path: Path) -> dict:
    data = tmp_path / "data"
    data.mkdir()
    trees = synthetic_treebank(data, 60, 12)
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[:48]))
    dev = trees[48:]
    (data / "dev.mrg").write_text("".join(format_tree(t) + "\n" for t in dev))
    (data / "dev.txt").write_text("".join(" ".join(leaves(t)) + "\n" for t in dev))
    (tmp_path / "bk").mkdir()
    (tmp_path / "bk/BerkeleyParser-1.7.jar").write_text("")
    (tmp_path / "bk/shipped-sm2.gr").write_text("2")  # a grammar of the folder: cycle 2's
    fake = tmp_path / "bin/java"
    fake.parent.mkdir()
    fake.write_text(FAKE_JAVA)
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}


def _run(tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--berkeley", "bk", "--data", "data", "--seeds", "0,1",
         "--cycles", "3", "--json", "seeds.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def test_each_seed_keeps_dev_s_cycle_names_the_folders_grammars_and_resumes(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    res = _run(tmp_path, env)
    assert res.returncode == 0, res.stderr
    record = json.loads((tmp_path / "seeds.json").read_text())
    assert [r["seed"] for r in record["runs"]] == [0, 1]
    for r in record["runs"]:
        assert r["cycle"] == 2 and r["dev_f1"] == 100.0 and r["test_f1"] == 100.0
        assert r["dev_f1_by_cycle"]["1"] < 100.0 and r["dev_f1_by_cycle"]["3"] < 100.0
        assert f"-randSeed {r['seed']}" in r["train"] and "BERKELEY/" in r["train"]
        assert r["same_as"] == {"shipped-sm2.gr": 2} and r["grammar_bytes"] == 1
        assert r["test_f1_by_cycle"]["2"] == 100.0 > r["test_f1_by_cycle"]["3"]
    assert record["test_f1"]["mean"] == 100.0 and record["test_f1"]["sd"] == 0.0
    # the dev choice of a run the folder's grammars come from, for bench_parse to time
    assert (
        (tmp_path / "out/berkeley_seeds/dev-choice.gr")
        .resolve()
        .name.endswith(".gr_2_smoothing.gr")
    )

    def calls_made() -> list[str]:  # the trainer's and the parser's (not ``-version``)
        return [
            c
            for c in (tmp_path / "bin/java.calls").read_text().splitlines()
            if "-jar" in c or "-cp" in c
        ]

    calls = calls_made()
    assert sum("-randSeed" in c for c in calls) == 2
    # 3 dev parses and 3 test parses per seed, test never choosing
    assert sum("-inputFile" in c for c in calls) == 12
    again = _run(tmp_path, env)
    assert again.returncode == 0, again.stderr
    assert calls_made() == calls  # nothing trained or parsed again
