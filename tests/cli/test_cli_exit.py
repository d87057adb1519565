"""How the ``lpcfg`` program ends (``cli.run``): at once once the command is done, with the
command's status and the exit handlers run, skipping only the interpreter's teardown; the
ordinary way while a thread is still at work. Everything is written inside tmp_path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A driver: an object only the interpreter's teardown collects (its __del__ writes
# "teardown"), an exit handler (writes "atexit"), optionally a non-daemon thread that
# finishes after the command (writes "thread"), then the program with the given arguments.
DRIVER = """
import atexit, sys, threading, time
from pathlib import Path

out = Path(sys.argv[1])


class Teardown:
    def __init__(self):
        self.fh = open(out / "teardown", "w")

    def __del__(self):
        self.fh.write("ran")
        self.fh.close()


keep = Teardown()
atexit.register(lambda: (out / "atexit").write_text("ran"))
if sys.argv[2] == "thread":
    def late():
        time.sleep(0.5)
        (out / "thread").write_text("done")
    threading.Thread(target=late).start()
sys.argv = ["lpcfg", *sys.argv[3:]]
from lpcfg_cli.cli import run
run()
"""


def _drive(tmp_path: Path, thread: bool, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, str(tmp_path), "thread" if thread else "-", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_program_ends_at_once_with_its_status_and_exit_handlers(tmp_path):
    done = _drive(tmp_path, False, "--version")
    assert done.returncode == 0 and done.stdout.startswith("lpcfg"), done.stderr
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "teardown").read_text() == ""  # no teardown: ended at once
    failed = _drive(tmp_path, False, "evaluate", str(tmp_path / "no"), str(tmp_path / "no"))
    assert failed.returncode == 2
    assert failed.stderr.startswith("lpcfg: error: ") and failed.stderr.count("\n") == 1
    assert (tmp_path / "teardown").read_text() == ""


def test_a_thread_still_at_work_is_waited_for(tmp_path):
    done = _drive(tmp_path, True, "--version")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "teardown").read_text() == "ran"  # the ordinary way out


def test_a_profiler_still_gets_its_report(tmp_path):
    """Under ``python -m cProfile`` the program ends the ordinary way, so that the profiler,
    which writes after the program returns, still writes its statistics."""
    stats = tmp_path / "run.prof"
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "lpcfg_cli", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.startswith("lpcfg"), done.stderr
    assert stats.stat().st_size > 0
