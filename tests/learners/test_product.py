"""Products of grammars of several methods: ``registry.product`` from Python and
``lpcfg train --member CONFIG`` from the command line (docs/learners/splitmerge.md,
Products of grammars)."""

from __future__ import annotations

import pytest

from lpcfg_cli.errors import ParameterError, ParameterTypeError
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.learners.ensemble import Ensemble
from lpcfg_cli.learners.registry import learner, product
from lpcfg_cli.learners.registry import train as train_model
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import parse
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import words
from tests.support import invoke, latent_trees, one_error

SM = {"cycles": 1, "iterations": 2}
EM = {"states": 2, "iterations": 2}


@pytest.fixture(scope="module")
def trees():
    sample = latent_trees(160)
    return sample[:130], sample[130:]


@pytest.fixture()
def files(trees, tmp_path):
    """train.mrg and dev.mrg in ``tmp_path``, and a member config ``em.toml`` beside them."""
    train, held = trees
    for name, part in (("train.mrg", train), ("dev.mrg", held)):
        (tmp_path / name).write_text("".join(format_tree(t, root="TOP") + "\n" for t in part))
    (tmp_path / "em.toml").write_text(
        '[train]\nmethod = "em"\nstates = "2"\niterations = 2\nseed = 7\n[parse]\njobs = 1\n'
    )
    return tmp_path


def test_a_product_of_two_methods_bundles_one_model_of_each(trees):
    train, held = trees
    grammar, bank = build_grammar(train, rare=0)
    data = TrainingData(grammar, bank, {}, train)
    both = product(learner("splitmerge", seed=1, **SM), learner("em", seed=2, **EM))
    assert isinstance(both, Ensemble) and both.method == "splitmerge"
    model = both.fit(data)
    assert model.meta["ensemble"] == ["splitmerge", "em"]
    assert model.meta["splitmerge"]["seed"] == 1 and model.members[0].meta["em"]["seed"] == 2
    alone = learner("em", seed=2, **EM).fit(data)  # the member is the model EM trains alone
    assert (model.members[0].binary == alone.binary).all()
    parsed = list(parse(model, [words(t) for t in held[:5]]))
    assert [words(t) for t in parsed] == [words(t) for t in held[:5]]


def test_train_takes_members_of_other_methods(trees):
    train, _ = trees
    member = learner("splitmerge", seed=5, **SM)
    model = train_model(train, "em", members=[member], seed=1, **EM)
    assert model.meta["ensemble"] == ["em", "splitmerge"]
    assert model.meta["em"]["seed"] == 1 and model.members[0].meta["splitmerge"]["seed"] == 5


def test_an_ensemble_among_the_parts_gives_its_members():
    both = product(learner("em", ensemble=2, seed=4, **EM), learner("splitmerge", **SM))
    assert len(both.members) == 3 and both.options.ensemble == 3
    assert [m.inner.options.seed for m in both.members[:2]] == [4, 5]


def test_a_product_takes_a_start_model_only_if_every_member_does():
    assert product(learner("em", **EM), learner("em", seed=1, **EM)).takes_start
    assert not product(learner("em", **EM), learner("spectral", states=2)).takes_start


def test_a_product_needs_two_parsing_learners():
    with pytest.raises(ParameterError, match="two learners or more"):
        product(learner("em", **EM))
    with pytest.raises(ParameterTypeError, match="parsing learners"):
        product(learner("em", **EM), learner("kn2", family="lm"))
    with pytest.raises(ParameterTypeError, match="parsing learners"):
        product(learner("em", **EM), "em")


def test_each_members_check_runs():
    """A grid member without dev is refused by the product, as it would be alone."""
    both = product(learner("em", **EM), learner("splitmerge", smoothing=(0.1, 0.3), **SM))
    with pytest.raises(ParameterError, match="dev"):
        both.check(dev=False)


def test_cli_member_trains_the_configs_method_with_the_runs_seed(files):
    out = files / "p.npz"
    res = invoke(
        "train", "-q", "--method", "splitmerge", "--cycles", "1", "--iterations", "2",
        "--seed", "3", "--dev", files / "dev.mrg", "--member", files / "em.toml",
        files / "train.mrg", "-o", out,
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    model = LPCFG.load(out)
    assert model.meta["ensemble"] == ["splitmerge", "em"]
    assert model.meta["splitmerge"]["seed"] == 3
    em = model.members[0].meta["em"]
    assert em["seed"] == 3 and em["states"] == 2 and em["iterations"] == 2  # not the file's 7
    assert "ensemble_dev_f1" in model.meta


def test_cli_member_in_a_config_file_is_relative_to_it(files, tmp_path_factory):
    (files / "run.toml").write_text(
        '[train]\nmethod = "em"\nstates = "2"\niterations = 1\nmember = ["em.toml"]\n'
    )
    elsewhere = tmp_path_factory.mktemp("cwd")
    out = elsewhere / "p.npz"
    res = invoke("train", "-q", "--config", files / "run.toml", files / "train.mrg", "-o", out)
    assert res.exit_code == 0, res.stderr
    assert LPCFG.load(out).meta["ensemble"] == ["em", "em"]


@pytest.mark.parametrize("own", ["", 'conventions = "none"\n'])
def test_cli_member_reads_the_trees_with_the_runs_conventions(files, own):
    """How the treebank reads belongs to the data: a member config silent on it takes the
    run's --conventions, one that sets the same joins too."""
    (files / "x.toml").write_text('[train]\nmethod = "em"\nstates = 2\niterations = 1\n' + own)
    out = files / "p.npz"
    res = invoke(
        "train", "-q", "--method", "em", "--states", "2", "--iterations", "1",
        "--conventions", "none", "--member", files / "x.toml", files / "train.mrg", "-o", out,
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert LPCFG.load(out).meta["ensemble"] == ["em", "em"]


@pytest.mark.parametrize(
    ("member", "said"),
    [
        ('method = "em"\nrare = 3\n', "--rare 3 (this run: 1)"),
        ('method = "pcfg"\n', "--factor right (this run: left)"),
        ('method = "em"\nconventions = "none"\n', "other treebank conventions"),
        ('method = "em"\nencoding = "latin-1"\n', "--encoding latin-1 (this run: utf-8)"),
        ('method = "em"\nskip-bad = true\n', "--skip-bad (this run: off)"),
        ('method = "em"\nmember = ["x.toml"]\n', "a member cannot name members of its own"),
        ('method = "em"\nstatez = 2\n', "unknown option 'statez' in [train]"),
        ('method = "pcfg"\nfactor = "left"\nensemble = 2\n', "--ensemble needs a method"),
    ],
)
def test_cli_member_that_cannot_join_is_refused_before_training(files, member, said):
    (files / "x.toml").write_text("[train]\n" + member)
    out = files / "p.npz"
    res = invoke(
        "train", "--method", "em", "--states", "2", "--iterations", "1",
        "--member", files / "x.toml", files / "train.mrg", "-o", out,
    )  # fmt: skip
    one_error(res, said)
    assert str(files / "x.toml") in res.stderr and not out.exists()
    assert "ensemble member" not in res.stderr  # nothing was trained


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--input", "text"], "--member learns from trees only"),
        (["--init", "MODEL"], "drop --init"),
    ],
)
def test_cli_member_with_text_or_a_start_model_is_refused(files, extra, said):
    if "MODEL" in extra:
        start = files / "start.npz"
        made = invoke("train", "-q", "--method", "pcfg", files / "train.mrg", "-o", start)
        assert made.exit_code == 0, made.stderr
        extra = [str(start) if a == "MODEL" else a for a in extra]
    else:
        extra = [*extra, "--states", "2"]
    res = invoke(
        "train", "--method", "em", "--iterations", "1", *extra,
        "--member", files / "em.toml", files / "train.mrg", "-o", files / "p.npz",
    )  # fmt: skip
    one_error(res, said)
