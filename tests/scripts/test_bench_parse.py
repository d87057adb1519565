"""scripts/bench_parse.py: the Berkeley parser's output checks and commands, and the speed
by sentence length on a small model (the bench itself needs the Berkeley parser)."""

from __future__ import annotations

import subprocess

import pytest

from lpcfg_cli.treebank.ptb import format_tree
from tests.support import SCRIPTS, invoke, synthetic_treebank


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import bench_parse

    return bench_parse


def test_unparsed_counts_the_berkeley_parsers_empty_lines(bench, tmp_path):
    out = tmp_path / "b.out"
    out.write_text("( (S (NN a)) )\n(())\n( ( ) )\n((S (NN b)))\n")
    assert bench.unparsed(out) == 2


def test_a_long_sentence_runs_the_jar_with_a_higher_limit(bench, tmp_path):
    (tmp_path / "BerkeleyParser-1.7.jar").write_text("")
    short = bench.berkeley_command(tmp_path, tmp_path / "w", tmp_path / "o")
    assert short[:2] == ["bash", str(tmp_path / "parse.sh")]
    assert short[-1] == str(tmp_path / "train0001-0149-sm4.gr")  # the dev-selected grammar
    long = bench.berkeley_command(tmp_path, tmp_path / "w", tmp_path / "o", 250)
    assert long[0] == "java" and long[long.index("-maxLength") + 1] == "250"
    assert str(tmp_path / "BerkeleyParser-1.7.jar") in long


def test_the_jobs_bound_is_amdahls(bench):
    """A 4 s command with 1 s serial: 3 s split in two, 2.5 s at best (1.6x); none serial:
    twice as fast; all serial: no faster."""
    assert bench.jobs_bound(4.0, 1.0) == pytest.approx(1.6)
    assert bench.jobs_bound(4.0, 0.0) == pytest.approx(2.0)
    assert bench.jobs_bound(4.0, 4.0) == pytest.approx(1.0)
    assert bench.jobs_bound(4.0, 1.0, jobs=4) == pytest.approx(4.0 / 1.75)


def test_the_uncached_start_up_arranges_the_model_anew(bench, tmp_path, monkeypatch):
    """The uncached command runs with the cache of arranged models off, and writes none."""
    monkeypatch.setenv(bench.CACHE_ENV, str(tmp_path / "cache"))
    synthetic_treebank(tmp_path, 60, 3)
    model = tmp_path / "m.npz"
    assert invoke("train", "--method", "pcfg", "-o", model, tmp_path / "test.mrg").exit_code == 0
    command = bench.parse_command(str(model), tmp_path / "test.txt", tmp_path / "o")
    subprocess.run(bench.uncached(command), check=True, capture_output=True)
    assert not (tmp_path / "cache").exists()
    subprocess.run(command, check=True, capture_output=True)
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_a_timed_commands_peak_memory_is_its_own(bench):
    """A command timed while the bench holds 200 MB reports its own peak, not the bench's
    (a child forked from the bench counted the bench's pages until it ran its command);
    one that fails stops the bench with its error."""
    import sys

    held = bytearray(200_000_000)
    held[::4096] = b"x" * len(held[::4096])  # resident, page by page
    seconds, peak = bench._timed_once([sys.executable, "-c", "pass"])
    assert 0.0 < seconds < 30.0
    assert peak < 100.0
    with pytest.raises(SystemExit, match="boom"):
        bench._timed_once([sys.executable, "-c", "import sys; sys.exit('boom')"])
    del held


def test_a_timed_command_can_write_its_errors_to_a_log(bench, tmp_path):
    """``bench_scale`` keeps each command's stderr in a file: it is written there, and a
    failure stops the bench with its end."""
    import sys

    log = tmp_path / "cmd.err"
    bench.spawner().run(
        ([sys.executable, "-c", "import sys; print('hello', file=sys.stderr)"],), log
    )
    assert log.read_text() == "hello\n"
    with pytest.raises(SystemExit, match="bad input"):
        bench.spawner().run(([sys.executable, "-c", "import sys; sys.exit('bad input')"],), log)


def test_by_length_buckets_every_sentence_once_per_copy(bench, tmp_path):
    trees = synthetic_treebank(tmp_path, 120, 40)
    (tmp_path / "t.mrg").write_text("".join(format_tree(t) + "\n" for t in trees))
    result = invoke("train", tmp_path / "t.mrg", "-o", tmp_path / "p.npz", "-q")
    assert result.exit_code == 0, result.output
    sentences = [line.split() for line in (tmp_path / "test.txt").read_text().splitlines()]
    table = bench.by_length(str(tmp_path / "p.npz"), None, sentences, tmp_path, 25)
    rows, covered = table["rows"], 0
    for row in rows:
        low, _, high = row["bucket"].rstrip("+").partition("-")
        mine = [s for s in sentences if int(low) <= len(s) <= int(high or 10_000)]
        assert row["sentences"] >= 25 and row["sentences"] % len(mine) == 0
        assert row["mean_words"] == pytest.approx(sum(map(len, mine)) / len(mine))
        rate = row["lpcfg_rate"]  # None: within the start-up's spread (RESOLUTION)
        assert (rate is None or rate > 0) and "berkeley_rate" not in row
        covered += len(mine)
    assert covered == len(sentences)  # every sentence in one bucket
    assert table["lpcfg_startup"] > 0


def test_a_bucket_within_the_start_ups_spread_gets_no_time(bench, tmp_path, monkeypatch):
    """A bucket whose command takes hardly longer than the start-up's is not measured: no
    rate of thousands of sentences/s from a difference of a few milliseconds."""
    sentences = [["a"] * 5, ["b"] * 15]
    start = 0.5
    times = [start, start + bench.RESOLUTION / 2, start + 2.0]  # start-up, 1-10, 11-20

    monkeypatch.setattr(bench, "timed_alternating", lambda commands: [(t, 0.0) for t in times])
    table = bench.by_length("m.npz", None, sentences, tmp_path, 4)
    short, longer = table["rows"]
    assert short["lpcfg_rate"] is None and short["lpcfg_seconds_per_sentence"] is None
    assert longer["lpcfg_rate"] == pytest.approx(longer["sentences"] / 2.0)
