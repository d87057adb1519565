"""``NltkParser`` keeps nltk's ``ParserI`` contract as nltk's probabilistic parsers do: a
string is no sentence, ``grammar()`` is an ``nltk.grammar.PCFG`` nltk's own parsers can use,
and every tree is a ``ProbabilisticTree`` whose probability is the model's probability of
it, checked against independent computations (the rule tables, ``ViterbiParser``, a brute
force sum over latent states, the training code's tree likelihood)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import nltk
import numpy as np
import pytest
from nltk.grammar import PCFG
from nltk.tree import ProbabilisticTree

import lpcfg_cli as lp
from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.grammar.compiled import compile_trees
from lpcfg_cli.parsing.tree_probability import TreeProbabilities
from lpcfg_cli.treebank.tree import Tree, is_preterminal, iter_nodes, leaves
from tests.support import TINY_TREES, latent_tree_prob, rule_tree

# Sentences of the tiny treebank's words; the last has a word seen once, which the model
# reads as its signature.
SENTENCES = [
    ["the", "dog", "saw", "Kim"],
    ["Kim", "saw", "the", "dog"],
    ["the", "dog", "saw", "the", "dog"],
    ["the", "cat", "sat", "on", "the", "mat"],
    ["Kim", "ran"],
]
# Sentences of known words only (terminals of the nltk grammar).
KNOWN = SENTENCES[:3]


@pytest.fixture(scope="module")
def trees():
    return lp.trees_from_text("\n".join(TINY_TREES))


def _fit(trees, method, **options):
    return lp.learner(method, **options).fit(lp.prepare_trees(trees, lp.binarization(method)))


@pytest.fixture(scope="module")
def pcfg(trees):
    return _fit(trees, "pcfg")


@pytest.fixture(scope="module")
def em(trees):
    return _fit(trees, "em", states=2, iterations=3, seed=1)


@pytest.fixture(scope="module")
def em_other(trees):
    return _fit(trees, "em", states=2, iterations=3, seed=2)


@pytest.fixture(scope="module")
def spectral(trees):
    return _fit(trees, "spectral", states=2)


@pytest.fixture(scope="module")
def bundle(em, em_other):
    return em.bundle(em_other)


@pytest.fixture(scope="module")
def models(pcfg, em, spectral, bundle):
    return {"pcfg": pcfg, "em": em, "spectral": spectral, "bundle": bundle}


def _binarized(model, tree: Tree) -> Tree:
    """``tree`` binarized as the model's training trees were, each word replaced by the
    vocabulary entry the model reads it as (itself, or its signature)."""
    out = lp.binarize(tree, lp.BinarizeOptions(**model.grammar.binarization))
    lexicon = model.grammar.lexicon
    pre = [n for n in iter_nodes(out) if is_preterminal(n)]
    for position, node in enumerate(pre):
        node[0] = model.grammar.words[lexicon.lookup(node[0], position)[0]]
    return out


def _rule_product(model, tree: Tree) -> float:
    """The product of the treebank PCFG's rule probabilities over ``tree``'s binarized
    nodes, root probability included, read from the model's rule tables."""
    g, coarse = model.grammar, model.coarse
    binary = _binarized(model, tree)
    p = coarse.root[g.symbol_index[binary.label()]]
    for node in iter_nodes(binary):
        a = g.symbol_index[node.label()]
        if is_preterminal(node):
            rule = g.lexical_id(a, g.words.index(node[0]))
            p *= 0.0 if rule is None else coarse.lexical[rule]
        else:
            b, c = (g.symbol_index[kid.label()] for kid in node)
            rule = g.rule_id(a, b, c)
            p *= 0.0 if rule is None else coarse.binary[rule]
    return float(p)


# --- sentences are token lists --------------------------------------------------------------


def test_a_string_is_no_sentence(pcfg):
    parser = lp.NltkParser(pcfg)
    with pytest.raises(TypeError, match="not a string"):
        parser.parse("The cat sat .")
    with pytest.raises(TypeError, match="not a string"):
        parser.parse_one("The cat sat .")
    with pytest.raises(TypeError, match="not a string"):
        parser.parse_all("The cat sat .")
    with pytest.raises(TypeError, match="sentence 2 must be a list of tokens, not a string"):
        [list(ts) for ts in parser.parse_sents([["the", "dog"], "the cat sat"])]
    with pytest.raises(TypeError, match="not a string"):
        next(parser.parse_sents("the cat sat"))
    with pytest.raises(ValueError, match="holds whitespace"):
        parser.parse(["the cat", "sat"])


def test_options_go_to_the_constructor_not_to_parse(pcfg):
    parser = lp.NltkParser(pcfg)
    with pytest.raises(TypeError, match="takes the sentences only"):
        parser.parse(["the", "dog"], 5)
    with pytest.raises(TypeError, match="takes the sentences only"):
        next(parser.parse_sents([["the", "dog"]], trace=2))


def test_a_model_without_its_parameters_is_refused(pcfg):
    with pytest.raises(TypeError, match="model must be an LPCFG"):
        lp.NltkParser(lp.ArrangedModel.of(pcfg))


def test_the_empty_sentence_has_no_parse(pcfg):
    parser = lp.NltkParser(pcfg)
    assert list(parser.parse([])) == []
    assert parser.parse_one([]) is None
    assert parser.parse_all([]) == []
    assert [list(ts) for ts in parser.parse_sents([[], ["the", "dog"]])][0] == []


# --- grammar() ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pcfg", "em"])
def test_the_grammar_is_the_treebank_pcfg_as_an_nltk_pcfg(models, name):
    model = models[name]
    parser = lp.NltkParser(model)
    grammar = parser.grammar()
    assert isinstance(grammar, PCFG)
    assert parser.grammar() is grammar  # built once
    total: dict[object, float] = {}
    for production in grammar.productions():
        assert 0.0 < production.prob() <= 1.0
        total[production.lhs()] = total.get(production.lhs(), 0.0) + production.prob()
    assert all(abs(p - 1.0) < 1e-9 for p in total.values())
    # One production per rule of the treebank PCFG and per root symbol.
    g = model.grammar
    roots = int((model.coarse.root > 0).sum())
    assert len(grammar.productions()) == g.n_binary + g.n_lexical + roots
    assert str(grammar.start()) == "TOP"
    assert {str(p.rhs()[0]) for p in grammar.productions(lhs=grammar.start())} == {
        g.symbols[a] for a in np.flatnonzero(model.coarse.root > 0)
    }


def test_viterbi_parses_with_the_grammar_and_agrees_on_probabilities(pcfg):
    """For a treebank PCFG, nltk's ViterbiParser over ``grammar()`` finds a tree of each
    sentence of known words; where it is the tree NltkParser gives, so is the probability."""
    parser = lp.NltkParser(pcfg)
    viterbi = nltk.ViterbiParser(parser.grammar())
    agreed = 0
    for words in KNOWN:
        best = viterbi.parse_one(words)
        assert isinstance(best, ProbabilisticTree) and best.leaves() == words
        assert best.label() == "TOP"
        ours = parser.parse_one(words)
        if lp.debinarize(lp.from_nltk(best[0])) == lp.from_nltk(ours):
            assert ours.prob() == pytest.approx(best.prob(), rel=1e-9)
            agreed += 1
    assert agreed >= 2


def test_the_start_symbol_is_primed_past_a_symbol_named_top():
    # Twice, so that its words are known (a word seen once is read as its signature).
    model = lp.train(lp.trees_from_text("(S (TOP (DT the) (NN dog)) (VP (VBD ran)))\n" * 2))
    assert "TOP" in model.grammar.symbols
    grammar = lp.NltkParser(model).grammar()
    assert str(grammar.start()) == "TOP'"
    assert nltk.ViterbiParser(grammar).parse_one(["the", "dog", "ran"]) is not None


# --- trees and their probabilities ------------------------------------------------------------


@pytest.mark.parametrize("name", ["pcfg", "em", "spectral", "bundle"])
def test_every_tree_is_a_probabilistic_tree(models, name):
    parser = lp.NltkParser(models[name])
    found = [t for words in SENTENCES for t in parser.parse(words)]
    found += [t for ts in parser.parse_sents(SENTENCES) for t in ts]
    found += [parser.parse_one(words) for words in SENTENCES]
    found += [t for words in SENTENCES for t in parser.parse_all(words)]
    assert len(found) == 4 * len(SENTENCES)
    for tree in found:
        assert isinstance(tree, ProbabilisticTree)
        assert 0.0 <= tree.prob() <= 1.0
        if tree.prob() > 0:
            assert tree.logprob() == pytest.approx(math.log2(tree.prob()))
        else:
            assert tree.logprob() == -math.inf
    assert any(t.prob() > 0 for t in found)
    # The same sentence gives the same tree and probability every way.
    assert found[: len(SENTENCES)] == found[len(SENTENCES) : 2 * len(SENTENCES)]
    assert found[: len(SENTENCES)] == found[2 * len(SENTENCES) : 3 * len(SENTENCES)]


def test_a_pcfg_tree_has_the_product_of_its_rule_probabilities(pcfg):
    """... and 0 where a rule is missing: "Kim ran" is no sentence of the grammar (S -> NP+NNP
    VP+VBD was never seen), so the parser's later tiers give it a tree the grammar lacks."""
    parser = lp.NltkParser(pcfg)
    for words in SENTENCES:
        tree = parser.parse_one(words)
        expected = _rule_product(pcfg, lp.from_nltk(tree))
        assert (expected > 0) == (words != ["Kim", "ran"])
        assert tree.prob() == pytest.approx(expected, rel=1e-9)


def test_a_latent_tree_has_its_likelihood_summed_over_latent_states(em):
    """The probability is the tree's likelihood as training computes it (its compiled
    chart through ``tree_scores``) and as a brute-force sum over every latent assignment."""
    parser = lp.NltkParser(em)
    options = lp.BinarizeOptions(**em.grammar.binarization)
    for words in SENTENCES:
        tree = parser.parse_one(words)
        ours = lp.from_nltk(tree)
        bank, dropped = compile_trees(em.grammar, [lp.binarize(ours, options)])
        if words == ["Kim", "ran"]:  # no sentence of the grammar (see above)
            assert dropped == 1 and tree.prob() == 0.0
            continue
        assert dropped == 0
        log_p, sign = tree_scores(em, bank)
        assert sign[0] == 1
        assert tree.prob() == pytest.approx(math.exp(log_p[0]), rel=1e-9)
        brute = latent_tree_prob(em, rule_tree(em.grammar, _binarized(em, ours)))
        assert tree.prob() == pytest.approx(brute, rel=1e-9)


def test_gold_trees_score_as_the_training_likelihood(em, trees):
    """The training trees' probabilities multiply to the model's training likelihood."""
    from lpcfg_cli.engine.chart_grammars import LatentGrammar
    from lpcfg_cli.engine.tree_charts import TreeCharts, log_probabilities

    data = lp.prepare_trees(trees, lp.binarization("em"))
    expected = log_probabilities(
        LatentGrammar.from_model(em, np.float64), TreeCharts.build(data.bank, em.grammar.n_symbols)
    )[0]
    ours = TreeProbabilities(em).log_probabilities(trees)
    assert ours == pytest.approx(expected, rel=1e-12)


def test_a_bundle_gives_the_geometric_mean_of_its_models(em, em_other, bundle):
    parser = lp.NltkParser(bundle)
    for words in SENTENCES:
        tree = parser.parse_one(words)
        ours = lp.from_nltk(tree)
        each = [TreeProbabilities(m).log_probabilities([ours])[0] for m in (em, em_other)]
        assert tree.prob() == pytest.approx(math.exp(sum(each) / 2), rel=1e-9)


def test_a_tensor_model_value_is_clipped_to_a_probability(spectral, trees):
    tree = trees[2]
    value, sign = TreeProbabilities(spectral).scores([tree])
    assert sign[0, 0] == 1 and value[0, 0] < 0
    negative = dataclasses.replace(spectral, root=-spectral.root)
    value, sign = TreeProbabilities(negative).scores([tree])
    assert sign[0, 0] == -1
    assert TreeProbabilities(negative).log_probabilities([tree])[0] == -math.inf
    large = dataclasses.replace(spectral, root=spectral.root * 1e9)
    assert TreeProbabilities(large).scores([tree])[0][0, 0] > 0
    assert TreeProbabilities(large).log_probabilities([tree])[0] == 0.0


def test_a_fallback_tree_has_probability_zero(pcfg):
    parser = lp.NltkParser(pcfg, lp.ParserOptions(max_length=3))
    tree = parser.parse_one(["the", "dog", "saw", "Kim"])
    assert isinstance(tree, ProbabilisticTree)
    assert len(tree) == 4  # flat: the grammar derives no such tree
    assert tree.prob() == 0.0 and tree.logprob() == -math.inf
    assert parser.parse_one(["the", "dog", "ran"]).prob() > 0  # short enough: parsed


def test_a_tree_of_unknown_symbols_or_rules_has_probability_zero(pcfg):
    scorer = TreeProbabilities(pcfg)
    odd = lp.trees_from_text(
        "(S (NP (DT the) (NN dog)) (XYZ (VBD saw)))\n(S (VP (VBD saw)) (NP (DT the) (NN dog)))"
    )
    assert list(scorer.log_probabilities(odd)) == [-math.inf, -math.inf]


def test_parse_sents_streams(pcfg):
    parser = lp.NltkParser(pcfg)
    endless = itertools.repeat(["the", "dog", "saw", "Kim"])
    first = [next(ts) for ts in itertools.islice(parser.parse_sents(endless), 3)]
    assert [t.leaves() for t in first] == [["the", "dog", "saw", "Kim"]] * 3
    assert all(t.prob() > 0 for t in first)
    assert leaves(lp.from_nltk(first[0])) == ["the", "dog", "saw", "Kim"]
