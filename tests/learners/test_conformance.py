"""Every method of every family in the registry keeps the learner protocol: the same checks
over each (``learners.registry.FAMILIES``), so that a new learner is held to them as soon as
it is registered.

For each method: its options are frozen dataclasses whose defaults pass their own checks;
it fits tiny data and returns its family's model; the same seed gives the same model; the
model survives ``save_model``/``load_model`` (the one opener) and is usable (a parsing model
parses one tree per sentence and records its decoder; a language model scores text); a bad
option value is a ``ParameterError`` naming the parameter (never a flag); with dev trees the
scorer it is handed is asked for the decoder the learner records.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import lpcfg_cli as lp
from lpcfg_cli.files.packed_arrays import as_stored
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.hyperparams import check, hyper_fields
from lpcfg_cli.learners.registry import FAMILIES
from lpcfg_cli.lm.perplexity import perplexity
from lpcfg_cli.model.lpcfg import without_timings
from lpcfg_cli.topology_models.samples import draw_sentences
from lpcfg_cli.topology_models.topology_file import TopologyModel, _arrays
from lpcfg_cli.topology_models.unmix_learners import TopologyData
from tests.support import synthetic_treebank

# Small settings that let each method fit the tiny data quickly.
SMALL = {
    "pcfg": {},
    "em": {"states": 2, "iterations": 2},
    "spectral": {"states": 2},
    "pivot": {"states": 2, "min_count": 1},
    "pivot+em": {"states": 2, "iterations": 2, "min_count": 1},
    "splitmerge": {"cycles": 1, "iterations": 2, "max_states": 2},
    "wcfg": {"states": 2},
    "wcfg-unsupervised": {"states": 1, "insides": 4, "outsides": 3, "steps": 3},
    "kn2": {},
    "kn3": {},
    "em_lm": {"states": 2, "iterations": 2},
    "pivot_lm": {"states": 2},
    "pivot+em_lm": {"states": 2, "iterations": 2},
    "pcfg-ie": {"states": 2, "length_max": 5},
    "dep-ies": {"length_max": 4},
}
CASES = [(family, name) for family, methods in FAMILIES.items() for name in methods]


def small(family: str, name: str) -> dict:
    key = f"{name}_lm" if family == "lm" and f"{name}_lm" in SMALL else name
    return SMALL.get(key, {})


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Tiny data of each family: a synthetic treebank (trees of a 2-state L-PCFG, prepared
    per binarization), its sentences for the language models."""
    d = tmp_path_factory.mktemp("conformance")
    trees = synthetic_treebank(d, 150, 20)
    (d / "train.mrg").write_text("".join(lp.format_tree(t) + "\n" for t in trees))
    sentences = [lp.words(t) for t in trees]
    return {"dir": d, "trees": trees, "sentences": sentences}


def fit(family: str, name: str, data, **extra):
    learner = lp.learner(name, family=family, **{**small(family, name), **extra})
    if family == "parsing":
        inputs = lp.prepare([str(data["dir"] / "train.mrg")], lp.binarization(name), rare=0)
    elif family == "topology":
        sentences = data["sentences"]
        short = [s[:2] for s in sentences[:50]] + [s[:3] for s in sentences[50:100]]
        inputs = TopologyData.from_sentences(short + sentences, learner.options.length_max)
    else:
        inputs = data["sentences"]
    return learner.fit(inputs)


def arrays_of(model) -> dict[str, np.ndarray]:
    if isinstance(model, lp.LPCFG):
        return {k: getattr(model, k) for k in ("states", "binary", "lexical", "root")}
    if isinstance(model, TopologyModel):
        return {"length_counts": model.length_counts, **_arrays(model.family, model.params)}
    return model.to_arrays()[0]


@pytest.mark.parametrize(("family", "name"), CASES)
def test_options_are_frozen_dataclasses_whose_defaults_pass_their_checks(family, name):
    spec = FAMILIES[family][name]
    for cls in spec.option_classes():
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        options = cls()
        check(options)
        for f, help_spec in hyper_fields(cls):
            assert help_spec.help, (cls, f.name)


@pytest.mark.parametrize(("family", "name"), CASES)
def test_fits_saves_loads_and_is_usable(family, name, data, tmp_path):
    model = fit(family, name, data)
    path = tmp_path / "m.npz"
    lp.save_model(model, path)
    again = lp.load_model(path)
    assert type(again) is type(model)
    compact = family == "parsing" and again.meta["storage"]["dtype"] == "float32"
    for key, value in arrays_of(model).items():
        if compact and key != "states":  # float32, entries the parser flushes dropped
            value = as_stored(value)
        np.testing.assert_array_equal(value, arrays_of(again)[key], err_msg=key)
    sentences = data["sentences"][:5]
    if family == "parsing":
        assert again.meta["method"] == name
        assert again.meta["decode"] in ("max-bracket", "max-marginal")
        trees = list(lp.parse(again, sentences))
        assert [lp.words(t) for t in trees] == sentences
    elif family == "topology":
        assert again.family == name
        drawn = list(draw_sentences(again, 5, seed=1))
        assert len(drawn) == 5 and all(set(s) <= set(again.vocab) for s in drawn)
    else:
        assert again.method == name
        assert math.isfinite(perplexity(again, sentences).perplexity)


@pytest.mark.parametrize(("family", "name"), CASES)
def test_the_same_seed_gives_the_same_model(family, name, data):
    first, second = fit(family, name, data), fit(family, name, data)
    for key, value in arrays_of(first).items():
        np.testing.assert_array_equal(value, arrays_of(second)[key], err_msg=key)
    assert without_timings(first.meta) == without_timings(second.meta)


@pytest.mark.parametrize(("family", "name"), CASES)
def test_a_bad_option_is_an_error_naming_the_parameter(family, name):
    spec = FAMILIES[family][name]
    with pytest.raises(lp.ParameterError) as caught:
        lp.learner(name, family=family, no_such_option=1)
    assert "no_such_option" in str(caught.value) and "--" not in str(caught.value)
    numeric = [
        (f.name, s.min)
        for cls in spec.option_classes()
        for f, s in hyper_fields(cls)
        if s.min is not None and not isinstance(f.default, (tuple, dict, bool, str))
    ]
    for field, low in numeric[:3]:
        with pytest.raises(lp.ParameterError) as caught:
            lp.learner(name, family=family, **{field: low - 1})
        assert field in str(caught.value) and "--" not in str(caught.value)


@pytest.mark.parametrize("name", [n for n in FAMILIES["parsing"] if n != "pcfg"])
def test_dev_trees_are_scored_with_the_decoder_the_learner_records(name, data):
    learner = lp.learner(name, **small("parsing", name))
    if not learner.takes_dev:
        pytest.skip(f"{name} selects nothing on dev data")
    asked = []

    def scorer(model, dev):
        asked.append(dev.decode)
        return 50.0

    trees = data["trees"][:10]
    dev = DevTrees(
        ("dev",), [lp.format_tree(t) for t in trees], [lp.words(t) for t in trees], trees, scorer
    )
    inputs = lp.prepare([str(data["dir"] / "train.mrg")], lp.binarization(name), rare=0)
    model = learner.fit(inputs, dev)
    assert asked and set(asked) == {model.meta["decode"]}
