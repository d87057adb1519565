"""The README's Python example runs as written (on a synthetic treebank in its paths)."""

from __future__ import annotations

import re
from pathlib import Path

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import synthetic_treebank

README = Path(__file__).parent.parent / "README.md"


def test_the_python_example_trains_parses_prints_and_scores(tmp_path, monkeypatch, capsys):
    block = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "README.md has no Python example"
    data = tmp_path / "data"
    data.mkdir()
    trees = synthetic_treebank(data, 400, 60)
    (data / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees))
    (data / "dev.mrg").write_text((data / "test.mrg").read_text())
    monkeypatch.chdir(tmp_path)
    exec(compile(block.group(1), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.count("(N0") == 2  # two nltk trees, pretty-printed from the root N0
    assert 0.0 <= float(printed.splitlines()[-1]) <= 100.0


def test_the_topology_models_example_runs_as_printed(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    block = next(b for b in blocks if "topology_models" in b)
    exec(compile(block, "README.md", "exec"), {})
    verdict, error = capsys.readouterr().out.split("\n")[:2]
    assert verdict == "True 7 7"
    assert abs(float(error) - 0.0198) < 5e-4
