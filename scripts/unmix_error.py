#!/usr/bin/env python3
"""Parameter error of the UNMIX learners (Hsu, Kakade & Liang 2012, section 5) against the
number of sentences.

For 10^4, 10^5, 10^6 (``--sizes``) sentences drawn from random models, the largest absolute
error of any parameter entry after matching states (``unmix.pcfg_ie_errors``,
``unmix.dep_ies_errors``), over ``--models`` random models x ``--seeds`` samples each:

- PCFG-IE, d = 5, k = 3, "separated" models (``unmix.separated_pcfg_ie``, s = 0.9); all
  sentences of length 3 and L_max = 3: pinv(M)'s Psi2 row weighs only the L = 3 rows for any
  L_max (checked below on one sample: L_max = 10 gives the same model), so longer sentences
  would only cost time. Learned with the best of 16 random tau (the CLI's default) and with
  one tau (the paper's); uniform models (s = 0) are reported too: their k-th singular value of
  Psi2 is ~1e-3, so 10^6 sentences do not learn them.
- DEP-IES, d = 4, uniform random models (``families.random_params``); half the sentences of
  length 2, half of length 3 (the moments of section 5.3).

Also: the log-log slope of the error (least squares over every run; -0.5 is the 1/sqrt(n)
rate), run times of one unmix on 10^6 sentences (sampling timed separately; PCFG-IE on
lengths 3..10 with L_max = 10) and the mixing matrix for L_max = 10. Writes ``unmix_error.md``
and ``unmix_error.json`` to ``--out``.

    python scripts/unmix_error.py --out results/unmix
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from records import provenance, write

from lpcfg_cli.topology_models import families as fam
from lpcfg_cli.topology_models import mixing as mx
from lpcfg_cli.topology_models import samples as se
from lpcfg_cli.topology_models import unmix as um

D_PCFG, K_PCFG, D_DEP, SEPARATION, N_TAU = 5, 3, 4, 0.9, 16


def _slope(ns: list[int], errors: list[list[float]]) -> float:
    x = np.concatenate([np.full(len(e), np.log10(n)) for n, e in zip(ns, errors, strict=True)])
    y = np.log10(np.concatenate(errors))
    return float(np.polyfit(x, y, 1)[0])


def _pcfg_runs(
    sizes: list[int], models: int, seeds: int, separation: float
) -> dict[str, list[list[float]]]:
    out: dict[str, list[list[float]]] = {"best tau": [], "one tau": []}
    for n in sizes:
        best, one = [], []
        for m in range(models):
            truth = um.separated_pcfg_ie(D_PCFG, K_PCFG, np.random.default_rng(m), separation)
            taus = np.random.default_rng(1000 + m).uniform(size=(N_TAU, D_PCFG))
            for s in range(seeds):
                data = se.sample_by_length(truth, {3: n}, np.random.default_rng([m, s, n]))
                est = um.unmix_pcfg_ie(data, D_PCFG, K_PCFG, 3, taus)
                best.append(um.pcfg_ie_errors(est, truth)["max"])
                est = um.unmix_pcfg_ie(data, D_PCFG, K_PCFG, 3, taus[0])
                one.append(um.pcfg_ie_errors(est, truth)["max"])
        out["best tau"].append(best)
        out["one tau"].append(one)
        print(f"pcfg-ie s={separation} n={n}: median {np.median(best):.3g}", file=sys.stderr)
    return out


def _dep_runs(sizes: list[int], models: int, seeds: int) -> list[list[float]]:
    out = []
    for n in sizes:
        errs = []
        for m in range(models):
            truth = fam.random_params("dep-ies", D_DEP, None, np.random.default_rng(500 + m))
            for s in range(seeds):
                rng = np.random.default_rng([m, s, n, 1])
                data = se.sample_by_length(truth, {2: n // 2, 3: n - n // 2}, rng)
                errs.append(um.dep_ies_errors(um.unmix_dep_ies(data, D_DEP), truth)["max"])
        out.append(errs)
        print(f"dep-ies n={n}: median {np.median(errs):.3g}", file=sys.stderr)
    return out


def _timings() -> dict[str, float]:
    """One unmix on 10^6 sentences each, sampling timed apart."""
    out: dict[str, float] = {}
    truth = um.separated_pcfg_ie(D_PCFG, K_PCFG, np.random.default_rng(0), SEPARATION)
    taus = np.random.default_rng(1).uniform(size=(N_TAU, D_PCFG))
    t = time.perf_counter()
    mx.mixing_matrix(10)
    um.check_row_space(10, tuple(range(3, 11)))
    out["mixing matrix L_max=10 (build + pinv row), s"] = time.perf_counter() - t
    t = time.perf_counter()
    data = se.sample_by_length(truth, {n: 125_000 for n in range(3, 11)}, np.random.default_rng(2))
    out["sample 10^6 pcfg-ie sentences, lengths 3..10, s"] = time.perf_counter() - t
    t = time.perf_counter()
    ten = um.unmix_pcfg_ie(data, D_PCFG, K_PCFG, 10, taus)
    out["unmix pcfg-ie, 10^6 sentences, L_max=10 (M cached), s"] = time.perf_counter() - t
    three = um.unmix_pcfg_ie(data, D_PCFG, K_PCFG, 3, taus)
    out["largest entry difference, L_max=10 vs L_max=3 on that sample"] = float(
        max(np.abs(ten.o - three.o).max(), np.abs(ten.t1 - three.t1).max())
    )
    dep = fam.random_params("dep-ies", D_DEP, None, np.random.default_rng(3))
    t = time.perf_counter()
    data = se.sample_by_length(dep, {2: 500_000, 3: 500_000}, np.random.default_rng(4))
    out["sample 10^6 dep-ies sentences, lengths 2-3, s"] = time.perf_counter() - t
    t = time.perf_counter()
    um.unmix_dep_ies(data, D_DEP)
    out["unmix dep-ies, 10^6 sentences, s"] = time.perf_counter() - t
    return out


def _row(name: str, sizes: list[int], errors: list[list[float]]) -> str:
    cells = [f"{np.median(e):.4f} ({np.min(e):.4f}-{np.max(e):.4f})" for e in errors]
    return f"| {name} | " + " | ".join(cells) + f" | {_slope(sizes, errors):+.2f} |"


def error_table(result: dict) -> str:
    """Median (min-max) error per size and the log-log slope, per learner, from the record
    this script writes (``doc_tables.py`` draws the docs' table with it)."""
    sizes, pcfg = result["sizes"], result["pcfg_ie"]
    name = f"pcfg-ie d={pcfg['d']} k={pcfg['k']}"
    return "\n".join([
        "| learner | " + " | ".join(f"n = {n:.0e}" for n in sizes) + " | slope |",
        "|" + "---|" * (len(sizes) + 2),
        _row(f"{name} s={pcfg['separation']}, best of {result['taus']} tau (`--taus "
             f"{result['taus']}`, the default)", sizes, pcfg["errors"]["best tau"]),
        _row(f"{name} s={pcfg['separation']}, one tau (the paper's)", sizes,
             pcfg["errors"]["one tau"]),
        _row(f"{name} uniform (s=0), best tau", sizes, result["pcfg_ie_uniform"]["errors"]),
        _row(f"dep-ies d={result['dep_ies']['d']} uniform", sizes, result["dep_ies"]["errors"]),
    ])  # fmt: skip


def timing_table(result: dict) -> str:
    """The run times of one unmix and of sampling, from the record."""
    seconds = {k.removesuffix(", s"): v for k, v in result["timings"].items() if k.endswith(", s")}
    return "\n".join(
        ["| timing (`scripts/unmix_error.py`) | seconds |", "|---|---|"]
        + [f"| {k} | {v:.3g} |" for k, v in seconds.items()]
    )


def lengths_difference(result: dict) -> float:
    """The largest difference between the PCFG-IE estimates with L_max = 10 and 3 on the
    same 10^6 sentences of lengths 3..10."""
    return next(v for k, v in result["timings"].items() if k.startswith("largest entry"))


def markdown(result: dict) -> str:
    runs = result["models"] * result["seeds"]
    m = result["mixing_matrix_10"]
    return "\n".join([
        "# UNMIX parameter error against the number of sentences",
        "",
        "Largest absolute parameter error after matching states: median (min-max) over "
        f"{result['models']} random models x {result['seeds']} samples ({runs} runs; uniform "
        f"PCFG-IE: {result['models']} x 1). Slope: least-squares log-log fit over every run "
        "(1/sqrt(n): -0.5).",
        "",
        error_table(result),
        "",
        "PCFG-IE: sentences of length 3, L_max = 3. DEP-IES: lengths 2 and 3, half each.",
        "",
        f"Mixing matrix, L_max = 10: {m['shape'][0]} x {m['shape'][1]} (paper: 990 x 2376), "
        f"rank {m['rank']}; e_Psi2 residual {m['residual']:.1e}; pinv(M)'s Psi2 row weighs "
        f"lengths {tuple(m['uses'])}.",
        "",
        timing_table(result),
        "",
        f"Total run time {result['seconds']:.0f} s.",
        "",
    ])  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--models", type=int, default=5, help="random models per learner")
    ap.add_argument("--seeds", type=int, default=3, help="samples per model and size")
    ap.add_argument("--out", default="results/unmix", help="folder for the .md and .json")
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="also write the record here (docs/figures/unmix_error.json)",
    )
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    start = time.perf_counter()
    sep = _pcfg_runs(sizes, args.models, args.seeds, SEPARATION)
    uniform = _pcfg_runs(sizes, args.models, 1, 0.0)
    dep = _dep_runs(sizes, args.models, args.seeds)
    timings = _timings()
    rows, keys, m = mx.mixing_matrix(10)
    check = um.check_row_space(10, tuple(range(3, 11)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "sizes": sizes,
        "models": args.models,
        "seeds": args.seeds,
        "pcfg_ie": {
            "d": D_PCFG,
            "k": K_PCFG,
            "separation": SEPARATION,
            "length_max": 3,
            "errors": sep,
            "slope": {k: _slope(sizes, v) for k, v in sep.items()},
        },
        "pcfg_ie_uniform": {
            "errors": uniform["best tau"],
            "slope": _slope(sizes, uniform["best tau"]),
        },
        "dep_ies": {"d": D_DEP, "errors": dep, "slope": _slope(sizes, dep)},
        "mixing_matrix_10": {"shape": list(m.shape), **check, "uses": list(check["uses"])},
        "timings": timings,
        "taus": N_TAU,
        "seconds": time.perf_counter() - start,
    }
    write(out / "unmix_error.json", {**provenance(), **result}, also=args.json)
    (out / "unmix_error.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
