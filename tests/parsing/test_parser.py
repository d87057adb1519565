"""``Parser``, the one way to run a model: from a model, an arranged model or a path (through
the cache), parsing and scoring, statistics that add up, and no second route."""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import lpcfg_cli as lp
from lpcfg_cli.engine.string_charts import StringScorer
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.arranged import ArrangedModel
from lpcfg_cli.parsing.parser import Parser, SentenceScore
from lpcfg_cli.parsing.parser_options import ParserOptions
from lpcfg_cli.treebank.ptb import format_tree
from tests.support import fit_em, synthetic_treebank

SRC = Path(__file__).resolve().parents[2] / "src" / "lpcfg_cli"


@pytest.fixture(scope="module")
def latent(tmp_path_factory):
    """A 2-state EM model file and 40 held-out sentences."""
    d = tmp_path_factory.mktemp("front")
    grammar, bank = build_grammar(synthetic_treebank(d, 300, 40))
    fit_em(grammar, bank, states=2, iterations=2, seed=1).save(d / "m.npz")
    return d


def sentences_of(d: Path) -> list[list[str]]:
    return [line.split() for line in (d / "test.txt").read_text().splitlines()]


def test_a_model_its_arranged_copy_and_its_path_parse_alike(latent, tmp_path, monkeypatch):
    monkeypatch.setenv("LPCFG_CACHE_DIR", str(tmp_path / "cache"))
    sentences = sentences_of(latent)
    model = LPCFG.load(latent / "m.npz")
    by_model = [format_tree(t) for t in Parser(model).trees(sentences)]
    by_arranged = [format_tree(t) for t in Parser(ArrangedModel.of(model)).trees(sentences)]
    by_path = [format_tree(t) for t in Parser(latent / "m.npz").trees(sentences)]
    assert by_model == by_arranged == by_path
    assert len(by_model) == len(sentences)
    # The path went through the cache of arranged models, as `lpcfg parse` does.
    assert any((tmp_path / "cache").rglob("*")), "the path was not arranged through the cache"
    assert [format_tree(t) for t in lp.parse(str(latent / "m.npz"), sentences)] == by_model


def test_statistics_add_up_over_runs(latent):
    sentences = sentences_of(latent)
    parser = Parser(LPCFG.load(latent / "m.npz"))
    assert len(list(parser.parse(sentences[:10]))) == 10
    first = parser.stats.seconds
    assert first > 0 and parser.stats.sentences == 10
    assert len(list(parser.parse(sentences[10:]))) == len(sentences) - 10
    assert parser.stats.sentences == len(sentences)
    assert parser.stats.seconds > first  # added, not overwritten by the second run


def test_scores_are_the_string_probabilities(latent):
    sentences = sentences_of(latent)[:12]
    model = LPCFG.load(latent / "m.npz")
    parser = Parser(latent / "m.npz")
    scores = list(parser.score([*sentences, []]))
    log_p, sign = StringScorer(model)(sentences)
    assert [s.log_prob for s in scores[:-1]] == pytest.approx(list(log_p))
    assert [s.sign for s in scores[:-1]] == list(sign)
    assert scores[-1].sign == 0 and scores[-1].log_prob == -math.inf  # the empty sentence
    assert scores[0].prob == pytest.approx(math.exp(log_p[0]))
    totals = parser.score_stats
    assert (totals.sentences, totals.scored, totals.nonpositive) == (13, 12, 1)
    assert totals.words == sum(map(len, sentences))
    assert totals.perplexity == pytest.approx(math.exp(-float(np.sum(log_p)) / totals.words))
    again = list(lp.score(model, sentences[:2]))
    assert [s.log_prob for s in again] == pytest.approx(list(log_p[:2]))


def test_scoring_takes_the_length_limit_from_the_options(latent):
    sentences = sentences_of(latent)
    longest = max(map(len, sentences))
    parser = Parser(latent / "m.npz", ParserOptions(max_length=longest - 1))
    scores = list(parser.score(sentences))
    too_long = [s for s in scores if s.skipped is not None]
    assert too_long and all(s.words == longest for s in too_long)
    assert all(math.isnan(s.log_prob) and s.sign == 0 for s in too_long)
    assert parser.score_stats.reasons == {f"longer than {longest - 1} words": len(too_long)}
    assert isinstance(too_long[0], SentenceScore) and too_long[0].prob == 0.0


def test_what_cannot_be_scored_says_so(latent):
    model = LPCFG.load(latent / "m.npz")
    with pytest.raises(TypeError, match="ArrangedModel"):
        Parser(ArrangedModel.of(model)).score([["a"]])
    bundle = replace(model, members=(model,))
    with pytest.raises(LpcfgError, match="ensemble"):
        Parser(bundle).score([["a"]])
    with pytest.raises(TypeError, match="model must be"):
        Parser(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="jobs"):
        Parser(model, jobs=0)


# --- one route ---------------------------------------------------------------------------

# Where the block parser, the stream of blocks and the string scorer may be made: the front,
# and the block parser's own back-off to a coarser grammar.
ROUTES = {
    "BlockParser": {"parsing/parser.py", "parsing/tiers.py"},
    "stream": {"parsing/parser.py"},
    "StringScorer": {"parsing/parser.py"},
}


def calls_outside_the_front(root: Path) -> list[str]:
    """``module:line name`` of every call that builds a route of ``ROUTES`` where it may
    not be built."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in ROUTES and module not in ROUTES[name]:
                found.append(f"{module}:{node.lineno} {name}")
    return found


def test_every_model_run_goes_through_the_parser():
    assert calls_outside_the_front(SRC) == []


def test_a_second_route_is_found(tmp_path):
    """Plant a command that parses with the block parser itself: the check names it."""
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "shortcut.py").write_text(
        "from lpcfg_cli.parsing.tiers import BlockParser\n\n"
        "def run(model, sentences):\n"
        "    return BlockParser(model).parse(sentences)\n"
    )
    (tmp_path / "cli" / "scores.py").write_text(
        "from lpcfg_cli.engine import string_charts\n\n"
        "def run(model, sentences):\n"
        "    return string_charts.StringScorer(model)(sentences)\n"
    )
    assert calls_outside_the_front(tmp_path) == [
        "cli/scores.py:4 StringScorer",
        "cli/shortcut.py:4 BlockParser",
    ]


def test_a_sentence_too_large_for_memory_is_named_and_the_rest_run(latent, monkeypatch):
    """A chart that does not fit: the batch runs a sentence at a time and only the one that
    does not fit alone falls back (parse) or is not scored (score)."""
    from lpcfg_cli.parsing import tiers
    from lpcfg_cli.parsing.tiers import OUT_OF_MEMORY, BlockParser

    sentences = sentences_of(latent)[:6]
    longest = max(range(6), key=lambda i: len(sentences[i]))
    huge = len(sentences[longest])
    plain = BlockParser._parse_batch

    def parse_batch(self, batch, smooth=False):
        if any(len(s) == huge for s in batch):
            raise MemoryError
        return plain(self, batch, smooth=smooth)

    monkeypatch.setattr(tiers.BlockParser, "_parse_batch", parse_batch)
    parser = Parser(LPCFG.load(latent / "m.npz"))
    results = list(parser.parse(sentences))
    assert [r.fallback == OUT_OF_MEMORY for r in results] == [len(s) == huge for s in sentences]
    assert all(r.tree is not None for r in results)
    assert parser.stats.reasons == {OUT_OF_MEMORY: sum(len(s) == huge for s in sentences)}

    scored = StringScorer.__call__

    def score_batch(self, batch):
        if any(len(s) == huge for s in batch):
            raise MemoryError
        return scored(self, batch)

    monkeypatch.setattr(StringScorer, "__call__", score_batch)
    scores = list(parser.score(sentences))
    assert [s.skipped for s in scores] == [
        OUT_OF_MEMORY if len(s) == huge else None for s in sentences
    ]
    assert all(s.sign != 0 for s, w in zip(scores, sentences, strict=True) if len(w) != huge)


def test_a_path_is_arranged_through_the_cache_even_with_its_model_loaded(
    latent, tmp_path, monkeypatch
):
    """``NltkParser(path)`` loads the model (for tree probabilities) and still takes its
    arrangement from the cache; on a miss it arranges the model it holds, reading the file
    once."""
    monkeypatch.setenv("LPCFG_CACHE_DIR", str(tmp_path / "cache"))
    sentences = sentences_of(latent)[:3]
    reads, arranged = [], []
    load, of = LPCFG.load.__func__, ArrangedModel.of.__func__
    monkeypatch.setattr(LPCFG, "load", classmethod(lambda c, p: reads.append(p) or load(c, p)))
    monkeypatch.setattr(
        ArrangedModel, "of", classmethod(lambda c, m: arranged.append(m) or of(c, m))
    )
    cold = lp.NltkParser(latent / "m.npz")
    list(cold.parse_sents(sentences))
    assert (len(reads), len(arranged)) == (1, 1)  # a miss: the loaded model arranged
    list(Parser(latent / "m.npz").trees(sentences))  # keeps it in the cache
    reads.clear(), arranged.clear()
    warm = lp.NltkParser(latent / "m.npz")
    list(warm.parse_sents(sentences))
    assert (len(reads), len(arranged)) == (1, 0)  # the arrangement came from the cache
