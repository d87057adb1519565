"""Latent unary rules (``--unaries``): the base grammar of collapsed chains, its E-step,
weight pushing, split and merge."""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.tree_charts import log_probabilities, tree_scores
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.grammar.unary_chains import UnaryChains
from lpcfg_cli.latent_pcfg import chain_em
from lpcfg_cli.latent_pcfg.em import EMLearner, EMOptions
from lpcfg_cli.latent_pcfg.splitmerge import SplitMergeLearner, SplitMergeOptions
from lpcfg_cli.model.chain_params import split_params, treebank_params
from lpcfg_cli.treebank.binarize import binarize
from lpcfg_cli.treebank.tree import Tree
from tests.support import latent_trees


def _with_chains(tree: Tree, k: list[int]) -> Tree:
    """``tree`` with some nodes put under unary chains (``X``, ``Y`` above a phrase, ``P``
    above a pre-terminal), in a fixed pattern."""
    if isinstance(tree[0], str):
        k[0] += 1
        return Tree("P", [tree]) if k[0] % 3 == 0 else tree
    kids = [_with_chains(child, k) for child in tree]
    node = Tree(tree.label(), kids)
    k[0] += 1
    if k[0] % 5 == 0:
        return Tree("X", [node])
    if k[0] % 7 == 0:
        return Tree("X", [Tree("Y", [node])])
    return node


@pytest.fixture(scope="module")
def bank():
    trees = [binarize(_with_chains(t, [0])) for t in latent_trees(300)]
    grammar, train = build_grammar(trees, rare=0)
    return grammar, train, UnaryChains.of(grammar)


def test_chain_symbols_factor_into_their_labels(bank):
    grammar, _, chains = bank
    assert chains.has_chains
    for a, name in enumerate(grammar.symbols):
        levels = [chains.symbols[b] for b in chains.chain(a)]
        assert "+".join(levels).replace("%t", "") == name.replace("%t", "")
        assert len(chains.chain_rules(a)) == len(levels) - 1
    # Every compiled rule over a chain maps to the rule over the chain's ends.
    for r, (a, b, c) in enumerate(grammar.binary):
        base = chains.binary[chains.binary_of[r]]
        assert base[0] == chains.bottom[a] and base[1] == chains.top[b]
        assert base[2] == chains.top[c]
    assert len(chains.binary) < grammar.n_binary  # pooled: X+A -> B C and A -> B C
    for lex, (a, w) in enumerate(grammar.lexical):
        assert tuple(chains.lexical[chains.lexical_of[lex]]) == (chains.bottom[a], w)


def test_expected_counts_are_the_gradient_of_the_log_likelihood(bank):
    """For every kind of parameter theta, its expected count is theta d log L / d theta."""
    grammar, train, chains = bank
    params = split_params(treebank_params(chains, grammar, train), chains, 2, 0.5, 0)
    plan = chain_em.ChainTrees(chains, grammar, train, 2)
    counts = plan.expected(params)
    rng = np.random.default_rng(0)
    for name in ("binary", "unary", "lexical", "root"):
        values, expected = getattr(params, name), getattr(counts, name)
        nonzero = np.argwhere(values > 1e-3)
        for i in nonzero[rng.choice(len(nonzero), 4, replace=False)]:
            bumped = params.copy()
            getattr(bumped, name)[tuple(i)] *= 1 + 1e-6
            numeric = (plan.loglik(bumped) - counts.loglik) / 1e-6
            assert expected[tuple(i)] == pytest.approx(numeric, rel=1e-3, abs=1e-6)
    # Counts add up: every binary node, chain link, word and root once.
    assert counts.binary.sum() == pytest.approx((train.rule >= 0).sum())
    assert counts.lexical.sum() == pytest.approx((train.lex >= 0).sum())
    assert counts.unary.sum() == pytest.approx((chains.depth[train.symbol] - 1).sum())
    assert counts.root.sum() == pytest.approx(train.n_trees)


def test_the_pushed_model_is_a_pcfg_with_the_same_tree_distribution(bank):
    grammar, train, chains = bank
    params = split_params(treebank_params(chains, grammar, train), chains, 2, 0.3, 1)
    coarse = chain_em.to_model(chains, grammar, treebank_params(chains, grammar, train), None, {})
    model = chain_em.to_model(chains, grammar, params, coarse.coarse, {})
    assert model.check_probabilistic() < 1e-9
    plan = chain_em.ChainTrees(chains, grammar, train, 2)
    compiled = _per_tree_loglik(plan, params)
    assert plan.loglik(params) == pytest.approx(compiled.sum())
    # Pushing divides every tree by the same constant, the compiled grammar's total mass,
    # which is below one by the mass of the chains the collapsed grammar lacks.
    ratio = tree_scores(model, train)[0] - compiled
    assert np.ptp(ratio) < 1e-8 and ratio[0] >= -1e-9


def _per_tree_loglik(plan, params) -> np.ndarray:
    """Each tree's log-probability under the compiled (unpushed) parameters."""
    p = params.chain_matrices(plan.chains)
    _, binary, lexical, root = params.compile(plan.chains, plan.grammar, p)
    g = plan.layout.with_parameters(binary, lexical, root)
    return log_probabilities(g, plan.charts)[0]


def test_a_split_without_noise_keeps_the_distribution_and_merging_undoes_it(bank):
    grammar, train, chains = bank
    pcfg = treebank_params(chains, grammar, train)
    split, halves = chain_em.split(pcfg, chains, 8, 0.0, np.random.default_rng(0))
    assert (split.states == 2).all() and halves[:, 0].all()
    plan1 = chain_em.ChainTrees(chains, grammar, train, 1)
    plan2 = chain_em.ChainTrees(chains, grammar, train, 2)
    assert plan2.loglik(split) == pytest.approx(plan1.loglik(pcfg))
    occ = plan2.expected(split, occurrences=True).occurrences
    loss, freq = chain_em.merge_loss(occ, chains.n_symbols, halves)
    assert np.abs(loss).max() < 1e-9  # merging exact copies loses nothing
    back = chain_em.merge(split, chains, halves, loss, freq, 1.0)
    assert (back.states == 1).all()
    for name in ("binary", "unary", "lexical"):
        np.testing.assert_allclose(getattr(back, name), getattr(pcfg, name), atol=1e-12)


def test_em_and_split_merge_with_unaries(bank):
    grammar, train, _ = bank
    data = TrainingData(grammar, train, {})
    em = EMLearner(EMOptions(states=2, iterations=6, unaries=True)).fit(data)
    history = [h["train_loglik"] for h in em.meta["history"]]
    assert all(b >= a - 1e-6 * abs(a) for a, b in zip(history, history[1:], strict=False))
    assert em.check_probabilistic() < 1e-9
    sm = SplitMergeLearner(
        SplitMergeOptions(cycles=2, iterations=4, max_states=4, unaries=True)
    ).fit(data)
    assert sm.check_probabilistic() < 1e-9 and sm.max_states <= 4
    plain = EMLearner(EMOptions(states=2, iterations=6, unaries=False)).fit(data)
    # The tied model has fewer parameters and fits the training trees less closely.
    assert tree_scores(em, train)[0].sum() < tree_scores(plain, train)[0].sum()
