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
