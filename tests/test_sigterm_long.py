"""SIGTERM ends a long ``lpcfg parse`` or ``lpcfg train`` within 2 s, its output untouched.

Python runs a signal handler only in the main thread, between bytecodes, so one compiled
kernel call that runs for a minute (the coarse pass over the chart of a sentence of 1,500
words does) would keep the process going that long after ``timeout`` or Slurm sent SIGTERM.
Such kernels run in a thread of their own while the main thread waits with its handlers
live (``engine.dispatch``, ``interruptible``); these tests send SIGTERM while such a parse is
inside its chart work and time the end. Slow (a model is trained first), and they need the
repository's ``data/train.mrg``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TRAIN = Path(__file__).resolve().parents[1] / "data" / "train.mrg"
WORDS = 1500
BOUND = 2.0  # seconds from SIGTERM to the end of the process
OLD = "the output of an earlier run\n"


def lpcfg(*args: str) -> list[str]:
    return [sys.executable, "-m", "lpcfg_cli", *args]


@pytest.fixture(scope="module")
def treebank() -> Path:
    if not TRAIN.exists():
        pytest.skip(f"no {TRAIN}")
    return TRAIN


@pytest.fixture(scope="module")
def pcfg(treebank: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The treebank PCFG of ``data/train.mrg``, trained into the test's folder."""
    model = tmp_path_factory.mktemp("model") / "pcfg.npz"
    subprocess.run(
        lpcfg("train", "--method", "pcfg", "--quiet", str(treebank), "-o", str(model)),
        check=True,
        timeout=600,
    )
    return model


def long_sentence(treebank: Path) -> str:
    """``WORDS`` words of the treebank (words the model knows), as one line."""
    leaves = re.findall(r"\(([^()\s]+) ([^()\s]+)\)", treebank.read_text())
    words = [word for tag, word in leaves if tag != "-NONE-"]
    return " ".join((words * (WORDS // len(words) + 1))[:WORDS]) + "\n"


class Run:
    """A command run in the background, its stderr collected line by line as it comes."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            args, cwd=cwd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def wait_for(self, ready: Callable[[], bool], timeout: float) -> None:
        """Wait until ``ready()`` (fail if the command ends first or it takes too long)."""
        end = time.monotonic() + timeout
        while not ready():
            if self.process.poll() is not None:
                pytest.fail(f"ended before it was ready: {''.join(self.lines)}")
            if time.monotonic() > end:
                self.process.kill()
                pytest.fail("not ready in time")
            time.sleep(0.05)

    def cpu_seconds(self) -> float:
        """User and system time the process has used so far (Linux's /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def terminate(self) -> float:
        """Send SIGTERM; seconds until the process ended (killed after 60 s)."""
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=5)
        return time.monotonic() - start


def assert_ended_by_sigterm(run: Run, seconds: float, output: Path) -> None:
    assert seconds < BOUND, f"{seconds:.1f} s after SIGTERM: {''.join(run.lines)}"
    assert run.process.returncode == -signal.SIGTERM, "".join(run.lines)
    assert output.read_text() == OLD  # atomic output: the old file is left as it was
    assert sorted(p.name for p in output.parent.iterdir()) == [output.name]  # no temp file


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_sigterm_ends_a_parse_inside_the_chart_of_a_long_sentence(
    treebank: Path, pcfg: Path, tmp_path: Path
) -> None:
    """The chart of a sentence of 1,500 words: SIGTERM a few seconds into its coarse pass
    (minutes of work with the treebank PCFG), and the parse ends within 2 s."""
    text = tmp_path / "long.txt"
    text.write_text(long_sentence(treebank))
    # A short parse first: the kernels' extension module is built by the first parse on a
    # machine, which SIGTERM would interrupt instead of the chart work.
    short = tmp_path / "short.txt"
    short.write_text("the market fell .\n")
    t0 = time.monotonic()
    subprocess.run(
        lpcfg("parse", "--quiet", str(pcfg), str(short), "-o", os.devnull), check=True, timeout=900
    )
    start_up = time.monotonic() - t0
    out = tmp_path / "parsed"
    out.mkdir()
    output = out / "long.parsed"
    output.write_text(OLD)
    args = lpcfg("parse", str(pcfg), str(text), "--max-length", "2000", "-o", str(output))
    run = Run(args, tmp_path)
    # Past the start-up (as long as the whole short parse took) and 3 s into the chart.
    run.wait_for(lambda: run.cpu_seconds() > start_up + 3.0, timeout=120 + 5 * start_up)
    assert_ended_by_sigterm(run, run.terminate(), output)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_sigterm_ends_em_training(treebank: Path, tmp_path: Path) -> None:
    """EM with 16 states on ``data/train.mrg``: SIGTERM a second after an iteration was
    reported (its kernels are compiled by then), and the run ends within 2 s."""
    out = tmp_path / "model"
    out.mkdir()
    output = out / "em.npz"
    output.write_text(OLD)
    args = lpcfg("train", "--method", "em", "--states", "16", str(treebank), "-o", str(output))
    run = Run(args, tmp_path)
    run.wait_for(lambda: any("iteration" in line for line in run.lines), timeout=600)
    time.sleep(1.0)
    assert_ended_by_sigterm(run, run.terminate(), output)
