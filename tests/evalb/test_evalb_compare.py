"""Paired significance of a strict-F1 difference (``evalb.compare``, ``evaluate --against``):
both tests checked against exact enumeration on small cases."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from lpcfg_cli.cli.group import main
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.evalb.compare import compare, compare_counts, fmeasures

# (matched, gold, test) per sentence for two parsers of the same gold trees
A = np.array([[5, 6, 6], [3, 4, 5], [7, 7, 7], [2, 5, 4], [4, 4, 5], [6, 8, 7]])
B = np.array([[4, 6, 6], [3, 4, 4], [5, 7, 8], [2, 5, 5], [3, 4, 4], [6, 8, 8]])


def _diff(ca: np.ndarray, cb: np.ndarray) -> float:
    return float(fmeasures(ca.sum(axis=0)) - fmeasures(cb.sum(axis=0)))


def test_randomization_p_value_matches_exact_enumeration() -> None:
    observed = abs(_diff(A, B))
    reached = 0
    for swap in itertools.product((0, 1), repeat=len(A)):
        s = np.array(swap)[:, None]
        reached += abs(_diff(np.where(s, B, A), np.where(s, A, B))) >= observed - 1e-9
    exact = reached / 2 ** len(A)
    c = compare_counts(A, B, samples=40_000, seed=1)
    assert c.difference == pytest.approx(_diff(A, B))
    assert c.p_value == pytest.approx(exact, abs=0.01)


def test_bootstrap_spread_matches_exact_enumeration() -> None:
    a, b = A[:4], B[:4]
    diffs = [_diff(a[list(i)], b[list(i)]) for i in itertools.product(range(4), repeat=4)]
    c = compare_counts(a, b, samples=40_000, seed=2)
    assert c.bootstrap_sd == pytest.approx(np.std(diffs), rel=0.03)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    assert c.interval[0] == pytest.approx(lo, abs=0.3) and c.interval[1] == pytest.approx(
        hi, abs=0.3
    )


def test_same_parses_differ_by_nothing() -> None:
    c = compare_counts(A, A, samples=200, seed=0)
    assert c.difference == 0 and c.interval == (0.0, 0.0) and c.bootstrap_sd == 0
    assert c.p_value == 1.0


GOLD = [
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))))))",
    "(TOP (S (NP (NNP John)) (VP (VBD saw) (NP (DT a) (NN dog)))))",
    "(TOP (S (NP (PRP It)) (VP (VBD rained))))",
]
GOOD = GOLD
WORSE = [
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (PP (IN on) (NP (DT the) (NN mat)))))",
    "(TOP (S (NP (NNP John)) (VP (VBD saw) (NP (DT a)) (NP (NN dog)))))",
    "(TOP (S (NP (PRP It)) (VP (VBD snowed))))",  # a word mismatch: an error sentence
]


def test_f_measures_are_the_strict_ones_of_evaluate() -> None:
    """Error sentences and gold lines with no test line count as the strict figures do."""
    good, worse = evaluate_lines(GOLD, GOOD), evaluate_lines(GOLD, WORSE[:2])
    c = compare(good, worse, samples=100, seed=0)
    assert c.fmeasure_a == pytest.approx(good.all.figures()["strict_fmeasure"])
    assert c.fmeasure_b == pytest.approx(worse.all.figures()["strict_fmeasure"])
    assert c.sentences == 3
    other = evaluate_lines(GOLD, WORSE)
    assert compare(good, other, samples=100, seed=0).fmeasure_b == pytest.approx(
        other.all.figures()["strict_fmeasure"]
    )
    with pytest.raises(ValueError, match="same gold"):
        compare(good, evaluate_lines(GOLD[:2], GOOD[:2]))


def _files(tmp_path, **texts: list[str]) -> dict[str, str]:
    out = {}
    for name, lines in texts.items():
        (tmp_path / name).write_text("".join(line + "\n" for line in lines))
        out[name] = str(tmp_path / name)
    return out


def test_evaluate_against_prints_and_reports_json(tmp_path) -> None:
    f = _files(tmp_path, gold=GOLD * 10, good=GOOD * 10, worse=WORSE * 10)
    run = CliRunner().invoke
    text = run(main, ["evaluate", f["gold"], f["good"], "--against", f["worse"], "--seed", "3"])
    assert text.exit_code == 0, text.output
    assert "-- Paired comparison of strict F-measures (30 sentences) --" in text.stdout
    assert "paired bootstrap (10000 samples, seed 3)" in text.stdout
    # the against file's error sentences are reported as its own
    assert "FILE: 3 : Words unmatch (rained|snowed)" in text.stderr
    res = run(main, ["evaluate", "--json", f["gold"], f["good"], "--against", f["worse"]])
    c = json.loads(res.stdout)["comparison"]
    assert c["against"] == f["worse"] and c["samples"] == 10_000 and c["seed"] == 0
    assert c["difference"] > 0 and c["interval"][0] > 0 and c["p_value"] < 0.01
    again = run(main, ["evaluate", "--json", f["gold"], f["good"], "--against", f["worse"]])
    assert json.loads(again.stdout)["comparison"] == c  # seeded
    plain = json.loads(run(main, ["evaluate", "--json", f["gold"], f["good"]]).stdout)
    assert "comparison" not in plain


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["G", "G", "--samples", "10"], "--samples and --seed need --against"),
        (["-", "G", "--against", "-"], "--against cannot be '-'"),
    ],
)
def test_evaluate_against_usage_errors(tmp_path, args, message) -> None:
    f = _files(tmp_path, gold=GOLD)
    args = [f["gold"] if a == "G" else a for a in args]
    res = CliRunner().invoke(main, ["evaluate", *args], input="")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith("lpcfg: error:") and message in res.stderr


def test_an_against_file_evalb_gives_up_on_is_an_error(tmp_path) -> None:
    bad = ["(TOP (S (NP (NN x)) (VP (VBD y))))"] * 12  # every sentence a word mismatch
    f = _files(tmp_path, gold=GOLD * 4, good=GOOD * 4, bad=bad)
    res = CliRunner().invoke(main, ["evaluate", f["gold"], f["good"], "--against", f["bad"]])
    assert res.exit_code == 2 and "Paired comparison" not in res.stdout
    assert res.stderr.splitlines()[-1].startswith(
        "lpcfg: error: evaluation of --against FILE stopped after more than 10 errors"
    )
