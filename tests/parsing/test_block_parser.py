"""The parser's own parts: pruning retries and fallback trees, reached directly."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions
from lpcfg_cli.treebank.tree import iter_nodes, leaves
from tests.support import fit_em


def model_and_sentences():
    truth = random_lpcfg(
        inter=4, pre=4, words=20, states=2, rules_per_symbol=4, words_per_tag=6, seed=9
    )
    trees = sample_trees(truth, 300, seed=10)
    grammar, bank = build_grammar(trees[:250])
    model = fit_em(grammar, bank, states=2, iterations=2, seed=3)
    return model, [leaves(t) for t in trees[250:280]]


def _reachable(root: object) -> list[object]:
    """Every object reachable from ``root`` by references, modules and types left out."""
    seen, todo, out = {id(root)}, [root], []
    while todo:
        obj = todo.pop()
        out.append(obj)
        for ref in gc.get_referents(obj):
            if id(ref) not in seen and not isinstance(ref, type | type(gc)):
                seen.add(id(ref))
                todo.append(ref)
    return out


def test_the_parser_keeps_no_model_once_built():
    """Neither the caller's model nor the one with the rare words restored stays reachable
    from the parser: their latent parameters would sit beside the arranged grammars'
    copies for the parser's lifetime. It still parses and falls back."""
    model, sentences = model_and_sentences()
    parser = BlockParser(model)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None
    assert not [o for o in _reachable(parser) if isinstance(o, LPCFG)]
    assert all(r.tree is not None for r in parser.parse(sentences[:3]))
    assert parser.fallback(sentences[0], "testing").fallback == "testing"


def test_thresholds_loosen_to_no_pruning():
    model, _ = model_and_sentences()
    assert BlockParser(model, ParserOptions(prune=1e-5)).thresholds() == [1e-5, 1e-8, 0.0]
    assert BlockParser(model, ParserOptions(prune=0.0)).thresholds() == [0.0]


def test_a_chart_pruned_bare_is_retried_looser_and_parses_as_without_pruning():
    """At threshold 1 no multi-word item survives; every such sentence is retried, and the
    final trees are those of the unpruned parser (the last threshold is 0)."""
    model, sentences = model_and_sentences()
    bare = BlockParser(model, ParserOptions(prune=1.0))
    unpruned = BlockParser(model, ParserOptions(prune=0.0))
    got = bare.parse(sentences)
    want = unpruned.parse(sentences)
    long = sum(len(s) > 1 for s in sentences)
    assert bare.stats.retries >= long > 0
    assert bare.stats.fallbacks == 0
    assert [str(r.tree) for r in got] == [str(r.tree) for r in want]
    assert {r.threshold for r in got if len(leaves(r.tree)) > 1} <= {1e-3, 0.0}


def test_fallback_tags_each_word_and_keeps_every_word():
    model, sentences = model_and_sentences()
    parser = BlockParser(model)
    words = sentences[0] + ["never-seen-word"]
    res = parser.fallback(words, "testing")
    assert res.fallback == "testing"
    assert leaves(res.tree) == words
    assert all(len(leaf) == 1 for leaf in res.tree)  # flat: pre-terminal over each word
    too_long = BlockParser(model, ParserOptions(max_length=2)).parse([sentences[0]])[0]
    assert too_long.fallback and leaves(too_long.tree) == sentences[0]
    assert np.all([not t.label().startswith("@") for t in iter_nodes(res.tree)])


def test_the_coarse_beam_prunes_before_a_latent_pass_only():
    """``--coarse-beam`` reaches the coarse pass: a beam keeps fewer coarse items than none
    and every sentence still parses (one the beam leaves without a parse is parsed again
    without it); a bare treebank PCFG, decoded from the coarse pass, is not pruned so."""
    truth = random_lpcfg(
        inter=4, pre=4, words=20, states=2, rules_per_symbol=4, words_per_tag=6, seed=9
    )
    trees = sample_trees(truth, 300, seed=10)
    grammar, bank = build_grammar(trees[:250])
    sentences = [leaves(t) for t in trees[250:280]]
    layout = SpanLayout([len(s) for s in sentences])
    em = fit_em(grammar, bank, states=2, iterations=2, seed=3)
    pcfg = train_pcfg(grammar, bank, {})
    kept = {}
    for beam in (0.0, 0.3, 1.0):
        parser = BlockParser(em, ParserOptions(coarse_beam=beam))
        kept[beam] = len(parser.coarse_pass(layout, sentences)[1])
        assert all(r.fallback is None for r in parser.parse(sentences))
        bare = BlockParser(pcfg, ParserOptions(coarse_beam=beam))
        assert not bare.latent
        kept["pcfg", beam] = len(bare.coarse_pass(layout, sentences)[1])
    assert kept[1.0] < kept[0.3] < kept[0.0]
    assert kept["pcfg", 1.0] == kept["pcfg", 0.0]


def test_a_sentence_whose_beamed_chart_has_no_latent_parse_is_parsed_without_the_beam(
    monkeypatch,
):
    """Should the beam's coarse chart hold no latent parse of a sentence (here: a stand-in
    pass that keeps only the words' items whenever it beams), the sentence is parsed again
    without the beam, to the trees of an unbeamed parser, not to a fallback."""
    import lpcfg_cli.parsing.tiers as parser_module

    real = parser_module.coarse_posteriors

    def words_only_when_beamed(g, layout, lexical_scores, root, beam=0.0, cut=0.0):
        keys, mu, log_z = real(g, layout, lexical_scores, root, beam, cut)
        if beam > 0:
            one = layout.span_len[keys // g.n_symbols] == 1
            keys, mu = keys[one], mu[one]
        return keys, mu, log_z

    monkeypatch.setattr(parser_module, "coarse_posteriors", words_only_when_beamed)
    model, sentences = model_and_sentences()
    beamed = BlockParser(model, ParserOptions(coarse_beam=0.3))
    got = beamed.parse(sentences)
    want = BlockParser(model, ParserOptions(coarse_beam=0.0)).parse(sentences)
    assert all(r.fallback is None for r in got)
    assert [r.tree for r in got] == [r.tree for r in want]
    assert beamed.stats.retries >= sum(len(s) > 1 for s in sentences) > 0


def test_the_outside_cut_applies_before_a_latent_pass_only_and_retries_exactly(monkeypatch):
    """``--outside-cut`` reaches the coarse pass and the latent outside pass as a fraction of
    ``--prune``, before a latent pass only, and keeps fewer coarse items than none; should
    the cut posteriors hold no latent parse (here: a stand-in pass that keeps only the words'
    items whenever it cuts), the sentence is parsed again on exact posteriors, to the trees
    of a parser without the cut."""
    import lpcfg_cli.parsing.tiers as parser_module

    real = parser_module.coarse_posteriors
    real_outside = parser_module.outside_pass
    cuts, latent_cuts = [], []

    def recorded_outside(g, chart, *, weights=None, cut=0.0):
        latent_cuts.append(cut)
        return real_outside(g, chart, weights=weights, cut=cut)

    def words_only_when_cut(g, layout, lexical_scores, root, beam=0.0, cut=0.0):
        cuts.append(cut)
        keys, mu, log_z = real(g, layout, lexical_scores, root, beam, cut)
        if cut > 0:
            one = layout.span_len[keys // g.n_symbols] == 1
            keys, mu = keys[one], mu[one]
        return keys, mu, log_z

    model, sentences = model_and_sentences()
    layout = SpanLayout([len(s) for s in sentences])
    options = ParserOptions(prune=1e-2, outside_cut=0.5)
    kept = len(BlockParser(model, options).coarse_pass(layout, sentences, cut=5e-3)[1])
    assert kept < len(BlockParser(model, options).coarse_pass(layout, sentences)[1])
    monkeypatch.setattr(parser_module, "coarse_posteriors", words_only_when_cut)
    monkeypatch.setattr(parser_module, "outside_pass", recorded_outside)
    cut = BlockParser(model, options)
    got = cut.parse(sentences)
    assert cuts[0] == 5e-3 and 0.0 in cuts
    assert latent_cuts[0] == 5e-3 and 0.0 in latent_cuts
    want = BlockParser(model, ParserOptions(prune=1e-2, outside_cut=0.0)).parse(sentences)
    assert all(r.fallback is None for r in got)
    assert [r.tree for r in got] == [r.tree for r in want]
    assert [r.threshold for r in got] == [r.threshold for r in want]
    assert cut.stats.retries >= sum(len(s) > 1 for s in sentences) > 0
    cuts.clear()
    bare = BlockParser(train_pcfg(*build_grammar(sample_trees(model, 50, seed=1)), {}), options)
    bare.parse(sentences[:3])
    assert cuts and set(cuts) == {0.0}
