"""scripts/lm_table2.py: table 2 of Cohen & Collins (2014, section 8), run end to end
on a small planted corpus (the real run takes 9 minutes and is the README's table)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.support import SCRIPTS, load_script

SCRIPT = SCRIPTS / "lm_table2.py"
lm_table2 = load_script("lm_table2")


def test_reach_counts_iterations_from_the_pivot_start() -> None:
    reach = lm_table2.reach
    assert reach([130.0, 102.0, 101.0], 100.0) == 1  # within 2 %: at most 102
    assert reach([130.0, 102.5, 101.0], 100.0) == 2
    assert reach([101.0], 100.0) == 0
    assert reach([130.0, 110.0], 100.0) is None


def _corpus(rng: np.random.Generator, n: int) -> str:
    """Sentences of a two-state bigram model whose states own their next words."""
    own = [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]]
    lines = []
    for _ in range(n):
        state, words = int(rng.integers(2)), []
        for _ in range(int(rng.integers(3, 9))):
            word = own[state][int(rng.integers(4))]
            words.append(word)
            state = 1 - state if rng.random() < 0.7 else state
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_runs_and_reports_both_reach_counts(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    for name, n in (("train", 400), ("dev", 120), ("test", 60)):
        (tmp_path / f"{name}.txt").write_text(_corpus(rng, n))
    out = tmp_path / "out" / "t"
    res = _run(tmp_path, "--out", str(out), "--states", "2,4", "--seeds", "0,1")
    assert res.returncode == 0, res.stderr
    result = json.loads(out.with_suffix(".json").read_text())
    rows = {(r["method"], r["states"], r["seed"]): r for r in result["rows"]}
    assert len(rows) == 3 * 2 * 2
    table = out.with_suffix(".md").read_text()
    em_mean = {m: np.mean([rows[("em", m, s)]["dev1_best"] for s in (0, 1)]) for m in (2, 4)}
    for m in (2, 4):
        for seed in (0, 1):
            history = rows[("pivot+em", m, seed)]["dev1_history"]
            own = rows[("em", m, seed)]["dev1_best"]
            assert rows[("pivot+em", m, seed)]["reach_em_best"] == lm_table2.reach(history, own)
        expected = "/".join(
            str(lm_table2.reach(rows[("pivot+em", m, s)]["dev1_history"], em_mean[m]))
            for s in (0, 1)
        )
        assert f"m = {m}: {expected}" in table.split("Against the mean")[1].splitlines()[0]
    assert "| em | " in table and "| kn2 (interpolated, modified KN) | " in table


def test_corpus_sizes_train_each_method_on_the_first_fractions(tmp_path: Path) -> None:
    """--fractions: each fraction's own first sentences (their tokens counted), every
    method on each, seconds relative to the smallest fraction in the table."""
    rng = np.random.default_rng(1)
    for name, n in (("train", 300), ("dev", 80), ("test", 40)):
        (tmp_path / f"{name}.txt").write_text(_corpus(rng, n))
    out = tmp_path / "sizes"
    res = _run(tmp_path, "--out", str(out), "--states", "2", "--seeds", "0", "--fractions", "1,.25")
    assert res.returncode == 0, res.stderr
    result = json.loads(out.with_suffix(".json").read_text())
    train = (tmp_path / "train.txt").read_text().splitlines()
    assert [s["fraction"] for s in result["sizes"]] == [0.25, 1.0]
    assert [s["sentences"] for s in result["sizes"]] == [75, 300]
    assert result["sizes"][0]["tokens"] == sum(len(line.split()) for line in train[:75])
    assert result["sizes"][1]["tokens"] == sum(len(line.split()) for line in train)
    # Every word is seen often (the vocabulary is all of them): the distinct bigrams are
    # those of the words with the sentence boundaries.
    for size, lines in zip(result["sizes"], (train[:75], train), strict=True):
        pairs = {
            pair
            for line in lines
            for pair in zip(["<s>", *line.split()], [*line.split(), "</s>"], strict=True)
        }
        assert size["distinct_bigrams"] == len(pairs)
    cells = {(r["method"], r["fraction"]) for r in result["rows"]}
    assert cells == {(m, f) for m in ("em", "pivot", "pivot+em") for f in (0.25, 1.0)}
    assert all(r["seconds"] > 0 and r["dev2"] > 1 for r in result["rows"])
    table = out.with_suffix(".md").read_text()
    assert "| 0.25 of train | 1 of train |" in table and "(1.0x) |" in table
    # The pivot methods' time split: the pivot step, and one smoothing run's fit of r.
    for method in ("pivot", "pivot+em"):
        rows = [r for r in result["rows"] if r["method"] == method]
        assert all(0 < r["pivot_seconds"] < r["seconds"] for r in rows)
        runs = [run for r in rows if r["fraction"] == 1.0 for run in r["smoothing_runs"]]
        assert len(runs) == 3 and all(0 < run["r_seconds"] <= run["seconds"] for run in runs)
        its = [run["r_iterations"] for run in runs]
        mean = np.mean([run["r_seconds"] for run in runs])
        line = next(x for x in table.splitlines() if x.startswith(f"| {method}: one fit of r"))
        assert line.endswith(f"| {mean:.1f} s ({min(its)}-{max(its)}) |")
    ratio = next(x for x in table.splitlines() if x.startswith("| pivot seconds / EM seconds"))
    secs = {m: np.mean([r["seconds"] for r in result["rows"] if r["method"] == m
                        and r["fraction"] == 0.25]) for m in ("pivot", "em")}  # fmt: skip
    assert ratio.startswith(f"| pivot seconds / EM seconds | {secs['pivot'] / secs['em']:.1f} |")
    bad = _run(tmp_path, "--out", str(out), "--states", "2,4", "--fractions", "0.5")
    assert bad.returncode == 2 and "one value of m" in bad.stderr


def test_standin_prepares_and_scores_as_the_paper_does_for_nyt(tmp_path: Path) -> None:
    """--corpus standin: words seen fewer than 20 times in train are <unk> (Kneser-Ney
    alike), unknown words of dev and test are not predicted, dev's halves are dev1.txt
    and dev2.txt, and the paper's NYT column is beside ours."""
    rng = np.random.default_rng(2)
    text = {name: _corpus(rng, n) for name, n in (("train", 300), ("dev1", 50), ("dev2", 50),
                                                   ("test", 40))}  # fmt: skip
    text["train"] += "rare1 a1 rare2\nrare2 b1\n"  # seen 1 and 2 times: below 20
    text["dev2"] += "rare1 a1 unseen\n"
    for name, body in text.items():
        (tmp_path / f"{name}.txt").write_text(body)
    out = tmp_path / "s"
    res = _run(tmp_path, "--corpus", "standin", "--out", str(out), "--states", "2",
               "--seeds", "0")  # fmt: skip
    assert res.returncode == 0, res.stderr
    result = json.loads(out.with_suffix(".json").read_text())
    assert result["vocabulary"] == 3 + 8 and result["min_count"] == 20
    dev2 = [line.split() for line in text["dev2"].splitlines()]
    words = sum(map(len, dev2))
    assert result["scored"]["dev2"] == {"predictions": words + len(dev2) - 2, "oov": 2}
    table = out.with_suffix(".md").read_text()
    assert "(926) |" in table and "(271) |" in table and "(267) |" in table
    assert result["tokens"]["dev"] == words + sum(len(x.split()) for x in text["dev1"].split("\n"))
    brown = _run(tmp_path, "--out", str(tmp_path / "b"), "--states", "2", "--seeds", "0")
    assert brown.returncode == 0, brown.stderr
    scored = json.loads((tmp_path / "b.json").read_text())["scored"]["dev2"]
    assert scored == {"predictions": words + len(dev2), "oov": 2}


def test_lm_data_names_a_missing_nltk_corpus(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, str(SCRIPTS / "lm_data.py"), "--corpus", "standin",
         "--corpora", "no_such_corpus", "--out", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2
    assert res.stderr.startswith("lm_data: error: the NLTK corpus 'no_such_corpus'")
    assert not (tmp_path / "d").exists()
