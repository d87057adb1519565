"""scripts/plots.py, the scripts' one plotting module, and each script's figure drawn from a
planted result: a PNG and the JSON of exactly the numbers plotted."""

from __future__ import annotations

import json
import math
import os

import pytest

from tests.support import SCRIPTS

if os.environ.get("CI") != "true":  # CI installs the plots extra: there it must be present
    pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))


def spec(png):
    assert png.read_bytes().startswith(PNG_MAGIC)
    return json.loads(png.with_suffix(".json").read_text())


def test_draw_writes_the_png_and_the_numbers_drawn(scripts, tmp_path):
    from plots import Panel, Series, draw, level_line, slope_line

    panel = Panel("t", "x", "y", [Series("a", [1, 2, 3], [1.0, math.nan, 3.0])], logx=True)
    panel.series.append(slope_line("1/sqrt(M)", [100, 10_000], 0.5, -0.5))
    panel.series.append(level_line("KN", [2, 8, 4], 7.0))
    png = draw(tmp_path / "sub" / "fig.anything", [panel], "title")
    assert png == tmp_path / "sub" / "fig.png"
    got = spec(png)
    assert got["title"] == "title" and got["panels"][0]["logx"] is True
    a, slope, kn = got["panels"][0]["series"]
    assert a["y"] == [1.0, None, 3.0]  # not finite: null in JSON, left out of the line
    assert slope["y"] == pytest.approx([0.5, 0.05])  # 100x the trees, a tenth the error
    assert (kn["x"], kn["y"]) == ([2.0, 8.0], [7.0, 7.0])


def test_plots_redraws_a_png_from_its_json(scripts, tmp_path):
    from plots import Panel, Series, draw, main

    png = draw(tmp_path / "f", [Panel("t", "x", "y", [Series("a", [1, 2], [3, 4], [0.1, 0.2])])])
    png.unlink()
    assert main([str(png.with_suffix(".json"))]) == 0
    assert png.read_bytes().startswith(PNG_MAGIC)


def test_learning_curves_mark_the_step_each_run_keeps(scripts, tmp_path):
    from learning_curves import curves
    from plots import draw

    logs = {
        "em16": [{"method": "em", "iteration": i, "train_loglik": -10.0 / i,
                  "dev_f1": f} for i, f in enumerate([80.0, 84.0, 83.0], 1)],
        "splitmerge": [{"method": "splitmerge", "cycle": c, "train_loglik": -5.0 + c,
                        "dev_f1": f} for c, f in enumerate([81.0, 85.0], 1)],
    }  # fmt: skip
    f1, ll = spec(draw(tmp_path / "lc", curves(logs)))["panels"]
    lines = {s["label"]: s for s in f1["series"]}
    assert lines["em16 (per iteration)"]["y"] == [80.0, 84.0, 83.0]
    assert lines["splitmerge (per cycle)"]["x"] == [1, 2]
    kept = [s for s in f1["series"] if s["style"] == "k*"]
    assert [(s["x"], s["y"]) for s in kept] == [([2], [84.0]), ([2], [85.0])]
    assert [s["label"] for s in kept] == ["kept (best dev F1)", "_kept"]  # one legend entry
    assert ll["series"][1]["y"] == [-4.0, -3.0]


def test_consistency_plot_has_each_learner_and_the_slope(scripts, tmp_path):
    from bench_consistency import plot

    rows = [("spectral", 1000, 0.4, None, 1.0), ("spectral", 100_000, 0.04, None, 9.0),
            ("pivot", 1000, 0.5, 0.2, 1.0), ("pivot", 100_000, 0.05, 0.02, 8.0)]  # fmt: skip
    held, param = spec(plot(tmp_path / "c", rows))["panels"]
    assert [s["label"] for s in held["series"]] == ["spectral", "pivot", "1/sqrt(M)"]
    assert held["series"][2]["y"] == pytest.approx([0.4, 0.04])
    assert param["series"][0]["y"] == [0.2, 0.02]
    assert param["series"][1]["y"] == pytest.approx([0.2, 0.02])
    assert held["logx"] and held["logy"]


def test_consistency_plot_draws_exact_moments_as_levels(scripts, tmp_path):
    from bench_consistency import plot

    rows = [("spectral", 1000, 0.4, None, 1.0), ("spectral", 100_000, 0.04, None, 9.0),
            ("spectral", None, 1e-14, None, 0.1), ("pivot", 1000, 0.5, 0.2, 1.0),
            ("pivot", 100_000, 0.05, 0.02, 8.0), ("pivot", None, 0.03, 0.01, 0.2)]  # fmt: skip
    variants = [("pivot, cca_ridge 0", None, 0.03, 0.01, 0.2)]
    drawn = spec(plot(tmp_path / "c", rows, variants))
    held, param = drawn["panels"]
    got = {s["label"]: (s["x"], s["y"], s["style"]) for s in held["series"]}
    assert got["spectral"] == ([1000, 100_000], [0.4, 0.04], "C0o-")
    assert got["spectral, exact moments"] == ([1000, 100_000], [1e-14, 1e-14], "C0--")
    assert got["pivot, exact moments"][1:] == ([0.03, 0.03], "C1--")
    assert [s["label"] for s in param["series"]] == ["pivot", "1/sqrt(M)", "pivot, exact moments"]
    assert param["series"][2]["y"] == [0.01, 0.01]
    table = drawn["data"]["rows"]
    assert len(table) == 7 and table[-1]["learner"] == "pivot, cca_ridge 0"
    assert table[2]["trees"] is None and drawn["data"]["target"] == "finite"


def test_wcfg_plot_draws_the_geometric_means(scripts, tmp_path):
    from wcfg_random import plot

    result = {"targets": 3, "states": 2, "symbols": 2, "kl_length": 10, "sizes": [100, 1000],
              "kl_geometric_mean": {"supervised EM": {"100": 0.1},
                                    "supervised spectral": {"100": 0.3, "1000": 0.03}}}  # fmt: skip
    (panel,) = spec(plot(tmp_path / "w", result))["panels"]
    got = {s["label"]: (s["x"], s["y"]) for s in panel["series"]}
    assert got["supervised EM"] == ([100], [0.1])
    assert got["supervised spectral"] == ([100, 1000], [0.3, 0.03])


def test_brown_plot_averages_seeds_beside_the_paper(scripts, tmp_path):
    from lm_table2 import PAPER_TABLES, plot

    rows = [{"method": m, "states": s, "seed": seed, "dev2": 100.0 * s + seed}
            for m in ("em", "pivot", "pivot+em") for s in (2, 4) for seed in (0, 1)]  # fmt: skip
    result = {"rows": rows, "baselines": {"kn2": {"dev2": 400.0}, "kn3": {"dev2": 380.0}}}
    ours, paper = spec(plot(tmp_path / "b", result, [2, 4]))["panels"]
    em = ours["series"][0]
    assert em["y"] == [200.5, 400.5] and em["yerr"] == pytest.approx([0.5**0.5] * 2)
    assert ours["series"][-1]["y"] == [380.0, 380.0]
    assert paper["series"][0]["y"] == PAPER_TABLES["brown"]["em"][0]
    result["corpus"] = "standin"
    _, nyt = spec(plot(tmp_path / "s", result, [2, 4]))["panels"]
    assert nyt["title"].endswith("NYT") and nyt["series"][0]["y"][0] == 926


def test_table1_plot_has_ours_and_the_paper(scripts, tmp_path):
    import table1

    table = {"em": {8: {"dev_f1": (80.0, 1.0), "test_f1": (79.0, 0.5), "seeds": [0, 1]},
                    16: {"dev_f1": (82.0, 0.0), "test_f1": (81.0, 0.0), "seeds": [0]}}}  # fmt: skip
    dev, test = spec(table1.plot(tmp_path / "t", table, [8, 16]))["panels"]
    assert dev["title"].endswith("over seeds 0, 1)")
    assert dev["series"][0]["y"] == [80.0, 82.0] and dev["series"][0]["yerr"] == [1.0, 0.0]
    assert dev["series"][1]["y"] == table1.PAPER["em"]["dev"]
    assert test["series"][0]["y"] == [79.0, 81.0]
