#!/usr/bin/env python3
"""Part-of-speech accuracy of parsed trees by how often each word was seen in training.

Where a parser's unknown-word and rare-word handling falls short shows here first: it is
how the README compares lpcfg's lexicon with the Berkeley parser's. Tags are read off the
pre-terminals of each parsed tree against the gold tree (``-NONE-`` dropped on both sides,
as ``normalize`` does); sentences whose word counts differ are skipped and counted.

    python scripts/tagging_by_frequency.py --train data/train.mrg --gold data/test.mrg \\
        test.parsed berkeley.parsed
"""

from __future__ import annotations

import argparse
from collections import Counter

from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import read_treebank
from lpcfg_cli.treebank.tree import tagged_words

BINS = (("unseen", 0, 0), ("once", 1, 1), ("2-5", 2, 5), ("6-20", 6, 20), (">20", 21, None))


def tags(path: str) -> list[list[tuple[str, str]] | None]:
    """(word, tag) per sentence of a tree file; None for an empty tree or a failed parse."""
    out: list[list[tuple[str, str]] | None] = []
    for rec in read_treebank([path]):
        tree = normalize(rec.tree)
        out.append(None if tree is None else tagged_words(tree))
    return out


def bin_of(count: int) -> str:
    return next(name for name, lo, hi in BINS if count >= lo and (hi is None or count <= hi))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True, help="training trees (word counts)")
    ap.add_argument("--gold", required=True, help="gold trees of the parsed sentences")
    ap.add_argument("parsed", nargs="+", help="parsed tree files, one tree per line")
    args = ap.parse_args()
    counts = Counter(w for sent in tags(args.train) if sent for w, _ in sent)
    gold = tags(args.gold)
    print("| parses | " + " | ".join(name for name, _, _ in BINS) + " | all | skipped |")
    print("|---" * (len(BINS) + 3) + "|")
    for path in args.parsed:
        total, right, skipped = Counter(), Counter(), 0
        for g, t in zip(gold, tags(path), strict=True):
            if g is None or t is None or len(g) != len(t):
                skipped += 1
                continue
            for (w, gt), (_, tt) in zip(g, t, strict=True):
                b = bin_of(counts[w])
                total[b] += 1
                right[b] += gt == tt
        cells = [
            f"{100 * right[b] / total[b]:.1f} % ({total[b]})" if total[b] else "- (0)"
            for b, _, _ in BINS
        ]
        overall = 100 * sum(right.values()) / max(1, sum(total.values()))
        print(f"| {path} | " + " | ".join(cells) + f" | {overall:.2f} % | {skipped} |")


if __name__ == "__main__":
    main()
