"""Where the compiled kernels are kept (lpcfg_cli.engine.jit.cache_folder): NUMBA_CACHE_DIR,
then the folder beside the sources, then the user's cache folder, then memory with one
warning, decided in process (the end-to-end runs in a read-only install are in
tests/cli/test_cli_reliability.py)."""

from __future__ import annotations

import sys

import pytest

from lpcfg_cli.engine import jit


@pytest.fixture
def clean(no_user_cache, tmp_path):
    """No cache folder of the user's (``no_user_cache``); returns a source folder with no
    __pycache__ possible."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "__pycache__").write_text("")  # a file: no folder by that name can be made
    return source


def test_numba_cache_dir_comes_first(clean, monkeypatch, tmp_path):
    given = tmp_path / "given"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(given))
    assert jit.cache_folder(str(clean)) == str(given) and given.is_dir()
    writable = tmp_path / "writable"
    writable.mkdir()
    assert jit.cache_folder(str(writable)) == str(given)


def test_beside_the_sources_when_it_can_be_written(clean, tmp_path):
    writable = tmp_path / "writable"
    writable.mkdir()
    assert jit.cache_folder(str(writable)) == str(writable / "__pycache__")


def test_the_users_cache_folder_when_the_install_is_read_only(clean, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = str(tmp_path / "xdg" / "lpcfg" / "numba")
    assert jit.cache_folder(str(clean)) == folder and jit._user_folder == folder
    if "numba" in sys.modules:
        assert sys.modules["numba"].config.CACHE_DIR == folder
    monkeypatch.delenv("XDG_CACHE_HOME")  # once chosen, it stays chosen
    assert jit.cache_folder(str(clean)) == folder


def test_in_memory_with_one_warning_when_nothing_can_be_written(clean, capsys):
    assert jit.cache_folder(str(clean)) is None
    assert jit._cache(str(clean)) is False and jit._cache(str(clean)) is False
    assert capsys.readouterr().err.splitlines() == [
        "lpcfg: warning: no writable folder for compiled kernels (set NUMBA_CACHE_DIR or "
        "XDG_CACHE_HOME to one): they are compiled in memory, so start-up is slower"
    ]
