"""scripts/ptb_results.py: the README's results record, summarised over seeds."""

from __future__ import annotations

import pytest

from tests.support import SCRIPTS


@pytest.fixture
def ptb_results(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import ptb_results

    return ptb_results


def run(seed, dev, test, seconds, size=100):
    return {
        "config": "em16", "seed": seed, "train_seconds": seconds, "model_bytes": size,
        "dev_f1": dev, "test_f1": test, "dev_evalb_f1": dev, "test_evalb_f1": test + 0.1,
    }  # fmt: skip


def test_the_summary_keeps_each_seed_and_their_mean_sd_and_range(ptb_results):
    cell = ptb_results.summary([run(0, 86.0, 83.0, 60.0, 7), run(1, 87.0, 85.0, 90.0, 9)])
    assert cell["seeds"] == [0, 1] and cell["model_bytes"] == 7  # seed 0's file
    assert cell["test_f1"]["values"] == [83.0, 85.0]
    assert cell["test_f1"]["mean"] == pytest.approx(84.0)
    assert cell["test_f1"]["sd"] == pytest.approx(2**0.5)
    assert (cell["train_seconds"]["min"], cell["train_seconds"]["max"]) == (60.0, 90.0)
    assert ptb_results.summary([run(0, 86.0, 83.0, 60.0)])["dev_f1"]["sd"] == 0.0


def test_every_row_is_a_shipped_config_and_dev_is_passed_only_where_it_selects(ptb_results):
    for config in ptb_results.ROWS:
        assert (ptb_results.CONFIGS / f"{config}.toml").exists()
    assert "dev" not in ptb_results.train_options("standard")  # the PCFG refuses --dev
    assert "dev" in ptb_results.train_options("em16")
