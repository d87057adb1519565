"""scripts/parse_settings.py on tiny models: each value of a swept option is a real parse,
scored, with the trees it changes; a decoder a model refuses is recorded as such; and the
parsing page's tables are drawn from the record."""

from __future__ import annotations

import json
import shutil

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, run, synthetic_treebank


@pytest.fixture
def settings(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import parse_settings

    return parse_settings


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A treebank PCFG and a 2-state EM model named as ptb_results.py keeps them; dev is
    the synthetic test set."""
    root = tmp_path_factory.mktemp("settings")
    data, models = root / "data", root / "models"
    data.mkdir()
    models.mkdir()
    train = synthetic_treebank(data, 120, 30)
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in train))
    shutil.copy(data / "test.txt", data / "dev.txt")
    shutil.copy(data / "test.mrg", data / "dev.mrg")
    for name, method in (
        ("standard", ["pcfg"]),
        ("em16", ["em", "--states", "2", "--iterations", "3"]),
    ):
        done = run("train", "--method", *method, data / "train.mrg", "-o",
                   models / f"{name}-s0.npz")  # fmt: skip
        assert done.returncode == 0, done.stderr
    return data, models


def test_every_value_is_parsed_and_scored_with_the_trees_it_changes(settings, models, tmp_path):
    data, folder = models
    sweep = settings.sweep("prune", folder, data, tmp_path, configs=["em16"])
    cells = sweep["configs"]["em16"]["dev"]
    assert len(cells) == len(sweep["values"]) and "test" not in sweep["configs"]["em16"]
    assert cells[0]["changed"] == 0
    for cell, value in zip(cells, sweep["values"], strict=True):
        assert 0 < cell["f1"] <= 100 and cell["seconds"] > 0
        kept = json.loads((tmp_path / "runs" / f"em16.dev.prune_{value}.json").read_text())
        parsed = (tmp_path / "parsed" / f"em16.dev.prune_{value}.parsed").read_text()
        assert kept["trees"] == parsed.splitlines() and len(kept["trees"]) == 30
    # resumed from the kept runs, not parsed again
    assert settings.sweep("prune", folder, data, tmp_path, configs=["em16"]) == sweep


def test_the_decoder_sweep_parses_test_too(settings, models, tmp_path):
    data, folder = models
    sweep = settings.sweep("decode", folder, data, tmp_path, configs=["standard", "em16"])
    for config in ("standard", "em16"):
        parts = sweep["configs"][config]
        assert len(parts["dev"]) == len(parts["test"]) == 5
        assert all("f1" in c for c in parts["dev"] + parts["test"])


def test_the_parsing_page_tables_come_from_the_record(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import doc_tables

    for option in ("prune", "coarse-beam", "outside-cut", "bracket-threshold", "product-prune",
                   "decode"):  # fmt: skip
        assert f"parse-{option}" in doc_tables.TABLES
    names = {n for page in doc_tables.marked().values() for n in page}
    assert {f"parse-{o}" for o in ("prune", "coarse-beam", "outside-cut", "decode")} <= names
