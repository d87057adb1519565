"""Hostile input (issue 12): every bad input is one `lpcfg: error:` line and exit status 2,
never a traceback, and nothing already written is lost.

The corpus at the top is a table of malformed inputs with the error each must give; the
tests below it cover what a table cannot: checks made before any work, write errors, a
closed pipe, descriptors as outputs, models read from stdin, byte-identical models.
Everything is written inside tmp_path (``/dev/full`` is only written to, which leaves it
as it is).
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lpcfg_cli.model.lpcfg import LPCFG, without_timings
from tests.support import TINY_TREES, invoke, lpcfg, one_error

TREES = TINY_TREES


@pytest.fixture(scope="module")
def d(tmp_path_factory) -> Path:
    """A folder with a tiny treebank, its PCFG and spectral models and bad model files."""
    d = tmp_path_factory.mktemp("hostile")
    (d / "t.mrg").write_text("\n".join(TREES) + "\n")
    (d / "x.txt").write_text("the cat sat\nKim ran\n")
    for method in ("pcfg", "spectral"):
        res = invoke("train", "--method", method, str(d / "t.mrg"), "-o", str(d / f"{method}.npz"))
        assert res.exit_code == 0, res.stderr
    np.save(d / "array.npy", np.zeros(3))
    whole = (d / "pcfg.npz").read_bytes()
    (d / "truncated.npz").write_bytes(whole[: len(whole) // 2])
    (d / "empty.npz").write_bytes(b"")
    (d / "folder").mkdir()
    for name, version in [("v3", 3), ("v_str", "1"), ("v_none", None)]:
        rewrite_meta(d / "pcfg.npz", d / f"{name}.npz", format_version=version)
    (d / "bad.mrg").write_text("(S (NP (DT the) (NN cat))\n")
    return d


def rewrite_meta(src: Path, dst: Path, **changes) -> None:
    """A copy of the model at ``src`` with metadata fields changed (None: removed)."""
    with np.load(src, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(arrays["meta_json"].tobytes())
    for key, value in changes.items():
        if value is None:
            meta.pop(key)
        else:
            meta[key] = value
    arrays["meta_json"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(dst, **arrays)


def config(d: Path, text: str) -> str:
    path = d / f"c{abs(hash(text))}.toml"
    path.write_text(text)
    return str(path)


# (arguments with {d} for the folder, fragment of the one error line); all exit 2.
CORPUS = [
    # --seed must be a whole number >= 0 (numpy refused -1 with a traceback)
    ("train --method em --seed -1 {d}/t.mrg -o {d}/o.npz", "Invalid value for '--seed'"),
    ("sample {d}/pcfg.npz --seed -1", "Invalid value for '--seed'"),
    ("sample --random-grammar {d}/o.npz --seed -1", "Invalid value for '--seed'"),
    # a model that is not one
    ("parse {d}/array.npy {d}/x.txt", "array.npy: a single numpy array (.npy), not an lpcfg"),
    (
        "parse {d}/truncated.npz {d}/x.txt",
        "truncated.npz: not an lpcfg model file (a truncated or corrupt .npz archive",
    ),
    ("parse {d}/empty.npz {d}/x.txt", "empty.npz: empty file, not an lpcfg model file"),
    ("parse {d}/t.mrg {d}/x.txt", "t.mrg: not an lpcfg model file (not an .npz archive)"),
    ("parse {d}/folder {d}/x.txt", "is a directory"),
    ("sample {d}/array.npy", "a single numpy array (.npy)"),
    ("train --method em --init {d}/array.npy {d}/t.mrg -o {d}/o.npz", "a single numpy array"),
    ("parse {d}/missing.npz {d}/x.txt", "missing.npz: no such model file"),
    # format versions: say which the file has and which this lpcfg reads
    (
        "parse {d}/v3.npz {d}/x.txt",
        "v3.npz: model file has format version 3, written by a newer lpcfg (this lpcfg reads "
        "format versions 1 and 2: upgrade lpcfg)",
    ),
    ("parse {d}/v_str.npz {d}/x.txt", "malformed format version '1' (this lpcfg reads format"),
    ("parse {d}/v_none.npz {d}/x.txt", "model file has no format version (this lpcfg reads"),
    # numbers that are not numbers
    ("parse {d}/pcfg.npz {d}/x.txt --prune nan", "'nan' is not a finite number"),
    ("parse {d}/pcfg.npz {d}/x.txt --prune inf", "Invalid value for '--prune'"),
    ("train --method em --tol nan {d}/t.mrg -o {d}/o.npz", "'nan' is not a finite number"),
    ("train --method em --noise inf {d}/t.mrg -o {d}/o.npz", "'inf' is not a finite number"),
    # options the run cannot use (item 7)
    (
        "train --method pcfg --dev {d}/t.mrg {d}/t.mrg -o {d}/o.npz",
        "--dev has no effect with --method pcfg",
    ),
    (
        "train --method pcfg --states 16 {d}/t.mrg -o {d}/o.npz",
        "--states has no effect with --method pcfg",
    ),
    (
        "train --method pcfg --iterations 5 {d}/t.mrg -o {d}/o.npz",
        "--iterations has no effect with --method pcfg",
    ),
    (
        "train --method spectral --init {d}/pcfg.npz {d}/t.mrg -o {d}/o.npz",
        "--init has no effect with --method spectral",
    ),
    (
        "train --method pivot+em --init {d}/pcfg.npz {d}/t.mrg -o {d}/o.npz",
        "--init has no effect with --method pivot+em (it starts from the pivot model)",
    ),
    ("sample {d}/pcfg.npz --random-grammar {d}/o.npz", "it does not use MODEL"),
    ("sample --random-grammar {d}/o.npz -n 5", "-n has no effect with --random-grammar"),
    ("sample {d}/pcfg.npz --states 3", "--states has no effect without --random-grammar"),
    # files checked before any work (item 4)
    ("train --method em --dev {d}/nope.mrg {d}/t.mrg -o {d}/o.npz", "nope.mrg: no such file"),
    ("train --method em --dev {d}/bad.mrg {d}/t.mrg -o {d}/o.npz", "bad.mrg:1:"),
    ("train --method em --dev {d}/folder {d}/t.mrg -o {d}/o.npz", "is a directory"),
    ("train {d}/t.mrg -o {d}/nope/o.npz", "nope: directory does not exist"),
    ("train {d}/t.mrg -o {d}/folder", "is a directory"),
    ("train {d}/t.mrg -o {d}/t.mrg", "is also an input of this run"),
    (
        "train --method em --init {d}/spectral.npz {d}/t.mrg -o {d}/o.npz",
        "--init needs a probabilistic model",
    ),
    ("train {d}/nope.mrg -o {d}/o.npz", "nope.mrg: no such file"),
    ("parse {d}/pcfg.npz {d}/x.txt -o {d}/nope/out", "nope: directory does not exist"),
    # stdin can feed MODEL or INPUT, not both
    ("parse - -", "MODEL and INPUT cannot both be stdin"),
    # config keys are option names
    (
        "train --config {caps} {d}/t.mrg -o {d}/o.npz",
        "unknown option 'caps' in [train] (did you mean 'cap'?)",
    ),
    ("parse --config {bogus} {d}/pcfg.npz {d}/x.txt", "unknown option 'bogus'"),
    ("parse --config {listed} {d}/pcfg.npz {d}/x.txt", "option 'jobs' takes one value"),
    # no silent wrong result (issue 56): each of these exited 0 or said "internal error"
    (
        "train --method em --iterations 1 --log {d}/o.npz {d}/t.mrg -o {d}/o.npz",
        "--log {d}/o.npz is also -o: two outputs of this run cannot be one file",
    ),
    ("parse --encoding idna {d}/pcfg.npz {d}/x.txt", "'idna' is not a codec for text files"),
    ("parse --encoding utf-16 {d}/pcfg.npz {d}/x.txt", "x.txt:1: cannot be read as utf-16"),
    ("train --method em --iterations 0 {d}/t.mrg -o {d}/o.npz", "Invalid value for '--iterations'"),
    ("evaluate {d}/empty.txt {d}/empty.txt", "GOLD {d}/empty.txt holds no trees: nothing to score"),
    (
        "sample --random-grammar {d}/o.npz --states 100000",
        "--states 100000 needs about 2.88e+08 GB for the parameters",
    ),
    (
        "train --config {letters} {d}/t.mrg -o {d}/o.npz",
        "{letters}: option 'states': --states must be a whole number or a comma-separated "
        "list, not 'abc'",
    ),
    (
        "train --config {nodev} {d}/t.mrg -o {d}/o.npz",
        "--dev {d}/nope.mrg (set in {nodev}): no such file",
    ),
]


@pytest.mark.parametrize(("command", "fragment"), CORPUS, ids=[c for c, _ in CORPUS])
def test_corpus_of_bad_inputs(d, command, fragment):
    files = {
        "caps": config(d, '[train]\nmethod = "spectral"\ncaps = ["S=1"]\n'),
        "bogus": config(d, "bogus = 1\n"),
        "listed": config(d, "[parse]\njobs = [1, 2]\n"),
        "letters": config(d, '[train]\nmethod = "em"\nstates = "abc"\n'),
        "nodev": config(d, '[train]\nmethod = "em"\ndev = "nope.mrg"\n'),
    }
    (d / "empty.txt").write_text("")
    args = [a.format(d=d, **files) for a in command.split()]
    one_error(invoke(*args), fragment.format(d=d, **files))
    assert not (d / "o.npz").exists()


def test_one_word_sentences_train_and_parse(tmp_path):
    """A treebank without binary rules (all sentences one word) trains and parses."""
    bank = tmp_path / "one.mrg"
    bank.write_text("(S (NN cat))\n(S (VB run))\n(NN dog)\n")
    for method in ("pcfg", "em", "spectral"):
        model = tmp_path / f"{method}.npz"
        res = invoke("train", "--method", method, str(bank), "-o", str(model))
        assert res.exit_code == 0, (method, res.stderr, res.exception)
        res = invoke("parse", str(model), "-", stdin="cat\nrun\ncat run\n\n")
        assert res.exit_code == 0, res.stderr
        lines = res.stdout.splitlines()
        assert lines[0] == "(TOP (S (NN cat)))" and lines[3] == "()", lines
        assert len(lines) == 4


@pytest.mark.parametrize("method", ["pivot", "pivot+em"])
def test_one_word_sentences_train_pivot(tmp_path, method):
    bank = tmp_path / "one.mrg"
    bank.write_text("(S (NN cat))\n(S (VB run))\n")
    res = invoke(
        "train", "--method", method, "--states", "2", str(bank), "-o", str(tmp_path / "m.npz")
    )
    assert res.exit_code == 0, res.stderr


def test_train_checks_everything_before_any_work(d, tmp_path, monkeypatch):
    """A typo in -o, --dev or --init is reported before the treebank is even read."""
    import lpcfg_cli.cli.train_command as train

    def no_work(*_args, **_kwargs):
        raise AssertionError("training started")

    monkeypatch.setattr(train, "prepare", no_work)
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, m, **kw: (
            False if str(p) == str(locked) and m & os.W_OK else real_access(p, m, **kw)
        ),
    )
    bank, out = str(d / "t.mrg"), str(tmp_path / "m.npz")
    for args, fragment in [
        (["-o", str(locked / "m.npz")], f"permission denied (folder {locked} is not writable)"),
        (["-o", str(tmp_path / "no" / "m.npz")], "directory does not exist"),
        (["--method", "em", "--dev", str(tmp_path / "dev.mrg"), "-o", out], "no such file"),
        (["--method", "spectral", "--dev", str(d / "bad.mrg"), "-o", out], "bad.mrg:1:"),
        (["--method", "em", "--init", str(d / "truncated.npz"), "-o", out], "truncated"),
    ]:
        one_error(invoke("train", bank, *args), fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locked"]
    # The same run without the typo does reach the work (so the checks above are what
    # stopped those runs, not something later).
    res = invoke(
        "train", "--method", "em", "--dev", str(d / "t.mrg"), bank, "-o", str(tmp_path / "m.npz")
    )
    assert isinstance(res.exception, SystemExit) and "training started" in res.stderr


def test_full_disk_keeps_the_old_model(d, tmp_path, monkeypatch):
    """ENOSPC while the model is written: one line (--quiet leaves only errors), the old
    file intact, no temporary file left."""
    out = tmp_path / "m.npz"
    out.write_bytes(b"the old model")

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(np.lib.format, "write_array", full)
    one_error(
        invoke("train", "--quiet", str(d / "t.mrg"), "-o", str(out)),
        f"{out}: No space left on device",
    )
    assert out.read_bytes() == b"the old model"
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("where", ["stdout", "-o"])
def test_dev_full(d, where):
    """`lpcfg parse m.npz x.txt > /dev/full` and `-o /dev/full` (written through)."""
    args = ["parse", str(d / "pcfg.npz"), str(d / "x.txt")]
    name = "<stdout>" if where == "stdout" else "/dev/full"
    if where == "-o":
        args += ["-o", "/dev/full"]
    with open("/dev/full", "w") as full:
        res = subprocess.run(
            lpcfg(*args), stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert (res.returncode, res.stderr) == (2, f"lpcfg: error: {name}: No space left on device\n")
    assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")


def test_descriptor_outputs(d, tmp_path):
    """`-o /proc/self/fd/1` writes to the open stdout, here a file (trees) and a pipe (a
    model file: a zip written to a stream that cannot seek)."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here")
    with open(tmp_path / "trees", "wb") as fh:
        res = subprocess.run(
            lpcfg("parse", str(d / "pcfg.npz"), str(d / "x.txt"), "-o", "/proc/self/fd/1"),
            stdout=fh,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "trees").read_text() == invoke(
        "parse", str(d / "pcfg.npz"), str(d / "x.txt")
    ).stdout
    piped = subprocess.run(
        lpcfg("train", str(d / "t.mrg"), "-o", "/proc/self/fd/1"), capture_output=True, timeout=120
    )
    assert piped.returncode == 0, piped.stderr
    (tmp_path / "piped.npz").write_bytes(piped.stdout)
    assert LPCFG.load(tmp_path / "piped.npz").meta["method"] == "pcfg"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_closed_pipe_ends_quietly(d, tmp_path, jobs):
    """`lpcfg parse m.npz big.txt | head -1`: no message; ended by SIGPIPE as cat and grep
    are (the shell's status 141, the pipeline's status that of head)."""
    big = tmp_path / "big.txt"
    big.write_text("the cat sat\n" * 3000)
    proc = subprocess.Popen(
        lpcfg("parse", str(d / "pcfg.npz"), str(big), "--jobs", jobs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"(TOP ")
    proc.stdout.close()
    # communicate returns once every holder of stderr (the workers too) has ended
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err.decode()) == (-signal.SIGPIPE, "")


def test_workers_end_with_their_parent(d, tmp_path):
    """`kill -9` of a `parse --jobs 2` leaves no worker behind: they die with their parent
    (a worker outliving it would hold stdout and stderr open and hang the pipeline)."""
    big = tmp_path / "big.txt"
    big.write_text("the cat sat\n" * 20000)
    proc = subprocess.Popen(
        lpcfg("parse", str(d / "pcfg.npz"), str(big), "--jobs", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b"(TOP ")  # the workers are running
    proc.kill()
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a worker outlived its killed parent and kept its output open")
    assert (proc.returncode, err.decode()) == (-signal.SIGKILL, "")  # no worker traceback


def test_model_from_stdin(d):
    """MODEL `-`: the .npz bytes come from stdin (`lpcfg train ... -o - | lpcfg parse - x`)."""
    model = (d / "pcfg.npz").read_bytes()
    from_file = invoke("parse", str(d / "pcfg.npz"), str(d / "x.txt"))
    from_stdin = invoke("parse", "-", str(d / "x.txt"), stdin=model)
    assert from_stdin.exit_code == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout and from_file.stdout.count("(TOP") == 2
    sampled = invoke("sample", "-", "-n", "3", "--seed", "4", stdin=model)
    assert sampled.stdout == invoke("sample", str(d / "pcfg.npz"), "-n", "3", "--seed", "4").stdout
    assert sampled.stdout.count("\n") == 3
    one_error(invoke("parse", "-", str(d / "x.txt"), stdin=b"no model"), "<stdin>: not an lpcfg")


def test_model_from_a_pipe(d, tmp_path):
    """MODEL a named pipe (as `<(curl ...)` gives): read whole, as a zip is read from its end."""
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=((d / "pcfg.npz").read_bytes(),))
    writer.start()
    res = invoke("parse", str(fifo), str(d / "x.txt"))
    writer.join(timeout=30)
    assert res.exit_code == 0, res.stderr
    assert res.stdout == invoke("parse", str(d / "pcfg.npz"), str(d / "x.txt")).stdout


def test_same_seed_same_model_file(d, tmp_path, monkeypatch):
    """Two trainings with one seed: equal zip entries but the metadata, whose only
    differences are its timings; with a stopped clock the files are byte-identical."""
    bank = str(d / "t.mrg")
    args = [
        "train",
        "--method",
        "em",
        "--states",
        "2",
        "--iterations",
        "2",
        "--seed",
        "5",
        bank,
        "-o",
    ]
    for name in ("a.npz", "b.npz"):
        assert invoke(*args, str(tmp_path / name)).exit_code == 0
    a, b = zipfile.ZipFile(tmp_path / "a.npz"), zipfile.ZipFile(tmp_path / "b.npz")
    assert [i.date_time for i in a.infolist()] == [(1980, 1, 1, 0, 0, 0)] * len(a.infolist())
    assert a.namelist() == b.namelist()
    for name in a.namelist():
        if name != "meta_json.npy":
            assert a.read(name) == b.read(name), name
    meta = [json.loads(np.load(z.open("meta_json.npy")).tobytes()) for z in (a, b)]
    assert without_timings(meta[0]) == without_timings(meta[1])
    assert meta[0]["train_seconds"] >= 0 and "train_seconds" not in without_timings(meta[0])
    import time

    monkeypatch.setattr(time, "perf_counter", lambda: 100.0)
    for name in ("c.npz", "e.npz"):
        assert invoke(*args, str(tmp_path / name)).exit_code == 0
    assert (tmp_path / "c.npz").read_bytes() == (tmp_path / "e.npz").read_bytes()


def test_no_arguments_prints_the_help():
    """`lpcfg` alone: the usage and command list on stdout, exit 0 (as `lpcfg --help`)."""
    res = subprocess.run(lpcfg(), capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stderr) == (0, "")
    assert res.stdout.startswith("Usage: lpcfg [OPTIONS] COMMAND [ARGS]...")
    alone, helped = invoke(), invoke("--help")
    assert (alone.exit_code, alone.stdout) == (0, helped.stdout)
    for name in ("binarize", "train", "parse", "evaluate", "sample"):
        assert f"\n  {name} " in res.stdout


def test_the_help_lists_every_command_without_importing_one():
    """`lpcfg --help` lists each subcommand with its `SHORT_HELP` line, which is also the
    loaded command's own short help, and imports none of them (it took 0.8-1.0 s and
    140 MB when it imported all ten to read their docstrings; now 0.1 s)."""
    from lpcfg_cli.cli.group import main
    from lpcfg_cli.cli.names import SHORT_HELP, SUBCOMMANDS

    probe = (
        "import sys\n"
        "from lpcfg_cli.cli.group import main\n"
        "from lpcfg_cli.cli.names import SUBCOMMANDS\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "subs = {f'lpcfg_cli.cli.names.{m}' for m in SUBCOMMANDS.values()}\n"
        "heavy = [m for m in sys.modules if m in ('numpy', 'scipy') or m in subs]\n"
        "print('imported:', sorted(heavy))\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().endswith("imported: []")
    assert set(SHORT_HELP) == set(SUBCOMMANDS)
    assert max(map(len, SHORT_HELP.values())) <= 59  # one line beside the longest name
    listed = res.stdout
    for name, command in main.all_commands().items():
        assert command.get_short_help_str(limit=80) == SHORT_HELP[name]
        assert f"\n  {name}{' ' * (17 - len(name))}{SHORT_HELP[name]}\n" in listed, name


def test_internal_errors_are_one_line(d, monkeypatch):
    """A bug still gives one line (exit 2), not a traceback; LPCFG_DEBUG=1 shows it."""
    import lpcfg_cli.cli.parse_command as parse

    def broken(*_args, **_kwargs):
        raise ValueError("something\nunexpected")

    monkeypatch.setattr(parse, "Parser", broken)
    res = invoke("parse", str(d / "pcfg.npz"), str(d / "x.txt"))
    one_error(res, "internal error (ValueError: something unexpected); please report it")
    monkeypatch.setenv("LPCFG_DEBUG", "1")
    res = invoke("parse", str(d / "pcfg.npz"), str(d / "x.txt"))
    assert isinstance(res.exception, ValueError)


def test_config_paths_are_relative_to_the_config_file(d, tmp_path, monkeypatch):
    """A config's `dev` names a file next to the config, from any working folder (it was
    read from the working folder: another folder's dev set, or "no such file")."""
    folder = tmp_path / "configs"
    folder.mkdir()
    (tmp_path / "dev.mrg").write_text("\n".join(TREES[:2]) + "\n")
    (folder / "em.toml").write_text('[train]\nmethod = "em"\niterations = 1\ndev = "../dev.mrg"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = tmp_path / "m.npz"
    res = invoke("train", "--config", folder / "em.toml", d / "t.mrg", "-o", out)
    assert res.exit_code == 0, res.stderr
    history = LPCFG.load(out).meta["history"]
    assert "dev_f1" in history[-1], history


def test_a_dev_set_of_another_treebank_is_refused(d, tmp_path):
    """Selecting on another language's dev trees gave dev F1 0.0 for every step and a
    model chosen blindly, with exit status 0."""
    foreign = tmp_path / "foreign.mrg"
    foreign.write_text("(smain (noun Jan) (verb loopt))\n(smain (noun Piet) (verb zwemt))\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text('[train]\nmethod = "em"\ndev = "foreign.mrg"\n')
    res = invoke("train", "-q", "--config", cfg, d / "t.mrg", "-o", tmp_path / "m.npz")
    one_error(
        res,
        f"--dev (set in {cfg}): {foreign} do not look like held-out trees of the training "
        "treebank: 0% of its tokens are training words and 0% of its node labels training "
        "labels",
    )
    assert not (tmp_path / "m.npz").exists()


def test_trees_without_words_are_counted_when_dropped(tmp_path):
    bank = tmp_path / "t.mrg"
    bank.write_text("(S (NP (-NONE- *T*-1)))\n" + "\n".join(TREES) + "\n")
    res = invoke("train", bank, "-o", tmp_path / "m.npz")
    assert res.exit_code == 0, res.stderr
    dropped = f"{len(TREES)} trees (1 more dropped: no words once empty elements are removed)"
    assert dropped in res.stderr


def test_a_non_breaking_space_is_part_of_a_word_everywhere(tmp_path):
    """U+00A0 is not whitespace for the tree reader, parse, binarize or evaluate (the
    reader and parse split on it and evaluate did not: "Length unmatch")."""
    word = "New\u00a0York"
    bank = tmp_path / "t.mrg"
    bank.write_text(
        f"(S (NP (NNP {word})) (VP (VBD won)))\n(S (NP (DT the) (NN\u00a0X cat)) (VP (VBD sat)))\n",
        encoding="utf-8",
    )
    res = invoke("binarize", bank)
    assert res.exit_code == 0 and word in res.stdout and "NN\u00a0X" in res.stdout, res.stderr
    model = tmp_path / "m.npz"
    assert invoke("train", bank, "-o", model).exit_code == 0
    res = invoke("parse", model, "-", stdin=f"{word} won\n")
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"(TOP (S (NP (NNP {word})) (VP (VBD won))))\n"
    parsed = tmp_path / "p.mrg"
    parsed.write_text(res.stdout, encoding="utf-8")
    gold = tmp_path / "g.mrg"
    gold.write_text(f"(S (NP (NNP {word})) (VP (VBD won)))\n", encoding="utf-8")
    res = invoke("evaluate", gold, parsed)
    assert res.exit_code == 0 and res.stderr == "", res.stderr
    assert "Bracketing FMeasure       = 100.00" in res.stdout
