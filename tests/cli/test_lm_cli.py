"""`lpcfg lm` and language model files: train -> perplexity round trips, the `-` and `-o`
conventions, options refused for methods that cannot use them, and bad input as one
`lpcfg: error:` line with exit status 2 (everything written in tmp_path)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from lpcfg_cli.cli.group import main
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.archive import write_npz
from lpcfg_cli.learners.registry import LM_METHODS as METHODS
from lpcfg_cli.lm.corpus import Vocabulary
from lpcfg_cli.lm.kneserney import KNOptions, estimate
from lpcfg_cli.lm.lm_file import MODEL_CLASSES, load_lm, load_model, save_lm, save_model
from lpcfg_cli.lm.perplexity import perplexity
from tests.support import one_error

TRAIN = "the cat sat\nthe dog sat down\na cat ran\n\nthe cat ran down\na dog\n"
TEST = "the cat sat down\nthe bird flew\n"


def invoke(*args, stdin: str | bytes | None = None):
    return CliRunner().invoke(main, ["lm", *map(str, args)], input=stdin)


def sentences(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.split()]


@pytest.fixture
def d(tmp_path):
    (tmp_path / "train.txt").write_text(TRAIN)
    (tmp_path / "test.txt").write_text(TEST)
    return tmp_path


@pytest.mark.parametrize("method", ["kn2", "kn3"])
def test_train_then_perplexity_json_equals_the_library(d, method):
    res = invoke("train", "--method", method, d / "train.txt", "-o", d / "m.npz")
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    assert res.stderr.splitlines()[0] == "lpcfg: 5 sentences, 16 tokens"
    assert res.stderr.splitlines()[-1].startswith(f"lpcfg: wrote {d / 'm.npz'} ({method}, ")
    res = invoke("perplexity", d / "m.npz", d / "test.txt", "--json")
    assert res.exit_code == 0, res.stderr
    got = json.loads(res.stdout)
    want = perplexity(estimate(sentences(TRAIN), KNOptions(order=int(method[2]))), sentences(TEST))
    assert got == {"perplexity": pytest.approx(want.perplexity, rel=1e-12), "tokens": 9, "oov": 2}
    human = invoke("perplexity", d / "m.npz", d / "test.txt")
    assert human.stdout == (
        f"perplexity {want.perplexity:.2f} on 9 tokens (2 out of vocabulary, scored as <unk>)\n"
    )


def test_skip_unknown_leaves_unknown_words_out_of_the_perplexity(d):
    """--skip-unknown: "bird" and "flew" are not predicted (tokens 9 - 2), as the paper's
    NYT figures and SRILM count; the figure equals the library's on the skipped events."""
    assert invoke("train", "--method", "kn2", d / "train.txt", "-o", d / "m.npz").exit_code == 0
    res = invoke("perplexity", "--skip-unknown", "--json", d / "m.npz", d / "test.txt")
    assert res.exit_code == 0, res.stderr
    model = load_model(d / "m.npz")
    want = perplexity(model, model.vocab.events(sentences(TEST), 2, skip_unknown=True))
    got = json.loads(res.stdout)
    assert got == {"perplexity": pytest.approx(want.perplexity, rel=1e-12), "tokens": 7, "oov": 2}
    scored = json.loads(invoke("perplexity", "--json", d / "m.npz", d / "test.txt").stdout)
    assert scored["tokens"] == 9 and scored["perplexity"] != got["perplexity"]
    human = invoke("perplexity", "--skip-unknown", d / "m.npz", d / "test.txt").stdout
    assert human.endswith("on 7 tokens (2 out of vocabulary, left out)\n")


def test_aggregate_training_reports_its_iterations_as_train_does(d):
    """`lm train`'s progress lines are worded as `lpcfg train`'s EM lines (`iteration   1,
    train loglik ..., dev ..., 0.0 s`), with one line per pivot smoothing run; they were
    raw record dumps (`train_loglik_before -2.511e+05, seconds 0.001918`)."""
    args = ["--states", "2", "--iterations", "3", "--dev", d / "test.txt", d / "train.txt"]
    res = invoke("train", "--method", "pivot+em", *args, "--smoothing", "0.3", "-o", d / "m.npz")
    assert res.exit_code == 0, res.stderr
    lines = res.stderr.splitlines()
    number, seconds = r"-?\d+\.\d", r"\d+\.\d s"
    its = [x for x in lines if x.startswith("lpcfg: iteration")]
    assert len(its) >= 1
    for line in its:
        assert re.fullmatch(
            rf"lpcfg: iteration +\d+, train loglik {number}, dev perplexity {number}, {seconds}",
            line,
        ), line
    runs = [x for x in lines if x.startswith("lpcfg: smoothing")]
    assert len(runs) == 1 and re.fullmatch(
        rf"lpcfg: smoothing 0.3: r fitted in \d+ iterations, \d+ EM iterations kept, "
        rf"dev perplexity {number}, {seconds}",
        runs[0],
    ), runs


def test_dashes_are_stdin_and_stdout_and_quiet_is_silent(d):
    res = CliRunner().invoke(
        main, ["lm", "train", "-", "-o", "-", "--method", "kn3", "-q"], input=TRAIN
    )
    assert (res.exit_code, res.stderr) == (0, "")
    model = res.stdout_bytes
    res = invoke("perplexity", "-", d / "test.txt", "--json", "-q", stdin=model)
    assert (res.exit_code, res.stderr) == (0, "")
    (d / "m.npz").write_bytes(model)
    res2 = invoke("perplexity", d / "m.npz", "-", "--json", stdin=TEST)
    assert json.loads(res2.stdout) == json.loads(res.stdout)
    assert invoke("-q", "perplexity", d / "m.npz", d / "test.txt").stderr == ""


def test_perplexity_writes_its_line_to_o_file_and_refuses_an_input_as_output(d):
    assert invoke("train", "--method", "kn2", d / "train.txt", "-o", d / "m.npz").exit_code == 0
    res = invoke("perplexity", d / "m.npz", d / "test.txt", "--json", "-o", d / "p.json")
    assert (res.exit_code, res.stdout) == (0, "")
    stdout = invoke("perplexity", d / "m.npz", d / "test.txt", "--json").stdout
    assert (d / "p.json").read_text() == stdout
    res = invoke("perplexity", d / "m.npz", d / "test.txt", "-o", d / "m.npz")
    assert res.exit_code == 2 and "is also an input of this run" in res.stderr
    assert invoke("perplexity", d / "m.npz", d / "test.txt").exit_code == 0  # model intact


def test_lm_alone_prints_its_help():
    res = invoke()
    assert res.exit_code == 0 and res.stdout.startswith("Usage: lpcfg lm [OPTIONS]")
    assert "perplexity" in res.stdout and "train" in res.stdout


def test_the_same_model_gives_the_same_bytes(tmp_path):
    model = estimate(sentences(TRAIN), KNOptions(order=3))
    save_model(tmp_path / "a.npz", model)
    save_model(tmp_path / "b.npz", model)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    again = load_model(tmp_path / "a.npz")
    assert again.vocab == model.vocab and again.method == "kn3"
    ev = model.vocab.events(sentences(TEST), 3)
    np.testing.assert_array_equal(
        again.log_probs(ev.context, ev.next), model.log_probs(ev.context, ev.next)
    )


def test_save_lm_and_load_lm_keep_any_arrays_and_meta(tmp_path):
    vocab = Vocabulary.build(sentences(TRAIN))
    arrays = {"r": np.arange(6.0).reshape(2, 3), "flags": np.array([True, False])}
    meta = {"options": {"states": 2}, "history": [1.5, 2.5], "name": "é"}
    save_lm(tmp_path / "x.npz", "em", vocab, arrays, meta)
    method, vocab2, arrays2, meta2 = load_lm(tmp_path / "x.npz")
    assert (method, vocab2, meta2) == ("em", vocab, meta)
    assert set(arrays2) == {"r", "flags"}
    np.testing.assert_array_equal(arrays2["r"], arrays["r"])
    with pytest.raises(ValueError):
        save_lm(tmp_path / "y.npz", "em", vocab, {"meta_json": np.zeros(1)}, {})
    with pytest.raises(ValueError):
        save_lm(tmp_path / "y.npz", "em", vocab, {"s": np.array(["a"])}, {})
    assert not (tmp_path / "y.npz").exists()


def test_every_registered_method_has_a_model_class():
    assert set(METHODS) <= set(MODEL_CLASSES)


def test_options_a_method_cannot_use_are_refused(d):
    train = [d / "train.txt", "-o", d / "m.npz"]
    for args, message in [
        (["--states", "4"], "--states has no effect with --method kn2"),
        (["--method", "kn3", "--iterations", "3"], "--iterations has no effect with --method kn3"),
        (["--seed", "1"], "--seed has no effect with --method kn2"),
        (["--dev", d / "test.txt"], "--dev has no effect with --method kn2"),
        (["--discount", "0.5", "--no-modified"], "--modified has no effect with --discount"),
        (["--discount", "0"], "discount must be greater than 0"),
        (["--discount", "2"], "not in the range 0.0<=x<=1.0"),
        (["--method", "kn5"], "'kn5' is not one of"),
    ]:
        one_error(invoke("train", *args, *train), message)
    assert not (d / "m.npz").exists()
    res = invoke("train", "--discount", "0.5", "--rare", "0", *train)
    assert res.exit_code == 0, res.stderr


def test_bad_input_is_one_error_line(d):
    (d / "empty.txt").write_text("\n \n")
    (d / "bad.txt").write_bytes(b"fine\n\xff\n")
    (d / "m.npz").write_bytes(b"")
    model = d / "kn.npz"
    assert invoke("train", d / "train.txt", "-o", model).exit_code == 0
    for args, message in [
        (["train", d / "missing.txt", "-o", d / "o.npz"], "missing.txt: no such file"),
        (["train", d / "empty.txt", "-o", d / "o.npz"], "no sentences in the training text"),
        (["train", d / "bad.txt", "-o", d / "o.npz"], "bad.txt:2: invalid UTF-8"),
        (["train", d / "train.txt", "-o", d / "train.txt"], "also an input of this run"),
        (["train", d / "train.txt", "-o", d / "nofolder" / "o.npz"], "directory does not exist"),
        (["perplexity", model, d / "missing.txt"], "missing.txt: no such file"),
        (["perplexity", model, d / "empty.txt"], "no sentences in the text"),
        (["perplexity", d / "train.txt", d / "test.txt"], "not an lpcfg model file"),
        (["perplexity", d / "m.npz", d / "test.txt"], "empty file, not an lpcfg model file"),
        (["perplexity", d / "nope.npz", d / "test.txt"], "no such model file"),
        (["perplexity", "-", "-"], "MODEL and TEXT cannot both be '-'"),
    ]:
        one_error(invoke(*args), message)
    assert sorted(p.name for p in d.iterdir()) == [
        "bad.txt",
        "empty.txt",
        "kn.npz",
        "m.npz",
        "test.txt",
        "train.txt",
    ]


def raw_file(path, header: dict, arrays: dict | None = None) -> None:
    """An .npz archive with the given metadata header and arrays."""
    entries = {"meta_json": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
    with open(path, "wb") as fh:
        write_npz(fh, {**entries, **(arrays or {})})


def test_foreign_and_corrupt_model_files_are_one_error(d):
    vocab = {"words": ["<s>", "</s>", "<unk>", "a"], "min_count": 2}
    good = {"format": "lpcfg-lm", "format_version": 1, "method": "kn2", "vocabulary": vocab}
    good["meta"] = {"order": 2, "radix": 4}
    cases = [
        (
            {"format": "lpcfg-model", "format_version": 1},
            "a parsing model (made by `lpcfg train`), not a language model: use it with "
            "`lpcfg parse`",
        ),
        ({"format": "something"}, "not an lpcfg model file (a language model expected)"),
        ({**good, "format_version": 7}, "format version 7, written by a newer lpcfg"),
        ({**good, "format_version": "1"}, "format version '1'"),
        ({**good, "method": "zz"}, "unknown method 'zz'"),
        ({**good, "vocabulary": {**vocab, "words": ["a"]}}, "a vocabulary starts with"),
        ({**good, "vocabulary": {**vocab, "min_count": 0}}, "min_count 0"),
        ({**good, "meta": []}, "corrupt language model metadata"),
        (good, "corrupt language model: missing arrays"),
        ({**good, "method": "kn3"}, "corrupt language model: a kn2 model filed as kn3"),
    ]
    arrays = {
        "discounts": np.zeros((2, 3)),
        "keys1": np.array([1, 3]),
        "counts1": np.array([2, 2]),
        "keys2": np.array([3, 13]),
        "counts2": np.array([2, 1]),
    }
    for i, (header, message) in enumerate(cases):
        path = d / f"f{i}.npz"
        with_arrays = header.get("method") == "kn3"
        raw_file(path, header, arrays if with_arrays else None)
        with pytest.raises(LpcfgError, match=re.escape(message)):
            load_model(path)
        one_error(invoke("perplexity", path, d / "test.txt"), message)
    raw_file(d / "ok.npz", good, arrays)
    assert load_model(d / "ok.npz").method == "kn2"
    np.save(d / "one.npy", np.zeros(3))
    one_error(invoke("perplexity", d / "one.npy", d / "test.txt"), "a single numpy array")
    (d / "trunc.npz").write_bytes((d / "ok.npz").read_bytes()[:100])
    one_error(invoke("perplexity", d / "trunc.npz", d / "test.txt"), "truncated or corrupt")


SCORED = "the cat sat\n\nthe bird sat down\na dog\n\n"  # blank lines, an OOV word ("bird")


def _brute_log_prob(model, words: list[str]) -> float:
    """log p(words, </s>) of an aggregate model from its tables, token by token."""
    ids = [model.vocab.id(w) for w in words] + [Vocabulary.EOS_ID]
    previous, total = Vocabulary.BOS_ID, 0.0
    for nxt in ids:
        total += float(np.log(model.r[previous] @ model.s_t[nxt]))
        previous = nxt
    return total


@pytest.fixture
def aggregate(d):
    model = d / "em.npz"
    (d / "train2.txt").write_text(TRAIN + "a fish swam\n")  # words seen once: <unk>
    args = ["--method", "em", "--states", "2", "--iterations", "5", "-q"]
    assert invoke("train", *args, d / "train2.txt", "-o", model).exit_code == 0
    return model


def test_score_gives_each_line_its_log_probability(d, aggregate):
    """One value per input line (blank lines are the empty sentence), each equal to the
    model's tables multiplied out token by token; summed over the non-blank lines with
    their tokens they give `lm perplexity`'s figure."""
    (d / "s.txt").write_text(SCORED)
    res = invoke("score", aggregate, d / "s.txt")
    assert res.exit_code == 0, res.stderr
    assert res.stderr == "lpcfg: scored 5 sentences in 0.0 s\n"
    values = [float(x) for x in res.stdout.splitlines()]
    lines = SCORED.splitlines()
    assert len(values) == len(lines) == 5
    model = load_model(aggregate)
    for line, value in zip(lines, values, strict=True):
        assert value == pytest.approx(_brute_log_prob(model, line.split()), rel=1e-12), line
    res = invoke("score", "--json", aggregate, d / "s.txt")
    as_json = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["tokens"] for x in as_json] == [4, 1, 5, 3, 1]
    assert [x["oov"] for x in as_json] == [0, 0, 1, 0, 0]
    assert [x["logprob"] for x in as_json] == pytest.approx(values, rel=1e-15)
    words = [(v, len(line.split()) + 1) for line, v in zip(lines, values, strict=True) if line]
    whole = json.loads(invoke("perplexity", "--json", aggregate, d / "s.txt").stdout)
    assert whole["tokens"] == sum(n for _, n in words)
    assert whole["perplexity"] == pytest.approx(
        np.exp(-sum(v for v, _ in words) / whole["tokens"]), rel=1e-12
    )


def test_score_streams_in_blocks_and_keeps_the_conventions(d, aggregate, monkeypatch):
    """Blocks of any size give the same lines; stdin, -o (atomic, never an input), a zero
    probability as -inf (null in JSON), and both arguments '-' refused."""
    import lpcfg_cli.cli.lm_command as lm_command

    text = SCORED * 3
    whole = invoke("score", aggregate, "-", stdin=text)
    monkeypatch.setattr(lm_command, "SCORE_BLOCK", 2)
    assert invoke("score", aggregate, "-", stdin=text).stdout == whole.stdout
    assert len(whole.stdout.splitlines()) == 15
    out = d / "values.txt"
    assert invoke("score", aggregate, "-", "-o", out, stdin=text).exit_code == 0
    assert out.read_text() == whole.stdout
    res = invoke("score", aggregate, "-", "-o", aggregate, stdin=text)
    assert res.exit_code == 2 and "is also an input of this run" in res.stderr
    res = invoke("score", "-", "-", stdin=text)
    assert res.exit_code == 2 and "cannot both be '-'" in res.stderr
    model = load_model(aggregate)
    model.s_t[model.vocab.id("dog")] = 0.0  # "dog" can no longer be predicted
    save_model(d / "zero.npz", model)
    assert invoke("score", d / "zero.npz", "-", stdin="a dog\na cat\n").stdout.startswith("-inf\n")
    res = invoke("score", "--json", d / "zero.npz", "-", stdin="a dog\n")
    assert json.loads(res.stdout) == {"logprob": None, "tokens": 3, "oov": 0}


def test_config_groups_name_every_lm_subcommand():
    """`--config` tables of the lm group ([lm.train], ...) are listed by hand in `config`:
    they must be exactly the group's subcommands."""
    import lpcfg_cli.cli.lm_command as lm_command
    from lpcfg_cli.cli.configfile import GROUPS

    assert set(GROUPS["lm"]) == set(lm_command.command.commands)
