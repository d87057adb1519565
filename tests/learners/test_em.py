"""EM (Matsuzaki et al. 2005) on trees sampled from known L-PCFGs."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.latent_pcfg.em import EMLearner, EMOptions, Params, Trees, e_step
from lpcfg_cli.latent_pcfg.split import split_model
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.treebank.tree import iter_nodes
from tests.support import fit_em, latent_tree_prob, rule_tree


@pytest.fixture(scope="module")
def truth():
    return random_lpcfg(
        inter=3,
        pre=3,
        words=8,
        states=2,
        rules_per_symbol=3,
        words_per_tag=4,
        seed=31,
        concentration=0.5,
    )


@pytest.fixture(scope="module")
def treebank(truth):
    trees = sample_trees(truth, 3000, seed=32)
    grammar, bank = build_grammar(trees, rare=0)
    return trees, grammar, bank


def reindex(truth, grammar):
    """The true model's parameters on a grammar indexed from its sampled trees."""
    from lpcfg_cli.model.lpcfg import LPCFG

    tg = truth.grammar
    model = LPCFG.zeros(grammar, np.full(grammar.n_symbols, 2), truth.coarse)
    for r, (a, b, c) in enumerate(grammar.binary):
        rt = tg.rule_id(*(tg.symbol_index[grammar.symbols[x]] for x in (a, b, c)))
        model.binary_tensor(r)[:] = truth.binary_tensor(rt)
    for lx, (a, w) in enumerate(grammar.lexical):
        lt = tg.lexical_id(tg.symbol_index[grammar.symbols[a]], tg.words.index(grammar.words[w]))
        model.lexical_vector(lx)[:] = truth.lexical_vector(lt)
    for a in range(grammar.n_symbols):
        model.root_vector(a)[:] = truth.root_vector(tg.symbol_index[grammar.symbols[a]])
    return model


def test_e_step_likelihood_and_counts_match_brute_force(truth, treebank):
    trees, grammar, bank = treebank
    small = [t for t in trees if len(list(iter_nodes(t))) <= 7][:5]
    g2, b2 = build_grammar(small, rare=0)
    model = reindex(truth, g2)
    params = Params.from_model(model)
    stats = e_step(params, Trees(g2, b2, params.lexical.shape[1]))
    brute = sum(np.log(latent_tree_prob(model, rule_tree(g2, t))) for t in small)
    assert stats.loglik == pytest.approx(brute)
    # Every node's posterior over its states sums to one: counts per symbol = node counts.
    per_symbol = np.zeros(g2.n_symbols)
    np.add.at(per_symbol, g2.binary[:, 0], stats.binary.sum(axis=(1, 2)))
    np.add.at(per_symbol, g2.lexical[:, 0], stats.lexical.sum(axis=1))
    np.testing.assert_allclose(per_symbol, np.bincount(b2.symbol, minlength=g2.n_symbols))
    assert stats.root.sum() == pytest.approx(len(small))


def test_likelihood_never_decreases_and_model_is_valid(treebank):
    _, grammar, bank = treebank
    model = fit_em(
        grammar, bank, states=2, iterations=8, seed=1, smoothing=0.0, lexicon_smoothing=0.0, tol=0.0
    )
    lls = [h["train_loglik"] for h in model.meta["history"]]
    assert len(lls) == 8
    assert all(b >= a - 1e-6 * abs(a) for a, b in zip(lls, lls[1:], strict=False))
    assert lls[-1] > lls[0]
    assert model.check_probabilistic() < 1e-9
    assert model.meta["method"] == "em" and len(model.meta["history"]) == 8


def test_seed_makes_runs_reproducible(treebank):
    _, grammar, bank = treebank
    a = fit_em(grammar, bank, states=2, iterations=2, seed=5)
    b = fit_em(grammar, bank, states=2, iterations=2, seed=5)
    c = fit_em(grammar, bank, states=2, iterations=2, seed=6)
    np.testing.assert_array_equal(a.binary, b.binary)
    assert not np.allclose(a.binary, c.binary)


def test_em_approaches_the_true_models_likelihood(truth, treebank):
    trees, grammar, bank = treebank
    model = fit_em(
        grammar,
        bank,
        states=2,
        iterations=60,
        seed=2,
        noise=0.5,
        smoothing=0.0,
        lexicon_smoothing=0.0,
        tol=1e-9,
    )
    learned = model.meta["history"][-1]["train_loglik"]
    mapped = reindex(truth, grammar)
    params = Params.from_model(mapped)
    true_ll = e_step(params, Trees(grammar, bank, params.lexical.shape[1]), counts=False).loglik
    pcfg_ll = model.meta["history"][0]["train_loglik"]
    # EM (a local optimum of a sample likelihood) ends close to or above the truth, far
    # above where it started.
    assert learned > pcfg_ll
    assert learned >= true_ll - 0.01 * abs(true_ll)


def test_em_keeps_per_symbol_state_counts(treebank):
    """A start model whose symbols have 1, 2 or 3 states (as split-merge and the spectral
    learner give): the padded E-step matches brute force, EM keeps every symbol's count,
    the likelihood never decreases and every distribution stays normalised."""
    trees, grammar, bank = treebank
    pcfg = train_pcfg(grammar, bank, {})
    states = 1 + np.arange(grammar.n_symbols) % 3
    start = split_model(pcfg, states, noise=0.3, seed=4)
    assert start.check_probabilistic() < 1e-9
    small = [t for t in trees if len(list(iter_nodes(t))) <= 7][:5]
    g2, b2 = build_grammar(small, rare=0)
    sub = split_model(train_pcfg(g2, b2, {}), 1 + np.arange(g2.n_symbols) % 3, noise=0.3)
    params = Params.from_model(sub)
    got = e_step(params, Trees(g2, b2, params.lexical.shape[1]), counts=False).loglik
    brute = sum(np.log(latent_tree_prob(sub, rule_tree(g2, t))) for t in small)
    assert got == pytest.approx(brute)
    options = EMOptions(iterations=4, tol=0.0, smoothing=0.0, lexicon_smoothing=0.0)
    model = EMLearner(options).fit(TrainingData(grammar, bank, {}), start=start)
    np.testing.assert_array_equal(model.states, states)
    assert model.check_probabilistic() < 1e-9
    lls = [h["train_loglik"] for h in model.meta["history"]]
    assert all(b >= a - 1e-6 * abs(a) for a, b in zip(lls, lls[1:], strict=False))
    assert lls[-1] > lls[0]
    # Smoothing toward the state average must average over a symbol's own states only.
    smoothed = EMLearner(EMOptions(iterations=2)).fit(TrainingData(grammar, bank, {}), start=start)
    assert smoothed.check_probabilistic() < 1e-9


def test_uniform_counts_split_as_a_single_number_does(treebank):
    _, grammar, bank = treebank
    pcfg = train_pcfg(grammar, bank, {})
    a = split_model(pcfg, 2, noise=0.2, seed=3)
    b = split_model(pcfg, np.full(grammar.n_symbols, 2), noise=0.2, seed=3)
    np.testing.assert_array_equal(a.binary, b.binary)
    np.testing.assert_array_equal(a.lexical, b.lexical)
