"""scripts/error_kinds.py: each model parses the test split, its errors are classified by
kind into the record (adding up to EVALB's), the chart is drawn, and one sentence's gold
tree and parses are drawn with their wrong and missing brackets marked."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, invoke, synthetic_treebank


def test_record_chart_and_example(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    trees = synthetic_treebank(data, 80, 12)  # writes test.mrg and test.txt
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[:80]))
    model = tmp_path / "pcfg-s0.npz"
    assert invoke("train", data / "train.mrg", "--method", "pcfg", "-o", model).exit_code == 0
    record = tmp_path / "record.json"
    done = subprocess.run(
        [sys.executable, SCRIPTS / "error_kinds.py", "--data", data, "--models", model,
         "--out", tmp_path / "out", "--json", record, "--plot", tmp_path / "fig" / "kinds",
         "--example", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    models = json.loads(record.read_text())["models"]
    entry = models["pcfg"]
    assert entry["brackets"] == sum(k["brackets"] for k in entry["kinds"].values()) > 0
    report = json.loads(
        invoke("evaluate", "--json", data / "test.mrg", tmp_path / "out" / "pcfg.parsed").stdout
    )["all"]
    assert (
        entry["brackets"]
        == report["gold_brackets"] + report["test_brackets"] - 2 * report["matched_brackets"]
    )
    assert (tmp_path / "fig" / "kinds.png").stat().st_size > 10_000
    gold_svg = ET.parse(tmp_path / "fig" / "error_example_gold_pcfg.svg").getroot()
    parse_svg = ET.parse(tmp_path / "fig" / "error_example_pcfg.svg").getroot()
    example = json.loads(record.read_text())["example"]
    assert example["pictures"] == ["error_example_gold_pcfg.svg", "error_example_pcfg.svg"]
    for svg in (gold_svg, parse_svg):
        assert svg.tag.endswith("svg")
