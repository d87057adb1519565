#!/usr/bin/env python3
"""Write the project's standard split of the NLTK Penn Treebank sample.

train = wsj_0001-0149 (3253 trees), dev = wsj_0150-0174 (316), test = wsj_0175-0199 (345),
one tree per line with the root wrapper written TOP (function tags and -NONE- kept, as in
the gold files of the Berkeley setup), plus dev.txt / test.txt with the words of each
sentence (traces removed), one sentence per line.

    python scripts/prepare_data.py --out data
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nltk

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import atomic_output
from lpcfg_cli.trees import ROOT_LABELS, format_tree, standard_split, words


def as_top(tree: nltk.Tree) -> str:
    """The tree with its root wrapper labelled TOP: ``(TOP (S ...))``."""
    if tree.label() in ROOT_LABELS and len(tree) == 1 and isinstance(tree[0], nltk.Tree):
        tree = tree[0]
    return format_tree(tree, root="TOP")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data", help="output folder (default: data)")
    args = ap.parse_args()
    try:
        split = standard_split()
    except LpcfgError as err:
        print(f"prepare_data: error: {err}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for part, trees in split.items():
        with atomic_output(out / f"{part}.mrg") as fh:
            fh.writelines(as_top(t) + "\n" for t in trees)
        if part != "train":
            with atomic_output(out / f"{part}.txt") as fh:
                fh.writelines(" ".join(words(t)) + "\n" for t in trees)
        print(f"prepare_data: {out / part}.mrg: {len(trees)} trees", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
