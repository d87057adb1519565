"""`lpcfg evaluate` through the command line: EVALB's output byte for byte, options, errors.

CliRunner goes through the group's ``main()`` wrapper (one-line errors, exit status), so
most tests run in process; one runs the real ``lpcfg`` entry point in a subprocess.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lpcfg_cli.cli.group import main
from tests.support import FOLDERS, TREE, VECTORS, needs_vectors

STRICT = re.compile(
    r"\nStrict FMeasure \(all; skipped/error sentences counted as wrong\) = [ \d.]{6}  "
    r"\[\d+ of \d+ sentences not scored; R [\d.]+, P [\d.]+\]\n"
    r"Strict FMeasure \(len<=40; skipped/error sentences counted as wrong\) = [ \d.]{6}  "
    r"\[\d+ of \d+ sentences not scored; R [\d.]+, P [\d.]+\]\n"
)


def invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, ["evaluate", *args], input=stdin)


def write(path: Path, *trees: str) -> str:
    path.write_text("".join(t + "\n" for t in trees))
    return str(path)


@needs_vectors
@pytest.mark.parametrize("name", FOLDERS)
def test_reproduces_evalb_output_and_messages(name):
    d = VECTORS / name
    res = invoke("--per-sentence", str(d / "gold.mrg"), str(d / "test.mrg"))
    expected_out = (d / "evalb.out").read_text()
    *expected_err, status = (d / "evalb.err").read_text().splitlines()
    ours = res.stderr.splitlines()
    assert [line for line in ours if not line.startswith("lpcfg: ")] == expected_err
    if status == "exit status: 1":  # EVALB stopped: same partial output, then our error
        assert res.stdout == expected_out
        assert res.exit_code == 2
        assert ours[-1].startswith("lpcfg: error: evaluation stopped after more than 10")
    else:
        assert status == "exit status: 0"
        assert res.stdout.startswith(expected_out)
        assert STRICT.fullmatch(res.stdout[len(expected_out) :])
        assert res.exit_code == 0


@needs_vectors
def test_summary_block_without_options():
    d = VECTORS / "berkeley_test_sm6"
    res = invoke(str(d / "gold.mrg"), str(d / "test.mrg"))
    expected = (d / "evalb.out").read_text()
    summary = expected[expected.index("=== Summary ===") :]
    assert res.exit_code == 0 and res.stderr == ""
    assert res.stdout.startswith(summary) and STRICT.fullmatch(res.stdout[len(summary) :])


def test_strict_line_and_strict_exit_status(tmp_path):
    gold = write(tmp_path / "g", TREE, TREE, TREE)
    test = write(tmp_path / "t", TREE, "()", "(TOP (S (NN The) (NN cat)))")
    res = invoke(gold, test)
    assert res.exit_code == 0
    assert "Bracketing FMeasure       = 100.00" in res.stdout
    assert (
        "Strict FMeasure (all; skipped/error sentences counted as wrong) =  47.62  "
        "[2 of 3 sentences not scored; R 33.33, P 83.33]"
    ) in res.stdout
    assert res.stderr == "3 : Length unmatch (6|2)\n"
    res = invoke("--strict", gold, test)
    assert res.exit_code == 1
    assert res.stdout.startswith("=== Summary ===")  # the report is printed first
    assert res.stderr.splitlines()[-1] == (
        "lpcfg: error: 2 of 3 sentences skipped or in error (--strict)"
    )
    assert invoke("--strict", gold, gold).exit_code == 0


def test_json_output(tmp_path):
    gold = write(tmp_path / "g", TREE, TREE)
    test = write(tmp_path / "t", TREE, "")
    res = invoke("--json", "--cutoff", "5", gold, test)
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["cutoff"] == 5 and data["param"] == "collins" and data["not_scored"] == 1
    assert data["all"]["skip_sentences"] == 1 and data["all"]["fmeasure"] == 100.0
    assert data["all"]["strict_recall"] == 50.0 and data["all"]["strict_fmeasure"] > 66
    assert data["len<=5"]["sentences"] == 0  # both sentences have 7 words
    assert "sentences" not in data and "labels" not in data
    data = json.loads(invoke("--json", "--per-sentence", "--labels", gold, test).stdout)
    assert [s["status"] for s in data["sentences"]] == ["ok", "skip"]
    assert data["labels"]["NP"]["gold"] == 2


def test_labels_table(tmp_path):
    gold = write(tmp_path / "g", TREE)
    test = write(tmp_path / "t", TREE.replace("(PP (IN on)", "(PRT (IN on)"))
    res = invoke("--labels", gold, test)
    table = res.stdout.split("=== Labels (valid sentences) ===\n")[1].splitlines()
    assert table[0].split() == ["Label", "Gold", "Test", "Match", "Recall", "Prec.", "FMeasure"]
    rows = {row.split()[0]: row.split()[1:] for row in table[1:]}
    assert rows["NP"] == ["2", "2", "2", "100.00", "100.00", "100.00"]
    assert rows["PP"] == ["1", "0", "0", "0.00", "0.00", "0.00"]
    assert rows["ADVP"] == ["0", "1", "0", "0.00", "0.00", "0.00"]  # PRT is ADVP for EVALB


def test_root_convention_warning(tmp_path):
    gold = write(tmp_path / "g", "( (S (NP (NN a)) (VP (VB b))) )")
    test = write(tmp_path / "t", "(TOP (S (NP (NN a)) (VP (VB b))))")
    res = invoke(gold, test)
    assert res.exit_code == 0
    [warning] = res.stderr.splitlines()
    assert warning.startswith("lpcfg: warning: root conventions differ")
    assert "Bracketing Recall         =  75.00" in res.stdout
    assert invoke(test, write(tmp_path / "u", "(S (NP (NN a)) (VP (VB b)))")).stderr == ""


def test_count_and_word_mismatch_messages(tmp_path):
    gold = write(tmp_path / "g", TREE, TREE, TREE)
    test = write(tmp_path / "t", TREE, TREE.replace("sat", "sit"))
    res = invoke(gold, test)
    assert res.exit_code == 0
    assert res.stderr.splitlines() == [
        "2 : Words unmatch (sat|sit)",
        "3 : Number of lines unmatch (too many lines in gold file)",
    ]
    assert "[2 of 3 sentences not scored;" in res.stdout
    res = invoke("--strict", gold, test)
    assert res.exit_code == 1 and res.stderr.splitlines()[-1] == (
        "lpcfg: error: 2 of 3 sentences skipped or in error; 3 gold lines but 2 test lines"
        " (--strict)"
    )


def test_too_many_errors_stop_like_evalb(tmp_path):
    gold = write(tmp_path / "g", *["(S (NN a))"] * 12)
    test = write(tmp_path / "t", *["(S (NN b))"] * 12)
    out = tmp_path / "report"
    res = invoke("--per-sentence", "-o", str(out), gold, test)
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert len(res.stderr.splitlines()) == 13
    assert out.read_text().count("\n") == 3 + 11 and "Summary" not in out.read_text()
    res = invoke("--param", "none", gold, test)
    assert res.exit_code == 0 and "Number of Error sentence  =     12" in res.stdout


def test_param_none_keeps_punctuation(tmp_path):
    gold = write(tmp_path / "g", "(TOP (S (NP (NN a)) (VP (VB b)) (. .)))")
    test = write(tmp_path / "t", "(TOP (S (NP (NN a)) (VP (VB b) (. .))))")
    assert "Bracketing Recall         = 100.00" in invoke(gold, test).stdout
    assert "Bracketing Recall         =  66.67" in invoke("--param", "none", gold, test).stdout


def test_stdin_output_file_and_config(tmp_path):
    gold = write(tmp_path / "g", TREE)
    out = tmp_path / "report.json"
    config = tmp_path / "c.toml"
    config.write_text("[evaluate]\njson = true\ncutoff = 10\n")
    res = invoke("--config", str(config), "-o", str(out), gold, "-", stdin=TREE + "\n")
    assert res.exit_code == 0 and res.stdout == ""
    assert json.loads(out.read_text())["len<=10"]["fmeasure"] == 100.0


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        (b"(S (NN \xff))\n", "invalid UTF-8"),
        (b"(S (NN a))\n\x00\x01", "binary data"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path, content, message):
    gold = write(tmp_path / "g", TREE)
    test = tmp_path / "t"
    if content is not None:
        test.write_bytes(content)
    res = invoke(gold, str(test))
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"lpcfg: error: {test}")
    assert message in res.stderr


def test_both_stdin_is_a_usage_error():
    res = invoke("-", "-")
    assert res.exit_code == 2 and res.stderr.startswith("lpcfg: error: GOLD and TEST")


def test_real_entry_point_reports_one_line(tmp_path):
    gold = write(tmp_path / "g", TREE)
    res = subprocess.run(
        [sys.executable, "-m", "lpcfg_cli", "evaluate", gold, str(tmp_path / "missing")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == f"lpcfg: error: {tmp_path / 'missing'}: no such file\n"
