"""scripts/unmix_error.py on small sizes: the record holds every run's error, and the tables
the identifiability page draws from it are made from the record alone."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from tests.support import SCRIPTS, load_script


def test_the_record_gives_the_tables_the_script_printed(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "unmix_error.py"), "--sizes", "2000,20000", "--models",
         "2", "--seeds", "1", "--out", str(tmp_path), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record == json.loads((tmp_path / "unmix_error.json").read_text())
    assert record["command"].startswith("python scripts/unmix_error.py")
    script = load_script("unmix_error")
    errors = record["pcfg_ie"]["errors"]["best tau"]
    assert len(errors) == 2 and all(len(e) == 2 for e in errors)  # sizes x (models x seeds)
    table = script.error_table(record)
    assert table.splitlines()[0] == "| learner | n = 2e+03 | n = 2e+04 | slope |"
    assert f"{np.median(errors[0]):.4f}" in table.splitlines()[2]
    assert len(table.splitlines()) == 6  # header, rule, four learners
    assert script.error_table(record) in done.stdout
    assert script.timing_table(record) in done.stdout
