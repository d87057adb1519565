"""scripts/table1.py (Cohen & Collins 2014, table 1, in kind): every method's run works with
its shipped config, the table averages the seeds and reports test F1 at the m best on dev."""

from __future__ import annotations

import json

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import leaves
from tests.support import SCRIPTS, synthetic_treebank


@pytest.fixture
def table1(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import table1

    return table1


def record(method, m, seed, dev, test, its=None):
    r = {"method": method, "states": m, "seed": seed, "dev_f1": dev, "test_f1": test,
         "train_seconds": 10.0 * m}  # fmt: skip
    if its is not None:
        r["em_iterations"] = its
    return r


def test_the_table_averages_seeds_and_tests_the_m_best_on_dev(table1):
    records = [
        record("em", 8, 0, 80.0, 70.0, 5), record("em", 8, 1, 82.0, 72.0, 10),
        record("em", 16, 0, 85.0, 75.0, 15), record("em", 16, 1, 83.0, 79.0, 20),
        record("pivot", 8, 0, 81.0, 60.0), record("pivot", 16, 0, 79.0, 90.0),
    ]  # fmt: skip
    table = table1.aggregate(records, [8, 16])
    assert table["em"][8]["dev_f1"] == (81.0, pytest.approx(2**0.5))
    assert table["em"][16]["test_f1"] == (77.0, pytest.approx(8**0.5))
    assert table["em"][16]["em_iterations"] == [15, 20]
    assert "em_iterations" not in table["pivot"][8]
    text = table1.markdown(table, [8, 16])
    lines = {line.split("|")[1].strip(): line for line in text.splitlines()}
    # EM: m = 16 has the better mean dev (84 > 81), so its test F1 is reported.
    assert "84.00 ± 1.41 (15, 20)" in lines["lpcfg em"]
    assert lines["lpcfg em"].rstrip().endswith("77.00 ± 2.83 (m = 16) |")
    # pivot: m = 8 is best on dev although m = 16 tests higher; one seed has no spread.
    assert lines["lpcfg pivot"].rstrip().endswith("60.00 (seed 0 only) (m = 8) |")
    assert "88.32 (30)" in lines["**paper** em"] and lines["**paper** em"].endswith("87.76 |")
    assert "lpcfg spectral" in lines and "±" not in lines["lpcfg spectral"]


def test_every_method_runs_with_its_shipped_config(table1, tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    trees = synthetic_treebank(data, 160, 30)
    for name, part in (("train", trees[:130]), ("dev", trees[130:])):
        (data / f"{name}.mrg").write_text("".join(format_tree(t) + "\n" for t in part))
        (data / f"{name}.txt").write_text("".join(" ".join(leaves(t)) + "\n" for t in part))
    for method in table1.METHODS:
        r = table1.run(method, 2, 0, data, out, "1")
        assert 0 < r["dev_f1"] <= 100 and 0 < r["test_f1"] <= 100, r
        assert ("em_iterations" in r) == (method in ("em", "pivot+em")), r
        saved = json.loads((out / "runs" / f"{method.replace('+', '_')}-m2-s0.json").read_text())
        assert saved == r
    assert sorted(p.name for p in out.iterdir()) == ["runs"]  # models and parses removed
