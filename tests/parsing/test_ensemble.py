"""Ensembles (`lpcfg bundle`): several models parsed as a product of grammars."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lpcfg_cli.engine.latent import (
    PlanCache,
    anchored_rules,
    inside_pass,
    lexical_items,
    outside_pass,
)
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing import tiers as parser_module
from lpcfg_cli.parsing.decoders import max_rule_trees
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions, combine
from lpcfg_cli.treebank.binarize import debinarize
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import Tree, leaves
from tests.support import fit_em, invoke, latent_trees


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("ensemble")
    trees = latent_trees(340)
    grammar, bank = build_grammar(trees[:300])
    for seed in (1, 2):
        fit_em(grammar, bank, states=2, iterations=3, seed=seed).save(d / f"em{seed}.npz")
    (d / "test.txt").write_text("".join(" ".join(leaves(t)) + "\n" for t in trees[300:]))
    other, other_bank = build_grammar(trees[:100])
    fit_em(other, other_bank, states=2, iterations=1).save(d / "other.npz")
    return d


def _trees(model: LPCFG, d, how: str = "product") -> list[str]:
    sentences = [line.split() for line in (d / "test.txt").read_text().splitlines()]
    return [
        format_tree(r.tree) for r in BlockParser(model, ParserOptions(combine=how)).parse(sentences)
    ]


def test_a_bundle_of_a_model_with_itself_parses_as_the_model(models):
    one = LPCFG.load(models / "em1.npz")
    twice = one.bundle(LPCFG.load(models / "em1.npz"))
    for how in ("product", "mean"):
        assert _trees(twice, models, how) == _trees(one, models, how)


def test_bundle_command_round_trip_and_parse(models, tmp_path):
    out = tmp_path / "x2.npz"
    res = invoke("bundle", models / "em1.npz", models / "em2.npz", "-o", out)
    assert res.exit_code == 0, res.stderr
    both = LPCFG.load(out)
    assert len(both.members) == 1
    np.testing.assert_array_equal(both.members[0].binary, LPCFG.load(models / "em2.npz").binary)
    assert both.meta["ensemble"] == ["em", "em"]
    parsed = invoke("parse", out, models / "test.txt", "--no-progress")
    assert parsed.exit_code == 0 and len(parsed.stdout.splitlines()) == 40
    # Two different models vote: the ensemble's trees are not simply one model's.
    ens = _trees(both, models)
    assert ens != _trees(LPCFG.load(models / "em1.npz"), models) or ens != _trees(
        LPCFG.load(models / "em2.npz"), models
    )


def test_bundle_refuses_models_of_other_trees(models, tmp_path):
    res = invoke("bundle", models / "em1.npz", models / "other.npz", "-o", tmp_path / "x.npz")
    assert res.exit_code == 2 and "same trees" in res.stderr
    assert not (tmp_path / "x.npz").exists()


def test_combine():
    a, b = np.array([0.5, 0.0, -0.4]), np.array([0.5, 0.9, 0.1])
    np.testing.assert_allclose(combine([a, b], "mean"), [0.5, 0.45, 0.25])
    np.testing.assert_allclose(combine([a, b], "product"), [0.5, 0.0, 0.2])
    assert combine([a], "product") is a


def test_train_ensemble_bundles_seeds(models, tmp_path):
    """`train --ensemble 2` trains seeds S and S+1 and writes one model file with both; a
    method without random choices is refused before any work."""
    from tests.support import synthetic_treebank

    trees = synthetic_treebank(tmp_path, 200, 10)
    (tmp_path / "t.mrg").write_text("".join(format_tree(t) + "\n" for t in trees))
    out = tmp_path / "x.npz"
    res = invoke(
        "train",
        "-q",
        "--method",
        "em",
        "--states",
        "2",
        "--iterations",
        "2",
        "--ensemble",
        "2",
        "--seed",
        "3",
        tmp_path / "t.mrg",
        "-o",
        out,
    )
    assert res.exit_code == 0, res.stderr
    both = LPCFG.load(out)
    assert len(both.members) == 1
    assert both.meta["em"]["seed"] == 3 and both.members[0].meta["em"]["seed"] == 4
    assert not np.allclose(both.binary, both.members[0].binary)
    bad = invoke(
        "train", "--method", "pcfg", "--ensemble", "2", tmp_path / "t.mrg", "-o", tmp_path / "p.npz"
    )
    assert bad.exit_code == 2 and "--ensemble needs a method with random choices" in bad.stderr


@pytest.mark.parametrize("decode", ["max-marginal", "max-rule-product"])
def test_members_share_chunk_plans_with_the_same_parses(models, decode):
    """A bundle's members have the same rules, so the second member's latent pass refreshes
    the first one's chunk plans instead of planning again: the same trees as when each
    member plans for itself, and the second member's posteriors and log Z are those of its
    own planned pass."""
    both = LPCFG.load(models / "em1.npz").bundle(LPCFG.load(models / "em2.npz"))
    sentences = [line.split() for line in (models / "test.txt").read_text().splitlines()]
    shared = BlockParser(both, ParserOptions(decode=decode))
    alone = BlockParser(both, ParserOptions(decode=decode))
    assert shared.shared_plans
    alone.shared_plans = False
    assert [format_tree(r.tree) for r in shared.parse(sentences)] == [
        format_tree(r.tree) for r in alone.parse(sentences)
    ]

    layout = SpanLayout([len(s) for s in sentences])
    lex, keys, mu, _ = shared.coarse_pass(layout, sentences)
    allowed = keys[mu >= 1e-4]
    first, second = shared.latent
    cache = PlanCache()
    inside_pass(first, layout, allowed, lexical_items(first, layout, allowed, lex), cache=cache)
    assert cache.chunks  # the first member's plans were kept
    items = lexical_items(second, layout, allowed, lex)
    refreshed = outside_pass(second, inside_pass(second, layout, allowed, items, cache=cache))
    planned = outside_pass(second, inside_pass(second, layout, allowed, items))
    np.testing.assert_allclose(refreshed.log_z, planned.log_z, rtol=1e-6)
    np.testing.assert_allclose(refreshed.marginals(), planned.marginals(), rtol=1e-5, atol=1e-7)


def test_a_product_prunes_its_later_members_by_the_first(models):
    """With --product-prune the members after the first run over fewer items (fewer
    multiply-adds); a threshold so high that they lose every parse of a sentence sends it
    back through the looser attempts, so every sentence still gets a parse, not a fallback."""
    both = LPCFG.load(models / "em1.npz").bundle(LPCFG.load(models / "em2.npz"))
    sentences = [line.split() for line in (models / "test.txt").read_text().splitlines()]
    flops, retries = {}, {}
    for prune in (0.0, 1e-2, 0.9):
        parser = BlockParser(both, ParserOptions(product_prune=prune))
        results = parser.parse(sentences)
        assert all(r.fallback is None for r in results)
        flops[prune], retries[prune] = parser.stats.latent_flops, parser.stats.retries
    assert flops[1e-2] < flops[0.0]
    assert retries[0.0] == 0 and retries[0.9] > 0
    mean = BlockParser(both, ParserOptions(combine="mean", product_prune=0.9))
    assert mean.product_prune == 0.0  # only a product may drop what one member rules out


def _combined_in_keys(members, how):
    """The item scores and anchored rule posteriors of a product or mean of ``members`` (each
    model's chart items, posteriors and anchored rules, as its latent pass gave them), the
    slow way: every item and rule named by its keys (``span * N + symbol``), not by its
    index in some chart, so that models over different items combine by what the items
    are. Items: those of every model; rules: those over them with a nonzero score."""
    items = sorted(set.intersection(*(set(keys.tolist()) for keys, _, _ in members)))
    per_model = [
        dict(zip(keys.tolist(), np.abs(mu).tolist(), strict=True)) for keys, mu, _ in members
    ]
    rule_posts: dict[tuple[int, int, int], list[float]] = {}
    for keys, _, (it, x, y, post) in members:
        for p, left, right, v in zip(keys[it], keys[x], keys[y], np.abs(post), strict=True):
            rule_posts.setdefault((int(p), int(left), int(right)), []).append(float(v))

    def pooled(values: list[float]) -> float:
        if how == "mean":
            return sum(values) / len(members)
        if len(values) < len(members) or min(values) == 0:
            return 0.0  # a model without the rule: the product is zero
        return math.exp(sum(math.log(v) for v in values) / len(values))

    mu = {key: pooled([m[key] for m in per_model]) for key in items}
    rules = {
        rule: pooled(values)
        for rule, values in rule_posts.items()
        if set(rule) <= mu.keys() and pooled(values) > 0
    }
    return mu, rules


def _rule_trees_in_keys(mu, rules, layout, n, root_ok, symbols, sentences, variational):
    """The max-rule-product (or variational) tree of every sentence (debinarized, as text)
    from the item scores and rule posteriors by key (``_combined_in_keys``), by memoised
    recursion over each item's rules."""
    by_parent: dict[int, list[tuple[int, int, float]]] = {}
    for (p, left, right), r in sorted(rules.items()):
        by_parent.setdefault(p, []).append((left, right, r))
    best: dict[int, tuple[float, tuple[int, int] | None]] = {}

    def solve(key: int) -> float:
        if key not in best:
            value, back = -math.inf, None
            if layout.span_len[key // n] == 1 and mu[key] > 0:
                value = 0.0 if variational else min(math.log(mu[key]), 0.0)
            for left, right, r in by_parent.get(key, []):
                if variational and mu[key] == 0:
                    continue
                q = r / mu[key] if variational else r
                v = min(math.log(q), 0.0) + solve(left) + solve(right)
                if v > value:
                    value, back = v, (left, right)
            best[key] = (value, back)
        return best[key][0]

    def build(key: int, words) -> Tree:
        span, symbol = divmod(key, n)
        back = best[key][1]
        if back is None:
            return Tree(symbols[symbol], [words[int(layout.span_start[span])]])
        return Tree(symbols[symbol], [build(back[0], words), build(back[1], words)])

    trees = []
    for s, root in enumerate(layout.root_spans()):
        top, top_value = None, -math.inf
        for key in sorted(mu):
            if key // n == root and root_ok[key % n] and mu[key] > 0:
                v = solve(key) + math.log(mu[key])
                if v > top_value:
                    top, top_value = key, v
        trees.append(None if top is None else format_tree(debinarize(build(top, sentences[s]))))
    return trees


@pytest.mark.parametrize("decode", ["max-rule-product", "variational"])
@pytest.mark.parametrize("how", ["product", "mean"])
def test_rule_decoders_combine_the_members_rules_over_the_same_items(
    models, monkeypatch, decode, how
):
    """Max-rule-product and variational decoding of a bundle combine the members' anchored
    rule posteriors rule by rule, even when --product-prune runs the later members over
    fewer items than the first (whose rules indexed its own items, not theirs: the product
    matched unrelated rules, or none, and the decoder failed). The decoder is given the
    combination by the rules' and items' keys, and every sentence gets its best tree."""
    both = LPCFG.load(models / "em1.npz").bundle(LPCFG.load(models / "em2.npz"))
    text = (models / "test.txt").read_text().splitlines()
    sentences = sorted((line.split() for line in text), key=len)  # parsed in this order
    passes, decoded = [], []

    def rules_spy(g, chart):
        passes.append((anchored_rules(g, chart), chart.plans.layout))
        return chart

    def decoder_spy(*args, **kwargs):
        decoded.append(args)
        return max_rule_trees(*args, **kwargs)

    monkeypatch.setattr(parser_module, "anchored_rules", rules_spy)
    monkeypatch.setattr(parser_module, "max_rule_trees", decoder_spy)
    parser = BlockParser(both, ParserOptions(decode=decode, combine=how, product_prune=1e-2))
    results = parser.parse(sentences)
    assert parser.stats.retries == 0 and all(r.fallback is None for r in results)
    assert len(passes) == 2 and len(decoded) == 1  # one batch, one pass per member
    (first, layout), (second, _) = passes
    if how == "product":
        assert len(second.keys) < len(first.keys)  # the second member's items narrowed
    mu, rules = _combined_in_keys([(c.keys, c.marginals(), c.rules) for c, _ in passes], how)

    _, items, n, marg, (it, x, y, post), *_ = decoded[0]
    assert items.tolist() == sorted(mu)
    np.testing.assert_allclose(marg, [mu[key] for key in items.tolist()], rtol=1e-9)
    named = zip(items[it].tolist(), items[x].tolist(), items[y].tolist(), strict=True)
    got = dict(zip(named, post.tolist(), strict=True))
    assert got.keys() == rules.keys()
    np.testing.assert_allclose([got[r] for r in rules], list(rules.values()), rtol=1e-9)

    g = both.grammar
    variational = decode == "variational"
    expected = _rule_trees_in_keys(
        mu, rules, layout, n, parser.root_ok, g.symbols, sentences, variational
    )
    assert [format_tree(r.tree) for r in results] == expected
