"""The chart engine against brute-force enumeration of trees and latent assignments."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lpcfg_cli.engine.chart_grammars import CoarseGrammar, LatentGrammar
from lpcfg_cli.engine.coarse import coarse_posteriors
from lpcfg_cli.engine.latent import inside_pass, lexical_items, outside_counts, outside_pass
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.treebank.ptb import parse_tree
from lpcfg_cli.treebank.tree import leaves
from tests.support import (
    brute_force,
    labelled_trees,
    latent_tree_prob,
    lexical_triples,
    rule_tree,
    run_latent,
    short_sentences,
)


def _zero_blocks(model, rng, states: int):
    """``model`` with the rule tensors zero on random (parent), (left) and (right) state
    slices, as EM leaves them: the engine packs tensors on their live states."""
    binary = model.binary.reshape(-1, states, states, states).copy()
    for t in binary:
        t[rng.random(states) < 0.3] = 0.0
        t[:, rng.random(states) < 0.3] = 0.0
        t[:, :, rng.random(states) < 0.3] = 0.0
    return dataclasses.replace(model, binary=binary.ravel())


def test_packed_tensors_hold_every_nonzero_entry_and_nothing_else():
    """``LatentGrammar`` keeps each rule's entries on the live states of its children pair
    and parent; unpacked, they are the tensors again (single precision: flushed)."""
    model = random_lpcfg(inter=4, pre=3, words=6, states=4, rules_per_symbol=5, seed=2)
    sparse = _zero_blocks(model, np.random.default_rng(2), 4)
    full = sparse.padded_binary()
    for dtype in (np.float64, np.float32):
        lg = LatentGrammar.from_model(sparse, dtype)
        np.testing.assert_array_equal(lg.unpack(lg.packed), full.astype(dtype))
        assert len(lg.packed) < full.size / 2  # the zero slices are not stored
    dense = LatentGrammar.from_model(model)
    assert len(dense.packed) == model.padded_binary().size


@pytest.mark.parametrize("seed,zeros", [(0, False), (1, False), (2, False), (5, True), (6, True)])
def test_latent_inside_outside_matches_enumeration(seed, zeros):
    model = random_lpcfg(
        inter=3, pre=2, words=4, states=2, rules_per_symbol=4, words_per_tag=3, seed=seed
    )
    rng = np.random.default_rng(seed)
    if zeros:  # rule tensors with dead state slices (packed away by the engine)
        model = _zero_blocks(model, rng, 2)
    g = model.grammar
    sentences = short_sentences(model, 4, 3, seed)
    sentences += [[g.words[int(w)] for w in rng.choice(4, size=n)] for n in (1, 2, 3)]
    assert len({len(s) for s in sentences}) >= 2
    layout, chart = run_latent(model, sentences)
    marg = chart.marginals()
    n = g.n_symbols
    for s, words in enumerate(sentences):
        z, mu = brute_force(model, words)
        if z == 0:
            assert not np.isfinite(chart.log_z[s])
            continue
        assert np.exp(chart.log_z[s]) == pytest.approx(z, rel=1e-9)
        got = {}
        for key, m in zip(chart.keys, marg, strict=True):
            span, a = divmod(int(key), n)
            if layout.span_sent[span] == s and abs(m) > 1e-15:
                i = int(layout.span_start[span])
                got[(a, i, i + int(layout.span_len[span]))] = m
        assert set(got) == {k for k, v in mu.items() if v > 1e-15}
        for k, v in mu.items():
            assert got.get(k, 0.0) == pytest.approx(v, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", [3, 4])
def test_coarse_pass_matches_enumeration(seed):
    model = random_lpcfg(
        inter=3, pre=3, words=5, states=1, rules_per_symbol=5, words_per_tag=3, seed=seed
    )
    g = model.grammar
    sentences = short_sentences(model, 5, 4, seed)
    assert any(len(s) == 4 for s in sentences) or len(sentences) == 5
    layout = SpanLayout([len(s) for s in sentences])
    lex = np.zeros((layout.block(1).stop, g.n_symbols))
    for s, words in enumerate(sentences):
        for t, w in enumerate(words):
            for lx in np.flatnonzero(g.lexical[:, 1] == g.words.index(w)):
                lex[layout.base[1, s] + t, g.lexical[lx, 0]] += model.lexical_vector(lx)[0]
    coarse = CoarseGrammar.build(g.n_symbols, g.binary, model.binary.copy())
    keys, values, log_z = coarse_posteriors(coarse, layout, lex, model.root.copy())
    mu = np.zeros(layout.n_spans * g.n_symbols)
    mu[keys] = values
    mu = mu.reshape(layout.n_spans, g.n_symbols)
    for s, words in enumerate(sentences):
        z, expected = brute_force(model, words)
        assert np.exp(log_z[s]) == pytest.approx(z, rel=1e-9)
        for span in np.flatnonzero(layout.span_sent == s):
            i, n = int(layout.span_start[span]), int(layout.span_len[span])
            for a in range(g.n_symbols):
                assert mu[span, a] == pytest.approx(expected.get((a, i, i + n), 0.0), abs=1e-12)


def test_single_precision_marginals_agree_with_double():
    """The latent pass may run in float32; it must agree with float64."""
    model = random_lpcfg(inter=4, pre=3, words=6, states=3, rules_per_symbol=5, seed=7)
    sentences = short_sentences(model, 6, 12, seed=7)
    _, exact = run_latent(model, sentences)
    _, single = run_latent(model, sentences, dtype=np.float32)
    np.testing.assert_allclose(single.log_z, exact.log_z, rtol=1e-5)
    np.testing.assert_allclose(single.marginals(), exact.marginals(), atol=1e-5)


def test_split_model_is_a_proper_latent_model_with_the_same_sentence_probabilities():
    """Splitting a PCFG into m states (EM's starting point) keeps it normalised, and with
    no noise every sentence probability equals the PCFG's."""
    from lpcfg_cli.latent_pcfg.split import split_model

    pcfg = random_lpcfg(inter=3, pre=3, words=6, states=1, rules_per_symbol=4, seed=5)
    noisy = split_model(pcfg, 3, noise=0.05, seed=1)
    assert noisy.check_probabilistic() < 1e-12
    assert not np.allclose(noisy.binary_tensor(0)[0], noisy.binary_tensor(0)[1])
    exact = split_model(pcfg, 3, noise=0.0)
    sentences = short_sentences(pcfg, 5, 6, seed=5)
    _, a = run_latent(pcfg, sentences)
    _, b = run_latent(exact, sentences)
    np.testing.assert_allclose(b.log_z, a.log_z, rtol=1e-10)


def test_sentence_probability_equals_sum_over_sampled_trees():
    """On a tiny grammar, sampling finds every tree of a short sentence: the distinct
    sampled trees' probabilities add up to the chart's sentence probability."""

    model = random_lpcfg(
        inter=2, pre=2, words=3, states=2, rules_per_symbol=3, words_per_tag=2, seed=21
    )
    g = model.grammar
    trees = sample_trees(model, 20000, seed=22)
    by_yield: dict[tuple[str, ...], set[str]] = {}
    for t in trees:
        by_yield.setdefault(tuple(leaves(t)), set()).add(str(t))
    sentence, distinct = max(
        ((s, d) for s, d in by_yield.items() if 3 <= len(s) <= 4), key=lambda kv: len(kv[1])
    )
    assert len(distinct) >= 2

    total = sum(latent_tree_prob(model, rule_tree(g, parse_tree(t))) for t in distinct)
    _, chart = run_latent(model, [list(sentence)])
    assert total == pytest.approx(np.exp(chart.log_z[0]), rel=1e-9)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_pruned_chart_matches_enumeration_over_the_allowed_trees(seed):
    """The latent pass over a subset of the items (as coarse-to-fine pruning leaves it)
    sums exactly the trees whose every item is allowed; a pair of children whose rules
    have no parent item left is skipped, one whose rules have only some is applied to those."""
    model = random_lpcfg(
        inter=4, pre=2, words=4, states=2, rules_per_symbol=6, words_per_tag=3, seed=seed
    )
    g = model.grammar
    rng = np.random.default_rng(seed)
    sentences = [s for s in short_sentences(model, 30, 5, seed) if len(s) >= 3][:3]
    assert sentences
    layout = SpanLayout([len(s) for s in sentences])
    every = np.arange(layout.n_spans * g.n_symbols)
    one_word = layout.span_len[every // g.n_symbols] == 1
    keys = every[one_word | (rng.random(len(every)) < 0.7)]
    _, chart = run_latent(model, sentences, keys=keys)
    marg = chart.marginals()
    allowed = set(keys.tolist())
    got = dict(zip(chart.keys.tolist(), marg, strict=True))
    pruned = 0
    for s, words in enumerate(sentences):

        def item_key(item, s=s):
            a, i, j = item
            return int((layout.base[j - i, s] + i) * g.n_symbols + a)

        z, mu = brute_force(model, words, allowed=lambda item: item_key(item) in allowed)
        pruned += z < brute_force(model, words)[0]
        if z == 0:
            assert not np.isfinite(chart.log_z[s])
            continue
        assert np.exp(chart.log_z[s]) == pytest.approx(z, rel=1e-9)
        for item, v in mu.items():
            assert got[item_key(item)] == pytest.approx(v, rel=1e-9, abs=1e-12)
    assert pruned  # some sentence lost trees to the pruning


def _full_chart(model, sentences):
    """The latent grammar, layout, every item of the full chart and its lexical triples."""
    g = model.grammar
    layout = SpanLayout([len(s) for s in sentences])
    keys = np.arange(layout.n_spans * g.n_symbols)
    lg = LatentGrammar.from_model(model, np.float64)
    lex = lexical_items(lg, layout, keys, lexical_triples(g, layout, sentences))
    return lg, layout, keys, lex


def _phase_model(seed):
    model = random_lpcfg(
        inter=3, pre=2, words=4, states=2, rules_per_symbol=4, words_per_tag=3, seed=seed
    )
    sentences = [s for s in short_sentences(model, 5, 4, seed) if len(s) >= 2]
    assert len(sentences) >= 3
    return model, sentences


@pytest.mark.parametrize("seed", [0, 3])
def test_inside_phase_alone_gives_the_sentence_probabilities(seed):
    """``inside_pass`` by itself: log Z of every sentence as brute force sums it, no outside
    vectors; keeping the chunk plans for the outside phases changes no number."""
    model, sentences = _phase_model(seed)
    lg, layout, keys, lex = _full_chart(model, sentences)
    chart = inside_pass(lg, layout, keys, lex, keep_plans=False)
    assert chart.beta is None and chart.plans is None
    for s, words in enumerate(sentences):
        z, _ = brute_force(model, words)
        assert np.exp(chart.log_z[s]) == pytest.approx(z, rel=1e-9)
    kept = inside_pass(lg, layout, keys, lex)
    assert kept.plans is not None and kept.plans.chunks
    np.testing.assert_array_equal(kept.alpha, chart.alpha)
    np.testing.assert_array_equal(kept.log_z, chart.log_z)
    with pytest.raises(ValueError, match="chunk plans"):
        outside_pass(lg, chart)


@pytest.mark.parametrize("seed", [0, 3])
def test_outside_phase_gives_brute_force_marginals_and_counts_weighted_sentences(seed):
    """``outside_pass`` on an inside chart: the item posteriors of brute force; with
    ``weights`` every posterior of sentence ``s`` is ``weights[s]`` times as large."""
    model, sentences = _phase_model(seed)
    lg, layout, keys, lex = _full_chart(model, sentences)
    chart = outside_pass(lg, inside_pass(lg, layout, keys, lex))
    marg = chart.marginals()
    n = model.grammar.n_symbols
    for s, words in enumerate(sentences):
        _, mu = brute_force(model, words)
        for (a, i, j), v in mu.items():
            span = layout.base[j - i, s] + i
            assert marg[span * n + a] == pytest.approx(v, rel=1e-9, abs=1e-12)
    weights = np.linspace(0.5, 3.0, len(sentences))
    weighted = outside_pass(lg, inside_pass(lg, layout, keys, lex), weights=weights)
    sent = layout.span_sent[keys // n]
    np.testing.assert_allclose(weighted.marginals(), weights[sent] * marg, rtol=1e-12, atol=0)


@pytest.mark.parametrize("seed", [1, 4])
def test_outside_counts_are_the_derivative_of_the_weighted_log_likelihood(seed):
    """``outside_counts``: the expected count of a rule entry ``t`` is ``t d/dt sum_s w_s
    log Z_s``, checked by central differences of ``inside_pass`` alone."""
    model, sentences = _phase_model(seed)
    lg, layout, keys, lex = _full_chart(model, sentences)
    weights = np.linspace(0.5, 2.0, len(sentences))
    counted = outside_counts(lg, inside_pass(lg, layout, keys, lex), weights=weights)
    plain = outside_pass(lg, inside_pass(lg, layout, keys, lex), weights=weights)
    assert plain.rule_counts is None
    np.testing.assert_array_equal(counted.beta, plain.beta)  # the same outside vectors
    counts = counted.rule_counts
    tensors = model.padded_binary()

    def loglik(scale: np.ndarray) -> float:
        g = lg.with_parameters(tensors * scale, lg.lexical, lg.root)
        return float(weights @ inside_pass(g, layout, keys, lex, keep_plans=False).log_z)

    rng = np.random.default_rng(seed)
    entries = np.argwhere(counts > 1e-4)  # entries of rules the sentences use
    assert len(entries) >= 8
    eps = 1e-5
    for r, h, hh in entries[rng.choice(len(entries), size=8, replace=False)]:
        scale = np.ones_like(tensors)
        scale[r, h, hh] = 1 + eps
        up = loglik(scale)
        scale[r, h, hh] = 1 - eps
        down = loglik(scale)
        assert counts[r, h, hh] == pytest.approx((up - down) / (2 * eps), rel=1e-6, abs=1e-9)


def _cut_marginals(model, words: list[str], cut: float) -> dict[tuple[int, int, int], float]:
    """Item posteriors under the outside cut, by enumeration: span lengths longest first, an
    item's posterior sums the trees that hold it and keep every item above it (a longer
    span), and an item of two or more words below ``cut`` is not kept (posterior 0)."""
    trees = [
        (latent_tree_prob(model, tree), items)
        for tree, items in labelled_trees(model, 0, len(words), words)
        if model.root_vector(items[-1][0]).sum() > 0
    ]
    z = sum(p for p, _ in trees)
    kept: dict[tuple[int, int, int], bool] = {}
    out = {}
    every = sorted({item for _, items in trees for item in items}, key=lambda x: x[1] - x[2])
    for item in every:
        _, i, j = item
        mu = sum(
            p
            for p, items in trees
            if item in items
            and all(kept[x] for x in items if x[1] <= i and j <= x[2] and x[2] - x[1] > j - i)
        )
        mu /= z
        kept[item] = j - i == 1 or abs(mu) >= cut
        out[item] = mu if kept[item] else 0.0
    return out


@pytest.mark.parametrize("seed", [0, 3])
def test_outside_cut_matches_enumeration_over_the_trees_of_kept_items(seed):
    """``outside_pass(cut=c)``: an item's posterior counts the trees in which every item
    above it was kept, and an item of two or more words below ``c`` gets 0 (enumeration,
    span lengths top-down); some items are cut and some posteriors lowered."""
    model, sentences = _phase_model(seed)
    lg, layout, keys, lex = _full_chart(model, sentences)
    exact = outside_pass(lg, inside_pass(lg, layout, keys, lex)).marginals()
    long = layout.span_len[keys // model.grammar.n_symbols] > 1
    cut = float(np.quantile(exact[long & (exact > 0)], 0.4))
    got = outside_pass(lg, inside_pass(lg, layout, keys, lex), cut=cut).marginals()
    n = model.grammar.n_symbols
    want = np.zeros_like(got)
    for s, words in enumerate(sentences):
        for (a, i, j), v in _cut_marginals(model, words, cut).items():
            want[(layout.base[j - i, s] + i) * n + a] = v
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-13)
    assert np.any((exact > 0) & (got == 0))
    assert np.any((got > 0) & (got < exact * (1 - 1e-6)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lexical_rows_are_summed_into_their_items_as_numpy_sums_them(dtype):
    """``kernels.add_lexical`` against ``np.add.at`` of the products cast to the chart's
    precision (the same numbers, repeated items included); ``kernels.find_keys`` against a
    dictionary of the sorted keys, misses included."""
    from lpcfg_cli.engine import kernels

    rng = np.random.default_rng(4)
    lexical = rng.random((30, 5)).astype(np.float32)
    item = rng.integers(0, 12, 400)
    rule = rng.integers(0, 30, 400)
    weight = rng.random(400) * 3
    got = np.zeros((12, 5), dtype=dtype)
    kernels.add_lexical(got, item, rule, weight, lexical.astype(dtype))
    want = np.zeros((12, 5), dtype=dtype)
    np.add.at(want, item, (lexical.astype(dtype)[rule] * weight[:, None]).astype(dtype))
    np.testing.assert_array_equal(got, want)
    keys = np.unique(rng.integers(0, 500, 120))
    probe = rng.integers(-5, 510, 300)
    where = {int(x): i for i, x in enumerate(keys)}
    found = kernels.find_keys(keys, probe)
    assert found.tolist() == [where.get(int(x), -1) for x in probe]
    assert (found >= 0).any() and (found < 0).any()
    assert kernels.find_keys(keys[:0], probe).tolist() == [-1] * len(probe)
