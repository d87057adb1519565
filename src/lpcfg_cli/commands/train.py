"""`lpcfg train`: learn a model from PTB treebank files."""

from __future__ import annotations

import time

import click
from tqdm import tqdm

from lpcfg_cli.binarize import BinarizeOptions
from lpcfg_cli.commands.options import binarization_options, skip_bad_option
from lpcfg_cli.config import config_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.learners.em import train_em
from lpcfg_cli.learners.pcfg import train_pcfg
from lpcfg_cli.model import LPCFG
from lpcfg_cli.training import compile_dev, dev_scorer, prepare

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
@click.option(
    "--tol",
    type=click.FloatRange(min=0),
    default=1e-5,
    show_default=True,
    help="EM stops when the relative log-likelihood change is below this.",
)
@click.option(
    "--dev-f1-every",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="With --dev: parse and score the dev set every N EM iterations.",
)
@click.option(
    "--smoothing",
    type=click.FloatRange(0, 1),
    default=0.01,
    show_default=True,
    help="EM: weight pulling each state's rule distribution to the state average.",
)
@click.option(
    "--noise",
    type=click.FloatRange(min=0),
    default=0.1,
    show_default=True,
    help="EM: relative random perturbation of the split PCFG it starts from.",
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
    tol: float,
    dev_f1_every: int,
    smoothing: float,
    noise: float,
    skip_bad: bool,
) -> None:
    """Learn a model from PTB TREEBANK files (normalised and binarized as `binarize` does).

    \b
    Examples:
      lpcfg train --method pcfg data/train.mrg -o pcfg.npz
      lpcfg train --method em --states 16 --iterations 40 --dev data/dev.mrg \\
          data/train.mrg -o em16.npz
    """
    if method not in ("pcfg", "em"):
        raise LpcfgError(f"--method {method} is not available yet (see the issue tracker)")
    try:
        m = int(states)
    except ValueError:
        raise LpcfgError(f"--states must be a whole number for --method {method}") from None
    if m < 1:
        raise LpcfgError("--states must be at least 1")
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
    if method == "pcfg":
        model = train_pcfg(data.grammar, data.bank, meta)
    else:
        model = _train_em(data, meta, m, iterations, dev, init, seed, tol, dev_f1_every,
                          smoothing, noise, options)  # fmt: skip
    model.meta["train_seconds"] = round(time.perf_counter() - t0, 3)
    model.save(output)
    click.echo(f"lpcfg: wrote {output} ({method}, {time.perf_counter() - t0:.1f} s)", err=True)


def _train_em(
    data, meta, states, iterations, dev, init, seed, tol, dev_f1_every, smoothing, noise, options
) -> LPCFG:  # noqa: ANN001
    """EM with a progress bar and one line per iteration on stderr."""
    dev_bank = scorer = None
    if dev:
        _, dev_bank, dropped = compile_dev(data.grammar, [dev], options)
        scorer = dev_scorer([dev])
        if dropped:
            click.echo(f"lpcfg: {dropped} dev trees use rules unseen in training: left out of "
                       "the dev log-likelihood (still parsed for dev F1)", err=True)  # fmt: skip
    start = LPCFG.load(init) if init else None
    bar = tqdm(total=iterations, desc="em", unit="it", file=click.get_text_stream("stderr"),
               leave=False)  # fmt: skip

    def report(rec: dict) -> None:
        bar.update(1)
        parts = [f"iteration {rec['iteration']:3d}", f"train loglik {rec['train_loglik']:.1f}"]
        if rec.get("dev_loglik") is not None:
            parts.append(f"dev loglik {rec['dev_loglik']:.1f}")
        if rec.get("dev_f1") is not None:
            parts.append(f"dev F1 {rec['dev_f1']:.2f}")
        parts.append(f"{rec['seconds']:.1f} s")
        bar.write("lpcfg: " + ", ".join(parts), file=click.get_text_stream("stderr"))

    with bar:
        model = train_em(data.grammar, data.bank, states=states, iterations=iterations,
                         seed=seed, init=start, noise=noise, tol=tol, smoothing=smoothing,
                         dev_bank=dev_bank, dev_f1=scorer, dev_f1_every=dev_f1_every,
                         callback=report, meta=meta)  # fmt: skip
    sel = model.meta.get("selected_iteration")
    click.echo(f"lpcfg: selected iteration {sel} of {len(model.meta['history'])}", err=True)
    return model
