"""README.md is for users: at most 250 lines of current facts (no dates, no history, no path
outside the repository, in it or in the documentation pages), and its examples run as
printed: the Python example here, the shell quickstart on a small treebank in its paths
(the set-up commands and `make data` run in CI)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import ROOT, synthetic_treebank

README = ROOT / "README.md"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
HISTORY = re.compile(r"previous table|the previous|[Bb]efore that|used to (?:be|give)")
OUTSIDE = re.compile(r"\.\./|/work/|/root/|/home/|/tmp/")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_hold_current_facts_only(page):
    """No calendar dates and no history of figures (that is CHANGELOG.md's, which may keep
    earlier figures but no dates), no path outside the repository."""
    text = page.read_text(encoding="utf-8")
    assert DATE.findall(text) == []
    assert OUTSIDE.findall(text) == []
    if page.name != "CHANGELOG.md":
        assert HISTORY.findall(text) == []


def _data(folder: Path) -> None:
    """A small treebank where the README's commands look for the standard split."""
    data = folder / "data"
    data.mkdir()
    trees = synthetic_treebank(data, 300, 40)
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees))
    (data / "dev.mrg").write_text((data / "test.mrg").read_text())
    shutil.copytree(ROOT / "configs", folder / "configs")


def test_the_shell_quickstart_runs_as_printed(tmp_path):
    block = next(b for b in blocks("sh") if "lpcfg train" in b)
    _data(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    commands = [line.split("  #")[0].strip() for line in block.splitlines()]
    commands = [c for c in commands if c and not c.startswith(". ")]  # activation: PATH here
    assert len(commands) == 7  # binarize, train, parse, evaluate, --errors, draw, report
    for command in commands:
        res = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True)
        assert res.returncode == 0, (command, res.stderr.decode())
    assert len((tmp_path / "test.parsed").read_text().splitlines()) == 40
    assert "<svg" in (tmp_path / "report.html").read_text()


def test_the_python_example_trains_parses_prints_and_scores(tmp_path, monkeypatch, capsys):
    block = blocks("python")[0]
    _data(tmp_path)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.count("(N0") == 2  # two nltk trees, pretty-printed from the root N0
    assert printed.count("(no words, no tree)") == 1  # and the empty sentence
    assert 0.0 <= float(printed.splitlines()[-1]) <= 100.0
