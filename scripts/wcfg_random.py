#!/usr/bin/env python3
"""KL divergence against the sample size for random PCFG targets (Bailly et al. 2013,
section 5.1, Figure 1): unsupervised spectral, supervised spectral, unsupervised EM and
supervised EM.

Targets: ``--targets`` random PCFGs with ``--states`` nonterminals and ``--symbols``
symbols, parameters uniform in [0, 1], normalised and conditioned on finite derivations
(``wcfg.targets.random_pcfg``; the paper uses 50 targets). For each target one sample of
``max(--sizes)`` bracketed sentences is drawn (``wcfg.sampling.sample_bracketed``) and each
size uses its first N sentences. The learners, all with ``--states`` states:

- unsupervised spectral: the strings only; the simplified completion problem of section 5.1
  (statistics of strings up to length 3), 50 optimisation steps, then Lemma 1;
- supervised spectral: the bracketed sentences; the same basis (insides Sigma, outsides
  <eps;eps>, <x;eps>, <eps;x>), the empirical Hankel blocks, Lemma 1;
- unsupervised EM: inside-outside over every tree of each distinct string (``lpcfg train
  --method em --input text``), from a seeded random start;
- supervised EM: EM on the observed bracketings (the same model class).

EM runs at most ``--em-iterations`` iterations (the paper: 200) and stops earlier when the
relative log-likelihood change falls below ``--em-tol`` (1e-6: EM reaches it in a third
of the iterations 1e-7 needs), without smoothing, on samples of at most ``--em-max-size``
sentences (10^5: at 10^6 EM takes minutes per target, as the paper's EM took 6,000 s;
timings in docs/experiments/wcfg.md). Samples are drawn
conditioned on at most ``--max-length`` words (30); the KL divergence, renormalised over the
strings of at most 10 symbols, is the same for the target and for the target so
conditioned. The figure
is KL(target || model) over the strings of at most ``--kl-length`` symbols (10, as the
paper), both renormalised there, the model floored at 1e-12 (``wcfg.distances``); the
geometric mean over targets, as in the paper, with run times (mean seconds per model).
Writes ``wcfg_random.md`` and ``wcfg_random.json`` to ``--out`` (``--name`` changes the
stem), and with ``--plot PATH`` the KL-against-sample-size figure. With ``--cache DIR``
each finished target's results are kept in ``DIR`` and a later run with the same settings
reads them instead of running the target again: figure 1's EM at 10^6 takes hours of CPU,
and can so be run in parts, stopped and resumed, or spread over machines sharing ``DIR``.

    python scripts/wcfg_random.py --out results/wcfg --plot results/wcfg/kl     # figure 1
    python scripts/wcfg_random.py --out results/wcfg --name wcfg_random_3x6 \\
        --states 3 --symbols 6 --plot results/wcfg/kl_3x6                      # figure 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from lpcfg_cli.grammar.training_data import bracketed_data, text_data
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.workers import process_map
from lpcfg_cli.wcfg.algebraic import WCFG, from_model
from lpcfg_cli.wcfg.bracketed_samples import sample_bracketed
from lpcfg_cli.wcfg.completion import learn_unsupervised
from lpcfg_cli.wcfg.distances import kl_divergence
from lpcfg_cli.wcfg.factorisation import learn_supervised
from lpcfg_cli.wcfg.hankel import Basis, Bracketed
from lpcfg_cli.wcfg.targets import random_pcfg

METHODS = ("unsupervised spectral", "supervised spectral", "unsupervised EM", "supervised EM")


def in_symbol_order(model: LPCFG, d: int) -> WCFG:
    """The WCFG of a single-symbol model whose words spell the symbols ``"0" .. "d-1"``."""
    w, words = from_model(model)
    order = [words.index(str(s)) for s in range(d)]
    return WCFG(w.start, w.terminals[order], w.binary)


def simple_basis(d: int) -> Basis:
    """Section 5.1's basis: insides Sigma; outsides <eps;eps>, <x;eps>, <eps;x>."""
    outsides = [((), ())] + [((x,), ()) for x in range(d)] + [((), (x,)) for x in range(d)]
    return Basis(outsides, [(x,) for x in range(d)])


def learners(
    n: int, d: int, iterations: int, tol: float, seed: int
) -> dict[str, Callable[[Sequence[Bracketed]], WCFG]]:
    vocabulary = [str(s) for s in range(d)]

    def strings(sample: Sequence[Bracketed]) -> Counter[tuple[int, ...]]:
        return Counter(s.words for s in sample)

    def unsup_spectral(sample: Sequence[Bracketed]) -> WCFG:
        seen = strings(sample)
        return learn_unsupervised(list(seen), list(seen.values()), n, d=d, seed=seed)

    def sup_spectral(sample: Sequence[Bracketed]) -> WCFG:
        return learn_supervised(sample, n, simple_basis(d), d=d)

    em = dict(states=n, iterations=iterations, tol=tol, smoothing=0.0, seed=seed)

    def unsup_em(sample: Sequence[Bracketed]) -> WCFG:
        seen = strings(sample)
        text = [[str(s) for s in x] for x, c in seen.items() for _ in range(c)]
        data = text_data(text, words=vocabulary)
        model = learner("em", lexicon_smoothing=0.0, **em).fit(data)
        return in_symbol_order(model, d)

    def sup_em(sample: Sequence[Bracketed]) -> WCFG:
        data = bracketed_data(
            [[str(s) for s in b.words] for b in sample],
            [list(b.nodes) for b in sample],
            words=vocabulary,
            merge=True,
        )
        model = learner("em", lexicon_smoothing=0.0, **em).fit(data)
        return in_symbol_order(model, d)

    return dict(zip(METHODS, (unsup_spectral, sup_spectral, unsup_em, sup_em), strict=True))


def one_target(args: argparse.Namespace, t: int) -> dict:
    """Every method at every size on target ``t``: KL, seconds, floored strings."""
    sizes = sorted(args.sizes)
    fit = learners(args.states, args.symbols, args.em_iterations, args.em_tol, args.seed)
    rng = np.random.default_rng([args.seed, t])
    target = random_pcfg(args.states, args.symbols, rng)
    t0 = time.perf_counter()
    sample = sample_bracketed(target, sizes[-1], rng, max_length=args.max_length)
    out: dict = {"sample_seconds": time.perf_counter() - t0, "kl": {}, "secs": {}}
    out["floored"] = dict.fromkeys(METHODS, 0)
    for size in sizes:
        for method in METHODS:
            if method not in args.methods or ("EM" in method and size > args.em_max_size):
                continue
            t0 = time.perf_counter()
            model = fit[method](sample[:size])
            out["secs"][method, size] = time.perf_counter() - t0
            div = kl_divergence(target, model, args.kl_length)
            out["kl"][method, size] = div.value
            out["floored"][method] += div.floored
        done = [m for m in METHODS if (m, size) in out["kl"]]
        print(
            f"target {t} size {size}: " + ", ".join(f"{m} {out['kl'][m, size]:.2e}" for m in done),
            file=sys.stderr,
        )
    return out


# What a target's results depend on: a cached target is reused only under the same values.
SETTINGS = (
    "states", "symbols", "sizes", "em_iterations", "em_tol", "em_max_size", "kl_length",
    "max_length", "seed", "methods",
)  # fmt: skip


def cache_path(args: argparse.Namespace, t: int) -> Path:
    """Where ``--cache`` keeps target ``t``'s results: named by a digest of ``SETTINGS``."""
    settings = {k: getattr(args, k) for k in SETTINGS}
    settings["sizes"] = sorted(settings["sizes"])
    settings["methods"] = sorted(settings["methods"])
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    return args.cache / f"{digest}-target{t:03d}.json"


def _to_json(out: dict) -> dict:
    return {
        **out,
        "kl": [[m, s, v] for (m, s), v in out["kl"].items()],
        "secs": [[m, s, v] for (m, s), v in out["secs"].items()],
    }


def _from_json(got: dict) -> dict:
    return {
        **got,
        "kl": {(m, s): v for m, s, v in got["kl"]},
        "secs": {(m, s): v for m, s, v in got["secs"]},
    }


def cached_target(args: argparse.Namespace, t: int) -> dict:
    """``one_target``, read from ``--cache`` when an earlier run with the same settings
    finished this target, and written there (atomically) when it is run."""
    if args.cache is None:
        return one_target(args, t)
    path = cache_path(args, t)
    if path.exists():
        print(f"target {t}: from {path}", file=sys.stderr)
        return _from_json(json.loads(path.read_text()))
    out = one_target(args, t)
    part = path.with_suffix(".part")
    part.write_text(json.dumps(_to_json(out)) + "\n")
    part.replace(path)
    return out


def run(args: argparse.Namespace) -> dict:
    """All targets, ``args.jobs`` at a time (each in its own process, results in target
    order, so the figures do not depend on ``--jobs``)."""
    sizes = sorted(args.sizes)
    if args.cache is not None:
        args.cache.mkdir(parents=True, exist_ok=True)
    per_target = process_map(partial(cached_target, args), range(args.targets), args.jobs)
    kl = {
        m: {s: [r["kl"][m, s] for r in per_target if (m, s) in r["kl"]] for s in sizes}
        for m in METHODS
    }
    secs = {
        m: {s: [r["secs"][m, s] for r in per_target if (m, s) in r["secs"]] for s in sizes}
        for m in METHODS
    }
    floored = {m: sum(r["floored"][m] for r in per_target) for m in METHODS}
    sample_seconds = [r["sample_seconds"] for r in per_target]
    return {
        "targets": args.targets,
        "states": args.states,
        "symbols": args.symbols,
        "sizes": sizes,
        "em_iterations": args.em_iterations,
        "em_tol": args.em_tol,
        "kl_length": args.kl_length,
        "max_length": args.max_length,
        "seed": args.seed,
        "jobs": args.jobs,
        "sample_seconds_mean": float(np.mean(sample_seconds)),
        "em_max_size": args.em_max_size,
        "kl_geometric_mean": {
            m: {str(s): _geomean(kl[m][s]) for s in sizes if kl[m][s]}
            for m in METHODS
            if m in args.methods
        },
        "kl_all": {m: {str(s): kl[m][s] for s in sizes} for m in METHODS if m in args.methods},
        "seconds_mean": {
            m: {str(s): float(np.mean(secs[m][s])) for s in sizes if secs[m][s]}
            for m in METHODS
            if m in args.methods
        },
        "floored_strings": {m: floored[m] for m in METHODS if m in args.methods},
    }


def _geomean(values: list[float]) -> float:
    v = np.maximum(np.asarray(values, dtype=np.float64), 1e-300)
    return float(math.exp(np.mean(np.log(v))))


def markdown(result: dict) -> str:
    sizes = result["sizes"]
    methods = list(result["kl_geometric_mean"])
    head = "| method | " + " | ".join(f"{s:.0e}".replace("+0", "") for s in sizes) + " |"
    rule = "|---|" + "---|" * len(sizes)
    lines = [
        f"KL(target || model) over strings of at most {result['kl_length']} symbols, "
        f"geometric mean over {result['targets']} random PCFGs ({result['states']} "
        f"nonterminals, {result['symbols']} symbols), by sample size:",
        "",
        head,
        rule,
    ]
    for m in methods:
        got = result["kl_geometric_mean"][m]
        cells = [f"{got[str(s)]:.2e}" if str(s) in got else "-" for s in sizes]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Mean seconds per model ({result['jobs']} targets at a time, one process each):",
        "",
        head,
        rule,
    ]
    for m in methods:
        got = result["seconds_mean"][m]
        cells = [f"{got[str(s)]:.2f}" if str(s) in got else "-" for s in sizes]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"EM ran on samples of at most {result['em_max_size']:,} sentences ('-': not run).",
        f"Sampling {sizes[-1]:,} bracketed sentences took {result['sample_seconds_mean']:.1f} s "
        "per target. Strings whose model value was floored (at most 1e-12, all runs): "
        + ", ".join(f"{m} {k}" for m, k in result["floored_strings"].items())
        + ".",
    ]
    return "\n".join(lines) + "\n"


def plot(path: Path, result: dict) -> Path:
    """KL against sample size on log-log axes, one line per method (geometric mean over the
    targets), as Bailly et al.'s figures 1 and 2."""
    from plots import Panel, Series, draw

    panel = Panel(
        f"{result['targets']} random PCFGs, {result['states']} nonterminals, "
        f"{result['symbols']} symbols",
        "sample size (sentences)",
        f"KL(target || model), strings of <= {result['kl_length']} symbols",
        logx=True,
        logy=True,
    )
    for method, got in result["kl_geometric_mean"].items():
        sizes = [s for s in result["sizes"] if str(s) in got]
        panel.series.append(Series(method, sizes, [got[str(s)] for s in sizes]))
    return draw(path, [panel], "KL against sample size (Bailly et al. 2013, in kind)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/wcfg"))
    ap.add_argument("--targets", type=int, default=10, help="random targets (paper: 50)")
    ap.add_argument(
        "--sizes",
        type=lambda s: [int(float(v)) for v in s.split(",")],
        default=[100, 1000, 10_000, 100_000, 1_000_000],
    )
    ap.add_argument("--states", type=int, default=2)
    ap.add_argument("--symbols", type=int, default=2)
    ap.add_argument("--em-iterations", type=int, default=200)
    ap.add_argument("--em-tol", type=float, default=1e-6)
    ap.add_argument(
        "--em-max-size",
        type=lambda v: int(float(v)),
        default=100_000,
        help="largest sample EM runs on (time: ~5 min per target at 1e6)",
    )
    ap.add_argument("--kl-length", type=int, default=10)
    ap.add_argument("--max-length", type=int, default=30, help="longest sampled sentence")
    ap.add_argument(
        "--methods", type=lambda s: s.split(","), default=list(METHODS), help="comma-separated"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="wcfg_random", help="stem of the files written")
    ap.add_argument("--plot", type=Path, default=None, help="draw PLOT.png (and PLOT.json)")
    ap.add_argument(
        "--jobs", type=int, default=2, help="targets run at once, one process each (default 2)"
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="keep each finished target's results in this folder and reuse them in a later "
        "run with the same settings (a long run stopped, resumed, or split across machines)",
    )
    args = ap.parse_args()
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    t0 = time.perf_counter()
    result = run(args)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / f"{args.name}.md").write_text(markdown(result))
    print(markdown(result))
    if args.plot:
        print(plot(args.plot, result))
    print(f"{result['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
