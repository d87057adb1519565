"""`atomic_output`: what `-o` does to each kind of target (every subcommand and model saving).

Regular files are replaced atomically; symlinks are kept and their target replaced; devices
and named pipes are written through, never replaced; what the shell's `>` refuses is refused
with one `lpcfg: error:` line. Everything is created in tmp_path except /dev/full, which is
safe to write to and is checked to still be a character device afterwards.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import threading

import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output
from tests.support import lpcfg, run

TREE = "( (S (NP (DT The) (NN cat)) (VP (VBD sat))) )\n"
BINARIZED = "(S (NP (DT The) (NN cat)) (VP+VBD sat))\n"


def leftovers(folder) -> list[str]:
    """Temporary files atomic_output left behind (there should be none)."""
    return [p.name for p in folder.iterdir() if p.name.startswith(".lpcfg-")]


@pytest.fixture
def trees(tmp_path):
    path = tmp_path / "t.mrg"
    path.write_text(TREE)
    return path


def test_regular_file_replaced_atomically_keeping_its_mode(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    out.chmod(0o640)
    inode = out.stat().st_ino
    with atomic_output(out) as fh:
        fh.write("new\n")
        assert out.read_text() == "old\n"  # nothing visible until the block succeeds
    assert out.read_text() == "new\n"
    assert out.stat().st_ino != inode  # renamed over, not truncated in place
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_existing_file_untouched_when_the_block_raises(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("keep me\n")
    with pytest.raises(RuntimeError), atomic_output(out) as fh:
        fh.write("half")
        raise RuntimeError("boom")
    assert out.read_text() == "keep me\n"
    assert leftovers(tmp_path) == []


def test_symlink_kept_and_its_target_replaced(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(os.path.join("real", "model.txt"))
    with atomic_output(link) as fh:
        fh.write("new\n")
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "model.txt")
    assert target.read_text() == "new\n"
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []
    # A dangling symlink: like `>`, create the file it points at and keep the link.
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to("made.txt")
    with atomic_output(dangling) as fh:
        fh.write("made\n")
    assert dangling.is_symlink() and (tmp_path / "made.txt").read_text() == "made\n"


def test_fifo_written_through_and_kept(tmp_path, trees):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []

    def reader() -> None:
        with open(fifo, encoding="utf-8") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    res = run("binarize", str(trees), "-o", str(fifo))
    thread.join(timeout=30)
    assert (res.returncode, res.stderr) == (0, "")
    assert got == [BINARIZED]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_fifo_whose_reader_leaves_is_one_error_line(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    big = tmp_path / "big.mrg"
    big.write_text(TREE * 5000)  # ~200 KB of output: more than a pipe holds

    def reader() -> None:
        with open(fifo, "rb") as fh:
            fh.read(10)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    res = run("binarize", str(big), "-o", str(fifo))
    thread.join(timeout=30)
    assert (res.returncode, res.stderr) == (2, f"lpcfg: error: {fifo}: Broken pipe\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dev_full_is_one_error_line_and_stays_a_device(trees):
    if not os.path.exists("/dev/full") or not stat.S_ISCHR(os.stat("/dev/full").st_mode):
        pytest.skip("no /dev/full character device here")
    res = run("binarize", str(trees), "-o", "/dev/full")
    assert (res.returncode, res.stderr) == (2, "lpcfg: error: /dev/full: No space left on device\n")
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_read_only_file_refused_exactly_when_the_shell_refuses(tmp_path, trees):
    out = tmp_path / "ro.txt"
    out.write_text("keep me\n")
    out.chmod(0o444)
    shell = subprocess.run(["sh", "-c", ': >> "$1"', "sh", str(out)], capture_output=True)
    # `>>` checks the permission without truncating; root may write a 0444 file.
    assert (shell.returncode == 0) == os.access(out, os.W_OK)
    res = run("binarize", str(trees), "-o", str(out))
    if os.access(out, os.W_OK):
        assert (res.returncode, out.read_text()) == (0, BINARIZED)
    else:
        assert (res.returncode, out.read_text()) == (2, "keep me\n")
        assert res.stderr == f"lpcfg: error: {out}: permission denied (file is not writable)\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o444
    assert leftovers(tmp_path) == []


def test_unwritable_file_and_folder_refused_through_the_cli(tmp_path, trees, monkeypatch, capsys):
    """What a non-root user meets (root bypasses permission bits, so os.access is faked)."""
    from lpcfg_cli.cli.group import main

    locked = tmp_path / "locked"
    locked.mkdir()
    ro_file = tmp_path / "ro.txt"
    ro_file.write_text("keep me\n")
    real_access = os.access
    denied = {str(locked), str(ro_file)}
    monkeypatch.setattr(
        os,
        "access",
        lambda p, m, **kw: False if str(p) in denied and m & os.W_OK else real_access(p, m, **kw),
    )
    for out, why in [
        (ro_file, "permission denied (file is not writable)"),
        (locked / "new.txt", f"permission denied (folder {locked} is not writable)"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["binarize", str(trees), "-o", str(out)])
        assert exit_info.value.code == 2
        assert capsys.readouterr().err == f"lpcfg: error: {out}: {why}\n"
    assert ro_file.read_text() == "keep me\n" and list(locked.iterdir()) == []


def test_missing_folder_and_directory_refused(tmp_path, trees):
    res = run("binarize", str(trees), "-o", str(tmp_path / "nope" / "out.txt"))
    assert (res.returncode, res.stderr) == (
        2,
        f"lpcfg: error: {tmp_path / 'nope'}: directory does not exist\n",
    )
    with pytest.raises(LpcfgError, match="is a directory"), atomic_output(tmp_path):
        pass


def test_closed_stdout_ends_quietly(tmp_path):
    """`lpcfg binarize big | head -1`: no message, ended by SIGPIPE like cat or grep."""
    big = tmp_path / "big.mrg"
    big.write_text(TREE * 5000)
    for out in ("-", "/dev/stdout"):
        proc = subprocess.Popen(
            lpcfg("binarize", big, "-o", out), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().decode() == BINARIZED
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert (proc.wait(timeout=60), err) == (-signal.SIGPIPE, "")


def test_stdout_write_error_is_one_line(tmp_path, trees):
    """`lpcfg binarize t.mrg > /dev/full`."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        res = subprocess.run(
            lpcfg("binarize", trees), stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert (res.returncode, res.stderr) == (2, "lpcfg: error: <stdout>: No space left on device\n")
