"""The WCFG reproduction scripts run end to end on tiny settings and write their tables and
records (the full runs are on docs/experiments/wcfg.md; these keep the commands from
rotting)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import SCRIPTS


def _run(script: str, out: Path, *args: str) -> dict:
    res = subprocess.run(
        [sys.executable, str(SCRIPTS / script), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    name = script.removesuffix(".py")
    assert (out / f"{name}.md").read_text().startswith(res.stdout.splitlines()[0])
    return json.loads((out / f"{name}.json").read_text())


def test_random_targets(tmp_path: Path) -> None:
    got = _run(
        "wcfg_random.py", tmp_path, "--targets", "2", "--sizes", "200,2000",
        "--em-iterations", "5", "--em-max-size", "200",
    )  # fmt: skip
    kl = got["kl_geometric_mean"]
    assert set(kl) == {
        "unsupervised spectral", "supervised spectral", "unsupervised EM", "supervised EM"
    }  # fmt: skip
    assert set(kl["unsupervised EM"]) == {"200"}  # EM stops at --em-max-size
    assert all(v >= 0 for by in kl.values() for v in by.values())


def test_random_targets_jobs(tmp_path: Path) -> None:
    """Targets run in worker processes give the figures of a serial run, in target order."""
    args = ("--targets", "3", "--sizes", "300", "--em-iterations", "3")
    serial = _run("wcfg_random.py", tmp_path / "serial", *args, "--jobs", "1")
    parallel = _run("wcfg_random.py", tmp_path / "parallel", *args, "--jobs", "2")
    assert parallel["jobs"] == 2
    assert serial["kl_all"] == parallel["kl_all"]
    assert len(serial["kl_all"]["unsupervised EM"]["300"]) == 3


def test_random_targets_cache(tmp_path: Path) -> None:
    """With --cache a finished target is read back, not run again, by a later run with the
    same settings only; a run in parts gives the figures of a run in one go."""
    args = ("--sizes", "300", "--em-iterations", "3", "--jobs", "1", "--cache", str(tmp_path / "c"))
    whole = _run("wcfg_random.py", tmp_path / "whole", "--targets", "3", *args[:-2])
    part = _run("wcfg_random.py", tmp_path / "part", "--targets", "2", *args)
    files = sorted((tmp_path / "c").glob("*-target*.json"))
    assert [f.name[-14:] for f in files] == ["target000.json", "target001.json"]
    assert part["kl_all"]["supervised EM"]["300"] == whole["kl_all"]["supervised EM"]["300"][:2]
    # A planted value in target 1's file shows that the next run reads it instead of running.
    got = json.loads(files[1].read_text())
    for row in got["kl"]:
        if row[0] == "supervised EM":
            row[2] = 0.125
    files[1].write_text(json.dumps(got))
    resumed = _run("wcfg_random.py", tmp_path / "resumed", "--targets", "3", *args)
    want = whole["kl_all"]["supervised EM"]["300"]
    assert resumed["kl_all"]["supervised EM"]["300"] == [want[0], 0.125, want[2]]
    assert len(list((tmp_path / "c").glob("*-target*.json"))) == 3
    # Other settings are other files: nothing planted is read.
    other = _run("wcfg_random.py", tmp_path / "other", "--targets", "2", *args, "--seed", "1")
    assert 0.125 not in other["kl_all"]["supervised EM"]["300"]
    assert len(list((tmp_path / "c").glob("*-target*.json"))) == 5


def test_dyck(tmp_path: Path) -> None:
    got = _run(
        "wcfg_dyck.py", tmp_path, "--sample", "300", "--seeds", "1", "--factors", "0.05",
        "--bases", "2x4", "--states", "2,3,4",
    )  # fmt: skip
    assert set(got["l1_mean"]) == {"spectral WFA", "supervised spectral", "unsupervised spectral"}
    assert 0 < got["l1_mean"]["supervised spectral"]["0.05"] < 2
    assert len(got["commit"]["commit"]) == 40  # provenance


def test_dyck_jobs(tmp_path: Path) -> None:
    """Samples run in worker processes give the figures of a serial run, in seed order."""
    args = ("--sample", "200", "--seeds", "2", "--factors", "0.05", "--bases", "2x4")
    serial = _run("wcfg_dyck.py", tmp_path / "serial", *args, "--states", "2,3", "--jobs", "1")
    parallel = _run("wcfg_dyck.py", tmp_path / "par", *args, "--states", "2,3", "--jobs", "2")
    assert parallel["jobs"] == 2
    assert serial["l1_all"] == parallel["l1_all"]
    assert serial["states_chosen"] == parallel["states_chosen"]


def test_wsj10(tmp_path: Path, ptb_split) -> None:
    got = _run(
        "wcfg_wsj10.py", tmp_path, "--table1", "1x11,6x14", "--table2", "1x11",
        "--states", "5", "--steps", "5",
    )  # fmt: skip
    assert len(got["alphabet"]) == 11  # the universal tags but punctuation
    assert got["table1"][0]["basis"] == "1x11"
    assert got["sentences"] == 555  # WSJ10 of the 3,914-tree sample
    assert 0 < got["table2"][0]["expected_l1"] < 1
    # the paper's tables travel in the record, and the table shows them beside ours
    assert got["paper"]["table1"]["1x11"] == [39, 159, 34, 1626]
    table = (tmp_path / "wcfg_wsj10.md").read_text()
    assert "| 1x11 | 15 x 138 (39 x 159) |" in table and "| 1x11 | 1.265e-03 |" in table
    assert got["command"].startswith("python scripts/wcfg_wsj10.py")  # provenance
