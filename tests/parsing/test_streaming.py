"""`parse` streams: bounded look-ahead, early output, sharding, workers that agree."""

from __future__ import annotations

import select
import subprocess
import sys

import pytest

from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.streaming import BLOCK, StreamParser
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
        proc.stdin.write("".join(s + "\n" for s in sentences[: BLOCK + 1]))
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        assert ready, "no output while the input is still open"
        first = proc.stdout.readline()
        assert first.startswith("(TOP ")
        proc.stdin.write("".join(s + "\n" for s in sentences[BLOCK + 1 :]))
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

    stream = StreamParser(LPCFG.load(latent / "m.npz"), jobs=jobs, block=20)
    results = stream.parse(endless())
    first = [next(results) for _ in range(50)]
    assert all(r.tree is not None for r in first)
    assert consumed <= len(first) + 20 * (2 * jobs + 2)
    results.close()


BLAS_CHECK = """
import sys
from threadpoolctl import threadpool_info, threadpool_limits
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import Parser
parser = Parser(LPCFG.load(sys.argv[1]))
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
