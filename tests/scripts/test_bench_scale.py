"""scripts/bench_scale.py on a tiny planted case: the sampled training set has the size and
length bound asked for, and each learner's row holds its real figures."""

from __future__ import annotations

import json

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, synthetic_treebank


@pytest.fixture
def scale(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_scale

    return bench_scale


def test_words_counts_the_leaves_of_a_one_line_tree(scale):
    assert scale._words("(TOP (S (NP (DT the) (NN dog)) (VP (VBZ barks)) (. .)))") == 4
    assert scale._words("(X (Y a))") == 1


def test_every_learner_row_is_measured_on_a_sampled_treebank(scale, tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    trees = synthetic_treebank(data, 140, 25)
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[:110]))
    (data / "dev.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[110:]))
    train = scale.training_set(data, out, 300, 8, seed=1)
    lines = train.read_text().splitlines()
    assert len(lines) == 300 and max(map(scale._words, lines)) <= 8
    assert train == scale.training_set(data, out, 300, 8, seed=1)  # reused, not redrawn
    for learner in ("pcfg", "em"):
        row = scale.bench(learner, train, data, out, "1", None)
        model = out / f"{learner}.npz"
        assert row["model_mb"] == model.stat().st_size / 1e6
        assert row["train_seconds"] > 0 and row["train_peak_mb"] > 20
        assert 0 < row["strict_f1"] <= 100 and row["parse_peak_mb"] > 20
        if learner == "em":
            steps = [json.loads(x) for x in (out / "em.jsonl").read_text().splitlines()]
            assert row["steps"] == len(steps) > 0
            assert row["seconds_per_step"] in [s["seconds"] for s in steps]
        else:
            assert row["steps"] == 0
    assert "| em (`em16.toml`)" in scale.markdown([row])
