"""scripts/crossval.py: K-fold cross-validation over a training treebank, pooled strict F1,
paired comparison of two settings, the Berkeley parser through a stand-in ``java``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, synthetic_treebank

SCRIPT = SCRIPTS / "crossval.py"


def _run(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--train", "train.mrg", "--folds", "3", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _treebank(tmp_path: Path) -> list[str]:
    trees = synthetic_treebank(tmp_path, 60, 1)
    lines = [format_tree(t) for t in trees]
    (tmp_path / "train.mrg").write_text("".join(line + "\n" for line in lines))
    (tmp_path / "pcfg.toml").write_text('[train]\nmethod = "pcfg"\n')
    return lines


@pytest.mark.slow
def test_folds_pool_every_training_tree_and_compare(tmp_path: Path) -> None:
    lines = _treebank(tmp_path)
    first = _run(tmp_path, "--name", "right", "--config", "pcfg.toml")
    assert first.returncode == 0, first.stderr
    assert "over 60 trees" in first.stdout
    parsed = (tmp_path / "out/crossval/right/all.parsed").read_text().splitlines()
    assert len(parsed) == len(lines)  # every tree held out once, in order
    second = _run(
        tmp_path, "--name", "left", "--config", "pcfg.toml", "--against", "right",
        "--", "--factor", "left",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "Paired comparison" in second.stdout
    data = json.loads((tmp_path / "docs/figures/crossval.json").read_text())
    assert set(data) == {"right", "left"}
    assert len(data["left"]["folds"]) == 3 and data["left"]["extra"] == ["--factor", "left"]
    assert data["left"]["against"]["name"] == "right"
    # A re-run resumes: the folds' parses are kept, nothing is trained again.
    again = _run(tmp_path, "--name", "right", "--config", "pcfg.toml")
    assert again.returncode == 0 and "fold 0:" not in again.stdout
    assert (
        json.loads((tmp_path / "docs/figures/crossval.json").read_text())["right"]["pooled_f1"]
        == data["right"]["pooled_f1"]
    )


def test_the_berkeley_parser_is_trained_on_normalised_rooted_trees(tmp_path: Path) -> None:
    """A stand-in ``java`` records the trainer's input and parses every sentence as the
    Berkeley parser writes its trees, ``( (S ...) )``."""
    _treebank(tmp_path)
    (tmp_path / "bk").mkdir()
    (tmp_path / "bk/BerkeleyParser-1.7.jar").write_text("")
    fake = tmp_path / "bin/java"
    fake.parent.mkdir()
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import sys, shutil\n"
        "a = sys.argv[1:]\n"
        "if '-path' in a:\n"
        "    shutil.copy(a[a.index('-path') + 1], a[a.index('-out') + 1] + '.input')\n"
        "else:\n"
        "    words = open(a[a.index('-inputFile') + 1]).read().splitlines()\n"
        "    with open(a[a.index('-outputFile') + 1], 'w') as fh:\n"
        "        for w in words:\n"
        "            fh.write('( (S ' + ' '.join('(X %s)' % x for x in w.split()) + ') )\\n')\n"
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    res = _run(tmp_path, "--name", "berkeley", "--berkeley", "bk", env=env)
    assert res.returncode == 0, res.stderr
    given = (tmp_path / "out/crossval/berkeley/held0.gr.input").read_text().splitlines()
    assert given and all(line.startswith("(ROOT ") for line in given)
    parsed = (tmp_path / "out/crossval/berkeley/held0.parsed").read_text().splitlines()
    assert all(line.startswith("(TOP (S ") for line in parsed)
    record = json.loads((tmp_path / "docs/figures/crossval.json").read_text())["berkeley"]
    assert record["method"] == "Berkeley parser, 4 cycles" and len(record["folds"]) == 3
