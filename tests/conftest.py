"""Shared fixtures: the NLTK Penn Treebank sample, when installed."""

from __future__ import annotations

import pytest

from lpcfg_cli.errors import LpcfgError


@pytest.fixture(scope="session")
def ptb_split():
    """The standard split (raw trees), or skip if NLTK_DATA has no treebank sample."""
    from lpcfg_cli.treebank.ptb_sample import standard_split

    try:
        return standard_split()
    except LpcfgError as err:
        pytest.skip(f"Penn Treebank sample not available: {err}")


@pytest.fixture(scope="session")
def ptb_trees(ptb_split):
    """All 3914 trees of the sample."""
    return ptb_split["train"] + ptb_split["dev"] + ptb_split["test"]


@pytest.fixture(autouse=True, scope="session")
def _arranged_cache_in_a_temporary_folder(tmp_path_factory):
    """Parses keep arranged models (``parsing.arranged_cache``) in a temporary folder, not
    the user's cache folder: tests write nowhere else."""
    import os

    from lpcfg_cli.parsing.arranged_cache import ENV

    before = os.environ.get(ENV)
    os.environ[ENV] = str(tmp_path_factory.mktemp("arranged-cache"))
    yield
    if before is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = before


@pytest.fixture
def no_user_cache(monkeypatch, tmp_path):
    """A user with no cache folder of their own (HOME a file, no NUMBA_/XDG_ settings), no
    folder chosen or warning said yet by ``engine.jit``, numba's own CACHE_DIR restored
    afterwards."""
    import sys

    from lpcfg_cli.engine import jit

    monkeypatch.setattr(jit, "_user_folder", None)
    monkeypatch.setattr(jit, "_in_memory_said", False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    monkeypatch.setenv("HOME", str(home))
    if "numba" in sys.modules:
        config = sys.modules["numba"].config
        monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)
