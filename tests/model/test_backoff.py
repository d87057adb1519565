"""Backing off from an annotated grammar to its coarser projections.

The projection weights each annotated symbol by its expected count, which for a PCFG
estimated by relative frequency are the treebank's counts: so projecting the ``--vertical 2``
PCFG must give exactly the ``--vertical 1`` PCFG of the same trees (and ``--horizontal 1``
the ``--horizontal 0`` one), and a sentence that only the coarser grammar covers must get its
tree rather than a flat fallback.
"""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.grammar.training_data import prepare
from lpcfg_cli.model.backoff import coarser_pcfg, expected_counts
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing.tiers import BlockParser
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.ptb import format_tree

# "the dog" is a subject NP, never an object: annotated with parents the grammar has no
# NP^VP -> DT NN, the unannotated one has NP -> DT NN and VP -> VBZ NP.
TREES = [
    "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))",
    "(S (NP (NN he)) (VP (VBZ sees) (NP (NN it) (NN all))))",
    "(S (NP (DT the) (NN cat)) (VP (VBZ sees) (NP (NN him))) (. .))",
    "(S (NP (NN she)) (VP (VBZ barks) (PP (IN at) (NP (DT the) (NN cat)))))",
    "(S (NP (DT the) (JJ big) (JJ old) (NN dog)) (VP (VBZ sees) (NP (NN it) (NN all))) (. .))",
]


@pytest.mark.parametrize(
    ("symbol", "expected"),
    [
        ("NP^S", "NP"),
        ("NP^VP^S", "NP"),
        ("@NP^S/DT_NP^NP", "@NP/DT_NP"),
        ("NP^NP+NN", "NP+NN"),
        ("pp^S%t", "pp%t"),  # a pre-terminal mark is not part of the annotation
        ("NP%2B^S%5E+NN", "NP%2B+NN"),  # escaped "+" and "^" inside labels stay
        ("S", "S"),
        ("%w", "%w"),
    ],
)
def test_unannotated(symbol, expected):
    assert labels.unannotated(symbol) == expected


@pytest.mark.parametrize(
    ("symbol", "expected"),
    [("@NP/DT_JJ", "@NP"), ("@NP^S/DT", "@NP^S"), ("@NP", "@NP"), ("NP+NN", "NP+NN")],
)
def test_without_context(symbol, expected):
    assert labels.without_context(symbol) == expected


def _pcfg(tmp_path, vertical: int, horizontal: int = 1):
    path = tmp_path / "train.mrg"
    path.write_text("\n".join(TREES) + "\n")
    data = prepare([str(path)], BinarizeOptions(vertical=vertical, horizontal=horizontal), rare=0)
    return train_pcfg(data.grammar, data.bank, {})


def _rules(model):
    g, s = model.grammar, model.grammar.symbols
    binary = {
        (s[a], s[b], s[c]): p for (a, b, c), p in zip(g.binary, model.coarse.binary, strict=True)
    }
    lexical = {
        (s[a], g.words[w]): p for (a, w), p in zip(g.lexical, model.coarse.lexical, strict=True)
    }
    root = {s[a]: p for a, p in enumerate(model.coarse.root) if p > 0}
    return binary, lexical, root


@pytest.mark.parametrize(
    ("finer", "coarser"), [((2, 1), (1, 1)), ((2, 2), (1, 2)), ((1, 1), (1, 0)), ((1, 2), (1, 0))]
)
def test_projection_is_the_coarser_pcfg(tmp_path, finer, coarser):
    annotated, plain = _pcfg(tmp_path, *finer), _pcfg(tmp_path, *coarser)
    assert len(annotated.grammar.symbols) > len(plain.grammar.symbols)
    projected = coarser_pcfg(annotated)
    assert projected is not None
    assert sorted(projected.grammar.symbols) == sorted(plain.grammar.symbols)
    for got, want in zip(_rules(projected), _rules(plain), strict=True):
        assert got.keys() == want.keys()
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-12), key
    assert projected.check_probabilistic() < 1e-12


def test_default_binarization_has_no_coarser_grammar(tmp_path):
    assert coarser_pcfg(_pcfg(tmp_path, 1, 0)) is None


def test_expected_counts_are_the_treebank_counts(tmp_path):
    model = _pcfg(tmp_path, 2)
    counts = expected_counts(model.grammar, model.coarse)
    s = model.grammar.symbols
    # Per tree: S once; a one-noun object NP in one tree of five, an NP under PP in one.
    assert counts[s.index("S")] == pytest.approx(1.0)
    assert counts[s.index("NP^VP+NN")] == pytest.approx(0.2)
    assert counts[s.index("NP^PP")] == pytest.approx(0.2)


def test_sentence_only_the_projection_covers_is_parsed_with_it(tmp_path):
    annotated = _pcfg(tmp_path, 2)
    parser = BlockParser(annotated)
    covered, uncovered = "he sees it all".split(), "he sees the dog".split()
    results = parser.parse([covered, uncovered])
    assert results[0].backoff is None and results[0].fallback is None
    assert results[1].fallback is None
    assert results[1].backoff == "no parse under the coarse grammar"
    assert format_tree(results[1].tree) == "(S (NP (NN he)) (VP (VBZ sees) (NP (DT the) (NN dog))))"
    assert parser.stats.backoffs == 1 and parser.stats.fallbacks == 0
    # The coarser grammar's parser gives the same tree; it backs off once more, to the
    # default binarization, which has no coarser grammar.
    plain = BlockParser(coarser_pcfg(annotated))
    assert plain.backoff is not None and plain.backoff.backoff is None
    assert format_tree(plain.parse([uncovered])[0].tree) == format_tree(results[1].tree)


def test_what_no_projection_covers_is_glued_not_backed_off(tmp_path):
    """A sentence not even the projection covers (two words no rule combines) is not
    counted as backed off: the parser's third tier glues its pieces (``parsing.glue``)."""
    annotated = _pcfg(tmp_path, 2)
    parser = BlockParser(annotated)
    result = parser.parse([". .".split()])[0]
    assert result.fallback is None and result.backoff is None and result.pieces == 2
    assert format_tree(result.tree) == "(S (. .) (. .))"
    assert np.isclose(parser.stats.backoffs, 0) and parser.stats.glued == 1
