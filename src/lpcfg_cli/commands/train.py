"""`lpcfg train`: learn a model from PTB treebank files."""

from __future__ import annotations

import time

import click

from lpcfg_cli.binarize import BinarizeOptions
from lpcfg_cli.commands.options import binarization_options, skip_bad_option
from lpcfg_cli.config import config_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.learners.pcfg import train_pcfg
from lpcfg_cli.training import prepare

METHODS = ("pcfg", "em", "spectral", "pivot", "pivot+em")


def _warn(err: LpcfgError) -> None:
    click.echo(f"lpcfg: warning: {err} (skipped)", err=True)


@click.command(name="train")
@config_option
@click.argument("treebank", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Model file to write (.npz; written atomically).",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="pcfg",
    show_default=True,
    help="Learning algorithm.",
)
@click.option(
    "--states",
    default="8",
    show_default=True,
    help="Latent states per nonterminal (upper bound where a method adapts it).",
)
@click.option(
    "--iterations",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="EM iterations (em, pivot+em).",
)
@click.option(
    "--dev",
    "dev",
    type=click.Path(dir_okay=False, allow_dash=False),
    help="Dev trees for model selection and per-iteration F1.",
)
@click.option(
    "--init",
    "init",
    type=click.Path(dir_okay=False),
    help="Start EM from an existing probabilistic model.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@binarization_options
@click.option(
    "--rare",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Words seen at most this often become unknown-word signatures.",
)
@skip_bad_option
def command(
    treebank: tuple[str, ...],
    output: str,
    method: str,
    states: str,
    iterations: int,
    dev: str | None,
    init: str | None,
    seed: int,
    horizontal: int,
    vertical: int,
    factor: str,
    rare: int,
    skip_bad: bool,
) -> None:
    """Learn a model from PTB TREEBANK files (normalised and binarized as `binarize` does).

    \b
    Example:
      lpcfg train --method pcfg data/train.mrg -o pcfg.npz
    """
    if method != "pcfg":
        raise LpcfgError(f"--method {method} is not available yet (see the issue tracker)")
    t0 = time.perf_counter()
    options = BinarizeOptions(horizontal=horizontal, vertical=vertical, factor=factor)
    data = prepare(treebank, options, rare=rare, skip_bad=skip_bad, on_bad=_warn)
    s = data.summary
    click.echo(
        f"lpcfg: {s['trees']} trees, {s['words']} words, {s['symbols']} symbols, "
        f"{s['binary_rules']} binary and {s['lexical_rules']} lexical rules",
        err=True,
    )
    meta = {"training": s, "seed": seed}
    model = train_pcfg(data.grammar, data.bank, meta)
    model.meta["train_seconds"] = round(time.perf_counter() - t0, 3)
    model.save(output)
    click.echo(f"lpcfg: wrote {output} ({method}, {time.perf_counter() - t0:.1f} s)", err=True)
