"""Several values of a grid option (``Spec.grid``): one model per combination, dev F1
choosing (``learners.selection.OptionGrid``), from Python and from the command line."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from click.testing import CliRunner

from lpcfg_cli.cli.group import main
from lpcfg_cli.errors import ParameterError
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.learners.selection import EarlyStopping, OptionGrid
from lpcfg_cli.treebank.ptb import format_tree
from tests.support import latent_trees


@pytest.fixture(scope="module")
def trees():
    sample = latent_trees(300)
    return sample[:240], sample[240:]


def _dev(tmp_path, held, scorer=None) -> DevTrees:
    path = tmp_path / "dev.mrg"
    path.write_text("".join(format_tree(t, root="TOP") + "\n" for t in held))
    if scorer is None:
        from lpcfg_cli.parsing.dev_f1 import read_dev_trees

        return read_dev_trees([str(path)])
    return DevTrees.read([str(path)], scorer=scorer)


def _files(tmp_path, trees):
    """The training trees as ``train.mrg`` and the held-out ones as ``dev.mrg`` in
    ``tmp_path``; returns the training file."""
    train, held = trees
    train_file = tmp_path / "train.mrg"
    train_file.write_text("".join(format_tree(t, root="TOP") + "\n" for t in train))
    _dev(tmp_path, held)
    return train_file


def test_one_member_per_combination_each_value_once():
    grid = learner("splitmerge", smoothing=(0.1, 0.3, 0.1), merge=(0.5, 0.75), cycles=1)
    assert isinstance(grid, OptionGrid)
    chosen = [c for c, _ in grid.members]
    assert chosen == [
        {"merge": m, "smoothing": s} for m, s in itertools.product((0.5, 0.75), (0.1, 0.3))
    ]  # in the order the options class declares them
    for c, member in grid.members:
        assert isinstance(member, EarlyStopping)
        assert (member.inner.options.smoothing, member.inner.options.merge) == (
            c["smoothing"],
            c["merge"],
        )
        assert member.inner.options.cycles == 1
    # One value (or the same value twice) is no grid: the plain learner.
    assert isinstance(learner("splitmerge", smoothing=(0.3,)), EarlyStopping)
    assert isinstance(learner("splitmerge", smoothing=(0.3, 0.3)), EarlyStopping)


def test_a_grid_option_of_another_learner_is_still_one_value():
    with pytest.raises(ParameterError):  # spectral's states grid is its own selection
        learner("em", states=(2, 4))


def test_the_best_on_dev_is_kept_and_every_combination_recorded(trees, tmp_path):
    train, held = trees
    grammar, bank = build_grammar(train, rare=0)
    data = TrainingData(grammar, bank, {}, train)
    # A planted scorer: dev F1 is highest for smoothing 0.3, whatever the trees say.
    planted = {0.1: 50.0, 0.3: 70.0, 0.5: 60.0}

    def scorer(model, dev):
        return planted.get(model.meta.get("em", {}).get("smoothing"), 0.0)

    dev = _dev(tmp_path, held, scorer)
    grid = learner("em", states=2, iterations=2, smoothing=(0.1, 0.3, 0.5), dev_f1_every=1)
    model = grid.fit(data, dev=dev)
    assert model.meta["em"]["smoothing"] == 0.3
    history = model.meta["option_grid"]
    assert [(r["smoothing"], r["dev_f1"]) for r in history] == sorted(planted.items())


def test_a_grid_without_dev_is_refused_before_training(trees):
    train, _ = trees
    grammar, bank = build_grammar(train, rare=0)
    grid = learner("splitmerge", smoothing=(0.1, 0.3))
    with pytest.raises(ParameterError, match="need"):
        grid.fit(TrainingData(grammar, bank, {}, train))


def test_cli_trains_each_value_and_says_what_dev_chose(trees, tmp_path):
    train_file = _files(tmp_path, trees)
    out = tmp_path / "m.npz"
    args = ["train", "--method", "splitmerge", "--cycles", "1", "--iterations", "2"]
    args += ["--smoothing", "0.1,0.3", "--dev", str(tmp_path / "dev.mrg"), "--no-progress"]
    result = CliRunner().invoke(main, [*args, str(train_file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "smoothing 0.1: dev F1" in result.output and "smoothing 0.3: dev F1" in result.output
    assert "selected smoothing" in result.output and out.exists()
    refused = CliRunner().invoke(
        main,
        [
            "train",
            "--method",
            "splitmerge",
            "--smoothing",
            "0.1,0.3",
            str(train_file),
            "-o",
            str(tmp_path / "x.npz"),
        ],  # fmt: skip
    )
    assert refused.exit_code == 2 and "need --dev" in refused.output
    assert not (tmp_path / "x.npz").exists()


def test_grid_options_are_marked_in_their_spec():
    from lpcfg_cli.latent_pcfg.splitmerge import SplitMergeOptions

    marked = {
        f.name
        for f in dataclasses.fields(SplitMergeOptions)
        if f.metadata.get("hyper") and f.metadata["hyper"].grid
    }
    assert marked == {"smoothing", "merge"}


def test_a_config_file_gives_a_grid_as_an_array(trees, tmp_path):
    train_file = _files(tmp_path, trees)
    config = tmp_path / "grid.toml"
    config.write_text(
        '[train]\nmethod = "splitmerge"\ncycles = 1\niterations = 2\nsmoothing = [0.1, 0.3]\n'
        'dev = "dev.mrg"\n'
    )
    out = tmp_path / "m.npz"
    args = ["train", "--config", str(config), "--no-progress", str(train_file), "-o", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "selected smoothing" in result.output
    for bad, said in (
        ("smoothing = [true, 0.3]", "takes a list of numbers or names"),
        ("smoothing = []", "takes a list of numbers or names"),
        ("smoothing = [0.1, 2.0]", "at most 1"),
        ("cycles = [1, 2]", "takes one value, not a list"),  # not a grid option
    ):
        config.write_text(f'[train]\nmethod = "splitmerge"\n{bad}\n')
        refused = CliRunner().invoke(main, args)
        assert refused.exit_code == 2 and said in refused.output, (bad, refused.output)
