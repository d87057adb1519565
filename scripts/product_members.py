#!/usr/bin/env python3
"""What a product of split-merge grammars gains from more members and from members of other
methods, measured: the record ``docs/figures/product_members.json``.

For each repetition (``--reps``: the first seed of its six split-merge grammars) the split-merge
members are trained one per seed as ``configs/best.toml`` trains them (its ``[train]`` table
without its ensemble size or members: ``lpcfg train --config TMP --seed K``), and each
config of ``--members`` (``configs/NAME.toml``) once with the repetition's seed; the
variants bundle them (``lpcfg bundle``) and parse dev and test with ``best.toml``'s parse
options (a product):

- ``sm6``: the six split-merge grammars (what ``best.toml`` trains without members);
- ``sm7``, ``sm8``: one or two more split-merge seeds (more members of the same method);
- ``sm6+NAME``: the six and one model of config NAME; ``sm6+NAME1+NAME2...``: the six and
  the first members of ``--members``, two or more, in their order;
- with ``--unaries``, ``smu6`` and ``smu6+...``: six split-merge grammars trained as above
  but with latent unary rules (``--unaries``, split-merge's own default, which
  ``best.toml``'s members turn off), alone and with ``best.toml``'s members.

Dev chooses (mean over the repetitions); test is reported beside it. Models and parses stay
in ``--out``, so a re-run resumes.

    python scripts/product_members.py --data data --out out/product_members --reps 0,8,16 \\
        --members pivot_em16,em16,pivot16 --unaries

About 25 minutes of training per repetition on 2 cores (about 20 more with ``--unaries``),
and a minute per parse.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import records
from bench_parse import f1
from ptb_results import CONFIGS, train_options
from records import lpcfg

EXTRA = 2  # split-merge seeds beyond the six, for sm7 and sm8


def toml_value(value: object) -> str:
    """``value`` written as TOML (the few kinds a config's [train] table holds)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


def member_config(out: Path) -> Path:
    """best.toml's [train] table for one split-merge grammar: without its ensemble size and
    members, its dev file named absolutely (the copy lives elsewhere)."""
    drop = ("ensemble", "member", "seed")
    train = {k: v for k, v in train_options("best").items() if k not in drop}
    if "dev" in train:
        train["dev"] = str((CONFIGS / train["dev"]).resolve())
    path = out / "best_member.toml"
    path.write_text("[train]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in train.items()))
    return path


def trained(path: Path, *args: str) -> Path:
    """``path``, trained with ``lpcfg train ARGS -o path`` unless it is there already."""
    if not path.exists():
        lpcfg("train", *args, "-q", "-o", str(path))
    return path


def own_dev(config: str, data: Path, jobs: int) -> list[str]:
    """``--dev`` and ``--jobs`` for a config that selects on dev (its dev set is this data's),
    nothing for one that does not (``lpcfg train`` refuses an option without effect)."""
    selects = "dev" in train_options(config)
    return ["--dev", str(data / "dev.mrg"), "--jobs", str(jobs)] if selects else []


def score(data: Path, out: Path, name: str, models: list[Path], jobs: int) -> dict:
    """Dev and test strict F1 of the product of ``models`` (parses kept in ``out``)."""
    figures = {}
    bundle = out / f"{name}.npz"
    for part in ("dev", "test"):
        parsed = out / f"{name}.{part}.parsed"
        if not parsed.exists():
            if not bundle.exists():
                lpcfg("bundle", *map(str, models), "-q", "-o", str(bundle))
            lpcfg("parse", "--config", str(CONFIGS / "best.toml"), "--jobs", str(jobs), "-q",
                  str(bundle), str(data / f"{part}.txt"), "-o", str(parsed))  # fmt: skip
        figures[f"{part}_f1"] = f1(data / f"{part}.mrg", parsed)[1]
    bundle.unlink(missing_ok=True)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--out", type=Path, default=Path("out/product_members"))
    ap.add_argument("--reps", default="0,8,16", help="first split-merge seed of each repetition")
    ap.add_argument(
        "--members", default="pivot_em16,em16,pivot16", help="configs of other methods, in order"
    )
    ap.add_argument(
        "--unaries", action="store_true", help="also six split-merge grammars with unary rules"
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, default=records.FIGURES / "product_members.json")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sm_config = member_config(args.out)
    train = str(args.data / "train.mrg")
    others = args.members.split(",")
    kept = [Path(m).stem for m in train_options("best").get("member", [])]  # best.toml's
    if args.unaries and not set(kept) <= set(others):
        ap.error(f"--unaries bundles best.toml's members: --members must name {kept}")
    reps = [int(r) for r in args.reps.split(",")]
    variants: dict[str, list[dict]] = {}
    for first in reps:
        sm = [
            trained(
                args.out / f"sm-s{k}.npz",
                "--config",
                str(sm_config),
                "--seed",
                str(k),
                "--jobs",
                str(args.jobs),
                train,
            )  # fmt: skip
            for k in range(first, first + 6 + EXTRA)
        ]
        member = {
            name: trained(
                args.out / f"{name}-s{first}.npz",
                "--config",
                str(CONFIGS / f"{name}.toml"),
                "--seed",
                str(first),
                *own_dev(name, args.data, args.jobs),
                train,
            )  # fmt: skip
            for name in others
        }
        chosen = {"sm6": sm[:6], "sm7": sm[:7], "sm8": sm[:8]}
        chosen.update({f"sm6+{name}": [*sm[:6], path] for name, path in member.items()})
        for k in range(2, len(others) + 1):  # the members added in their order
            chosen["sm6+" + "+".join(others[:k])] = [*sm[:6], *(member[n] for n in others[:k])]
        if args.unaries:
            unary = ["--config", str(sm_config), "--unaries", "--jobs", str(args.jobs)]
            smu = [
                trained(args.out / f"smu-s{k}.npz", *unary, "--seed", str(k), train)
                for k in range(first, first + 6)
            ]
            chosen["smu6"] = smu
            chosen["smu6+" + "+".join(kept)] = [*smu, *(member[n] for n in kept)]
        for name, models in chosen.items():
            figures = score(args.data, args.out, f"{name}-r{first}", models, args.jobs)
            variants.setdefault(name, []).append({"rep": first, **figures})
            print(f"rep {first} {name}: dev {figures['dev_f1']:.2f} test {figures['test_f1']:.2f}",
                  flush=True)  # fmt: skip
    summary = {}
    for name, runs in variants.items():
        summary[name] = {"runs": runs}
        for key in ("dev_f1", "test_f1"):
            values = [r[key] for r in runs]
            summary[name][key] = {
                "mean": statistics.fmean(values),
                "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            }
    records.write(
        args.json,
        {
            **records.provenance(),
            "members": others,
            "variants": summary,
        },
    )


if __name__ == "__main__":
    main()
