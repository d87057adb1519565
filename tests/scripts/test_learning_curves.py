"""scripts/learning_curves.py trains a shipped config with a log and dev F1 after every
step, and keeps only the log (its models are not wanted)."""

from __future__ import annotations

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, synthetic_treebank


@pytest.fixture
def lc(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import learning_curves

    return learning_curves


@pytest.mark.parametrize(("config", "step"), [("em16", "iteration"), ("splitmerge", "cycle")])
def test_every_step_is_logged_with_its_dev_f1(lc, tmp_path, config, step):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    out.mkdir()
    trees = synthetic_treebank(data, 120, 10)
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[:100]))
    (data / "dev.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[100:]))
    records = lc.read_log(lc.train(config, data, out, "1"))
    assert [r[step] for r in records] == list(range(1, len(records) + 1))
    assert len(records) >= 2 and all(r["dev_f1"] is not None for r in records)  # every step
    assert sorted(p.name for p in out.iterdir()) == [f"{config}.jsonl"]
