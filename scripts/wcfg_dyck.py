#!/usr/bin/env python3
"""L1 distance against the basis factor on the Dyck language (Bailly et al. 2013, section
5.2, Figure 3): spectral WFA, unsupervised spectral WCFG and supervised spectral WCFG.

Target: ``S -> S S (0.2) | a S b (0.4) | a b (0.4)`` (``wcfg.targets.dyck_pcfg``). Each of
``--seeds`` runs samples ``--sample`` training sentences (the paper: 4,000; bracketed for the
supervised learner, strings for the others) and as many held-out strings. For each basis
factor f (the proportion of the distinct candidates kept, most frequent first):

- WFA: prefixes and suffixes of the training strings (``wcfg.automaton``);
- unsupervised spectral WCFG: the closed basis of section 4.1/5.3 grown from the most
  frequent substrings and contexts of the training strings (all of them candidates: cuts are
  not observed), then the completion (``wcfg.completion``) and Lemma 1. Its basis is given
  by size (``--bases``: outside contexts x inside strings, the root and both symbols
  included) instead of by factor: the paper's factors applied to every substring and context
  of 4,000 strings give hundreds of contexts, and the closure of even a 12 x 12 basis is a
  3,483 x 1,244 matrix (4.2M variables) whose completion takes tens of seconds per fit;
- supervised spectral WCFG: the most frequent observed insides and contexts of the
  bracketed sentences (``wcfg.hankel.select_basis``), then Lemma 1.

The number of states of each model is chosen from ``--states`` by the L1 distance to the
held-out strings' empirical distribution (the paper does not say how it chose them); the
figure is the L1 distance to the target over all strings of at most ``--length`` symbols (7,
as the paper), mean and standard deviation over the seeds, with run times. Writes
``wcfg_dyck.md`` and ``wcfg_dyck.json`` to ``--out``.

    python scripts/wcfg_dyck.py --out results/wcfg
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from records import provenance, write

from lpcfg_cli.parsing.workers import process_map
from lpcfg_cli.wcfg import automaton
from lpcfg_cli.wcfg.algebraic import all_strings
from lpcfg_cli.wcfg.bracketed_samples import sample_bracketed
from lpcfg_cli.wcfg.completion import (
    CompletionProblem,
    learn_from_problem,
    unsupervised_problem,
)
from lpcfg_cli.wcfg.factorisation import learn_supervised
from lpcfg_cli.wcfg.hankel import Bracketed, select_basis
from lpcfg_cli.wcfg.targets import dyck_pcfg

METHODS = ("spectral WFA", "unsupervised spectral", "supervised spectral")
D = 2


def _values(model, length: int) -> np.ndarray:
    return np.concatenate(model.values_all(length)[1:])


def _empirical(strings: Counter, length: int) -> np.ndarray:
    """The empirical distribution of ``strings`` on all strings up to ``length``."""
    total = sum(strings.values())
    out = []
    for k in range(1, length + 1):
        out.append(np.array([strings.get(tuple(x), 0) / total for x in all_strings(D, k)]))
    return np.concatenate(out)


def fitters(train: list[Bracketed], setting: str) -> dict[str, Callable[[int], object]]:
    """The learners of one basis setting: a factor (WFA, supervised) or a size OUTSxINS
    (unsupervised)."""
    strings = Counter(s.words for s in train)
    xs, cs = list(strings), list(strings.values())
    if "x" in setting:
        outs, ins = (int(v) for v in setting.split("x"))

        @functools.cache
        def problem() -> CompletionProblem:  # built by the first fit, shared by the others
            return unsupervised_problem(xs, cs, basis="closed", n_outsides=outs, n_insides=ins, d=D)

        return {"unsupervised spectral": lambda n: learn_from_problem(problem(), n)}
    factor = float(setting)
    prefixes, suffixes = automaton.select_basis(xs, cs, factor)
    basis = select_basis(train, D, factor=factor)
    return {
        "spectral WFA": lambda n: automaton.learn_wfa(xs, cs, n, D, prefixes, suffixes),
        "supervised spectral": lambda n: learn_supervised(train, n, basis, d=D),
    }


def one_seed(args: argparse.Namespace, seed: int) -> list[tuple[str, str, float, int, float]]:
    """One sample's (method, setting, L1, states chosen, seconds) for every setting."""
    target = _values(dyck_pcfg(), args.length)
    settings = [str(f) for f in args.factors] + args.bases
    rng = np.random.default_rng([args.seed, seed])
    train = sample_bracketed(dyck_pcfg(), args.sample, rng, max_length=args.max_length)
    held = sample_bracketed(dyck_pcfg(), args.sample, rng, max_length=args.max_length)
    held_p = _empirical(Counter(s.words for s in held), args.length)
    out = []
    for setting in settings:
        for method, fit in fitters(train, setting).items():
            if method not in args.methods:
                continue
            t0 = time.perf_counter()
            best = None
            for n in args.states:
                try:
                    model = fit(n)
                except ValueError:  # more states than the basis' rank
                    continue
                values = _values(model, args.length)
                score = float(np.abs(values - held_p).sum())
                if best is None or score < best[0]:
                    best = (score, n, values)
            seconds = time.perf_counter() - t0
            err = math.nan if best is None else float(np.abs(best[2] - target).sum())
            out.append((method, setting, err, 0 if best is None else best[1], seconds))
            print(f"seed {seed} {method} {setting}: L1 {err:.4f}", file=sys.stderr)
    return out


def run(args: argparse.Namespace) -> dict:
    """Every sample (seed), ``args.jobs`` at a time in worker processes; results in seed
    order, so the figures do not depend on ``--jobs``."""
    target = _values(dyck_pcfg(), args.length)
    l1: dict[str, dict[str, list[float]]] = {}
    chosen: dict[str, dict[str, list[int]]] = {}
    secs: dict[str, dict[str, list[float]]] = {}
    for rows in process_map(partial(one_seed, args), range(args.seeds), args.jobs):
        for method, setting, err, n, seconds in rows:
            l1.setdefault(method, {}).setdefault(setting, []).append(err)
            chosen.setdefault(method, {}).setdefault(setting, []).append(n)
            secs.setdefault(method, {}).setdefault(setting, []).append(seconds)
    return {
        "sample": args.sample,
        "seeds": args.seeds,
        "length": args.length,
        "factors": args.factors,
        "bases": args.bases,
        "states": args.states,
        "jobs": args.jobs,
        "l1_mean": {m: {k: _mean(v) for k, v in by.items()} for m, by in l1.items()},
        "l1_sd": {m: {k: _sd(v) for k, v in by.items()} for m, by in l1.items()},
        "l1_all": l1,
        "states_chosen": chosen,
        "seconds_mean": {
            m: {k: float(np.mean(v)) for k, v in by.items()} for m, by in secs.items()
        },
        "target_mass": float(target.sum()),
    }


def _mean(v: list[float]) -> float:
    return float(np.nanmean(v)) if not all(math.isnan(x) for x in v) else math.nan


def _sd(v: list[float]) -> float:
    return float(np.nanstd(v)) if not all(math.isnan(x) for x in v) else math.nan


def markdown(result: dict) -> str:
    lines = [
        f"L1 distance to the Dyck PCFG over the strings of at most {result['length']} symbols "
        f"(which hold {result['target_mass']:.3f} of its mass), {result['sample']:,} training "
        f"sentences, mean +- sd over {result['seeds']} samples; in brackets the number of "
        "states chosen on held-out strings most often, and the mean seconds per setting (all "
        f"state counts tried; {result['jobs']} samples at a time, one process each):",
        "",
        "| method | basis | L1 | states | seconds |",
        "|---|---|---|---|---|",
    ]
    for m, by in result["l1_mean"].items():
        for setting, mean in by.items():
            sd = result["l1_sd"][m][setting]
            picks = Counter(result["states_chosen"][m][setting]).most_common(1)[0][0]
            label = f"{setting} (outsides x insides)" if "x" in setting else f"factor {setting}"
            secs = result["seconds_mean"][m][setting]
            lines.append(f"| {m} | {label} | {mean:.4f} +- {sd:.4f} | {picks} | {secs:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/wcfg"))
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="also write the record here (docs/figures/wcfg_dyck.json)",
    )
    ap.add_argument("--sample", type=int, default=4000, help="training sentences (paper: 4,000)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--factors",
        type=lambda s: [float(v) for v in s.split(",")],
        default=[0.01, 0.02, 0.03, 0.04, 0.05],
    )
    ap.add_argument(
        "--bases",
        type=lambda s: s.split(","),
        default=["2x4", "4x6", "4x8", "6x10"],
        help="unsupervised bases OUTSxINS (root and symbols included)",
    )
    ap.add_argument(
        "--states", type=lambda s: [int(v) for v in s.split(",")], default=[2, 3, 4, 5, 6, 7, 8]
    )
    ap.add_argument("--length", type=int, default=7)
    ap.add_argument("--max-length", type=int, default=200, help="longest sampled sentence")
    ap.add_argument(
        "--methods", type=lambda s: s.split(","), default=list(METHODS), help="comma-separated"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--jobs", type=int, default=2, help="samples run at once, one process each (default 2)"
    )
    args = ap.parse_args()
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    t0 = time.perf_counter()
    result = run(args)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    write(args.out / "wcfg_dyck.json", {**provenance(), **result}, also=args.json)
    (args.out / "wcfg_dyck.md").write_text(markdown(result))
    print(markdown(result))
    print(f"{result['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
