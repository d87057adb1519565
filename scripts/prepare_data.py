#!/usr/bin/env python3
"""Write the project's standard split of the NLTK Penn Treebank sample.

train = wsj_0001-0149 (3253 trees), dev = wsj_0150-0174 (316), test = wsj_0175-0199 (345),
one tree per line with the root wrapper written TOP (function tags and -NONE- kept, as in
the gold files of the Berkeley setup), plus dev.txt / test.txt with the words of each
sentence (traces removed), one sentence per line. Last, ``source.txt`` says what the folder
holds: ``make demo`` trusts a folder as the standard split only when that line says so.
Without the sample installed, nltk's downloader fetches it first (with network access), and
the script says which it used.

    python scripts/prepare_data.py --out data
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.ptb_sample import standard_split
from lpcfg_cli.treebank.tree import ROOT_LABELS, Tree, words

# A data folder's provenance line: what `make demo` reports, and how it tells real data from
# anything else left in the folder (an older demo put a synthetic treebank in data/).
SOURCE_FILE = "source.txt"
STANDARD_SOURCE = (
    "NLTK Penn Treebank sample, standard split (train wsj_0001-0149, dev 0150-0174, test 0175-0199)"
)
PARTS = ("train.mrg", "dev.mrg", "dev.txt", "test.mrg", "test.txt")


def folder_source(folder: Path, parts: tuple[str, ...] = PARTS) -> str | None:
    """The provenance line of a data folder holding all of ``parts``, or None (missing
    files or line)."""
    try:
        source = (folder / SOURCE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return source if all((folder / part).is_file() for part in parts) else None


def as_top(tree: Tree) -> str:
    """The tree with its root wrapper labelled TOP: ``(TOP (S ...))``."""
    if tree.label() in ROOT_LABELS and len(tree) == 1 and isinstance(tree[0], Tree):
        tree = tree[0]
    return format_tree(tree, root="TOP")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data", help="output folder (default: data)")
    args = ap.parse_args()
    try:
        split = standard_split(fetch=True, report=lambda line: print(f"prepare_data: {line}"))
        write_split(split, Path(args.out))
    except LpcfgError as err:  # no sample, or an output folder we may not write
        print(f"prepare_data: error: {err}", file=sys.stderr)
        return 2
    return 0


def write_split(split: dict[str, list[Tree]], out: Path) -> None:
    """Write the split's files into ``out``, then its provenance line."""
    out.mkdir(parents=True, exist_ok=True)
    for part, trees in split.items():
        with atomic_output(out / f"{part}.mrg") as fh:
            fh.writelines(as_top(t) + "\n" for t in trees)
        if part != "train":
            with atomic_output(out / f"{part}.txt") as fh:
                fh.writelines(" ".join(words(t)) + "\n" for t in trees)
        print(f"prepare_data: {out / part}.mrg: {len(trees)} trees", file=sys.stderr)
    with atomic_output(out / SOURCE_FILE) as fh:  # last: only a complete split is vouched for
        fh.write(STANDARD_SOURCE + "\n")


if __name__ == "__main__":
    sys.exit(main())
