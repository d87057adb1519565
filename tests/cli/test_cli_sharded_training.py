"""An ensemble trained across machines: each member as its own `lpcfg train --seed S` job,
then `lpcfg bundle`, is the model `lpcfg train --ensemble N --seed S0` trains in one process
(the documented make -j / Slurm array recipe, docs/parsing.md)."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.treebank.ptb import format_tree
from tests.support import invoke, synthetic_treebank


@pytest.mark.parametrize("method", ["em", "splitmerge"])
def test_members_trained_apart_and_bundled_are_the_one_process_ensemble(method, tmp_path):
    trees = synthetic_treebank(tmp_path, 140, 20)
    (tmp_path / "train.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[:110]))
    (tmp_path / "dev.mrg").write_text("".join(format_tree(t) + "\n" for t in trees[110:]))
    options = ["--method", method, "--iterations", "3", "--dev", tmp_path / "dev.mrg", "-q"]
    options += ["--states", "2"] if method == "em" else ["--cycles", "2", "--max-states", "4"]
    train = ["train", tmp_path / "train.mrg", *options]
    together = invoke(*train, "--ensemble", "3", "--seed", "5", "-o", tmp_path / "all.npz")
    assert together.exit_code == 0, together.output
    for seed in (5, 6, 7):  # one job each: a Slurm array task, or a make -j target
        alone = invoke(*train, "--seed", seed, "-o", tmp_path / f"m{seed}.npz")
        assert alone.exit_code == 0, alone.output
    bundled = invoke("bundle", *(tmp_path / f"m{s}.npz" for s in (5, 6, 7)), "-o",
                     tmp_path / "bundled.npz", "-q")  # fmt: skip
    assert bundled.exit_code == 0, bundled.output
    a, b = LPCFG.load(tmp_path / "all.npz"), LPCFG.load(tmp_path / "bundled.npz")
    assert len(a.members) == len(b.members) == 2
    for x, y in zip((a, *a.members), (b, *b.members), strict=True):
        for key in ("states", "binary", "lexical", "root"):
            np.testing.assert_array_equal(getattr(x, key), getattr(y, key), err_msg=key)
    # And they parse alike.
    text = tmp_path / "test.txt"
    for name in ("all", "bundled"):
        result = invoke("parse", tmp_path / f"{name}.npz", text, "-o", tmp_path / f"{name}.out")
        assert result.exit_code == 0, result.output
    assert (tmp_path / "all.out").read_bytes() == (tmp_path / "bundled.out").read_bytes()
