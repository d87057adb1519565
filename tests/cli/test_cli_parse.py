"""`lpcfg parse` / `train` / `sample` through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.treebank.ptb import format_tree, parse_tree
from lpcfg_cli.treebank.tree import leaves
from tests.support import invoke, run, synthetic_treebank


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A PCFG trained on trees sampled from a random L-PCFG, and held-out sentences."""
    d = tmp_path_factory.mktemp("syn")
    train = synthetic_treebank(d, 500, 100)
    (d / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in train))
    res = run("train", "--method", "pcfg", str(d / "train.mrg"), "-o", str(d / "m.npz"))
    assert res.returncode == 0, res.stderr
    return d


def test_parse_emits_one_tree_per_line_in_order(synthetic):
    res = run("parse", str(synthetic / "m.npz"), str(synthetic / "test.txt"), "--no-progress")
    assert res.returncode == 0, res.stderr
    sents = (synthetic / "test.txt").read_text().splitlines()
    lines = res.stdout.splitlines()
    assert len(lines) == len(sents) == 100
    for sent, line in zip(sents, lines, strict=True):
        assert line.startswith("(TOP ")
        assert " ".join(leaves(parse_tree(line))) == sent
    assert "sentences/s" in res.stderr


ADVERSARIAL = [
    "",
    "w1",
    "zzz qqq xxx",
    "( ) -LRB- [ ]",
    " ".join(["w1", "w2", "unknown"] * 40),
    "w3 w4",
]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_adversarial_input_gives_exactly_one_line_each(synthetic, jobs):
    text = "\n".join(ADVERSARIAL) + "\n"
    res = run(
        "parse", str(synthetic / "m.npz"), "-", "--jobs", jobs, "--no-progress", stdin=text * 5
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == len(ADVERSARIAL) * 5
    for i, line in enumerate(lines):
        words = ADVERSARIAL[i % len(ADVERSARIAL)].split()
        if not words:
            assert line == "()"
            continue
        tree = parse_tree(line)
        assert len(leaves(tree)) == len(words)


def test_parse_writes_output_atomically(synthetic, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("precious\n")
    res = run("parse", str(tmp_path / "missing.npz"), str(synthetic / "test.txt"), "-o", str(out))
    assert res.returncode == 2
    assert res.stderr.startswith("lpcfg: error:") and res.stderr.count("\n") == 1
    assert out.read_text() == "precious\n"


def test_outputs_get_ordinary_permissions(synthetic, tmp_path):
    """Atomic writes go through a private temporary file; the result must still be a
    normal file (0666 less the umask), or keep the mode of the file it replaces."""
    import os

    umask = os.umask(0o022)
    try:
        new = tmp_path / "new.txt"
        assert (
            run(
                "parse",
                str(synthetic / "m.npz"),
                str(synthetic / "test.txt"),
                "-o",
                str(new),
                "--no-progress",
            ).returncode
            == 0
        )
        assert new.stat().st_mode & 0o777 == 0o644
        old = tmp_path / "old.txt"
        old.write_text("x\n")
        old.chmod(0o640)
        assert (
            run(
                "parse",
                str(synthetic / "m.npz"),
                str(synthetic / "test.txt"),
                "-o",
                str(old),
                "--no-progress",
            ).returncode
            == 0
        )
        assert old.stat().st_mode & 0o777 == 0o640 and len(old.read_text().splitlines()) == 100
    finally:
        os.umask(umask)


def test_corrupt_model_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    res = run("parse", str(bad), "-", stdin="a b\n")
    assert res.returncode == 2
    assert "not an lpcfg model file" in res.stderr
    assert "Traceback" not in res.stderr


def test_sample_random_grammar_round_trip(tmp_path):
    g = tmp_path / "g.npz"
    assert run("sample", "--random-grammar", str(g), "--seed", "1").returncode == 0
    a = run("sample", str(g), "-n", "5", "--seed", "2")
    b = run("sample", str(g), "-n", "5", "--seed", "2")
    c = run("sample", str(g), "-n", "5", "--seed", "3")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout != c.stdout
    assert len(a.stdout.splitlines()) == 5


def test_input_trees_and_max_length(synthetic, tmp_path):
    gold = tmp_path / "gold.mrg"
    sents = (synthetic / "test.txt").read_text().splitlines()[:5]
    gold.write_text("".join(f"( (X {' '.join(f'(T {w})' for w in s.split())}) )\n" for s in sents))
    res = run(
        "parse",
        str(synthetic / "m.npz"),
        str(gold),
        "--input",
        "trees",
        "--no-progress",
        "--max-length",
        "3",
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert len(out) == 5
    long = sum(len(s.split()) > 3 for s in sents)
    assert long > 0
    assert f"{long} fallback" in res.stderr
    for s, line in zip(sents, out, strict=True):
        assert leaves(parse_tree(line)) == s.split()


def test_train_em_with_dev_selection_then_parse(synthetic, tmp_path):
    dev = tmp_path / "dev.mrg"
    dev.write_text("".join((synthetic / "train.mrg").read_text().splitlines(True)[:40]))
    model = tmp_path / "em.npz"
    res = run(
        "train",
        "--method",
        "em",
        "--states",
        "2",
        "--iterations",
        "4",
        "--dev",
        str(dev),
        "--dev-f1-every",
        "2",
        "--seed",
        "3",
        "--tol",
        "0",
        str(synthetic / "train.mrg"),
        "-o",
        str(model),
    )
    assert res.returncode == 0, res.stderr
    assert "iteration   4, train loglik" in res.stderr and "dev F1" in res.stderr
    from lpcfg_cli.model.lpcfg import LPCFG

    meta = LPCFG.load(model).meta
    assert meta["method"] == "em" and [h["iteration"] for h in meta["history"]] == [1, 2, 3, 4]
    assert [h["dev_f1"] is not None for h in meta["history"]] == [False, True, False, True]
    assert meta["selected_iteration"] in (2, 4)
    out = run("parse", str(model), str(synthetic / "test.txt"), "--no-progress")
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 100
    bad = run(
        "train", "--method", "em", "--states", "two", str(synthetic / "train.mrg"), "-o", str(model)
    )
    assert bad.returncode == 2 and "--states must be a whole number" in bad.stderr


def test_train_spectral_grid_with_dev_then_parse(synthetic, tmp_path):
    dev = tmp_path / "dev.mrg"
    dev.write_text("".join((synthetic / "train.mrg").read_text().splitlines(True)[:40]))
    model = tmp_path / "spectral.npz"
    train = str(synthetic / "train.mrg")
    res = run(
        "train",
        "--method",
        "spectral",
        "--states",
        "1,2",
        "--dev",
        str(dev),
        "--cap",
        "N0=1",
        train,
        "-o",
        str(model),
    )
    assert res.returncode == 0, res.stderr
    assert "states 1:" in res.stderr and "states 2:" in res.stderr
    assert "dev F1" in res.stderr and "selected states" in res.stderr
    from lpcfg_cli.model.lpcfg import LPCFG

    loaded = LPCFG.load(model)
    meta = loaded.meta
    assert loaded.form == "tensor" and meta["method"] == "spectral"
    assert [h["states"] for h in meta["dev_grid"]] == [1, 2]
    best = max(meta["dev_grid"], key=lambda h: h["dev_f1"])
    assert meta["states_requested"] == best["states"]
    assert loaded.states[loaded.grammar.symbol_index["N0"]] == 1
    out = run("parse", str(model), str(synthetic / "test.txt"), "--no-progress")
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 100
    for args, message in [
        (["--states", "1,2"], "a --states grid needs --dev"),
        (["--states", "2", "--cap", "N0"], "--cap takes LABEL=M"),
        (["--states", "2", "--cap", "XX=1"], "not in the training trees: 'XX'"),
        (["--states", "2", "--inside-features", "rule,colour"], "unknown inside feature"),
        (["--states", "0"], "--states must be at least 1"),
    ]:
        bad = run("train", "--method", "spectral", *args, train, "-o", str(tmp_path / "x.npz"))
        assert bad.returncode == 2 and message in bad.stderr, (args, bad.stderr)
        errors = [x for x in bad.stderr.splitlines() if "error" in x]
        assert len(errors) == 1 and "Traceback" not in bad.stderr
    assert not (tmp_path / "x.npz").exists()


def test_train_pivot_and_pivot_em_then_parse(synthetic, tmp_path):
    from lpcfg_cli.model.lpcfg import LPCFG

    dev = tmp_path / "dev.mrg"
    dev.write_text("".join((synthetic / "train.mrg").read_text().splitlines(True)[:40]))
    train = str(synthetic / "train.mrg")
    pivot = tmp_path / "pivot.npz"
    res = run("train", "--method", "pivot", "--states", "2", train, "-o", str(pivot))
    assert res.returncode == 0, res.stderr
    assert "lpcfg: pivot:" in res.stderr and "distinct states" in res.stderr
    model = LPCFG.load(pivot)
    assert model.form == "probabilistic" and model.meta["method"] == "pivot"
    assert model.check_probabilistic() < 1e-6  # stored in float32
    both = tmp_path / "pivot_em.npz"
    res = run(
        "train",
        "--method",
        "pivot+em",
        "--states",
        "2",
        "--iterations",
        "2",
        "--dev",
        str(dev),
        "--tol",
        "0",
        train,
        "-o",
        str(both),
    )
    assert res.returncode == 0, res.stderr
    assert "dev F1" in res.stderr.split("lpcfg: pivot:")[1].split("lpcfg: iteration")[0]
    assert "iteration   2" in res.stderr
    meta = LPCFG.load(both).meta
    assert meta["method"] == "pivot+em" and meta["chain"][0]["method"] == "pivot"
    assert meta["chain"][0]["dev_f1"] is not None and "training" not in meta["chain"][0]
    assert [h["dev_f1"] is not None for h in meta["history"]] == [True, True]  # every iteration
    out = run("parse", str(both), str(synthetic / "test.txt"), "--no-progress")
    assert out.returncode == 0 and len(out.stdout.splitlines()) == 100
    bad = run(
        "train", "--method", "pivot+em", "--init", str(pivot), train, "-o", str(tmp_path / "x.npz")
    )
    assert bad.returncode == 2 and "drop --init" in bad.stderr
    bad = run(
        "train",
        "--method",
        "pivot",
        "--outside-features",
        "up1",
        train,
        "-o",
        str(tmp_path / "x.npz"),
    )
    assert bad.returncode == 2 and "needs the lexrule inside and parent outside" in bad.stderr


def test_sample_writes_debinarized_trees_unless_asked(tmp_path):
    bank = tmp_path / "tb.mrg"
    bank.write_text("(S (NP (DT a) (JJ b) (NN c)) (VP (VB d)))\n" * 3)
    model = tmp_path / "m.npz"
    assert run("train", str(bank), "-o", str(model)).returncode == 0
    plain = run("sample", str(model), "-n", "1").stdout.strip()
    assert plain == "(S (NP (DT a) (JJ b) (NN c)) (VP (VB d)))"
    binarized = run("sample", str(model), "-n", "1", "--binarized").stdout.strip()
    assert binarized == "(S (NP (DT a) (@NP (JJ b) (NN c))) (VP+VB d))"


@pytest.fixture(scope="module")
def latent_bank(tmp_path_factory):
    """Trees from an L-PCFG whose two states per symbol differ sharply (sparse Dirichlet):
    1000 to train on, 200 held out as gold trees and as sentences."""
    d = tmp_path_factory.mktemp("latent")
    truth = random_lpcfg(
        inter=5,
        pre=5,
        words=30,
        states=2,
        rules_per_symbol=4,
        words_per_tag=8,
        seed=3,
        concentration=0.1,
    )
    trees = sample_trees(truth, 1200, seed=4)
    (d / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[:1000]))
    (d / "test.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[1000:]))
    (d / "test.txt").write_text("".join(" ".join(leaves(t)) + "\n" for t in trees[1000:]))
    return d


def test_em_beats_the_pcfg_on_held_out_trees_of_a_latent_grammar(latent_bank, tmp_path):
    """The latent states are worth learning: `train --method em` then `parse` and
    `evaluate` score held-out trees well above the PCFG trained on the same trees."""
    d = latent_bank
    f1 = {}
    for method, options in [("pcfg", []), ("em", ["--states", "2", "--iterations", "20"])]:
        model = tmp_path / f"{method}.npz"
        res = invoke(
            "train",
            "--method",
            method,
            *options,
            "--seed",
            "1",
            "--quiet",
            d / "train.mrg",
            "-o",
            model,
        )
        assert res.exit_code == 0, res.output
        res = invoke("parse", model, d / "test.txt", "--quiet", "-o", tmp_path / method)
        assert res.exit_code == 0, res.output
        res = invoke("evaluate", "--json", d / "test.mrg", tmp_path / method)
        assert res.exit_code == 0, res.output
        f1[method] = json.loads(res.stdout)["all"]["strict_fmeasure"]
    assert f1["em"] > f1["pcfg"] + 2, f1  # 98.90 against 95.05 (about 40 more brackets right)


def _blas_threads(command: str | None, env: dict[str, str]) -> list[str]:
    """OPENBLAS_NUM_THREADS and numpy's BLAS threads in a fresh interpreter, after the CLI
    loaded ``command`` (None: numpy imported alone)."""
    load = (
        f"import click\nfrom lpcfg_cli.cli.group import main\n"
        f"main.get_command(click.Context(main), {command!r})\n"
        if command
        else "import numpy\n"
    )
    code = (
        f"import os\n{load}from threadpoolctl import threadpool_info\n"
        "blas = [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), max(blas))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return out.stdout.split()


@pytest.mark.parametrize("given", [None, "2"])
def test_parse_loads_numpy_with_one_blas_thread_unless_the_user_set_one(given):
    """``lpcfg parse`` sets OPENBLAS_NUM_THREADS=1 before numpy is imported, so that no BLAS
    pool spins beside the kernels; a value in the user's environment is kept. ``train``
    keeps the BLAS threads numpy has by default."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    default = _blas_threads(None, env)
    assert _blas_threads("train", env) == default
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    assert _blas_threads("parse", env) == [given or "1", given or "1"]
