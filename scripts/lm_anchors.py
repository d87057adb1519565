#!/usr/bin/env python3
"""Does the aggregate bigram model that EM finds on Brown satisfy the pivot method's anchor
assumption, and how does EM fare from starts that mix its solution with the pivot estimate?

For each m, EM from a random start (dev's first half picks the iteration, as ``lpcfg lm
train`` does), then:

- anchors in its solution. Next words (what ``pivot_s`` assumes: a word that follows one
  state only): for the anchor pool (``anchor_pool`` x m most frequent next words),
  ``max_h p(h | w2)`` with ``p(h | w2) ∝ p(h) s(w2 | h)``. Contexts (the reading of section 8
  that runs section 5.2 on the rows of Q): for the as many most frequent contexts,
  ``max_h r(h | w1)``. Quantiles 0.1 / 0.5 / 0.9, and how many states own a word above 0.8.
- four starts for EM, each scored by its best perplexity on dev's first half and the EM
  iterations to reach it: random (EM); the pivot estimate (pivot+EM as ``lpcfg lm train``
  fits it, smoothing chosen on dev); EM's own ``s`` with ``r`` fitted by the pivot's concave
  EM of ``r`` (``fit_r``); EM's own ``r`` with the pivot's ``s`` (smoothed by its first
  weight), the states paired arbitrarily.

    python scripts/lm_anchors.py --states 16,256 --out out/lm_anchors
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from records import provenance, write

from lpcfg_cli.lm.aggregate import (
    AggregateEMOptions,
    AggregatePivotEMOptions,
    Bigrams,
    fit_aggregate,
    fit_r,
    pivot_s,
    run_em,
)
from lpcfg_cli.lm.corpus import Vocabulary, read_corpus
from lpcfg_cli.lm.perplexity import halves

PURE = 0.8  # a word whose posterior on one state is above this counts as that state's anchor


def anchor_stats(post: np.ndarray, frequency: np.ndarray, pool: int) -> dict[str, Any]:
    """Quantiles of ``max_h post[w, h]`` over the ``pool`` most frequent words, and the
    number of states that own a word above ``PURE``."""
    top = np.argsort(-frequency)[:pool]
    best = post[top].max(axis=1)
    owners = post[top][best > PURE].argmax(axis=1)
    q10, q50, q90 = np.quantile(best, [0.1, 0.5, 0.9])
    return {"q10": q10, "q50": q50, "q90": q90, "states_with_anchor": len(set(owners.tolist()))}


def scored(history: list[dict[str, Any]]) -> dict[str, Any]:
    """Best dev perplexity of an EM run and the iteration reaching it (0: the start)."""
    ppl = [h["dev_perplexity"] for h in history]
    i = int(np.argmin(ppl))
    return {"best": ppl[i], "iterations": history[i]["iteration"], "start": ppl[0]}


def one(m: int, seed: int, vocab: Vocabulary, counts, dev1) -> dict[str, Any]:
    bigrams = Bigrams.of(counts)
    em_opts = AggregateEMOptions(states=m, seed=seed)
    pv_opts = AggregatePivotEMOptions(states=m, seed=seed)
    t0 = time.perf_counter()
    em = fit_aggregate("em", vocab, counts, dev1, em_opts)
    pivot_em = fit_aggregate("pivot+em", vocab, counts, dev1, pv_opts)
    r_em, s_em = em.r, em.s_t
    row = {"m": m, "seed": seed, "em": scored(em.meta["history"])}
    row["pivot+em"] = scored(pivot_em.meta["history"])
    row["pivot+em"]["smoothing"] = pivot_em.meta["smoothing"]
    r_fit, _ = fit_r(bigrams, s_em, vocab, dev1, pv_opts)
    row["em_s_fitted_r"] = scored(run_em(bigrams, r_fit, s_em, vocab, dev1, pv_opts)[2])
    s_piv, unigram = pivot_s(counts, pv_opts)
    w = pv_opts.smoothing[0]
    s_mix = (1 - w) * s_piv + w * unigram[:, None]
    row["em_r_pivot_s"] = scored(run_em(bigrams, r_em, s_mix, vocab, dev1, pv_opts)[2])
    pool = int(pv_opts.anchor_pool * m)
    next_freq = np.asarray(counts.sum(axis=0)).ravel()
    prev_freq = np.asarray(counts.sum(axis=1)).ravel()
    p_h = prev_freq @ r_em
    post = s_em * p_h[None, :]
    post /= np.maximum(post.sum(axis=1, keepdims=True), 1e-300)
    row["next_word_anchors"] = anchor_stats(post, next_freq, pool)
    row["context_anchors"] = anchor_stats(r_em, prev_freq, pool)
    row["seconds"] = time.perf_counter() - t0
    return row


def markdown(rows: list[dict[str, Any]]) -> str:
    def run(x: dict[str, Any]) -> str:
        return f"{x['best']:.1f} ({x['iterations']})"

    def anchors(x: dict[str, Any]) -> str:
        return f"{x['q10']:.2f} / {x['q50']:.2f} / {x['q90']:.2f}, {x['states_with_anchor']}"

    lines = [
        "| m | seed | EM | pivot+EM | EM's s, r fitted | EM's r, pivot's s "
        "| next-word anchors in EM's solution | context anchors in EM's solution |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['m']} | {r['seed']} | {run(r['em'])} | {run(r['pivot+em'])} "
            f"| {run(r['em_s_fitted_r'])} | {run(r['em_r_pivot_s'])} "
            f"| {anchors(r['next_word_anchors'])} | {anchors(r['context_anchors'])} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/brown", help="folder written by `make brown`")
    ap.add_argument("--states", default="16,256", help="values of m")
    ap.add_argument("--seeds", default="0", help="seeds")
    ap.add_argument("--out", default="out/lm_anchors", help="writes OUT.md and OUT.json")
    ap.add_argument("--json", type=Path, default=None, help="also write the record here")
    args = ap.parse_args()
    folder = Path(args.data)
    train = read_corpus(folder / "train.txt")
    dev = read_corpus(folder / "dev.txt")
    vocab = Vocabulary.build(train, 2)  # words seen once are <unk>, as `lpcfg lm train`
    counts = vocab.bigram_counts(train)
    dev1 = vocab.events(halves(dev)[0], 2)
    rows = []
    for m in map(int, args.states.split(",")):
        for seed in map(int, args.seeds.split(",")):
            rows.append(one(m, seed, vocab, counts, dev1))
            print(markdown(rows[-1:]).splitlines()[-1], flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = (
        "Best perplexity of dev's first half (EM iterations to reach it); anchors: "
        f"quantiles 0.1 / 0.5 / 0.9 of the largest posterior, states owning a word > {PURE}.\n\n"
        + markdown(rows)
    )
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    write(out.with_suffix(".json"), {**provenance(), "pure": PURE, "rows": rows}, also=args.json)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
