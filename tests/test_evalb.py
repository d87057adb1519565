"""`evaluate` against the original EVALB program's output on the reference vectors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lpcfg_cli.evalb import (
    COLLINS,
    NONE,
    convention_warning,
    evaluate_lines,
    format_report,
)

VECTORS = Path(__file__).resolve().parents[2] / "shared" / "evalb"
FOLDERS = sorted(p.name for p in VECTORS.iterdir() if p.is_dir()) if VECTORS.is_dir() else []
needs_vectors = pytest.mark.skipif(not FOLDERS, reason=f"EVALB vectors not found at {VECTORS}")


def lines(path: Path) -> list[str]:
    out = path.read_text().split("\n")
    return out[:-1] if out and out[-1] == "" else out


def run(*args: str, cwd: Path | None = None):
    return subprocess.run([sys.executable, "-m", "lpcfg_cli", *args], capture_output=True,
                          text=True, cwd=cwd)  # fmt: skip


@needs_vectors
def test_all_vectors_are_present():
    assert len(FOLDERS) >= 21


@needs_vectors
@pytest.mark.parametrize("name", FOLDERS)
def test_reproduces_evalb_exactly(name):
    d = VECTORS / name
    res = run("evaluate", "--per-sentence", "gold.mrg", "test.mrg", cwd=d)
    expected_err = (d / "evalb.err").read_text().splitlines()
    status = int(expected_err[-1].split(":")[1])
    expected_out = (d / "evalb.out").read_text()
    # Everything EVALB printed, byte for byte; our strict lines follow its summary.
    assert res.stdout[: len(expected_out)] == expected_out
    assert res.stdout[len(expected_out) :].startswith("\nStrict FMeasure") or status == 1
    messages = [line for line in res.stderr.splitlines() if not line.startswith("lpcfg:")]
    assert messages == expected_err[:-1]
    if status == 1:  # EVALB gave up: no summary, and we say so
        assert res.returncode == 2
        assert "stopped after more than 10 errors" in res.stderr.splitlines()[-1]
    else:
        assert res.returncode == 0


@needs_vectors
def test_summary_block_without_options_and_figure_count():
    d = VECTORS / "berkeley_test_sm6"
    res = run("evaluate", "gold.mrg", "test.mrg", cwd=d)
    expected = (d / "evalb.out").read_text()
    summary = expected[expected.index("=== Summary ===") :]
    assert res.stdout.startswith(summary)
    result = evaluate_lines(lines(d / "gold.mrg"), lines(d / "test.mrg"))
    assert round(result.all.figures()["fmeasure"], 2) == 83.65
    assert round(result.cut.figures()["fmeasure"], 2) == 84.18


@needs_vectors
def test_strict_counts_skipped_sentences_as_wrong():
    d = VECTORS / "empty_parse"
    result = evaluate_lines(lines(d / "gold.mrg"), lines(d / "test.mrg"))
    fig = result.all.figures()
    assert round(fig["fmeasure"], 2) == 71.43  # EVALB's flattering figure
    assert fig["strict_recall"] == pytest.approx(100 * 5 / 29)  # 4 skipped sentences' brackets
    assert fig["strict_precision"] == 100.0
    assert result.not_scored == 4
    res = run("evaluate", "--strict", "gold.mrg", "test.mrg", cwd=d)
    assert res.returncode == 1
    assert res.stderr.strip().endswith("4 of 6 sentences were skipped or errors (--strict)")
    assert (
        "Strict FMeasure (all; skipped and error sentences counted as wrong) =  29.41" in res.stdout
    )


@needs_vectors
def test_json_and_labels():
    d = VECTORS / "advp_prt"
    data = json.loads(run("evaluate", "--json", "gold.mrg", "test.mrg", cwd=d).stdout)
    assert set(data) >= {"all", "len<=40", "cutoff", "not_scored"}
    assert data["all"]["sentences"] == sum(1 for _ in lines(d / "gold.mrg"))
    table = run("evaluate", "--labels", "gold.mrg", "test.mrg", cwd=d).stdout
    assert "=== Labels ===" in table
    assert "\nADVP " in table and "\nPRT " not in table  # ADVP and PRT are one label


def test_root_convention_warning():
    gold = ["( (S (NP (NN a)) (VP (VB b))) )"]
    test = ["(TOP (S (NP (NN a)) (VP (VB b))))"]
    assert "empty outer bracket" in convention_warning(gold, test)
    assert convention_warning(test, test) is None
    result = evaluate_lines(gold, test)
    assert result.all.gold == 4 and result.all.test == 3  # the empty root bracket counts


def test_count_mismatch_and_bad_files(tmp_path):
    gold = tmp_path / "g.mrg"
    gold.write_text("(TOP (S (NN a) (VB b)))\n(TOP (S (NN c) (VB d)))\n")
    test = tmp_path / "t.mrg"
    test.write_text("(TOP (S (NN a) (VB b)))\n")
    res = run("evaluate", str(gold), str(test))
    assert res.returncode == 0
    assert "2 : Number of lines unmatch (too many lines in gold file)" in res.stderr
    assert "[R 50.00, P 100.00; 0 of 1 sentences" in res.stdout
    res = run("evaluate", str(gold), str(tmp_path / "missing"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("lpcfg: error:") and "no such file" in res.stderr
    test.write_bytes(b"(TOP (S (NN \xff)))\n")
    res = run("evaluate", str(gold), str(test))
    assert res.returncode == 2 and "invalid UTF-8" in res.stderr and "Traceback" not in res.stderr


def test_param_none_keeps_punctuation():
    gold = ["(TOP (S (NP (NN a)) (VP (VB b)) (. .)))"]
    test = ["(TOP (S (NP (NN a)) (VP (VB b) (. .))))"]
    assert evaluate_lines(gold, test, COLLINS).all.matched == 3
    assert evaluate_lines(gold, test, NONE).all.matched == 2


@needs_vectors
def test_test_split_against_itself_is_perfect():
    gold = lines(VECTORS / "berkeley_test_sm6" / "gold.mrg")
    result = evaluate_lines(gold, gold)
    assert result.all.figures()["fmeasure"] == 100.0
    assert format_report(result).count("100.00") >= 4
