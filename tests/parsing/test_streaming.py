"""`parse` streams: bounded look-ahead, early output, sharding, workers that agree."""

from __future__ import annotations

import select
import subprocess
import sys

import pytest

from lpcfg_cli.files.streams import PAUSE
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import Parser
from lpcfg_cli.parsing.streaming import MIN_SHARE, SERIAL_BLOCK, balanced_share, cost
from lpcfg_cli.parsing.workers import Workers
from tests.support import fit_em, lpcfg, synthetic_treebank


@pytest.fixture(scope="module")
def latent(tmp_path_factory):
    """A 2-state EM model (so the latent pass runs) and 250 held-out sentences."""
    d = tmp_path_factory.mktemp("stream")
    grammar, bank = build_grammar(synthetic_treebank(d, 500, 250))
    model = fit_em(grammar, bank, states=2, iterations=2, seed=1)
    model.save(d / "m.npz")
    return d


def test_sharded_parse_concatenates_to_the_single_parse(latent, tmp_path):
    """`split` + `parse` per shard + `cat` (how a corpus is spread over machines) gives
    byte for byte the output of one parse, with one or two workers."""
    lines = (latent / "test.txt").read_text().splitlines(keepends=True)
    whole = subprocess.run(
        lpcfg("parse", str(latent / "m.npz"), str(latent / "test.txt"), "--no-progress"),
        capture_output=True,
        text=True,
    )
    assert whole.returncode == 0, whole.stderr
    assert len(whole.stdout.splitlines()) == len(lines)
    shards = []
    for i, lo in enumerate(range(0, len(lines), 90)):
        shard = tmp_path / f"x{i:02d}"
        shard.write_text("".join(lines[lo : lo + 90]))
        out = tmp_path / f"x{i:02d}.parsed"
        res = subprocess.run(
            lpcfg(
                "parse",
                str(latent / "m.npz"),
                str(shard),
                "-o",
                str(out),
                "--no-progress",
                "--jobs",
                str(1 + i % 2),
            ),
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr
        shards.append(out.read_text())
    assert "".join(shards) == whole.stdout
    command = lpcfg(
        "parse", str(latent / "m.npz"), str(latent / "test.txt"), "--no-progress", "--jobs", "2"
    )
    two = subprocess.run(command, capture_output=True, text=True)
    assert two.stdout == whole.stdout


def test_first_trees_are_written_before_the_input_ends(latent):
    """With the input still open, the first block's trees arrive on stdout."""
    sentences = (latent / "test.txt").read_text().splitlines()
    proc = subprocess.Popen(
        lpcfg("parse", str(latent / "m.npz"), "-", "--no-progress"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(s + "\n" for s in sentences[: SERIAL_BLOCK + 1]))
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        assert ready, "no output while the input is still open"
        first = proc.stdout.readline()
        assert first.startswith("(TOP ")
        proc.stdin.write("".join(s + "\n" for s in sentences[SERIAL_BLOCK + 1 :]))
        proc.stdin.close()
        rest = proc.stdout.read().splitlines()
        assert proc.wait(120) == 0
    finally:
        proc.kill()
    assert len(rest) + 1 == len(sentences)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_stream_reads_a_bounded_distance_ahead(latent, jobs):
    """The first result comes after at most a few blocks of input were read, whatever the
    length of the input (so memory stays flat on a 200,000-line file)."""
    sentences = (latent / "test.txt").read_text().splitlines()
    consumed = 0

    def endless():
        nonlocal consumed
        while True:
            for s in sentences:
                consumed += 1
                yield s.split()

    stream = Parser(LPCFG.load(latent / "m.npz"), jobs=jobs, block=20)
    results = stream.parse(endless())
    first = [next(results) for _ in range(50)]
    assert all(r.tree is not None for r in first)
    assert consumed <= len(first) + 20 * (2 * jobs + 2)
    results.close()


BLAS_CHECK = """
import sys
from threadpoolctl import threadpool_info, threadpool_limits
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.tiers import BlockParser
parser = BlockParser(LPCFG.load(sys.argv[1]))
sentences = [line.split() for line in open(sys.argv[2])][:20]
with threadpool_limits(1):
    parser.parse(sentences)
    print(max(lib["num_threads"] for lib in threadpool_info()))
"""


def test_every_blas_the_engine_calls_is_held_to_one_thread(latent):
    """In a fresh process (as `parse` runs): a BLAS library first loaded by a kernel call
    inside threadpool_limits escaped the limit and ran two threads per process."""
    d = latent
    out = subprocess.run(
        [sys.executable, "-c", BLAS_CHECK, str(d / "m.npz"), str(d / "test.txt")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "1"


def test_the_input_end_is_shared_between_the_workers_by_cost():
    """At the input's end each idle worker takes the prefix of what is left closest to
    1 / jobs of the predicted work, busy workers' blocks counted; tails too small to split
    go whole, and no share or remainder is smaller than MIN_SHARE."""
    costs = [float(n**2) for n in range(1, 41)]
    total = sum(costs)

    def off(k, share):
        return abs(sum(costs[:k]) - share)

    k = balanced_share(costs, 0.0, 2)
    assert off(k, total / 2) <= max(costs) / 2
    assert all(off(k, total / 2) <= off(j, total / 2) for j in range(len(costs)))
    third = total / 2  # a busy worker with a third of all the work
    costs.reverse()  # the longest first: the share (three quarters) leaves enough behind
    k = balanced_share(costs, third, 2)
    assert off(k, (total + third) / 2) <= max(costs) / 2 and len(costs) - k >= MIN_SHARE
    # Busy with more than everything left: this worker takes it all.
    assert balanced_share(costs, 10 * total, 2) == len(costs)
    # Fewer than 2 * MIN_SHARE sentences: one block.
    assert balanced_share(costs[: 2 * MIN_SHARE - 1], 0.0, 2) == 2 * MIN_SHARE - 1
    # A share that would leave fewer than MIN_SHARE behind takes them too ...
    heavy_last = [1.0] * (MIN_SHARE + 5) + [1000.0]
    assert balanced_share(heavy_last, 0.0, 2) == len(heavy_last)
    # ... and a share is never fewer than MIN_SHARE sentences.
    heavy_first = [1000.0] + [1.0] * (2 * MIN_SHARE)
    assert balanced_share(heavy_first, 0.0, 2) == MIN_SHARE


def test_workers_get_balanced_shares_of_an_input_that_ends_within_the_window(latent, monkeypatch):
    """250 sentences with two workers: the whole input is read first and shared out in two
    blocks of about equal predicted cost, and the results are the one-process results."""
    sentences = [s.split() for s in (latent / "test.txt").read_text().splitlines()]
    model = LPCFG.load(latent / "m.npz")
    handed = []
    submit = Workers.submit
    monkeypatch.setattr(Workers, "submit", lambda w, n, b: handed.append(b) or submit(w, n, b))
    two = list(Parser(model, jobs=2).parse(sentences))
    assert len(handed) == 2
    assert handed[0] + handed[1] == sentences  # a prefix each: results stream in order
    loads = sorted(sum(cost(s) for s in block) for block in handed)
    assert loads[1] - loads[0] <= max(cost(s) for s in sentences)
    one = list(Parser(model, jobs=1).parse(sentences))
    assert [str(r.tree) for r in two] == [str(r.tree) for r in one]


def test_workers_hand_on_results_before_waiting_for_input(latent):
    """When the input pauses, the sentences read so far are parsed and their results
    returned before the stream is read past the pause (a person typing gets answers)."""
    sentences = [s.split() for s in (latent / "test.txt").read_text().splitlines()][:30]
    past_pause = []

    def typed():
        yield from sentences
        yield PAUSE
        past_pause.append(True)
        yield from sentences

    results = Parser(LPCFG.load(latent / "m.npz"), jobs=2).parse(typed())
    first = [next(results) for _ in range(len(sentences))]
    assert not past_pause
    assert all(r.tree is not None for r in first)
    assert len(list(results)) == len(sentences)
