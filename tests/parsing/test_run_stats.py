"""Run statistics add up field by field, reasons key by key."""

import math

from lpcfg_cli.parsing.run_stats import ParseStats, ScoreStats


def test_parse_stats_add_every_count_and_reason() -> None:
    total = ParseStats(sentences=3, seconds=1.0, fallbacks=1, reasons={"too long": 1})
    block = ParseStats(
        sentences=2,
        seconds=0.5,
        fallbacks=1,
        glued=1,
        latent_flops=10,
        coarse_seconds=0.25,
        reasons={"too long": 1, "out of memory": 1},
    )
    total.add(block)
    assert (total.sentences, total.seconds, total.fallbacks, total.glued) == (5, 1.5, 2, 1)
    assert (total.latent_flops, total.coarse_seconds) == (10, 0.25)
    assert total.reasons == {"too long": 2, "out of memory": 1}
    assert block.reasons == {"too long": 1, "out of memory": 1}  # the added run is untouched


def test_add_without_seconds_keeps_the_wall_clock() -> None:
    total = ParseStats(seconds=2.0)
    total.add(ParseStats(sentences=4, seconds=1.5, latent_seconds=1.0), seconds=False)
    assert (total.sentences, total.seconds, total.latent_seconds) == (4, 2.0, 1.0)


def test_score_stats_add_and_perplexity() -> None:
    total = ScoreStats()
    assert math.isnan(total.perplexity)
    total.add(ScoreStats(sentences=2, scored=1, words=2, log_prob=-4.0, reasons={"empty": 1}))
    total.add(ScoreStats(sentences=1, scored=1, words=2, log_prob=-4.0, nonpositive=0))
    assert (total.sentences, total.scored, total.words) == (3, 2, 4)
    assert total.reasons == {"empty": 1}
    assert math.isclose(total.perplexity, math.exp(2.0))
