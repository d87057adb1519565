"""EM's plan cache (``latent.PlanCache``) and weighted observed trees.

EM runs the latent pass over the same items every iteration; with a cache the chunks'
structural plans are built once and only their pair scales refreshed. Passes with and
without it must give the same log-likelihoods and expected counts, also when a span loses
all its mass in one pass (a parameter exactly 0: the uncached plan drops its splits) and
regains it in the next. Merged identical trees, weighted by their counts, must train as
the repeated trees do.
"""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine import kernels
from lpcfg_cli.engine import string_charts as strings
from lpcfg_cli.engine.latent import PlanBudget
from lpcfg_cli.engine.string_charts import StringCharts
from lpcfg_cli.engine.tree_charts import ExpectedCounts, expected_counts, log_probabilities
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.training_data import bracketed_data, text_data
from lpcfg_cli.latent_pcfg.em import (
    EMLearner,
    EMOptions,
    Params,
    Strings,
    Trees,
    _EStep,
    e_step,
    m_step,
)
from lpcfg_cli.latent_pcfg.split import random_model, split_model
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.model.treebank_pcfg import string_pcfg, train_pcfg
from tests.support import binary_trees

RTOL = 1e-14


def same_step(a: _EStep | ExpectedCounts, b: _EStep | ExpectedCounts) -> None:
    """Two E-steps agree (log-likelihood and every expected count)."""
    assert a.loglik == pytest.approx(b.loglik, rel=RTOL, abs=0)
    for x, y in ((a.binary, b.binary), (a.lexical, b.lexical), (a.root, b.root)):
        np.testing.assert_allclose(x, y, rtol=RTOL, atol=0)


def uncached(plan: Trees | Strings) -> Trees | Strings:
    """A plan's twin that plans every pass afresh."""
    if isinstance(plan, Trees):
        plan.cache = None
    else:
        plan.caches = None
    return plan


@pytest.fixture
def plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of ``kernels.plan_chunk`` calls (the latent pass looks it up on the
    module every chunk)."""
    calls = [0]
    plan_chunk = kernels.plan_chunk

    def counted(*args):
        calls[0] += 1
        return plan_chunk(*args)

    monkeypatch.setattr(kernels, "plan_chunk", counted)
    return calls


def em_both_ways(
    grammar: Grammar,
    cached: Trees | Strings,
    fresh: Trees | Strings,
    params: Params,
    n_roots: float,
    plans: list[int],
) -> None:
    """Four EM iterations with and without the cache: identical E-steps throughout; only
    the first cached pass plans chunks."""
    for it in range(4):
        before = plans[0]
        a = e_step(params, cached)
        assert (plans[0] > before) == (it == 0)
        same_step(a, e_step(params, fresh))
        assert e_step(params, cached, counts=False).loglik == pytest.approx(a.loglik, rel=RTOL)
        params = m_step(grammar, params, a, n_roots, 0.0, None, 0.0)


def test_cached_em_from_strings_equals_uncached(plans: list[int]) -> None:
    rng = np.random.default_rng(3)
    text = [[str(w) for w in rng.integers(0, 2, size=rng.integers(1, 12))] for _ in range(60)]
    data = text_data(text, words=["0", "1"])
    g = data.grammar
    params = Params.from_model(random_model(string_pcfg(g, data.text), 3, seed=1))

    def make() -> Strings:  # several blocks: one cache each, sharing a budget
        charts = StringCharts.from_ids(g, data.text.ids, max_spans=200)
        assert len(charts.blocks) > 2
        return Strings(g, charts, data.text.counts, 3)

    em_both_ways(g, make(), uncached(make()), params, data.text.total, plans)


def test_cached_em_on_trees_equals_uncached(plans: list[int]) -> None:
    truth = random_lpcfg(
        inter=3, pre=3, words=8, states=2, rules_per_symbol=3, words_per_tag=4, seed=5
    )
    grammar, bank = build_grammar(sample_trees(truth, 300, seed=6), rare=0)
    params = Params.from_model(split_model(train_pcfg(grammar, bank, {}), 3, noise=0.2, seed=2))
    cached, fresh = Trees(grammar, bank, 3), uncached(Trees(grammar, bank, 3))
    em_both_ways(grammar, cached, fresh, params, bank.n_trees, plans)


def dead_pair_params(alive: bool) -> Params:
    """Single symbol X, words a, b, 2 states: ``a`` only from state 0, ``b`` only from
    state 1, and (unless ``alive``) ``t(h -> 0 0) = 0``, so that every span ``a a`` has no
    mass while ``a a b`` still has (through ``a (a b)``)."""
    t = np.full((2, 2, 2), 0.1)
    if not alive:
        t[:, 0, 0] = 0.0
    q = np.array([[0.5, 0.0], [0.0, 0.5]])
    return Params(np.array([2]), t.reshape(1, 2, 4), q, np.array([[0.6, 0.4]]))


def test_a_span_without_mass_then_with_mass_strings() -> None:
    """The cache's first pass sees ``a a`` without mass; its plan must keep the splits
    through it, which the next pass (``a a`` alive) needs."""
    sentences = [["a", "a", "b"], ["b", "a", "a", "b"], ["a", "a", "a", "b"], ["a", "b"]]
    data = text_data(sentences, words=["a", "b"])
    g = data.grammar

    def make() -> Strings:
        return Strings(g, StringCharts.from_ids(g, data.text.ids), data.text.counts, 2)

    cached, fresh = make(), uncached(make())
    for alive in (False, True, False, True):
        params = dead_pair_params(alive)
        a, b = e_step(params, cached), e_step(params, fresh)
        same_step(a, b)
        assert np.isfinite(a.loglik)


def test_a_span_without_mass_then_with_mass_trees() -> None:
    """A tree through ``(a a)`` has probability 0 while ``t(h -> 0 0) = 0``: scored (inside
    pass, filling the cache) and then, alive, counted exactly as without the cache."""
    x = ["a", "a", "b"]
    data = bracketed_data([x, x], [[(0, 2, 3), (0, 1, 2)], [(0, 1, 3), (1, 2, 3)]], ["a", "b"])
    grammar, bank = data.grammar, data.bank
    cached, fresh = Trees(grammar, bank, 2), uncached(Trees(grammar, bank, 2))
    dead = cached.grammar(dead_pair_params(False))
    log_p = log_probabilities(dead, cached.charts, cached.cache)[0]
    assert log_p[0] == -np.inf and np.isfinite(log_p[1])
    np.testing.assert_array_equal(log_p, log_probabilities(dead, fresh.charts)[0])
    # A tree of weight 0 may have probability 0; the others are counted.
    w = np.array([0.0, 1.0])
    same_step(
        expected_counts(dead, cached.charts, w, cached.cache),
        expected_counts(dead, fresh.charts, w),
    )
    with pytest.raises(ValueError, match="probability zero"):
        expected_counts(dead, cached.charts, None, cached.cache)
    for _ in range(2):
        same_step(e_step(dead_pair_params(True), cached), e_step(dead_pair_params(True), fresh))


def test_plan_cache_budget_and_chart() -> None:
    """Chunks beyond the budget are planned every pass (same results); a cache refuses a
    chart other than its own."""
    data = text_data([["a", "b", "a", "b", "b"], ["b", "a"], ["a"] * 9], words=["a", "b"])
    g = data.grammar
    charts = StringCharts.from_ids(g, data.text.ids)
    lg = Strings(g, charts, data.text.counts, 2).grammar(dead_pair_params(True))
    budget = PlanBudget(max_bytes=600)
    caches = charts.plan_caches(budget)
    want = strings.expected_counts(lg, charts, data.text.counts)
    for _ in range(3):
        same_step(strings.expected_counts(lg, charts, data.text.counts, caches), want)
    (cache,) = caches
    assert cache.chunks and cache.uncached and 0 < budget.nbytes <= 600
    other = StringCharts.from_ids(g, [[0, 1]])
    with pytest.raises(ValueError, match="PlanCache"):
        strings.expected_counts(lg, other, None, caches)


SENTENCE = ["a", "b", "b", "a"]


def bracketings(n: int) -> list[list[tuple[int, int, int]]]:
    def leaf(i):
        yield []

    def join(i, k, j, left, right):
        yield left + right + [(i, k, j)]

    return list(binary_trees(0, n, leaf, join))


def repeated_sample() -> tuple[list[list[str]], list[list[tuple[int, int, int]]]]:
    """Bracketed sentences with repeats (some with their brackets listed in another
    order: the same tree)."""
    rng = np.random.default_rng(4)
    trees = [(["a", "b"], [(0, 1, 2)]), (["b"], [])]
    trees += [(SENTENCE, b) for b in bracketings(4)] + [
        (["b", "a", "a"], b) for b in bracketings(3)
    ]
    sentences, brackets = [], []
    for t in rng.integers(0, len(trees), size=40):
        words, nodes = trees[t]
        sentences.append(words)
        brackets.append(list(nodes)[:: 1 if rng.random() < 0.5 else -1])
    return sentences, brackets


def test_merged_trees_are_weighted_by_their_counts() -> None:
    sentences, brackets = repeated_sample()
    plain = bracketed_data(sentences, brackets, ["a", "b"])
    merged = bracketed_data(sentences, brackets, ["a", "b"], merge=True)
    assert plain.weights is None and plain.bank.n_trees == 40
    assert merged.bank.n_trees < 12 and merged.weights.sum() == 40
    assert merged.summary["trees"] == 40 == plain.summary["trees"]
    assert merged.summary["distinct_trees"] == merged.bank.n_trees
    # The E-step of the weighted distinct trees is that of the repeated ones.
    params = Params.from_model(split_model(train_pcfg(plain.grammar, plain.bank, {}), 3, 0.3, 1))
    a = e_step(params, Trees(merged.grammar, merged.bank, 3, merged.weights))
    b = e_step(params, Trees(plain.grammar, plain.bank, 3))
    same_step_close(a, b)
    # So are the treebank PCFG (EM's start) and the whole EM run.
    p, q = (train_pcfg(d.grammar, d.bank, {}, d.weights) for d in (merged, plain))
    for x, y in ((p.binary, q.binary), (p.lexical, q.lexical), (p.root, q.root)):
        np.testing.assert_allclose(x, y, rtol=1e-14)
    options = EMOptions(states=2, iterations=4, tol=0.0, seed=3)
    fits = [EMLearner(options).fit(d) for d in (merged, plain)]
    for x, y in zip(*[(f.binary, f.lexical, f.root) for f in fits], strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-14)
    h = [[r["train_loglik"] for r in f.meta["history"]] for f in fits]
    np.testing.assert_allclose(h[0], h[1], rtol=1e-12)
    assert fits[0].root.sum() == pytest.approx(1.0)  # roots over 40 trees, not the distinct
    assert learner("pcfg").fit(merged).binary == pytest.approx(learner("pcfg").fit(plain).binary)


def same_step_close(a: _EStep, b: _EStep) -> None:
    """E-steps equal up to the order of summation (merged against repeated trees)."""
    assert a.loglik == pytest.approx(b.loglik, rel=1e-13)
    for x, y in ((a.binary, b.binary), (a.lexical, b.lexical), (a.root, b.root)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


def test_merged_trees_errors_and_learners_without_weights() -> None:
    sentences, brackets = repeated_sample()
    merged = bracketed_data(sentences, brackets, ["a", "b"], merge=True)
    with pytest.raises(LpcfgError, match="weighted"):
        learner("spectral", states=2).fit(merged)
    bad = [SENTENCE, SENTENCE, SENTENCE]
    nodes = [bracketings(4)[0]] * 2 + [[(0, 1, 4)]]
    with pytest.raises(LpcfgError, match="sentence 3"):
        bracketed_data(bad, nodes, merge=True)
    with pytest.raises(LpcfgError, match="2 bracketings"):
        bracketed_data(bad, nodes[:2], merge=True)


@pytest.mark.parametrize("merge", [False, True])
def test_bracketed_data_keeps_every_tree_in_order(merge: bool) -> None:
    """Without repeats merging changes nothing but the weights (all 1)."""
    sentences = [SENTENCE] * 5
    brackets = bracketings(4)
    data = bracketed_data(sentences, brackets, ["a", "b"], merge=merge)
    plain = bracketed_data(sentences, brackets, ["a", "b"])
    for f in ("tree_start", "symbol", "rule", "lex", "start", "end"):
        np.testing.assert_array_equal(getattr(data.bank, f), getattr(plain.bank, f))
    assert (data.weights is None) != merge
    if merge:
        np.testing.assert_array_equal(data.weights, np.ones(5))
