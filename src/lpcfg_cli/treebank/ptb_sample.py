"""The project's standard split of nltk's Penn Treebank sample (wsj_0001-0199): train
wsj_0001-0149, dev 0150-0174, test 0175-0199 (``standard_split``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.treebank.ptb import read_treebank
from lpcfg_cli.treebank.tree import Tree

STANDARD_SPLIT = {"train": (1, 149), "dev": (150, 174), "test": (175, 199)}
STANDARD_SIZES = {"train": 3253, "dev": 316, "test": 345}


def standard_split(
    *, fetch: bool = False, report: Callable[[str], None] | None = None
) -> dict[str, list[Tree]]:
    """The project's split of the NLTK Penn Treebank sample (raw trees, as in the files).

    Without the sample installed, with ``fetch`` nltk's downloader gets it first
    (``nltk.download("treebank")``: what ``python -m nltk.downloader treebank`` does), saying
    so through ``report``; raises LpcfgError if it is still missing (no network, say).
    """
    treebank, fileids = _sample()
    if fileids is None and fetch:
        if report:
            report("the Penn Treebank sample is not installed: fetching it with nltk's downloader")
        import nltk

        if nltk.download("treebank", quiet=True, raise_on_error=False):
            treebank, fileids = _sample()
    if fileids is None:
        how = " and nltk's downloader could not fetch it" if fetch else ""
        raise LpcfgError(
            f"the NLTK Penn Treebank sample is not installed{how}: run "
            "`python -m nltk.downloader treebank` or set NLTK_DATA"
        )
    if report:
        report(f"the Penn Treebank sample at {sample_folder(treebank)}")
    out: dict[str, list[Tree]] = {}
    for part, (lo, hi) in STANDARD_SPLIT.items():
        ids = [f"wsj_{i:04d}.mrg" for i in range(lo, hi + 1)]
        missing = [f for f in ids if f not in fileids]
        if missing:
            raise LpcfgError(f"treebank sample incomplete: {missing[0]} missing")
        # nltk only locates the files: they are read as any treebank is. Its corpus reader
        # drops the unlabelled outer bracket of ``( (S ...) )``; so does this, so that the
        # data files stay as they were.
        trees = [r.tree for r in read_treebank([str(treebank.abspath(f)) for f in ids])]
        out[part] = [t[0] if t.label() == "" and len(t) == 1 else t for t in trees]
        if len(out[part]) != STANDARD_SIZES[part]:
            raise LpcfgError(
                f"{part} split has {len(out[part])} trees, expected {STANDARD_SIZES[part]}"
            )
    return out


def _sample() -> tuple[Any, list[str] | None]:
    """nltk's treebank corpus reader and its file ids (None when it is not installed)."""
    from nltk.corpus import treebank  # imported on use only (start-up cost)

    try:
        return treebank, treebank.fileids()
    except LookupError:
        return treebank, None


def sample_folder(treebank: Any) -> str:
    """Where the installed sample is."""
    try:
        return str(treebank.root)
    except (AttributeError, LookupError):
        return "nltk's data path"
