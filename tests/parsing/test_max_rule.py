"""Max-rule-product and variational decoding: anchored rule posteriors and the chosen trees
against brute force enumeration of trees and latent assignments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.latent import anchored_rules, inside_pass, lexical_items, outside_pass
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.model.sampling import random_lpcfg
from lpcfg_cli.parsing.combine import rules_over
from lpcfg_cli.parsing.decoders import max_rule_trees
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions, combine_rules
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import Tree
from tests.support import labelled_trees, latent_tree_prob, lexical_triples, short_sentences


def _enumerate(model, words):
    """Every tree with its probability, binary nodes (a, b, c, i, k, j) and items."""
    out = []
    for tree, items in labelled_trees(model, 0, len(words), words):
        p = latent_tree_prob(model, tree)
        if p > 0:
            nodes: list[tuple[int, ...]] = []
            _binary_nodes(model.grammar, tree, 0, nodes)
            out.append((p, nodes, items))
    return out


def _binary_nodes(g, t, i: int, nodes: list) -> int:
    """Collect ``t``'s binary nodes (a, b, c, i, k, j); returns the end of its span."""
    if t[0] == "l":
        return i + 1
    k = _binary_nodes(g, t[2], i, nodes)
    j = _binary_nodes(g, t[3], k, nodes)
    a, b, c = g.binary[t[1]]
    nodes.append((int(a), int(b), int(c), i, k, j))
    return j


def _objective(nodes, items, expected, node_mu, variational) -> float:
    """The log of the decoder's objective for one tree: max-rule-product, the product of
    every anchored rule's posterior (binary rules, the pre-terminals' lexical rules, the
    root's); variational, prod q(rule) * mu(root) with q = r / mu(parent)."""
    total = math.log(node_mu[items[-1]])
    for a, b, c, i, k, j in nodes:
        r = expected[(a, b, c, i, k, j)]
        total += math.log(r / node_mu[(a, i, j)] if variational else r)
    if not variational:
        total += sum(math.log(node_mu[item]) for item in items if item[2] - item[1] == 1)
    return total


def _chart(model, sentences):
    g = model.grammar
    layout = SpanLayout([len(s) for s in sentences])
    keys = np.arange(layout.n_spans * g.n_symbols)
    lg = LatentGrammar.from_model(model, np.float64)
    lex = lexical_items(lg, layout, keys, lexical_triples(g, layout, sentences))
    return layout, anchored_rules(lg, outside_pass(lg, inside_pass(lg, layout, keys, lex)))


@pytest.mark.parametrize("variational", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_rule_posteriors_and_max_rule_trees_match_enumeration(seed, variational):
    model = random_lpcfg(
        inter=3, pre=2, words=4, states=2, rules_per_symbol=4, words_per_tag=3, seed=seed
    )
    g = model.grammar
    n = g.n_symbols
    sentences = [s for s in short_sentences(model, 6, 4, seed) if len(s) >= 2]
    assert sentences
    layout, chart = _chart(model, sentences)
    it, x, y, post = chart.rules
    marg = chart.marginals()

    def anchored(item_p, item_x, item_y):
        sp, a = divmod(int(chart.keys[item_p]), n)
        sx, b = divmod(int(chart.keys[item_x]), n)
        sy, c = divmod(int(chart.keys[item_y]), n)
        i, k = int(layout.span_start[sp]), int(layout.span_start[sy])
        return int(layout.span_sent[sp]), (a, b, c, i, k, i + int(layout.span_len[sp]))

    got: dict[int, dict] = {}
    for p_, x_, y_, v in zip(it, x, y, post, strict=True):
        s, key = anchored(p_, x_, y_)
        got.setdefault(s, {})[key] = v
    trees = max_rule_trees(
        layout,
        chart.keys,
        n,
        marg,
        chart.rules,
        np.ones(n, bool),
        g.symbols,
        sentences,
        variational=variational,
    )
    for s, words in enumerate(sentences):
        trees_s = _enumerate(model, words)
        z = sum(p for p, _, _ in trees_s)
        expected: dict = {}
        node_mu: dict = {}
        for p, nodes, items in trees_s:
            for node in nodes:
                expected[node] = expected.get(node, 0.0) + p / z
            for item in items:
                node_mu[item] = node_mu.get(item, 0.0) + p / z
        assert set(k for k, v in expected.items() if v > 1e-12) == {
            k for k, v in got.get(s, {}).items() if v > 1e-12
        }
        for key, value in expected.items():
            assert got[s].get(key, 0.0) == pytest.approx(value, rel=1e-9, abs=1e-12)

        # The decoder's tree maximises its objective over every tree.
        scores = [
            _objective(nodes, items, expected, node_mu, variational) for _, nodes, items in trees_s
        ]
        best = max(scores)
        chosen = trees[s]
        assert chosen is not None
        found = [
            score
            for score, (_, nodes, items) in zip(scores, trees_s, strict=True)
            if _as_tree(nodes, items, g) == _canonical(chosen, g)
        ]
        assert found and found[0] == pytest.approx(best, rel=1e-9)


def _as_tree(nodes, items, g):
    """A tree's (symbol, i, j) items as a set: the same labelled bracketing."""
    return frozenset(items)


def _canonical(tree, g):
    """The (symbol, i, j) items of a decoded tree."""
    items = []

    def walk(t, i):
        if isinstance(t[0], str):
            items.append((g.symbol_index[t.label()], i, i + 1))
            return i + 1
        k = walk(t[0], i)
        j = walk(t[1], k)
        items.append((g.symbol_index[t.label()], i, j))
        return j

    walk(tree, 0)
    return frozenset(items)


@pytest.mark.parametrize("decode", ["max-rule-product", "variational"])
def test_parser_decodes_max_rule_trees_for_single_models_ensembles_and_pcfgs(decode):
    """A bundle of a model with itself decodes as the model alone (the product of equal
    posteriors is the same posterior); a PCFG (one state per symbol) gets its rule
    posteriors from a latent pass; every sentence with a parse gets a tree."""
    model = random_lpcfg(inter=4, pre=3, words=6, states=3, rules_per_symbol=5, seed=5)
    sentences = short_sentences(model, 12, 8, seed=5)
    opts = ParserOptions(decode=decode, prune=0.0)
    alone = BlockParser(model, opts).parse(sentences)
    assert all(r.fallback is None for r in alone)
    twice = BlockParser(model.bundle(model), opts).parse(sentences)
    assert [str(r.tree) for r in twice] == [str(r.tree) for r in alone]
    pcfg = random_lpcfg(inter=4, pre=3, words=6, states=1, rules_per_symbol=5, seed=5)
    results = BlockParser(pcfg, opts).parse(short_sentences(pcfg, 12, 8, seed=5))
    assert all(r.fallback is None and r.tree is not None for r in results)


def test_combine_rules_keeps_what_every_model_has_for_the_product():
    a = (np.array([5, 5]), np.array([1, 2]), np.array([3, 4]), np.array([0.5, 0.2]))
    b = (np.array([5]), np.array([1]), np.array([3]), np.array([0.125]))
    it, x, y, post = combine_rules([a, b], "product")
    assert (it.tolist(), x.tolist(), y.tolist()) == ([5], [1], [3])
    assert post[0] == pytest.approx(0.25)
    it, x, y, post = combine_rules([a, b], "mean")
    assert sorted(zip(x.tolist(), post.tolist(), strict=True)) == [
        (1, pytest.approx(0.3125)),
        (2, 0.1),
    ]


@pytest.mark.parametrize("lengths", [[1, 2, 1], [1, 1]])
@pytest.mark.parametrize("variational", [False, True])
def test_max_rule_trees_without_any_binary_rule(lengths, variational):
    """A chart without a single anchored binary rule (a batch of one-word sentences, or one
    whose rules all scored zero) decodes without an error: a one-word sentence gets its best
    pre-terminal over its word, a longer sentence no tree."""
    symbols = ["S", "NN", "VB"]
    n = len(symbols)
    sentences = [[f"w{s}{i}" for i in range(length)] for s, length in enumerate(lengths)]
    layout = SpanLayout(lengths)
    keys = np.arange(layout.n_spans * n)
    marginals = np.random.default_rng(0).uniform(0.1, 0.9, len(keys))
    no_rules = (np.zeros(0, np.int64),) * 3 + (np.zeros(0),)
    root_ok = np.ones(n, bool)
    trees = max_rule_trees(
        layout, keys, n, marginals, no_rules, root_ok, symbols, sentences, variational=variational
    )
    for s, span in enumerate(layout.root_spans()):
        if lengths[s] > 1:
            assert trees[s] is None
        else:
            best = symbols[int(np.argmax(marginals[span * n : (span + 1) * n]))]
            assert format_tree(trees[s]) == format_tree(Tree(best, sentences[s]))


def test_rules_over_names_a_charts_rules_by_the_common_items():
    """A chart's rules index its own items; over fewer items (a product's later members'),
    each rule's items get their index there, and a rule with an item not there is left out."""
    keys, items = np.array([3, 5, 8, 13, 21]), np.array([3, 8, 13, 21])
    rules = (
        np.array([3, 4, 2]),
        np.array([0, 1, 0]),
        np.array([2, 2, 0]),
        np.array([0.5, 0.25, 0.125]),
    )
    it, x, y, post = rules_over(rules, keys, items)
    assert (it.tolist(), x.tolist(), y.tolist(), post.tolist()) == (
        [2, 1],
        [0, 0],
        [1, 0],
        [0.5, 0.125],
    )
    assert rules_over(rules, keys, keys.copy()) is rules
    assert all(len(a) == 0 for a in rules_over(rules, keys, items[:0]))
