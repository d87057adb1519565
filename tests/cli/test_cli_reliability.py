"""No internal error from any user, any output path, any encoding, any signal (issue 38).

Each test below is one promise of the command line that a well-made Unix tool keeps: an
output that is one of the run's inputs is refused before any work; the compiled kernels'
cache never decides whether lpcfg runs; --jobs starts no more workers than there is work or
processors; text in any encoding round-trips; a sentence the machine cannot chart gets its
fallback tree while the rest parse; SIGTERM and SIGHUP clean up as Ctrl-C does; and the
smaller items (config value types, LM files given to parse, inert options, interactive use,
streaming samples, CR line ends). Everything is written inside tmp_path.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lpcfg_cli
from tests.support import TINY_TREES, invoke, lpcfg, one_error


@pytest.fixture(autouse=True)
def default_signals():
    """The children these tests signal start with SIGTERM and SIGHUP at their defaults:
    ignored dispositions are inherited, lpcfg keeps a signal its caller ignores (as under
    ``nohup``), and a test run started under nohup would otherwise see no SIGHUP at all."""
    saved = {s: signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, signal.SIGHUP)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


TREES = TINY_TREES


@pytest.fixture(scope="module")
def d(tmp_path_factory) -> Path:
    """A tiny treebank, its sentences, a PCFG, a language model and a topology model."""
    d = tmp_path_factory.mktemp("reliability")
    (d / "t.mrg").write_text("\n".join(TREES) + "\n")
    (d / "x.txt").write_text("the cat sat\nKim ran\n")
    (d / "u.txt").write_text("a b c\nb c\nc a b\na c\nb a\n")
    for args in (
        ["train", "--method", "pcfg", d / "t.mrg", "-o", d / "pcfg.npz"],
        ["train", "--method", "em", "--states", "2", d / "t.mrg", "-o", d / "em.npz"],
        ["lm", "train", "--method", "kn2", d / "x.txt", "-o", d / "lm.npz"],
        ["unmix", "--model", "dep-ies", d / "u.txt", "-o", d / "topo.npz"],
    ):
        res = invoke(*args)
        assert res.exit_code == 0, res.stderr
    return d


# --- outputs that are inputs ----------------------------------------------------------------

# Every subcommand with an output: (arguments with {input} where the input goes and {out}
# where the output goes, the input file). {out} is then the input itself, a symlink to it
# or a hard link of it.
OUTPUT_IS_INPUT = {
    "binarize": ("binarize {input} -o {out}", "t.mrg"),
    "train treebank": ("train {input} -o {out}", "t.mrg"),
    "train dev": ("train --method em --states 2 --dev {input} t.mrg -o {out}", "t2.mrg"),
    "train init": ("train --method em --states 2 --init {input} t.mrg -o {out}", "em.npz"),
    "parse model": ("parse {input} x.txt -o {out}", "pcfg.npz"),
    "parse input": ("parse pcfg.npz {input} -o {out}", "x.txt"),
    "score": ("score pcfg.npz {input} -o {out}", "x.txt"),
    "evaluate gold": ("evaluate {input} t2.mrg -o {out}", "t.mrg"),
    "evaluate test": ("evaluate t2.mrg {input} -o {out}", "t.mrg"),
    "evaluate against": ("evaluate t2.mrg t2.mrg --against {input} -o {out}", "t.mrg"),
    "sample": ("sample {input} -n 2 -o {out}", "pcfg.npz"),
    "sample random grammar": ("sample --random-grammar {out} --config {input}", "c.toml"),
    "bundle": ("bundle {input} -o {out}", "pcfg.npz"),
    "unmix": ("unmix --model dep-ies {input} -o {out}", "u.txt"),
    "identifiability": ("identifiability --table --config {input} -o {out}", "c.toml"),
    "lm train": ("lm train {input} -o {out}", "x.txt"),
    "lm perplexity": ("lm perplexity lm.npz {input} -o {out}", "x.txt"),
    "lm score": ("lm score {input} x.txt -o {out}", "lm.npz"),
    "config": ("binarize t.mrg --config {input} -o {out}", "c.toml"),
}


@pytest.mark.parametrize("how", ["path", "symlink", "hardlink"])
@pytest.mark.parametrize("case", sorted(OUTPUT_IS_INPUT))
def test_an_output_that_is_an_input_is_refused(d, tmp_path, case, how):
    for name in ("t.mrg", "x.txt", "u.txt", "pcfg.npz", "em.npz", "lm.npz"):
        shutil.copy(d / name, tmp_path / name)
    shutil.copy(d / "t.mrg", tmp_path / "t2.mrg")
    (tmp_path / "c.toml").write_text("quiet = true\n")
    template, name = OUTPUT_IS_INPUT[case]
    target = tmp_path / name
    before = target.read_bytes()
    out = target
    if how == "symlink":
        out = tmp_path / "link"
        out.symlink_to(target)
    elif how == "hardlink":
        out = tmp_path / "hard"
        os.link(target, out)
    args = template.format(input=target, out=out).split()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = invoke(*args)
    finally:
        os.chdir(old)
    one_error(res, "is also an input of this run")
    assert target.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".lpcfg-")]


def test_empty_and_folder_output_paths(d, tmp_path):
    one_error(invoke("binarize", d / "t.mrg", "-o", ""), "-o '' names no file")
    one_error(invoke("binarize", d / "t.mrg", "-o", f"{tmp_path}/newdir/"), "names a folder")
    assert not (tmp_path / "newdir").exists()


# --- the compiled kernels' cache ------------------------------------------------------------


def _read_only_install(tmp_path: Path) -> Path:
    """A copy of the package where no ``__pycache__`` can be made, whoever runs it (even
    root, for whom permission bits are no obstacle): each folder holds a plain file by that
    name."""
    site = tmp_path / "site"
    shutil.copytree(
        Path(lpcfg_cli.__file__).parent,
        site / "lpcfg_cli",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for folder in [site, *(p for p in site.rglob("*") if p.is_dir())]:
        (folder / "__pycache__").write_text("")
    return site


def _unwritable_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a read-only install run by a user without a home folder."""
    site = _read_only_install(tmp_path)
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    env.update(HOME=str(home), PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    return env


def test_parse_with_an_unwritable_install_and_no_cache_folder(d, tmp_path):
    """With no writable folder anywhere, the kernels are compiled in memory, with one
    warning (numba itself would refuse to define a cached kernel)."""
    base = lpcfg("parse", d / "pcfg.npz", d / "x.txt")
    res = subprocess.run(base, env=_unwritable_env(tmp_path), capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("(TOP (S")
    warnings = [line for line in res.stderr.splitlines() if "warning" in line]
    assert warnings == [
        "lpcfg: warning: no writable folder for compiled kernels (set NUMBA_CACHE_DIR or "
        "XDG_CACHE_HOME to one): they are compiled in memory, so start-up is slower"
    ]


@pytest.mark.slow
def test_parse_with_an_unwritable_install_keeps_kernels_in_the_users_cache(d, tmp_path):
    """With a writable cache folder of the user's, the kernels are kept there, silently
    (the choice itself is tested in process in tests/engine/test_jit_cache.py; this run
    compiles every kernel, about 30 s)."""
    base = lpcfg("parse", d / "pcfg.npz", d / "x.txt")
    cache = tmp_path / "cache"
    env = {**_unwritable_env(tmp_path), "XDG_CACHE_HOME": str(cache)}
    res = subprocess.run(base, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 2 and "warning" not in res.stderr
    assert any((cache / "lpcfg" / "numba").rglob("*.nbi"))


# --- --jobs --------------------------------------------------------------------------------


def test_jobs_forks_no_more_workers_than_blocks_or_processors(d, monkeypatch):
    from lpcfg_cli.parsing import workers

    forked = []
    fork = workers.Workers._fork
    monkeypatch.setattr(workers.Workers, "_fork", lambda self: forked.append(1) or fork(self))
    res = invoke("parse", "--jobs", "1000", d / "pcfg.npz", d / "x.txt")
    assert res.exit_code == 0, res.stderr
    cpus = workers.usable_cpus()
    assert (
        f"lpcfg: warning: --jobs 1000 is more than the {cpus} processors available: "
        f"using {cpus}" in res.stderr
    )
    assert len(res.stdout.splitlines()) == 2
    assert len(forked) <= 1  # one block of two sentences: one worker at most
    res = invoke("parse", "--jobs", "99999999999", d / "pcfg.npz", d / "x.txt")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2


# --- encodings --------------------------------------------------------------------------------

LATIN1_TREES = [
    "(S (NP (DT le) (NN café)) (VP (VBD était) (ADJP (JJ fermé))))",
    "(S (NP (DT la) (NN tête)) (VP (VBD tournait)))",
    "(S (NP (NNP Zoë)) (VP (VBD vit) (NP (DT le) (NN café))))",
    "(S (NP (DT le) (NN café)) (VP (VBD vit) (NP (NNP Zoë))))",
]


def test_a_latin1_treebank_trains_parses_and_evaluates(tmp_path):
    trees = tmp_path / "t.mrg"
    trees.write_bytes(("\n".join(LATIN1_TREES) + "\n").encode("latin-1"))
    words = tmp_path / "w.txt"
    words.write_bytes("le café était fermé\nZoë vit la tête\n".encode("latin-1"))
    # Read as UTF-8 it is refused, naming the byte and the line.
    one_error(
        invoke("train", trees, "-o", tmp_path / "m.npz"), "t.mrg:1: invalid UTF-8 (byte 0xe9)"
    )
    res = invoke("train", "--encoding", "latin-1", trees, "-o", tmp_path / "m.npz")
    assert res.exit_code == 0, res.stderr
    out = tmp_path / "p.mrg"
    res = invoke("parse", "--encoding", "latin-1", tmp_path / "m.npz", words, "-o", out)
    assert res.exit_code == 0, res.stderr
    parsed = out.read_bytes().decode("latin-1").splitlines()
    leaves = [[w.rstrip(")") for w in line.split() if not w.startswith("(")] for line in parsed]
    assert [" ".join(x) for x in leaves] == ["le café était fermé", "Zoë vit la tête"]
    res = invoke("evaluate", "--encoding", "latin-1", trees, trees, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["all"]["fmeasure"] == 100.0
    # binarize there and back gives the very bytes of the (normalised) input.
    binary = tmp_path / "b.mrg"
    assert invoke("binarize", "--encoding", "latin-1", trees, "-o", binary).exit_code == 0
    back = tmp_path / "back.mrg"
    assert (
        invoke("binarize", "--reverse", "--encoding", "latin-1", binary, "-o", back).exit_code == 0
    )
    assert back.read_bytes() == trees.read_bytes()
    # A character the output encoding cannot hold is one error line.
    one_error(
        invoke("parse", "--encoding", "ascii", tmp_path / "m.npz", "-", stdin="Zoë\n"),
        "invalid ascii",
    )
    one_error(invoke("parse", "--encoding", "klingon", tmp_path / "m.npz"), "unknown encoding")


def test_utf16_input(d, tmp_path):
    text = tmp_path / "x16.txt"
    text.write_bytes("the cat sat\nKim ran\n".encode("utf-16"))
    res = invoke("parse", "--encoding", "utf-16", d / "pcfg.npz", text, "-o", tmp_path / "o.txt")
    assert res.exit_code == 0, res.stderr
    lines = (tmp_path / "o.txt").read_bytes().decode("utf-16").splitlines()
    # "Kim ran" has no derivation in the tiny treebank: the smoothed grammar parses it.
    assert len(lines) == 2 and lines[0].startswith("(TOP (S") and lines[1].startswith("(TOP (")
    assert lines[1].endswith(" ran)))")


def test_any_line_ending_is_one_sentence_per_line(d):
    for text in ("the cat sat\rKim ran\r", "the cat sat\r\nKim ran\r\n", "the cat sat\nKim ran"):
        res = invoke("parse", d / "pcfg.npz", stdin=text.encode())
        assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2, (text, res.stdout)


# --- sentences the machine cannot chart ---------------------------------------------------


def _wide_treebank(path: Path, labels: int) -> None:
    """Trees over ``labels`` distinct phrase labels, so that the chart of a long sentence
    is large (its default --max-length falls well below 2,000 words)."""
    lines = []
    for i in range(labels):
        lines.append(f"(S (X{i} (DT the) (NN w{i % 7})) (VP (VBD ran)))")
    path.write_text("\n".join(lines) + "\n")


def _limited(gigabytes: float):
    limit = int(gigabytes * 1e9)
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_long_sentence_among_short_ones_under_a_memory_cap(tmp_path):
    _wide_treebank(tmp_path / "t.mrg", 300)
    assert invoke("train", tmp_path / "t.mrg", "-o", tmp_path / "m.npz").exit_code == 0
    short = ["the w1 ran", "the w2 ran", "the w3 ran"]
    lines = short[:2] + [" ".join(["the", "w4"] * 1000)] + short[2:]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    for extra, reason in (
        ([], "1 longer than"),  # the default --max-length for this grammar
        (["--max-length", "5000"], "1 out of memory: line 3"),  # the chart itself
    ):
        res = subprocess.run(
            lpcfg("parse", *extra, tmp_path / "m.npz", tmp_path / "in.txt"),
            capture_output=True,
            text=True,
            preexec_fn=_limited(6.0 if not extra else 3.0),
            timeout=600,
        )
        assert res.returncode == 0, res.stderr
        out = res.stdout.splitlines()
        assert len(out) == 4 and all(line.startswith("(TOP") for line in out)
        assert reason in res.stderr and "line 3" in res.stderr, res.stderr
        assert "1 fallback" in res.stderr


def test_score_has_the_same_length_limit(d):
    long = " ".join(["the", "cat"] * 50)
    res = invoke("score", "--max-length", "20", d / "pcfg.npz", stdin=f"the cat sat\n{long}\n")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[1] == "nan"
    assert "1 not scored (longer than 20 words): line 2" in res.stderr
    res = invoke(
        "score", "--json", "--max-length", "20", d / "pcfg.npz", stdin=f"the cat sat\n{long}\n"
    )
    second = json.loads(res.stdout.splitlines()[1])
    assert second["logprob"] is None and second["skipped"] == "longer than 20 words"


# --- signals ----------------------------------------------------------------------------------


def _wait_for(predicate, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def _old_output(tmp_path: Path) -> Path:
    """An existing output file ``f``, alone in its folder."""
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "f"
    target.write_text("old\n")
    return target


def _only_the_old_output(target: Path) -> None:
    assert target.read_text() == "old\n"
    assert [p.name for p in target.parent.iterdir()] == ["f"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_parse_killed_by_a_signal_leaves_the_old_output_only(d, tmp_path, signum):
    target = _old_output(tmp_path)
    folder = target.parent
    (tmp_path / "big.txt").write_text("the cat sat on the mat\n" * 200_000)
    proc = subprocess.Popen(
        lpcfg("parse", "-q", d / "pcfg.npz", tmp_path / "big.txt", "-o", target),
        stderr=subprocess.PIPE,
    )
    _wait_for(lambda: any(p.name.startswith(".lpcfg-") for p in folder.iterdir()))
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signum, err
    assert err == b""
    _only_the_old_output(target)


def test_a_sighup_its_caller_ignores_stays_ignored(d, tmp_path):
    """Under nohup (SIGHUP ignored) a hangup does not stop the parse: it finishes and
    writes every line."""
    (tmp_path / "in.txt").write_text("the cat sat on the mat\n" * 40_000)
    target = tmp_path / "out.txt"
    proc = subprocess.Popen(
        lpcfg("parse", "-q", d / "pcfg.npz", tmp_path / "in.txt", "-o", target),
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    _wait_for(lambda: any(p.name.startswith(".lpcfg-") for p in tmp_path.iterdir()))
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert len(target.read_text().splitlines()) == 40_000


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_train_killed_by_a_signal_leaves_the_old_model_only(d, tmp_path, signum):
    target = _old_output(tmp_path)
    args = ["train", "--method", "em", "--states", "2", "--iterations", "100000", "--tol", "0"]
    proc = subprocess.Popen(
        lpcfg(*args, d / "t.mrg", "-o", target), stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    while "iteration   2" not in proc.stderr.readline():
        assert proc.poll() is None
    proc.send_signal(signum)
    proc.communicate(timeout=60)
    assert proc.returncode == -signum
    _only_the_old_output(target)


# --- smaller items ----------------------------------------------------------------------------


def test_states_beyond_the_range_or_the_memory_are_refused(d, tmp_path, monkeypatch):
    from lpcfg_cli.model import lpcfg as model

    for method in ("em", "spectral", "pivot"):
        res = invoke("train", "--method", method, "--states", "1000000", d / "t.mrg", "-o", "m")
        one_error(res, "--states must be at most 1024")
    monkeypatch.setattr(model, "available_memory", lambda: 10**8)
    res = invoke(
        "train", "-q", "--method", "em", "--states", "64", d / "t.mrg", "-o", tmp_path / "m"
    )
    one_error(res, "states 64 needs about")
    assert "more than the 0.1 GB this machine allows: choose fewer --states" in res.stderr
    assert not (tmp_path / "m").exists()


def test_sample_streams_its_trees(d):
    proc = subprocess.Popen(
        lpcfg("sample", d / "pcfg.npz", "-n", "1000000000000"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    try:
        ready = select.select([proc.stdout], [], [], 60)[0]
        assert ready, "no tree within 60 s"
        assert proc.stdout.readline().startswith(b"(S ")
    finally:
        proc.kill()
        proc.wait()


def test_config_values_are_checked_as_the_command_line_checks_them(d, tmp_path):
    cases = {
        "iterations = 2.5": "option 'iterations': '2.5' is not a valid integer",
        "jobs = true": "option 'jobs' takes a number or a string, not true",
        "skip-bad = 1": "option 'skip-bad' takes true or false, not 1",
    }
    for line, fragment in cases.items():
        config = tmp_path / "c.toml"
        config.write_text(f"[train]\nmethod = 'em'\n{line}\n")
        one_error(invoke("train", "--config", config, d / "t.mrg", "-o", tmp_path / "m"), fragment)
    config.write_bytes(b"\xef\xbb\xbf[train]\nmethod = 'em'\nstates = 2\niterations = 1\n")
    res = invoke("train", "--config", config, d / "t.mrg", "-o", tmp_path / "m.npz")
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize("command", ["parse", "score", "sample", "bundle"])
def test_a_language_model_given_for_a_parsing_model(d, tmp_path, command):
    args = {
        "parse": ["parse", d / "lm.npz", d / "x.txt"],
        "score": ["score", d / "lm.npz", d / "x.txt"],
        "sample": ["sample", d / "lm.npz"],
        "bundle": ["bundle", d / "lm.npz", "-o", tmp_path / "b.npz"],
    }[command]
    one_error(invoke(*args), "lm.npz: a language model (made by `lpcfg lm train`)")
    if command == "parse":
        one_error(invoke("parse", d / "topo.npz", d / "x.txt"), "a topology model")


def test_evaluate_with_ten_error_sentences_gives_one_value(tmp_path):
    gold = tmp_path / "g.mrg"
    test = tmp_path / "t.mrg"
    gold.write_text("(S (NN a) (NN b))\n" * 10)
    test.write_text("(S (NN a) (NN c))\n" * 10)
    text = invoke("evaluate", gold, test)
    assert "Bracketing FMeasure       =   -nan" in text.stdout
    data = json.loads(invoke("evaluate", "--json", gold, test).stdout)
    assert data["all"]["fmeasure"] is None


def test_options_that_cannot_act_are_warned_about(d, tmp_path):
    res = invoke("parse", "--combine", "mean", d / "pcfg.npz", d / "x.txt")
    assert res.exit_code == 0
    assert "lpcfg: warning: --combine has no effect with a single model" in res.stderr
    binary = tmp_path / "b.mrg"
    assert invoke("binarize", d / "t.mrg", "-o", binary).exit_code == 0
    res = invoke("binarize", "--reverse", "--horizontal", "2", binary)
    assert res.exit_code == 0
    assert "lpcfg: warning: --horizontal has no effect with --reverse" in res.stderr
    copy = tmp_path / "copy.npz"
    shutil.copy(d / "pcfg.npz", copy)
    res = invoke("bundle", d / "pcfg.npz", copy, "-o", tmp_path / "e.npz")
    assert res.exit_code == 0
    assert "holds the same model as" in res.stderr


def test_a_line_typed_on_stdin_is_parsed_at_once(d):
    proc = subprocess.Popen(
        lpcfg("parse", d / "pcfg.npz"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line in (b"the cat sat\n", b"Kim ran\n"):
            proc.stdin.write(line)
            proc.stdin.flush()
            ready = select.select([proc.stdout], [], [], 120)[0]
            assert ready, "no tree before the input ended"
            assert proc.stdout.readline().startswith(b"(TOP (")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0


def test_an_error_after_a_terminating_signal_ends_by_the_signal(d, tmp_path):
    """A signal whose exception C code swallowed can surface as some other error (numba's
    callbacks fail in their own way): the run still ends by the signal, not with exit 2."""
    code = (
        "import os, signal, sys\n"
        "from lpcfg_cli.cli.group import main\n"
        "from lpcfg_cli.errors import LpcfgError\n"
        "from lpcfg_cli.model.lpcfg import LPCFG\n"
        "def load(path):\n"
        "    try:\n"  # what a callback from C code does with the signal's exception
        "        os.kill(os.getpid(), signal.SIGHUP)\n"
        "    except BaseException:\n"
        "        pass\n"
        "    raise LpcfgError('the compiled code failed')\n"
        "LPCFG.load = staticmethod(load)\n"
        "sys.argv = ['lpcfg', 'parse', sys.argv[1], '-']\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "missing.npz")],
        input="a b\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == -signal.SIGHUP, proc.stderr
    assert "error" not in proc.stderr
