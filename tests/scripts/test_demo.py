"""`make demo` and `make test` from a fresh clone (issue 18): which data the demo uses, how
a synthetic run is labelled, and the Makefile's environment set-up (checked with `make -n`)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess

import pytest

from lpcfg_cli.errors import LpcfgError
from tests.support import ROOT

NOT_INSTALLED = LpcfgError(
    "the NLTK Penn Treebank sample is not installed: run "
    "`python -m nltk.downloader treebank` or set NLTK_DATA"
)


@pytest.fixture
def demo(monkeypatch):
    """scripts/demo.py as a module, with the treebank sample made unavailable."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    module = importlib.import_module("demo")

    def no_sample(**_kwargs):
        raise NOT_INSTALLED

    monkeypatch.setattr(module, "standard_split", no_sample)
    return module


def test_without_the_sample_synthetic_data_goes_to_its_own_folder(demo, tmp_path, capsys):
    data, synthetic = tmp_path / "data", tmp_path / "data-synthetic"
    data.mkdir()
    for name in ("train.mrg", "dev.mrg", "dev.txt", "test.mrg", "test.txt"):
        (data / name).write_text("(TOP (N0 (P0 w1) (P1 w2)))\n")  # left by an older demo
    chosen = demo.choose_data(data, synthetic)
    assert (chosen.folder, chosen.synthetic) == (synthetic, True)
    assert "SYNTHETIC" in chosen.source
    assert sorted(p.name for p in data.iterdir()) == [
        "dev.mrg",
        "dev.txt",
        "test.mrg",
        "test.txt",
        "train.mrg",
    ]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "python -m nltk.downloader treebank" in err
    assert "SYNTHETIC" in err and str(synthetic) in err
    assert len((synthetic / "train.mrg").read_text().splitlines()) == 2000
    assert (synthetic / "source.txt").read_text().startswith("SYNTHETIC")
    # A second run reuses the folder; a folder holding the standard split is used as is.
    assert demo.choose_data(data, synthetic) == chosen
    (data / "source.txt").write_text(demo.STANDARD_SOURCE + "\n")
    real = demo.choose_data(data, synthetic)
    assert (real.folder, real.synthetic) == (data, False)


def test_every_figure_of_a_synthetic_table_is_labelled(demo, tmp_path):
    rows = [("pcfg", 90.0, 89.0, 1.0, 100.0), ("em", 95.0, 95.0, 9.0, 50.0)]
    text = demo.table(demo.Data(tmp_path, demo.SYNTHETIC_SOURCE, True), rows, "2")
    lines = text.splitlines()
    assert lines[0].startswith("SYNTHETIC DATA")
    header = next(line for line in lines if line.startswith("| method"))
    assert header.count("(SYNTHETIC)") == 2  # both F1 columns
    body = [line for line in lines if line.startswith("| pcfg") or line.startswith("| em")]
    assert len(body) == 2 and all("(SYNTHETIC)" in line for line in body)
    real = demo.table(demo.Data(tmp_path, demo.STANDARD_SOURCE, False), rows, "2")
    assert "SYNTHETIC" not in real


def test_relay_labels_each_line_and_progress_redraw(demo, capsys):
    import io

    demo.relay(
        io.BufferedReader(io.BytesIO(b"lpcfg: dev F1 90.00\nem: 1%\rem: 2%\n")), "[synthetic] "
    )
    assert capsys.readouterr().err == (
        "[synthetic] lpcfg: dev F1 90.00\n[synthetic] em: 1%\r[synthetic] em: 2%\n"
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="no make here")
def test_makefile_sets_up_the_venv_unless_python_is_given():
    # Run under `make test PYTHON=python` (.ci/run), MAKEFLAGS would pass PYTHON on.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}

    def dry_run(*args: str) -> str:
        return subprocess.run(
            ["make", "-n", "-W", "pyproject.toml", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    # `-W pyproject.toml`: as if it had just changed, so the set-up is always due.
    assert dry_run("test", "PYTHON=python") == "python -m pytest -q\n"  # what .ci/run runs
    setup = dry_run("test")
    assert "-m venv .venv" in setup and "pip install" in setup and "-e '.[test,plots]'" in setup
    assert setup.endswith(".venv/bin/python -m pytest -q\n")
    assert "-m venv .venv" in dry_run("demo")
