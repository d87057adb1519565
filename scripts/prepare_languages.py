#!/usr/bin/env python3
"""Write the fixed splits of nltk's four foreign treebanks (alpino, cess_esp, floresta,
sinica: ``lpcfg_cli.treebank.nltk_samples``), one folder each, OUT/NAME/:

- ``train.mrg``, ``dev.mrg``, ``test.mrg``: 2,000 / 300 / 300 trees as the treebank writes
  them (labels unchanged; what nltk's reader gets wrong mended or left out), one per line
  with the root wrapper written TOP, as lpcfg writes trees;
- ``dev.txt``, ``test.txt``: the words of each tree, one sentence per line;
- ``train.root.mrg``: the training trees as lpcfg normalises them, wrapped ``(ROOT ...)``,
  for the Berkeley parser's trainer (``-treebank SINGLEFILE``): both parsers then learn
  the same label set from the same trees;
- ``audit.json``: what the split holds that bears on parsing (what was left out and
  mended, sentence lengths, empty-element words, labels lpcfg's normalisation cuts or
  escapes, root labels, punctuation EVALB deletes, dev and test sentences also in train,
  alpino's words out of the sentence's order);
- last, ``source.txt``: the folder's provenance line (``bench_languages.py`` trusts a
  folder only when it is there).

    python scripts/prepare_languages.py --out data/languages [--treebanks alpino,sinica]

The corpora come from nltk's data (``NLTK_DATA``; ``python -m nltk.downloader alpino
cess_esp floresta sinica_treebank``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from prepare_data import SOURCE_FILE
from prepare_data import folder_source as data_folder_source

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.evalb import evaluate_lines
from lpcfg_cli.evalb.params import COLLINS
from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.treebank import labels
from lpcfg_cli.treebank.nltk_samples import TREEBANKS, Split, split
from lpcfg_cli.treebank.normalize import normalize
from lpcfg_cli.treebank.ptb import escape_token, format_tree
from lpcfg_cli.treebank.tree import Tree, is_preterminal, iter_nodes, tagged_words, words

PARTS = ("train.mrg", "train.root.mrg", "dev.mrg", "dev.txt", "test.mrg", "test.txt")
# A word that stands for an empty element (cess_esp's elided subjects: ``(sn.e-SUJ *0*)``).
EMPTY_WORD = re.compile(r"\*\w*\*")
# Characters lpcfg's label space escapes inside a symbol (docs/treebanks.md, The label space).
LABEL_SPACE = "+^@/_%"


def folder_source(folder: Path) -> str | None:
    """The provenance line of a complete split folder, or None (missing files or line)."""
    return data_folder_source(folder, PARTS)


def source_line(data: Split) -> str:
    """What a folder holds, in one line."""
    reading = data.reading
    tb = reading.treebank
    sizes = ", ".join(f"{part} {len(trees)}" for part, trees in data.parts.items())
    lost = sum(map(len, reading.left_out.values()))
    nltk_version = _nltk_version()
    return (
        f"nltk {tb.package} ({tb.language}: {tb.description}), read with nltk {nltk_version}: "
        f"{reading.total} trees, {lost} left out; every {_ordinal(tb.stride)} usable tree, "
        f"in groups of 26 = 20 train / 3 dev / 3 test: {sizes} (lpcfg_cli.treebank.nltk_samples)"
    )


def write_split(data: Split, out: Path, audit_data: dict | None = None) -> None:
    """Write the split's files into ``out``, then its provenance line."""
    out.mkdir(parents=True, exist_ok=True)
    for part, trees in data.parts.items():
        with atomic_output(out / f"{part}.mrg") as fh:
            fh.writelines(format_tree(t, root="TOP") + "\n" for t in trees)
        if part != "train":
            with atomic_output(out / f"{part}.txt") as fh:
                fh.writelines(" ".join(map(escape_token, words(t))) + "\n" for t in trees)
    with atomic_output(out / "train.root.mrg") as fh:
        fh.writelines(
            format_tree(berkeley_readable(normalize(t)), root="ROOT") + "\n"
            for t in data.parts["train"]
        )
    if audit_data is not None:
        with atomic_output(out / "audit.json") as fh:
            fh.write(json.dumps(audit_data, indent=1, ensure_ascii=False) + "\n")
    with atomic_output(out / SOURCE_FILE) as fh:  # last: only a complete split is vouched for
        fh.write(source_line(data) + "\n")


def berkeley_readable(tree: Tree) -> Tree:
    """``tree`` with every word that is a sibling of phrases (floresta's unclosed
    ``(>N+pron todo (H+n tipo) ...)``) under a pre-terminal of its own, ``labels.WORD``, as
    lpcfg's binarization gives it: the Berkeley parser's trainer stops at such a tree
    ("Yield and preterminal yield do not match")."""
    for node in iter_nodes(tree):
        if not is_preterminal(node) and any(isinstance(c, str) for c in node):
            for i, child in enumerate(node):
                if isinstance(child, str):
                    node[i] = Tree(labels.WORD, [child])
    return tree


def audit(data: Split, sentences: list[list[str]] | None = None) -> dict:
    """What the split holds that bears on parsing (see the module); ``sentences``, the
    corpus's sentences in their own order (alpino's ``sents()``, by position in
    ``parsed_sents()``), adds how many trees have their words out of that order."""
    reading = data.reading
    out: dict = {
        "treebank": reading.treebank.name,
        "read": reading.total,
        "left_out": {why: len(at) for why, at in reading.left_out.items()},
        "mended": dict(reading.mended),
        "parts": {part: _part_figures(trees) for part, trees in data.parts.items()},
    }
    trees = [t for part in data.parts.values() for t in part]
    out["labels"] = _label_figures(trees)
    out["roots"] = dict(Counter(t.label() for t in trees).most_common(8))
    out["root_share_of_dev_brackets"] = _root_share(data.parts["dev"])
    tags = [tag for t in trees for _, tag in tagged_words(t)]
    deleted = sum(tag in COLLINS.delete_labels for tag in tags)
    out["words_evalb_deletes"] = {"words": deleted, "share": deleted / max(len(tags), 1)}
    seen = {tuple(words(t)) for t in data.parts["train"]}
    out["also_in_train"] = {
        part: sum(tuple(words(t)) in seen for t in data.parts[part]) for part in ("dev", "test")
    }
    if sentences is not None and len(sentences) == reading.total:
        out["out_of_sentence_order"] = _out_of_order(data, sentences)
    return out


def _part_figures(trees: list[Tree]) -> dict:
    lengths = [len(words(t)) for t in trees]
    empty = [sum(bool(EMPTY_WORD.fullmatch(w)) for w in words(t)) for t in trees]
    return {
        "trees": len(trees),
        "words": sum(lengths),
        "mean_words": sum(lengths) / max(len(lengths), 1),
        "max_words": max(lengths, default=0),
        "one_word_trees": sum(n == 1 for n in lengths),
        "over_40_words": sum(n > 40 for n in lengths),
        "empty_element_words": sum(empty),
        "trees_with_empty_element_words": sum(n > 0 for n in empty),
    }


def _label_figures(trees: list[Tree]) -> dict:
    """Labels as written and as lpcfg's normalisation leaves them."""
    phrases: Counter = Counter()
    tags: Counter = Counter()
    for tree in trees:
        for node in iter_nodes(tree):
            (tags if is_preterminal(node) else phrases)[node.label()] += 1
    normal: dict[str, set[str]] = {"phrases": set(), "tags": set()}
    for tree in trees:
        norm = normalize(tree)
        for node in iter_nodes(norm) if norm is not None else ():
            normal["tags" if is_preterminal(node) else "phrases"].add(node.label())
    labels = set(phrases) | set(tags)
    cut = sorted(lab for lab in labels if re.search(r"[-=]", lab[1:]))
    return {
        "phrase_labels": len(phrases),
        "tags": len(tags),
        "phrase_labels_normalised": len(normal["phrases"]),
        "tags_normalised": len(normal["tags"]),
        "cut_by_normalisation": len(cut),
        "cut_examples": cut[:12],
        "leading_dash": sorted(lab for lab in labels if lab.startswith("-"))[:12],
        "escaped_in_label_space": sum(any(c in lab for c in LABEL_SPACE) for lab in labels),
        "escaped_examples": sorted(lab for lab in labels if any(c in lab for c in LABEL_SPACE))[
            :12
        ],
        "with_angle_brackets": sum("<" in lab or ">" in lab for lab in labels),
    }


def _root_share(trees: list[Tree]) -> dict:
    """How many of the gold brackets EVALB scores (COLLINS.prm) the roots make."""
    lines = [format_tree(t, root="TOP") for t in trees]
    rows = evaluate_lines(lines, lines).label_rows()
    total = sum(r[1] for r in rows)
    roots = Counter(t.label() for t in trees)
    label, _ = roots.most_common(1)[0] if roots else ("", 0)
    scored = re.split(r"[-=]", label, maxsplit=1)[0]  # as EVALB compares labels
    gold = next((r[1] for r in rows if r[0] == scored), 0)
    return {"label": label, "brackets": gold, "of": total, "share": gold / max(total, 1)}


def _out_of_order(data: Split, sentences: list[list[str]]) -> dict:
    """Trees whose words are not in their sentence's order; of them, how many are put in
    order by moving punctuation alone."""
    moved = punct_only = 0
    for part, trees in data.parts.items():
        for tree, at in zip(trees, data.positions[part], strict=True):
            ours, theirs = words(tree), sentences[at]
            if ours == theirs:
                continue
            moved += 1
            punct = {w for w, tag in tagged_words(tree) if tag == "punct"}
            if [w for w in ours if w not in punct] == [w for w in theirs if w not in punct]:
                punct_only += 1
    return {"trees": moved, "only_punctuation_moved": punct_only}


def corpus_sentences(name: str) -> list[list[str]] | None:
    """alpino's sentences in their own order (``sents()``, XML escapes written as their
    characters), by position in ``parsed_sents()``; None for the other treebanks, whose
    trees keep the sentence's order."""
    if name != "alpino":
        return None
    from xml.sax.saxutils import unescape

    from nltk.corpus import alpino

    return [
        [unescape(w, {"&quot;": '"', "&apos;": "'"}) for w in sent] for sent in iter(alpino.sents())
    ]


def prepare(name: str, out: Path, report=None) -> str:
    """Read treebank ``name``, write its split to ``out`` (audit included); the folder's
    provenance line."""
    data = split(name, report=report)
    figures = audit(data, corpus_sentences(name))
    write_split(data, out, figures)
    return source_line(data)


def _nltk_version() -> str:
    import nltk

    return nltk.__version__


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/languages", help="output folder (one per treebank)")
    ap.add_argument("--treebanks", default=",".join(TREEBANKS), help="comma-separated names")
    args = ap.parse_args()
    names = [n for n in args.treebanks.split(",") if n]
    for name in names:
        if name not in TREEBANKS:
            ap.error(f"--treebanks: {name!r} is not one of {', '.join(TREEBANKS)}")
    try:
        for name in names:
            folder = Path(args.out) / name
            prepare(name, folder, report=lambda line: print(f"prepare_languages: {line}"))
            figures = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
            print(f"prepare_languages: {folder}: {summary(figures)}")
    except LpcfgError as err:  # a corpus not installed, or an output folder we may not write
        print(f"prepare_languages: error: {err}", file=sys.stderr)
        return 2
    return 0


def summary(figures: dict) -> str:
    """The audit in one line."""
    parts = figures["parts"]
    text = ", ".join(
        f"{part} {p['trees']} trees ({p['mean_words']:.1f} words on average, longest "
        f"{p['max_words']})"
        for part, p in parts.items()
    )
    lost = sum(figures["left_out"].values())
    text += f"; {lost} of {figures['read']} trees left out"
    one = sum(p["one_word_trees"] for p in parts.values())
    empty = sum(p["empty_element_words"] for p in parts.values())
    if one:
        text += f"; {one} one-word trees"
    if empty:
        text += f"; {empty} empty-element words"
    if "out_of_sentence_order" in figures:
        text += f"; {figures['out_of_sentence_order']['trees']} trees out of sentence order"
    return text


if __name__ == "__main__":
    sys.exit(main())
