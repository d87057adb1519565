"""Every user of an installation reads the kernels compiled beside its sources, whether or
not they can write there (``engine.jit.cache_folders``, the read-only layer of numba's
cache, ``engine.precompiled.module_path``); a ``LPCFG_CACHE_DIR`` that is no writable
folder turns the arranged-model cache off with one warning (``parsing.arranged_cache``).

Root writes through any permission bits, so a folder "this user cannot write" is one
``jit._writable`` says so of, the decision the code takes. Everything is written inside
tmp_path.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import lpcfg_cli
from lpcfg_cli.engine import jit, precompiled
from lpcfg_cli.parsing import arranged_cache
from tests.support import TINY_TREES, invoke, lpcfg

IN_MEMORY = (
    "lpcfg: warning: no writable folder for compiled kernels (set NUMBA_CACHE_DIR or "
    "XDG_CACHE_HOME to one): they are compiled in memory, so start-up is slower"
)


@pytest.fixture
def user(no_user_cache):
    """A user with no cache folder of their own (``tests.support.no_user_cache``)."""


def _not_writable_under(monkeypatch, folder: Path) -> None:
    """``folder`` and all below it cannot be written by this user, as for a second user of
    an install (the rest as it really is)."""
    real = jit._writable
    monkeypatch.setattr(
        jit, "_writable", lambda f: not os.path.abspath(f).startswith(str(folder)) and real(f)
    )


# --- where compiled kernels are looked for ----------------------------------------------------


def test_the_install_is_read_even_where_it_cannot_be_written(user, monkeypatch, tmp_path):
    source = tmp_path / "src"
    (source / "__pycache__").mkdir(parents=True)
    _not_writable_under(monkeypatch, source)
    assert jit.cache_folder(str(source)) is None  # nowhere to write
    home = tmp_path / "home-is-a-file" / ".cache" / "lpcfg" / "numba"
    assert jit.cache_folders(str(source)) == [str(source / "__pycache__"), str(home)]
    assert jit._read_only_tree(str(source), None) == str(source / "__pycache__")
    given = tmp_path / "given"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(given))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit.cache_folders(str(source)) == [
        str(given),
        str(source / "__pycache__"),
        str(tmp_path / "xdg" / "lpcfg" / "numba"),
    ]
    writable = tmp_path / "writable"
    (writable / "__pycache__").mkdir(parents=True)
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    beside = jit.cache_folder(str(writable))
    assert beside == str(writable / "__pycache__")
    assert jit._read_only_tree(str(writable), beside) is None  # numba's own cache reads it


def test_the_module_is_found_in_a_read_only_install(user, monkeypatch, tmp_path):
    """An extension module already built beside the sources is used, not built again in the
    user's folder, nor given up for want of a writable one."""
    source = tmp_path / "src"
    (source / "__pycache__").mkdir(parents=True)
    built = source / "__pycache__" / "m.so"
    built.write_bytes(b"")
    _not_writable_under(monkeypatch, source)
    monkeypatch.setattr(precompiled, "module_name", lambda: "m.so")
    folders, folder = jit.cache_folders, jit.cache_folder
    monkeypatch.setattr(jit, "cache_folders", lambda: folders(str(source)))
    monkeypatch.setattr(jit, "cache_folder", lambda: folder(str(source)))
    assert precompiled.module_path() == str(built)
    assert precompiled.build_path() is None  # nothing can be built here
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert precompiled.module_path() == str(built)
    mine = tmp_path / "xdg" / "lpcfg" / "numba" / "m.so"
    assert precompiled.build_path() == str(mine)
    built.unlink()
    assert precompiled.module_path() == str(mine)  # where it would be built


# --- numba's cache, read from a folder that cannot be written ---------------------------------

PROBE = """
def add(a, b):
    return a + b
"""


def _probe(folder: Path) -> ModuleType:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cacheprobe.py").write_text(PROBE)
    spec = importlib.util.spec_from_file_location("cacheprobe", folder / "cacheprobe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _counts(dispatcher) -> tuple[int, int]:
    stats = dispatcher.stats
    return sum(stats.cache_hits.values()), sum(stats.cache_misses.values())


def test_numba_reads_a_cache_it_cannot_write_and_keeps_new_ones_in_the_users(
    user, monkeypatch, tmp_path, capsys
):
    pytest.importorskip("numba")
    source = tmp_path / "src"
    probe = _probe(source)
    installer, _ = jit.dispatcher(probe.add, {})  # the folder beside is writable
    assert installer(1, 2) == 3 and _counts(installer) == (0, 1)
    installed = sorted(os.listdir(source / "__pycache__"))
    assert any(name.endswith(".nbi") for name in installed)

    _not_writable_under(monkeypatch, source)  # a second user, without a cache folder
    second, _ = jit.dispatcher(probe.add, {})
    assert second(1, 2) == 3 and _counts(second) == (1, 0)  # read, not compiled
    assert capsys.readouterr().err == ""
    assert second(1.5, 2.0) == 3.5 and second(True, False) == 1  # not there: compiled
    assert _counts(second) == (1, 2)
    assert capsys.readouterr().err.splitlines() == [IN_MEMORY]  # once, when it happened
    assert sorted(os.listdir(source / "__pycache__")) == installed

    xdg = tmp_path / "xdg"  # the same user with a cache folder: new ones kept there
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setattr(jit, "_user_folder", None)
    third, _ = jit.dispatcher(probe.add, {})
    assert third(1, 2) == 3 and third(1.5, 2.0) == 3.5 and _counts(third) == (1, 1)
    assert any((xdg / "lpcfg" / "numba").rglob("*.nbi"))
    assert sorted(os.listdir(source / "__pycache__")) == installed
    fourth, _ = jit.dispatcher(probe.add, {})
    assert fourth(1.5, 2.0) == 3.5 and fourth(1, 2) == 3 and _counts(fourth) == (2, 0)
    assert capsys.readouterr().err == ""


def test_a_torn_file_in_the_read_only_cache_is_a_miss(user, monkeypatch, tmp_path, capsys):
    pytest.importorskip("numba")
    source = tmp_path / "src"
    probe = _probe(source)
    installer, _ = jit.dispatcher(probe.add, {})
    assert installer(1, 2) == 3
    for data in (source / "__pycache__").glob("*.nbc"):
        data.write_bytes(b"torn")
    _not_writable_under(monkeypatch, source)
    second, _ = jit.dispatcher(probe.add, {})
    assert second(1, 2) == 3 and _counts(second) == (0, 1)
    assert capsys.readouterr().err.splitlines() == [IN_MEMORY]


# --- LPCFG_CACHE_DIR that is no writable folder -----------------------------------------------


@pytest.fixture
def unsaid(monkeypatch):
    monkeypatch.setattr(arranged_cache, "_off_said", False)


@pytest.mark.parametrize("kind", ["file", "devnull", "under a file"])
def test_a_cache_dir_that_is_no_writable_folder_is_said_once(
    unsaid, monkeypatch, tmp_path, capsys, kind
):
    blocker = tmp_path / "a-file"
    blocker.write_text("kept")
    given = {"file": str(blocker), "devnull": os.devnull, "under a file": f"{blocker}/cache"}
    monkeypatch.setenv(arranged_cache.ENV, given[kind])
    assert arranged_cache.cache_folder() is None and arranged_cache.cache_folder() is None
    (line,) = capsys.readouterr().err.splitlines()
    why = "it is not a folder" if kind != "under a file" else "it cannot be written (not a"
    assert line.startswith(f"lpcfg: warning: {arranged_cache.ENV}={given[kind]}: {why}")
    assert line.endswith("the arranged-model cache is off (set it to a writable folder, or to off)")
    assert blocker.read_text() == "kept"


def test_a_cache_dir_off_or_writable_is_silent(unsaid, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(arranged_cache.ENV, "off")
    assert arranged_cache.cache_folder() is None
    monkeypatch.setenv(arranged_cache.ENV, str(tmp_path / "made"))
    assert arranged_cache.cache_folder() == str(tmp_path / "made")
    assert (tmp_path / "made").is_dir()
    assert capsys.readouterr().err == ""


def test_parse_with_a_cache_dir_that_is_a_file_warns_once_and_parses(tmp_path):
    (tmp_path / "t.mrg").write_text("\n".join(TINY_TREES) + "\n")
    (tmp_path / "x.txt").write_text("the cat sat\nKim ran\n")
    res = invoke("train", "--method", "pcfg", tmp_path / "t.mrg", "-o", tmp_path / "m.npz")
    assert res.exit_code == 0, res.stderr
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, arranged_cache.ENV: str(blocker)}
    args = lpcfg("parse", "--quiet", tmp_path / "m.npz", tmp_path / "x.txt")
    res = subprocess.run(args, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 2
    assert res.stderr.splitlines() == [
        f"lpcfg: warning: {arranged_cache.ENV}={blocker}: it is not a folder, so the "
        "arranged-model cache is off (set it to a writable folder, or to off)"
    ]
    assert blocker.read_text() == ""


# --- end to end: an install compiled by one user, run by another -------------------------------

# The command line, run as a user who cannot write SITE: jit._writable says so of it.
SECOND_USER = """
import os, sys
from lpcfg_cli.engine import jit
real = jit._writable
jit._writable = lambda f: not os.path.abspath(f).startswith(os.environ["SITE"]) and real(f)
from lpcfg_cli.cli import run
sys.argv = ["lpcfg", *sys.argv[1:]]
sys.exit(run())
"""


@pytest.mark.slow
def test_a_second_user_compiles_nothing(tmp_path):
    """A copy of the package, compiled by its installer (the extension module, then a parse
    through numba alone); a user who cannot write it and has no cache folder parses with
    neither numba (the module is found) nor, with LPCFG_PRECOMPILED=0, any compilation
    (numba's cache is read where it is): no warning, nothing written beside the sources.
    Compiles every kernel once, a minute or two."""
    site = tmp_path / "site"
    shutil.copytree(
        Path(lpcfg_cli.__file__).parent,
        site / "lpcfg_cli",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "t.mrg").write_text("\n".join(TINY_TREES) + "\n")
    (tmp_path / "x.txt").write_text("the cat sat\nKim ran\n")
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_", "LPCFG_P"))}
    env.update(HOME=str(home), PYTHONPATH=str(site), SITE=str(site))
    model, sentences = tmp_path / "m.npz", tmp_path / "x.txt"

    def installer(*args: object, **more: str) -> None:
        res = subprocess.run(
            [sys.executable, *map(str, args)], env={**env, **more}, capture_output=True, text=True
        )
        assert res.returncode == 0, res.stderr

    installer("-m", "lpcfg_cli", "train", "--method", "pcfg", tmp_path / "t.mrg", "-o", model)
    installer("-m", "lpcfg_cli.engine.precompiled")
    installer("-m", "lpcfg_cli", "parse", model, sentences, LPCFG_PRECOMPILED="0")
    before = sorted(str(p) for p in site.rglob("*") if "__pycache__" in p.parts)

    def second_user(*args: object, **more: str) -> subprocess.CompletedProcess[str]:
        res = subprocess.run(
            [sys.executable, *args, "-c", SECOND_USER, "parse", "--quiet", str(model)]
            + [str(sentences), "-o", str(tmp_path / "out")],
            env={**env, "PYTHONDONTWRITEBYTECODE": "1", **more},
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr
        assert (tmp_path / "out").read_text().count("\n") == 2
        return res

    aot = second_user("-X", "importtime")
    imported = {line.rsplit("|", 1)[-1].strip() for line in aot.stderr.splitlines()}
    assert "lpcfg_cli.engine.kernels" in imported and "numba" not in imported
    assert "lpcfg: warning" not in aot.stderr
    jitted = second_user(LPCFG_PRECOMPILED="0", NUMBA_DEBUG_CACHE="1")
    assert jitted.stderr == ""
    assert "data loaded from" in jitted.stdout and "saved" not in jitted.stdout
    assert sorted(str(p) for p in site.rglob("*") if "__pycache__" in p.parts) == before
