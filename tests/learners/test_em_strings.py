"""EM from strings and string probabilities (issue 17) against brute force.

On tiny single-symbol grammars (X -> X X | a | b with m states) every binary bracketing and
every latent assignment of every string up to length 5 is enumerated; the engine's string
probabilities and expected counts must equal these sums. Then: EM from strings never
lowers the likelihood, weights count as copies, long sentences neither underflow nor
overflow, and a symbol with both lexical and binary rules goes through every part of the
pipeline.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.string_charts import (
    StringCharts,
    StringScorer,
    expected_counts,
    log_probabilities,
)
from lpcfg_cli.engine.tree_charts import tree_scores
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.indexed import single_symbol_grammar
from lpcfg_cli.grammar.training_data import bracketed_data, text_data
from lpcfg_cli.latent_pcfg.em import EMLearner, EMOptions
from lpcfg_cli.latent_pcfg.split import random_model
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.model.treebank_pcfg import string_pcfg
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions
from lpcfg_cli.treebank.tree import iter_nodes, leaves
from tests.support import binary_trees, brute_force, short_sentences

WORDS = ["a", "b"]
STRINGS = [list(s) for n in range(1, 6) for s in itertools.product(range(2), repeat=n)]


def single_symbol(m: int, seed: int, form: str = "probabilistic") -> LPCFG:
    """A random single-symbol model over ``WORDS``: normalised positive parameters, or for
    ``tensor`` entries of both signs."""
    rng = np.random.default_rng(seed)
    g = single_symbol_grammar(WORDS)
    if form == "probabilistic":
        a, q = rng.uniform(size=(m, m, m)), rng.uniform(size=(2, m))
        total = a.sum(axis=(1, 2)) + q.sum(axis=0)
        a, q = a / total[:, None, None], q / total[None, :]
        root = rng.dirichlet(np.ones(m))
    else:
        a, q, root = (rng.normal(size=s) for s in ((m, m, m), (2, m), (m,)))
        a *= 0.3
    coarse = PCFGParams(np.array([0.5]), np.array([0.25, 0.25]), np.array([1.0]))
    return LPCFG(g, np.array([m]), a.ravel(), q.ravel(), root, coarse, form)


def brute(model: LPCFG, x: list[int]) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(g(x), and the sums over every (tree, assignment) of its value times the counts of
    X -> X X per state triple, X -> w per (word, state), root per state), enumerating every
    bracketing and, for each, every latent assignment of its nodes at once."""
    m = int(model.states[0])
    a = model.binary.reshape(m, m, m)
    q = model.lexical.reshape(len(WORDS), m)
    total = 0.0
    cb, cl, cr = np.zeros((m, m, m)), np.zeros((len(WORDS), m)), np.zeros(m)

    def leaf(i):
        yield [("l", i)]

    def join(i, k, j, left, right):
        yield [("b", len(left), len(left) + len(right))] + left + right  # preorder, offsets

    for nodes in binary_trees(0, len(x), leaf, join):
        k = len(nodes)
        h = np.indices((m,) * k).reshape(k, -1)  # every assignment of the k nodes' states
        # Nodes in preorder: the left subtree of the node at t starts at t + 1, the right
        # one at t + 1 + (size of the left subtree), which ``join`` recorded.
        value = model.root[h[0]].copy()
        for t, node in enumerate(nodes):
            if node[0] == "b":
                left, right = t + 1, t + 1 + node[1]
                value = value * a[h[t], h[left], h[right]]
            else:
                value = value * q[x[node[1]], h[t]]
        total += value.sum()
        np.add.at(cr, h[0], value)
        for t, node in enumerate(nodes):
            if node[0] == "b":
                np.add.at(cb, (h[t], h[t + 1], h[t + 1 + node[1]]), value)
            else:
                np.add.at(cl, (x[node[1]], h[t]), value)
    return float(total), cb, cl, cr


@pytest.mark.parametrize(
    ("m", "seed", "form"),
    [(2, 0, "probabilistic"), (3, 1, "probabilistic"), (2, 2, "tensor"), (3, 3, "tensor")],
)
def test_string_probabilities_and_counts_equal_brute_force(m, seed, form):
    model = single_symbol(m, seed, form)
    g = LatentGrammar.from_model(model)
    charts = StringCharts.from_ids(model.grammar, STRINGS, max_spans=40)  # several blocks
    assert len(charts.blocks) > 1
    assert [b.first for b in charts.blocks] == list(
        np.cumsum([0] + [b.size for b in charts.blocks[:-1]])
    )
    assert sum(b.size for b in charts.blocks) == len(STRINGS)
    assert all(b.layout.n_spans <= 40 or b.size == 1 for b in charts.blocks)
    log_p, sign = log_probabilities(g, charts)
    assert (sign < 0).any() == (form == "tensor")  # negative values are checked too
    weights = np.arange(1, len(STRINGS) + 1, dtype=float)
    counts = expected_counts(g, charts, weights)
    want_b, want_l, want_r, loglik = np.zeros((m, m, m)), np.zeros((2, m)), np.zeros(m), 0.0
    for x, w, lp, sg in zip(STRINGS, weights, log_p, sign, strict=True):
        z, cb, cl, cr = brute(model, x)
        assert sg * math.exp(lp) == pytest.approx(z, rel=1e-10, abs=1e-300), x
        loglik += w * math.log(abs(z))
        want_b += w * cb / z
        want_l += w * cl / z
        want_r += w * cr / z
    assert counts.loglik == pytest.approx(loglik, rel=1e-12)
    np.testing.assert_allclose(counts.binary.reshape(m, m, m), want_b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(counts.lexical, want_l, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(counts.root[0], want_r, rtol=1e-9, atol=1e-9)
    if form == "probabilistic":  # posteriors: every node is counted once per tree
        lengths = np.array([len(x) for x in STRINGS])
        assert counts.binary.sum() == pytest.approx(weights @ (lengths - 1))
        assert counts.lexical.sum() == pytest.approx(weights @ lengths)


@pytest.mark.parametrize("seed", [0, 1])
def test_treebank_models_score_strings_through_the_coarse_items(seed):
    """A grammar of several symbols: the chart is the coarse pass's items; the string
    probability is the sum over every tree the grammar has."""
    model = random_lpcfg(
        inter=3, pre=2, words=4, states=2, rules_per_symbol=4, words_per_tag=3, seed=seed
    )
    rng = np.random.default_rng(seed)
    g = model.grammar
    sentences = short_sentences(model, 4, 4, seed)
    sentences += [[g.words[int(w)] for w in rng.choice(4, size=n)] for n in (1, 2, 3, 4)]
    log_p, sign = StringScorer(model)(sentences)
    for words, lp, sg in zip(sentences, log_p, sign, strict=True):
        z, _ = brute_force(model, words)
        if z == 0:
            assert (lp, sg) == (-np.inf, 0.0)
        else:
            assert sg * math.exp(lp) == pytest.approx(z, rel=1e-10)


def test_a_sentence_weighted_w_counts_as_w_copies():
    model = single_symbol(3, 5)
    g = LatentGrammar.from_model(model)
    sentences, weights = [[0, 1, 1], [1], [0, 0, 1, 0]], np.array([3.0, 1.0, 2.0])
    copies = [s for s, w in zip(sentences, weights, strict=True) for _ in range(int(w))]
    grammar = model.grammar
    a = expected_counts(g, StringCharts.from_ids(grammar, sentences), weights)
    b = expected_counts(g, StringCharts.from_ids(grammar, copies))
    assert a.loglik == pytest.approx(b.loglik, rel=1e-13)
    for x, y in ((a.binary, b.binary), (a.lexical, b.lexical), (a.root, b.root)):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    # text_data does the same: distinct sentences, counted.
    data = text_data([[WORDS[w] for w in s] for s in copies])
    assert len(data.text.ids) == 3 and sorted(data.text.counts) == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_em_from_strings_never_lowers_the_likelihood(seed):
    truth = single_symbol(2, 10)
    truth.lexical[:] = [0.6, 0.05, 0.05, 0.6]  # a sharp 2-state grammar (rows sum below 1)
    rng = np.random.default_rng(seed)
    sentences = [[WORDS[w] for w in rng.integers(0, 2, size=rng.integers(1, 9))] for _ in range(80)]
    data = text_data(sentences)
    options = EMOptions(
        states=3, iterations=12, seed=seed, smoothing=0.0, lexicon_smoothing=0.0, tol=0.0
    )
    model = EMLearner(options).fit(data)
    lls = [h["train_loglik"] for h in model.meta["history"]]
    assert len(lls) == 12 and lls[-1] > lls[0]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(lls, lls[1:], strict=False))
    assert model.check_probabilistic() < 1e-9
    assert model.meta["training"]["input"] == "text" and model.meta["em"]["init"] == "random"
    # The history's last entry is the likelihood of the previous parameters: one more
    # E-step on the returned model is at least as high.
    g = LatentGrammar.from_model(model)
    charts = StringCharts.from_ids(data.grammar, data.text.ids)
    final = float(data.text.counts @ log_probabilities(g, charts)[0])
    assert final >= lls[-1] - 1e-9 * abs(lls[-1])


def test_em_from_strings_is_seeded_and_starts_normalised():
    data = text_data([["a", "b"], ["b", "a", "a"], ["a"]])
    pcfg = string_pcfg(data.grammar, data.text)
    assert pcfg.binary[0] == pytest.approx(3 / 9)  # 3 binary, 6 lexical nodes in any tree
    start = random_model(pcfg, 4, seed=7)
    assert start.check_probabilistic() < 1e-12 and start.root.sum() == pytest.approx(1.0)
    assert np.array_equal(start.binary, random_model(pcfg, 4, seed=7).binary)
    assert not np.allclose(start.binary, random_model(pcfg, 4, seed=8).binary)
    fit = [EMLearner(EMOptions(states=2, iterations=2, seed=s)).fit(data) for s in (1, 1, 2)]
    np.testing.assert_array_equal(fit[0].binary, fit[1].binary)
    assert not np.allclose(fit[0].binary, fit[2].binary)


@pytest.mark.parametrize("m", [1, 2])
def test_a_200_word_sentence_neither_underflows_nor_overflows(m):
    """``a^n`` under X -> X X (b), X -> a (q): p = Catalan(n - 1) b^(n - 1) q^n, whether
    that is 1e-480 or 1e+395 (a weighted grammar); with m identical states the same."""
    n = 200
    log_catalan = math.lgamma(2 * n - 1) - math.lgamma(n) - math.lgamma(n + 1)
    for b, q in ((0.9, 1e-3), (5.0, 5.0)):
        g = single_symbol_grammar(["a"])
        a = np.full(m**3, b / m**2)
        model = LPCFG(g, [m], a, np.full(m, q), np.full(m, 1 / m), PCFGParams(*[np.ones(1)] * 3))
        log_p, sign = log_probabilities(
            LatentGrammar.from_model(model), StringCharts.from_ids(g, [[0] * n])
        )
        want = log_catalan + (n - 1) * math.log(b) + n * math.log(q)
        assert abs(want) > 700  # beyond double precision's range
        assert sign[0] == 1.0 and log_p[0] == pytest.approx(want, rel=1e-12)


def test_unknown_words_empty_sentences_and_rare_words():
    data = text_data([["the", "cat", "("], ["the", "Dog"], [], ["the", "cat"]], rare=1)
    g = data.grammar
    assert data.summary["empty_lines"] == 1 and data.summary["sentences"] == 3
    assert "-LRB-" not in g.known_words and "the" in g.known_words and "cat" in g.known_words
    assert any(w.startswith("UNK") for w in g.words)  # "(" and "Dog" became signatures
    model = EMLearner(EMOptions(states=2, iterations=1)).fit(data)
    log_p, sign = StringScorer(model)([["the", "cat"], [], ["the", "Zebra"], ["the", "Cat"]])
    assert np.isfinite(log_p[0]) and sign[0] == 1
    assert (log_p[1], sign[1]) == (-np.inf, 0.0)  # the empty string has no tree
    assert np.isfinite(log_p[2]) and np.isfinite(log_p[3])  # signatures of unseen words
    plain = text_data([["the", "cat"]])  # rare 0: every word kept, no signatures
    unseen = StringScorer(EMLearner(EMOptions(states=2, iterations=1)).fit(plain))
    assert unseen([["the", "dog"]])[1][0] == 0.0


def test_bracketed_sentences_are_trees_of_the_same_model():
    """The trees of all bracketings of a sentence, compiled by ``bracketed_data``, have
    probabilities that sum to the string's."""
    model = single_symbol(2, 4)
    x = ["a", "b", "b", "a"]

    def leaf(i):
        yield []

    def join(i, k, j, left, right):
        yield left + right + [(i, k, j)]

    brackets = list(binary_trees(0, len(x), leaf, join))
    assert len(brackets) == 5
    data = bracketed_data([x] * 5, brackets, words=WORDS)
    assert data.grammar.words == WORDS and data.bank.n_trees == 5
    assert set(data.bank.symbol.tolist()) == {0}
    log_p, sign = tree_scores(model, data.bank)
    total = float((sign * np.exp(log_p)).sum())
    string_lp, _ = StringScorer(model)([x])
    assert total == pytest.approx(math.exp(string_lp[0]), rel=1e-12)
    for bad in ([(0, 1, 4)], [(0, 2, 4), (0, 1, 2), (0, 1, 2)], [(0, 2, 4), (0, 1, 2), (1, 2, 3)]):
        with pytest.raises(LpcfgError, match="sentence 1"):
            bracketed_data([x], [bad])
    # Supervised EM on them (the tree path) fits the same model class.
    fitted = EMLearner(EMOptions(states=2, iterations=2)).fit(data)
    assert fitted.grammar.symbols == ["X"] and fitted.check_probabilistic() < 1e-9


def test_a_symbol_with_lexical_and_binary_rules_goes_everywhere(tmp_path):
    """X rewrites to words and to X X: model files, parsing (every decoding, pruned or not),
    fallbacks, sampling and EM accept it."""
    data = text_data([["a", "b", "a"], ["b", "b"], ["a"]] * 3)
    model = EMLearner(EMOptions(states=2, iterations=2)).fit(data)
    model.save(tmp_path / "m.npz")
    model = LPCFG.load(tmp_path / "m.npz")
    assert model.grammar.is_preterminal[0] and model.grammar.is_interterminal[0]
    assert model.check_probabilistic() < 1e-6  # the file's float32
    for decode in ("max-marginal", "max-rule-product", "variational"):
        for prune in (0.0, 3e-4):
            parser = BlockParser(model, ParserOptions(prune=prune, decode=decode))
            results = parser.parse([["a", "b", "b", "a"], ["b"], []])
            assert results[0].fallback is None and leaves(results[0].tree) == list("abba")
            assert {n.label() for n in iter_nodes(results[0].tree)} == {"X"}
            assert results[1].tree.label() == "X" and results[2].tree is None
    fallback = BlockParser(model).fallback(["a", "b"], "test")
    assert leaves(fallback.tree) == ["a", "b"]
    for tree in sample_trees(model, 5, seed=1):
        assert {n.label() for n in iter_nodes(tree)} == {"X"}
