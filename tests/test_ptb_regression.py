"""The README's PCFG figure on the standard split, reproduced exactly (issue 13).

Needs the NLTK Penn Treebank sample (skipped without it). The split is written into
tmp_path as `make data` writes it (scripts/prepare_data.py), so the test does not depend on
a data/ folder; then `lpcfg train --method pcfg`, `parse` and `evaluate` run as the
Quickstart shows. About 12 s.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from tests.support import run

ROOT = Path(__file__).resolve().parent.parent


def readme_pcfg_strict_f1() -> str:
    """The strict F1 cell of the pcfg row of the README's Results table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    # The row of configs/standard.toml, which holds the defaults (`train --method pcfg`), in
    # the column the header names "test F1".
    header = re.search(r"^\| model \|.*\|$", text, re.M)
    row = re.search(r"^\| [^|]*`configs/standard\.toml`[^|]*\|.*\|$", text, re.M)
    assert header and row, "no configs/standard.toml row in the README's Results table"
    names = [c.strip() for c in header.group(0).strip("|").split("|")]
    cells = [c.strip() for c in row.group(0).strip("|").split("|")]
    return cells[names.index("test F1")].strip("*")


@pytest.mark.data
def test_pcfg_strict_f1_on_the_standard_test_split_is_the_readmes(ptb_split, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    prepare_data = importlib.import_module("prepare_data")
    data = tmp_path / "data"
    prepare_data.write_split(ptb_split, data)
    model, parsed = tmp_path / "pcfg.npz", tmp_path / "test.parsed"
    res = run("train", "--method", "pcfg", data / "train.mrg", "-o", model, "--quiet")
    assert res.returncode == 0, res.stderr
    res = run("parse", model, data / "test.txt", "-o", parsed, "--quiet")
    assert res.returncode == 0, res.stderr
    res = run("evaluate", "--json", data / "test.mrg", parsed)
    assert res.returncode == 0, res.stderr
    figures = json.loads(res.stdout)["all"]
    assert figures["strict_sentences"] == 345
    assert f"{figures['strict_fmeasure']:.2f}" == readme_pcfg_strict_f1() == "67.89"
