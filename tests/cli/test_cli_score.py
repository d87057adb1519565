"""`lpcfg score` and `lpcfg train --input text` end to end (issue 17).

Runs are in process (CliRunner, through the command line's one-line error handling) on
tiny inputs written to a temporary folder.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from lpcfg_cli.engine.string_charts import StringScorer
from lpcfg_cli.grammar.indexed import single_symbol_grammar
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.parsing import parser as front
from tests.support import invoke

TREES = [
    "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))",
    "(S (NP (DT a) (NN dog)) (VP (VBD ran)))",
    "(S (NP (NNP Kim)) (VP (VBD saw) (NP (DT the) (NN dog))))",
]
TEXT = ["a b a", "b b", "a", "a a b b", "b a b a a", "a b"] * 5
SCORED = ["a b b a", "", "b", "a c", "a b a b a b a b a b a b a b a b a b a b a b a b a b"]


@pytest.fixture(scope="module")
def d(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("score")
    (d / "train.txt").write_text("\n".join(TEXT) + "\n\n")
    (d / "dev.txt").write_text("a b b\nb a\nc c\n")
    (d / "in.txt").write_text("\n".join(SCORED) + "\n")
    (d / "t.mrg").write_text("\n".join(TREES) + "\n")
    (d / "t.txt").write_text(
        "the cat sat\nthe dog sat on the mat\nKim saw a cat\n\nthe zebra ran\nKim ran\n"
    )
    train = ["train", "--method", "em", "--states", "2", "--iterations", "3"]
    res = invoke(
        *train, "--input", "text", "--dev", d / "dev.txt", d / "train.txt", "-o", d / "m.npz"
    )
    assert res.exit_code == 0, res.stderr
    assert invoke(*train, d / "t.mrg", "-o", d / "em.npz").exit_code == 0
    assert invoke("train", d / "t.mrg", "-o", d / "pcfg.npz").exit_code == 0
    return d


def test_train_from_text(d):
    model = LPCFG.load(d / "m.npz")
    assert model.grammar.symbols == ["X"] and sorted(model.grammar.words) == ["a", "b"]
    assert model.check_probabilistic() < 1e-6 and model.max_states == 2  # float32 file
    training = model.meta["training"]
    assert training["input"] == "text" and training["sentences"] == len(TEXT)
    assert training["distinct_sentences"] == 6 and training["empty_lines"] == 1
    assert training["rare_threshold"] == 0  # text keeps every word by default
    history = model.meta["history"]
    assert [h["iteration"] for h in history] == [1, 2, 3]
    assert all("dev_loglik" in h and "dev_f1" not in h for h in history)
    assert LPCFG.load(d / "em.npz").meta["training"]["input"] == "trees"
    res = invoke(
        "train", "--method", "em", "--input", "text", "--states", "2", "--iterations", "1",
        "--rare", "2", d / "train.txt", "-o", d / "rare.npz",
    )  # fmt: skip
    assert res.exit_code == 0
    assert res.stderr.startswith(
        f"lpcfg: {len(TEXT)} sentences (6 distinct), 85 words, vocabulary of 2, "
        "1 empty line skipped\n"
    )
    assert LPCFG.load(d / "rare.npz").meta["training"]["rare_threshold"] == 2
    again = ["--init", d / "m.npz", "--iterations", "1", d / "train.txt", "-o", d / "again.npz"]
    assert invoke("train", "--method", "em", "--input", "text", *again).exit_code == 0


@pytest.mark.parametrize("name", ["m.npz", "em.npz", "pcfg.npz"])
def test_score_matches_the_library(d, name):
    """Every model kind: text EM, treebank EM, treebank PCFG (unknown words included)."""
    text = d / ("in.txt" if name == "m.npz" else "t.txt")
    lines = text.read_text().splitlines()
    log_p, sign = StringScorer(LPCFG.load(d / name))([line.split() for line in lines])
    res = invoke("score", d / name, text)
    assert res.exit_code == 0, res.stderr
    want = [
        "%.17g" % (lp if s > 0 else (-math.inf if s == 0 else math.nan))
        for lp, s in zip(log_p, sign, strict=True)
    ]
    assert res.stdout.splitlines() == want
    assert "-inf" in want and np.isfinite(log_p).sum() >= 3
    probs = invoke("score", "--prob", d / name, text).stdout.splitlines()
    np.testing.assert_allclose([float(p) for p in probs], sign * np.exp(log_p), rtol=1e-15)
    objects = [json.loads(x) for x in invoke("score", "--json", d / name, text).stdout.splitlines()]
    assert [o["words"] for o in objects] == [len(line.split()) for line in lines]
    assert [o["prob_sign"] for o in objects] == sign.astype(int).tolist()
    assert [o["logprob"] for o in objects] == [
        lp if s else None for lp, s in zip(log_p, sign, strict=True)
    ]
    good = sign > 0
    words = sum(len(line.split()) for line, ok in zip(lines, good, strict=True) if ok)
    total = float(log_p[good].sum())
    assert res.stderr == (
        f"lpcfg: scored {len(lines)} sentences from {text} in "
        + res.stderr.split(" in ", 1)[1].split(" s:", 1)[0]
        + f" s: log-probability {total:.6g}, perplexity {math.exp(-total / words):.6g} per word "
        f"({words} words); {int((~good).sum())} with a value <= 0, left out of both\n"
    )
    assert invoke("score", "-q", d / name, text).stderr == ""


def test_score_streams_in_blocks(d, monkeypatch):
    whole = invoke("score", d / "m.npz", d / "in.txt").stdout
    monkeypatch.setattr(front, "SCORE_BLOCK", 2)
    assert invoke("score", d / "m.npz", d / "in.txt").stdout == whole
    monkeypatch.setattr(front, "SCORE_BLOCK", 1000)
    monkeypatch.setattr(front, "SPAN_BUDGET", 5)  # every sentence a block of its own
    assert invoke("score", d / "m.npz", d / "in.txt").stdout == whole
    assert invoke("score", d / "m.npz", stdin=(d / "in.txt").read_text()).stdout == whole


def test_negative_values_of_a_tensor_form_model(tmp_path):
    g = single_symbol_grammar(["a", "b"])
    coarse = PCFGParams(np.array([0.5]), np.array([0.25, 0.25]), np.array([1.0]))
    # g(a) = 1 * 1 = 1, g(b) = -1, g(a b) = 0.5 * 1 * -1 = -0.5
    model = LPCFG(g, [1], np.array([0.5]), np.array([1.0, -1.0]), np.ones(1), coarse, "tensor")
    model.save(tmp_path / "w.npz")
    (tmp_path / "x.txt").write_text("a\nb\na b\n\n")
    res = invoke("score", tmp_path / "w.npz", tmp_path / "x.txt")
    assert res.stdout.splitlines() == ["0", "nan", "nan", "-inf"]
    assert "3 with a value <= 0" in res.stderr
    prob = invoke("score", "--prob", tmp_path / "w.npz", tmp_path / "x.txt").stdout
    assert prob.splitlines() == ["1", "-1", "-0.5", "0"]
    objects = invoke("score", "--json", tmp_path / "w.npz", tmp_path / "x.txt").stdout
    assert [json.loads(x) for x in objects.splitlines()] == [
        {"logprob": 0.0, "prob_sign": 1, "words": 1},
        {"logprob": 0.0, "prob_sign": -1, "words": 1},
        {"logprob": math.log(0.5), "prob_sign": -1, "words": 2},
        {"logprob": None, "prob_sign": 0, "words": 0},
    ]


def test_score_errors_are_one_line_and_output_is_atomic(d, tmp_path, monkeypatch):
    out = tmp_path / "out.txt"
    out.write_text("precious\n")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"a b\nb a\n\xff a\n")
    monkeypatch.setattr(front, "SCORE_BLOCK", 1)  # the first lines are written first
    res = invoke("score", d / "m.npz", bad, "-o", out)
    assert (res.exit_code, res.stderr) == (2, f"lpcfg: error: {bad}:3: invalid UTF-8 (byte 0xff)\n")
    assert out.read_text() == "precious\n" and sorted(tmp_path.iterdir()) == [bad, out]
    assert invoke("score", d / "m.npz", d / "in.txt", "-o", out).exit_code == 0
    assert out.read_text() == invoke("score", d / "m.npz", d / "in.txt").stdout
    assert invoke("bundle", d / "pcfg.npz", d / "pcfg.npz", "-o", tmp_path / "b.npz").exit_code == 0
    for args, message in [
        ([tmp_path / "none.npz", d / "in.txt"], "no such model file"),
        (["-", "-"], "MODEL and INPUT cannot both be stdin"),
        (["--prob", "--json", d / "m.npz", d / "in.txt"], "--prob has no effect with --json"),
        (
            [tmp_path / "b.npz", d / "t.txt"],
            "an ensemble model (lpcfg bundle) gives no probability",
        ),
        ([d / "m.npz", d / "in.txt", "-o", tmp_path / "no" / "x"], "directory does not exist"),
        ([d / "m.npz", tmp_path / "none.txt"], "no such file"),
    ]:
        res = invoke("score", *args)
        assert res.exit_code == 2 and message in res.stderr, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("lpcfg: error: ")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--method", "spectral"],
            "--method spectral learns from trees: --input text needs --method em",
        ),
        (["--method", "pivot+em"], "--method pivot+em learns from trees"),
        (["--method", "em", "--ensemble", "2"], "--ensemble learns from trees only"),
        (["--method", "em", "--vertical", "2"], "--vertical has no effect with --input text"),
        (["--method", "em", "--factor", "left"], "--factor has no effect with --input text"),
        (["--method", "em", "--skip-bad"], "--skip-bad has no effect with --input text"),
        (["--method", "em", "--noise", "0.5"], "--noise has no effect with --input text"),
        (["--method", "em", "--dev-f1-every", "2"], "--dev-f1-every has no effect with --input"),
        (["--method", "em", "--init", "{d}/em.npz"], "em.npz: --init with --input text needs a"),
    ],
)
def test_text_input_refuses_what_it_cannot_use(d, tmp_path, options, message):
    options = [o.replace("{d}", str(d)) for o in options]
    res = invoke("train", "--input", "text", *options, d / "train.txt", "-o", tmp_path / "x.npz")
    assert res.exit_code == 2 and message in res.stderr, res.stderr
    assert res.stderr.startswith("lpcfg: error: ") and res.stderr.count("\n") == 1
    assert not (tmp_path / "x.npz").exists()
