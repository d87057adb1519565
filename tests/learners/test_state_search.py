"""Per-nonterminal state counts chosen on dev F1 (``statesearch.search_states``, spectral
and pivot ``--state-search`` through ``selection.StateSelection``; Narayan & Cohen 2016)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.latent_pcfg.consistency import pivot_lpcfg
from lpcfg_cli.latent_pcfg.features import TreeSample
from lpcfg_cli.latent_pcfg.pivot import PivotEstimator, PivotOptions
from lpcfg_cli.latent_pcfg.spectral import SpectralEstimator, SpectralOptions
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.learners.statesearch import search_states
from lpcfg_cli.model.sampling import sample_trees
from lpcfg_cli.parsing.dev_f1 import read_dev_trees
from lpcfg_cli.treebank.ptb import format_tree
from tests.support import invoke


class _Dev:
    """A dev set whose F1 is a known function of the model's state counts."""

    def __init__(self, objective):
        self.objective = objective
        self.scored: list[tuple[int, ...]] = []

    def f1(self, model) -> float:
        self.scored.append(tuple(model.states.tolist()))
        return self.objective(model.states)


def _build(states: np.ndarray):
    return SimpleNamespace(states=states.copy())


def test_coordinate_ascent_reaches_a_separable_optimum_in_one_round():
    target = np.array([3, 1, 4])
    dev = _Dev(lambda s: 90.0 - float(((s - target) ** 2).sum()))
    best, states, history = search_states(
        _build, np.array([2, 2, 2]), [0, 1, 2], [[1, 2, 3, 4]] * 3, dev, passes=1
    )
    assert states.tolist() == [3, 1, 4] and best.states.tolist() == [3, 1, 4]
    # The start, then each symbol's three other counts.
    assert len(dev.scored) == 1 + 3 * 3 == len(history)
    assert [r["kept"] for r in history].count(True) == 1
    kept = next(r for r in history if r["kept"])
    assert kept["dev_f1"] == 90.0 and kept["symbol"] == 2 and kept["states"] == 4


def test_ties_keep_the_current_count_and_no_vector_is_scored_twice():
    # Symbol 1 does not matter: its counts tie, so it stays where it started.
    dev = _Dev(lambda s: 80.0 + float(s[0]))
    _, states, _ = search_states(
        _build, np.array([1, 2]), [0, 1], [[1, 2, 3], [1, 2, 3]], dev, passes=3
    )
    assert states.tolist() == [3, 2]
    assert len(dev.scored) == len(set(dev.scored))


def test_a_scored_start_is_not_built_or_parsed_again():
    built = []

    def build(states):
        built.append(states.tolist())
        return _build(states)

    dev = _Dev(lambda s: -float(s[0]))
    start = _build(np.array([2]))
    best, states, history = search_states(
        build, start.states, [0], [[1, 2, 3]], dev, scored=(start, -2.0)
    )
    assert [2] not in built and (2,) not in dev.scored
    assert states.tolist() == [1] and history[0]["dev_f1"] == -2.0


def test_one_candidate_list_per_symbol():
    with pytest.raises(ValueError):
        search_states(_build, np.array([1, 1]), [0, 1], [[1, 2]], _Dev(lambda s: 0.0))


@pytest.fixture(scope="module")
def synthetic():
    truth = pivot_lpcfg()
    trees = sample_trees(truth, 1200, seed=5)
    return trees[:1000], trees[1000:]


def test_model_for_is_the_model_of_the_same_counts(synthetic):
    train, _ = synthetic
    grammar, bank = build_grammar(train, rare=0)
    est = SpectralEstimator(TreeSample(grammar, bank, train), SpectralOptions(state_count=0))
    a, b = est.model(2), est.model_for(est.states_for(2))
    assert (a.states == b.states).all()
    np.testing.assert_array_equal(a.binary, b.binary)
    np.testing.assert_array_equal(a.lexical, b.lexical)
    low = est.states_for(2)
    low[0] = 1
    assert est.model_for(low).states[0] == 1
    with pytest.raises(ValueError):
        est.model_for(est.bounds() + 1)


def _learning(synthetic, tmp_path) -> tuple[TrainingData, DevTrees, Path]:
    """The synthetic training trees as learners take them, and the held-out ones as a dev
    file and dev trees scored by parsing."""
    train, dev_trees = synthetic
    dev_file = tmp_path / "dev.mrg"
    dev_file.write_text("".join(format_tree(t, root="TOP") + "\n" for t in dev_trees))
    grammar, bank = build_grammar(train, rare=0)
    return TrainingData(grammar, bank, {}, train), read_dev_trees([str(dev_file)]), dev_file


def test_spectral_state_search_keeps_its_best_on_dev(synthetic, tmp_path):
    data, dev, _ = _learning(synthetic, tmp_path)
    spectral = learner(
        "spectral",
        states=(1,),
        state_count=0,
        state_search=2,
        search_states=(1, 2),
        search_symbols=3,
    )
    model = spectral.fit(data, dev=dev)
    history = model.meta["state_search"]
    start, tried = history[0], history[1:]
    assert start["symbol"] is None and tried
    assert all(r["states"] == 2 for r in tried[:3])  # first round: each symbol tries 2
    kept = [r for r in history if r["kept"]]
    assert len(kept) == 1 and kept[0]["dev_f1"] == max(r["dev_f1"] for r in history)
    assert model.meta["dev_grid"][0]["states"] == 1
    # The kept model is the one scored: parsing dev with it gives its recorded F1.
    assert round(dev.f1(model), 2) == kept[0]["dev_f1"]


def test_cli_refuses_a_search_it_cannot_run(tmp_path):
    trees = tmp_path / "t.mrg"
    trees.write_text("(S (NP (DT the) (NN cat)) (VP (VBD sat)))\n" * 3)
    r = invoke("train", "--method", "spectral", "--state-search", "1", trees, "-o", tmp_path / "m")
    assert r.exit_code == 2 and "--state-search needs --dev" in r.output
    r = invoke(
        "train", "--method", "spectral", "--search-states", "4,8", trees, "-o", tmp_path / "m"
    )
    assert r.exit_code == 2 and "--search-states has no effect without --state-search" in r.output
    r = invoke("train", "--method", "em", "--state-search", "1", trees, "-o", tmp_path / "m")
    assert r.exit_code == 2 and "used by spectral" in r.output


def test_pivot_model_for_caps_symbols_one_at_a_time(synthetic):
    train, _ = synthetic
    grammar, bank = build_grammar(train, rare=0)
    est = PivotEstimator(TreeSample(grammar, bank, train), PivotOptions(state_count=0))
    full = est.model(2)
    same = est.model_for(np.full(grammar.n_symbols, 2))
    np.testing.assert_array_equal(full.binary, same.binary)
    np.testing.assert_array_equal(full.lexical, same.lexical)
    a = grammar.symbol_index["S"] if "S" in grammar.symbol_index else 0
    caps = np.full(grammar.n_symbols, 2)
    caps[a] = 1
    capped = est.model_for(caps)
    assert capped.meta["distinct_states"][grammar.symbols[a]] == 1
    assert capped.max_states == 2  # padded with copies: EM can still start from it


def test_pivot_state_search_records_its_choice(synthetic, tmp_path):
    data, dev, dev_file = _learning(synthetic, tmp_path)
    pivot = learner(
        "pivot",
        states=2,
        state_count=0,
        state_search=1,
        search_states=(1, 2, 3),
        search_symbols=2,
    )
    model = pivot.fit(data, dev=dev)
    history = model.meta["state_search"]
    # Each symbol tries 1: 3 would pad every symbol to 3 states, and is above --states.
    assert history[0]["symbol"] is None and len(history) == 1 + 2
    assert all(r["states"] == 1 for r in history[1:])
    assert model.meta["dev_f1"] == max(r["dev_f1"] for r in history)
    assert round(dev.f1(model), 2) == model.meta["dev_f1"]
    r = invoke("train", "--method", "pivot", "--state-search", "1", dev_file, "-o", tmp_path / "m")
    assert r.exit_code == 2 and "--state-search needs --dev" in r.output
