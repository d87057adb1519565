#!/usr/bin/env python3
"""The unsupervised spectral WCFG on WSJ10 (Bailly et al. 2013, section 5.3, Tables 1-2).

WSJ10 from the project's Penn Treebank sample (all 3,914 trees of wsj_0001-0199; the paper
uses the whole WSJ, ten times more): the part-of-speech tags of each sentence with
traces (-NONE-), punctuation and currency removed, mapped to the universal tagset
(Petrov, Das & McDonald 2012; ``nltk.tag.mapping``, the map is in
``$NLTK_DATA/taggers/universal_tagset``), keeping the sentences of 1 to 10 tags. The
alphabet has 11 symbols, as in the paper.

- Table 1: for each basis (``--table1``, outside contexts x inside strings, the paper's
  sizes), the size of the closed Hankel matrix H, the number of observation constraints
  and the number of inside-outside constraints (``wcfg.completion.closed_sizes``).
- Table 2: for each basis of ``--table2`` and each number of states of ``--states`` (those
  at most the rank the basis allows), the expected L1 on the training set,
  ``sum_x p_S(x) |g(x) - p_S(x)|`` over the distinct training sentences (our reading of the
  paper's measure, ``wcfg.distances.expected_l1``), with run times.

Writes ``wcfg_wsj10.md`` and ``wcfg_wsj10.json`` to ``--out``.

    python scripts/wcfg_wsj10.py --out results/wcfg
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from functools import partial
from pathlib import Path

from nltk.tag.mapping import map_tag
from records import provenance, write

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.parsing.workers import process_map
from lpcfg_cli.treebank.ptb_sample import standard_split
from lpcfg_cli.treebank.tree import Tree
from lpcfg_cli.wcfg.completion import (
    closed_sizes,
    learn_from_problem,
    string_probabilities,
    unsupervised_problem,
)
from lpcfg_cli.wcfg.distances import expected_l1

PAPER_TABLE1 = "1x11,6x14,12x18,18x22,24x26,30x29,36x34,42x37,48x41,54x45,60x48"
PAPER_TABLE2 = "1x11,6x14,12x18,18x22,24x26"
# The paper's Table 1: size of H (rows, columns), observation and inside-outside
# constraints per basis. Its 42 x 37 row reads "3,638" rows in the extracted text, fewer
# than the 27,989 of the basis before it: a garbled figure (36,38x?), marked "?".
PAPER_SIZES = {
    "1x11": (39, 159, 34, 1_626),
    "6x14": (1_163, 764, 146, 6_360),
    "12x18": (4_462, 2_239, 322, 25_374),
    "18x22": (9_124, 4_149, 479, 52_524),
    "24x26": (15_755, 6_858, 657, 89_718),
    "30x29": (19_801, 8_545, 769, 112_374),
    "36x34": (27_989, 11_682, 916, 156_690),
    "42x37": ("3,638?", 15_026, 1_035, 200_346),
    "48x41": (45_192, 18_235, 1_157, 244_398),
    "54x45": (53_741, 21_196, 1_281, 284_466),
    "60x48": (60_844, 23_890, 1_382, 318_354),
}
# The paper's Table 2: expected L1 on the training set per basis and number of states.
PAPER_L1 = {
    "1x11": {5: 1.265e-3},
    "6x14": {5: 7.06e-4, 10: 6.92e-4},
    "12x18": {5: 7.30e-4, 10: 6.28e-4, 15: 6.01e-4},
    "18x22": {5: 7.31e-4, 10: 6.29e-4, 15: 5.84e-4, 20: 5.59e-4},
    "24x26": {5: 7.35e-4, 10: 6.39e-4, 15: 5.88e-4, 20: 5.31e-4},
    "30x29": {5: 7.34e-4, 10: 6.41e-4, 15: 5.86e-4, 20: 5.30e-4},
}


def tags(tree: Tree) -> list[str]:
    """The pre-terminal labels of ``tree``, left to right (iterative)."""
    out: list[str] = []
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if len(node) == 1 and not isinstance(node[0], Tree):
            out.append(node.label())
            continue
        stack.extend(child for child in reversed(node) if isinstance(child, Tree))
    return out


def wsj10() -> tuple[list[tuple[int, ...]], list[str]]:
    """WSJ10 tag sequences of the sample as symbol ids, and the alphabet."""
    trees = [t for part in standard_split().values() for t in part]
    sentences = []
    for tree in trees:
        universal = [map_tag("en-ptb", "universal", t) for t in tags(tree) if t != "-NONE-"]
        kept = [t for t in universal if t != "."]  # punctuation and currency ($, #)
        if 1 <= len(kept) <= 10:
            sentences.append(kept)
    alphabet = sorted({t for s in sentences for t in s})
    index = {t: i for i, t in enumerate(alphabet)}
    return [tuple(index[t] for t in s) for s in sentences], alphabet


def _bases(text: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in (item.split("x") for item in text.split(","))]


def table1_row(probs: dict, d: int, basis: tuple[int, int]) -> dict:
    """Table 1's sizes of one basis (outsides x insides)."""
    outs, ins = basis
    t0 = time.perf_counter()
    s = closed_sizes(probs, outs, ins, d=d)
    row = {
        "basis": f"{outs}x{ins}",
        "rows": s.rows,
        "cols": s.cols,
        "observed": s.observations - s.zero_observations,
        "zero_observations": s.zero_observations,
        "io_constraints": s.io_constraints,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    print(f"table 1 {outs}x{ins}: {row}", file=sys.stderr)
    return row


def table2_rows(
    strings: list, counts: list, d: int, states: list[int], steps: int, seed: int,
    basis: tuple[int, int],
) -> tuple[list[dict], float]:  # fmt: skip
    """Table 2's cells of one basis, every state count, and the seconds its problem took to
    build (once, shared by the state counts)."""
    outs, ins = basis
    t0 = time.perf_counter()
    problem = unsupervised_problem(
        strings, counts, basis="closed", n_outsides=outs, n_insides=ins, d=d
    )
    build = time.perf_counter() - t0
    print(f"table 2 {outs}x{ins}: problem built in {build:.1f} s", file=sys.stderr)
    rows = []
    for n in states:
        t0 = time.perf_counter()
        try:
            model = learn_from_problem(problem, n, steps=steps, seed=seed)
        except ValueError as exc:  # more states than the basis allows
            rows.append({"basis": f"{outs}x{ins}", "states": n, "skipped": str(exc)})
            continue
        seconds = time.perf_counter() - t0
        err = expected_l1(model, strings, counts)
        rows.append({"basis": f"{outs}x{ins}", "states": n, "expected_l1": err, "seconds": seconds})
        print(f"table 2 {outs}x{ins} n={n}: {err:.3e} in {seconds:.1f} s", file=sys.stderr)
    return rows, build


def run(args: argparse.Namespace) -> dict:
    sentences, alphabet = wsj10()
    seen = Counter(sentences)
    strings, counts = list(seen), list(seen.values())
    probs = string_probabilities(strings, counts)
    d = len(alphabet)
    print(f"WSJ10: {len(sentences)} sentences, {len(seen)} distinct, {d} tags", file=sys.stderr)
    table1 = process_map(partial(table1_row, probs, d), _bases(args.table1), args.jobs)
    table2, builds = [], {}
    work = partial(table2_rows, strings, counts, d, args.states, args.steps, args.seed)
    for (outs, ins), (rows, build) in zip(
        _bases(args.table2), process_map(work, _bases(args.table2), args.jobs), strict=True
    ):
        table2 += rows
        builds[f"{outs}x{ins}"] = build
    p = [c / sum(counts) for c in counts]
    return {
        "zero_function_l1": float(sum(q * q for q in p)),
        "sentences": len(sentences),
        "distinct": len(seen),
        "alphabet": alphabet,
        "steps": args.steps,
        "jobs": args.jobs,
        "table2_build_seconds": builds,
        "table1": table1,
        "table2": table2,
        "paper": {"table1": PAPER_SIZES, "table2": PAPER_L1},
    }


def _n(x: int | str) -> str:
    return f"{x:,}" if isinstance(x, int) else x


def markdown(result: dict) -> str:
    """Tables 1 and 2 beside the paper's (its figures in brackets, and its Table 2 below)."""
    paper = result.get("paper", {"table1": {}, "table2": {}})
    lines = [
        f"WSJ10 of the Penn Treebank sample: {result['sentences']} sentences "
        f"({result['distinct']} distinct) over {len(result['alphabet'])} universal tags.",
        "",
        "Table 1 (problem sizes; the paper's in brackets):",
        "",
        "| basis | size of H | obs. (observed strings; + unseen set to 0) | i/o constraints |",
        "|---|---|---|---|",
    ]
    for r in result["table1"]:
        p = paper["table1"].get(r["basis"])
        size, obs, io = (
            (f" ({_n(p[0])} x {_n(p[1])})", f" ({_n(p[2])})", f" ({_n(p[3])})") if p else ("",) * 3
        )
        lines.append(
            f"| {r['basis']} | {r['rows']:,} x {r['cols']:,}{size} | {r['observed']:,} "
            f"+ {r['zero_observations']:,}{obs} | {r['io_constraints']:,}{io} |"
        )
    states = sorted({r["states"] for r in result["table2"]})
    bases = list(dict.fromkeys(r["basis"] for r in result["table2"]))
    cell = {(r["basis"], r["states"]): r for r in result["table2"]}
    lines += [
        "",
        f"Table 2 (expected L1 on the training set, {result['steps']} optimisation steps; "
        "seconds per fit in brackets, after building the basis' problem once (build; "
        f"{result['jobs']} bases at a time, one process each); "
        "blank: more states than the basis allows):",
        "",
        f"(The function that is 0 everywhere scores {result['zero_function_l1']:.3e}.)",
        "",
        "| basis / n | build | " + " | ".join(map(str, states)) + " |",
        "|---|---|" + "---|" * len(states),
    ]
    for b in bases:
        row = []
        for n in states:
            r = cell.get((b, n))
            row.append(
                ""
                if r is None or "skipped" in r
                else f"{r['expected_l1']:.3e} ({r['seconds']:.0f} s)"
            )
        build = result["table2_build_seconds"][b]
        lines.append(f"| {b} | {build:.0f} s | " + " | ".join(row) + " |")
    if paper["table2"]:
        lines += ["", "The paper's Table 2:", "", "| basis / n | " + " | ".join(map(str, states))
                  + " |", "|---|" + "---|" * len(states)]  # fmt: skip
        for b, by in paper["table2"].items():
            by = {int(k): v for k, v in by.items()}  # JSON keys are strings
            row = [f"{by[n]:.3e}" if n in by else "" for n in states]
            lines.append(f"| {b} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/wcfg"))
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="also write the record here (docs/figures/wcfg_wsj10.json)",
    )
    ap.add_argument("--table1", default=PAPER_TABLE1, help="bases OUTSxINS, comma-separated")
    ap.add_argument("--table2", default=PAPER_TABLE2, help="bases OUTSxINS, comma-separated")
    ap.add_argument(
        "--states", type=lambda s: [int(v) for v in s.split(",")], default=[5, 10, 15, 20]
    )
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--jobs", type=int, default=2, help="bases run at once, one process each (default 2)"
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    try:
        result = run(args)
    except LpcfgError as err:
        print(f"wcfg_wsj10: error: {err}", file=sys.stderr)
        return 2
    result["seconds"] = round(time.perf_counter() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    write(args.out / "wcfg_wsj10.json", {**provenance(), **result}, also=args.json)
    (args.out / "wcfg_wsj10.md").write_text(markdown(result))
    print(markdown(result))
    print(f"{result['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
