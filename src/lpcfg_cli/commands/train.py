"""`lpcfg train`: learn a model from PTB treebank files."""

from __future__ import annotations

import os
import time

import click

from lpcfg_cli.binarize import BinarizeOptions
from lpcfg_cli.commands.options import (
    FiniteFloat,
    binarization_options,
    progress_bar,
    progress_option,
    report,
    seed_option,
    skip_bad_option,
    unused,
    warn,
)
from lpcfg_cli.config import config_option
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import check_output, display_name
from lpcfg_cli.learners.em import train_em
from lpcfg_cli.learners.features import INSIDE, OUTSIDE, FeatureOptions
from lpcfg_cli.learners.pcfg import train_pcfg
from lpcfg_cli.learners.pivot import PIVOT_INSIDE, PivotEstimator, PivotOptions
from lpcfg_cli.learners.spectral import SpectralEstimator, SpectralOptions
from lpcfg_cli.model import LPCFG
from lpcfg_cli.training import binarized_trees, compile_dev, dev_scorer, prepare

METHODS = ("pcfg", "em", "spectral", "pivot", "pivot+em")


def _warn(err: LpcfgError) -> None:
    warn(f"{err} (skipped)")


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
    help="Latent states per nonterminal (upper bound where a method adapts it); spectral "
    "with --dev also takes a comma-separated grid, e.g. 8,16,24,32.",
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
@seed_option
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worker processes for parsing the --dev trees.",
)
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
    type=FiniteFloat(min=0),
    default=1e-5,
    show_default=True,
    help="EM stops when the relative log-likelihood change is below this.",
)
@click.option(
    "--dev-f1-every",
    type=click.IntRange(min=1),
    default=None,
    help="With --dev: parse and score the dev set every N EM iterations [default: 5 for "
    "em, 1 for pivot+em].",
)
@click.option(
    "--smoothing",
    type=FiniteFloat(0, 1),
    default=0.01,
    show_default=True,
    help="EM: weight pulling each state's rule distribution to the state average.",
)
@click.option(
    "--noise",
    type=FiniteFloat(min=0),
    default=0.1,
    show_default=True,
    help="EM: relative random perturbation of the split PCFG it starts from.",
)
@click.option(
    "--min-singular",
    type=FiniteFloat(min=0),
    default=0.01,
    show_default=True,
    help="Spectral: keep SVD directions with singular values above this only.",
)
@click.option(
    "--state-count",
    type=FiniteFloat(min=0),
    default=10.0,
    show_default=True,
    help="Spectral: training nodes per latent state; a nonterminal seen n times gets at "
    "most n / this states (0: no frequency cap).",
)
@click.option(
    "--cap",
    "caps",
    multiple=True,
    metavar="LABEL=M",
    help="Spectral: at most M states for nonterminal LABEL (repeatable).",
)
@click.option(
    "--moment-smoothing",
    type=FiniteFloat(min=0),
    default=30.0,
    show_default=True,
    help="Spectral: C of lambda = sqrt(n) / (C + sqrt(n)) smoothing rule moments (0: off).",
)
@click.option(
    "--lexical-weight",
    type=FiniteFloat(0, 1),
    default=0.6,
    show_default=True,
    help="Spectral: fixed weight of a word's own moment against its pre-terminal's mean, "
    "used when --lexical-count is 0 (1: no lexical smoothing).",
)
@click.option(
    "--lexical-count",
    type=FiniteFloat(min=0),
    default=10.0,
    show_default=True,
    help="Spectral: C' of the word's weight sqrt(n) / (C' + sqrt(n)) against its "
    "pre-terminal's mean (n: the word's count with that pre-terminal; 0: fixed weight).",
)
@click.option(
    "--inside-features",
    default=None,
    help=f"Spectral, pivot: inside feature templates, comma-separated [default: "
    f"{','.join(INSIDE)} (spectral), {','.join(PIVOT_INSIDE)} (pivot)].",
)
@click.option(
    "--outside-features",
    default=None,
    help=f"Spectral, pivot: outside feature templates [default: {','.join(OUTSIDE)}].",
)
@click.option(
    "--min-count",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Pivot: features seen fewer times cannot be pivots (too noisy to be vertices).",
)
@click.option(
    "--feature-scaling/--no-feature-scaling",
    default=True,
    show_default=True,
    help="Spectral: weigh each active feature by sqrt(M / (count + 5)).",
)
@skip_bad_option
@progress_option
@click.pass_context
def command(
    ctx: click.Context,
    treebank: tuple[str, ...],
    output: str,
    method: str,
    states: str,
    iterations: int,
    dev: str | None,
    init: str | None,
    seed: int,
    jobs: int,
    horizontal: int,
    vertical: int,
    factor: str,
    rare: int,
    tol: float,
    dev_f1_every: int,
    smoothing: float,
    noise: float,
    min_singular: float,
    state_count: float,
    caps: tuple[str, ...],
    moment_smoothing: float,
    lexical_weight: float,
    lexical_count: float,
    inside_features: str | None,
    outside_features: str | None,
    min_count: int,
    feature_scaling: bool,
    skip_bad: bool,
) -> None:
    """Learn a model from PTB TREEBANK files (normalised and binarized as `binarize` does).

    Every option and file is checked before any work (-o writable, --dev and --init
    readable and well-formed), so a typo cannot cost a long run. An option the chosen
    --method cannot use is refused (e.g. --states or --dev with pcfg, --init with spectral,
    --cap with em); set in a --config file, or when it could not change the model (--jobs
    without --dev, --seed with pcfg), it is ignored with a warning.

    \b
    Examples:
      lpcfg train --method pcfg data/train.mrg -o pcfg.npz
      lpcfg train --method em --states 16 --iterations 40 --dev data/dev.mrg \\
          data/train.mrg -o em16.npz
      lpcfg train --method spectral --states 8,16,24,32 --dev data/dev.mrg \\
          data/train.mrg -o spectral.npz
      lpcfg train --method pivot+em --states 16 --iterations 3 --dev data/dev.mrg \\
          data/train.mrg -o pivot_em16.npz
    """
    _check_unused(ctx, method, dev, init, lexical_count)
    grid = _parse_states(states, method, dev)
    m = grid[0]
    if dev_f1_every is None:
        dev_f1_every = 1 if method == "pivot+em" else 5
    spectral_options = pivot_options = None
    if method in ("pivot", "pivot+em"):
        pivot_options = PivotOptions(
            inside=_templates(inside_features or ",".join(PIVOT_INSIDE)),
            outside=_templates(outside_features or ",".join(OUTSIDE)),
            min_count=min_count, count_per_state=state_count, seed=seed,
        )  # fmt: skip
    if method == "spectral":
        features = FeatureOptions(
            inside=_templates(inside_features or ",".join(INSIDE)),
            outside=_templates(outside_features or ",".join(OUTSIDE)),
            scale=feature_scaling,
        )  # fmt: skip
        spectral_options = SpectralOptions(
            min_singular=min_singular, count_per_state=state_count,
            smoothing=moment_smoothing, lexical_weight=lexical_weight,
            lexical_count=lexical_count, features=features,
            seed=seed, caps=_parse_caps(caps),
        )  # fmt: skip
    options = BinarizeOptions(horizontal=horizontal, vertical=vertical, factor=factor)
    start = _check_files(treebank, output, dev, init, options)
    t0 = time.perf_counter()
    data = prepare(treebank, options, rare=rare, skip_bad=skip_bad, on_bad=_warn)
    s = data.summary
    report(f"{s['trees']} trees, {s['words']} words, {s['symbols']} symbols, "
           f"{s['binary_rules']} binary and {s['lexical_rules']} lexical rules")  # fmt: skip
    meta = {"training": s, "seed": seed}
    if method == "pcfg":
        model = train_pcfg(data.grammar, data.bank, meta)
    elif method == "spectral":
        model = _train_spectral(data, meta, grid, dev, spectral_options, jobs)
    elif method == "pivot":
        model = _train_pivot(data, meta, m, pivot_options, dev, jobs)
    else:
        if method == "pivot+em":
            start = _train_pivot(data, meta, m, pivot_options, dev, jobs)
        model = _train_em(data, meta, m, iterations, dev, start, seed, tol, dev_f1_every,
                          smoothing, noise, options, jobs)  # fmt: skip
        if method == "pivot+em":
            model.meta.update({"method": "pivot+em", "pivot": start.meta["pivot"],
                               "pivot_seconds": start.meta["pivot_seconds"],
                               "pivot_dev_f1": start.meta.get("dev_f1")})  # fmt: skip
    model.meta["train_seconds"] = round(time.perf_counter() - t0, 3)
    model.save(output)
    where = "<stdout>" if output == "-" else output
    report(f"wrote {where} ({method}, {time.perf_counter() - t0:.1f} s)")


def _check_files(
    treebank: tuple[str, ...], output: str, dev: str | None, init: str | None,
    options: BinarizeOptions,
) -> LPCFG | None:  # fmt: skip
    """Check the output and read the small inputs before any work, so that a typo cannot
    cost a long run; returns the --init model."""
    check_output(output)
    inputs = [p for p in (*treebank, dev, init) if p and p != "-"]
    if output != "-" and os.path.exists(output):
        for path in inputs:
            if os.path.exists(path) and os.path.samefile(path, output):
                raise LpcfgError(f"-o {output} is also an input of this run: it would be "
                                 "overwritten")  # fmt: skip
    for path in treebank:
        if path != "-" and not os.path.exists(path):
            raise LpcfgError("no such file", source=display_name(path))
    if dev:
        binarized_trees([dev], options)  # readable, well-formed, not empty
    if not init:
        return None
    start = LPCFG.load(init)
    if start.form != "probabilistic":
        raise LpcfgError("--init needs a probabilistic model (em, pivot, pivot+em, pcfg), "
                         f"not a {start.meta.get('method', start.form)} one", source=init)
    return start


def _check_unused(
    ctx: click.Context, method: str, dev: str | None, init: str | None, lexical_count: float
) -> None:
    """Options the chosen method cannot use: refused when given on the command line (the
    user meant something that would not happen), a warning when set in a config file or
    when they could not change the model (--jobs, --seed)."""
    em = method in ("em", "pivot+em")
    em_only = f"with --method {method} (EM only: em, pivot+em)"
    spectral_only = f"with --method {method} (spectral only)"
    features = f"with --method {method} (spectral and pivot only)"
    if method == "pcfg":
        unused(ctx, "states", "with --method pcfg (the treebank PCFG has one state per symbol)")
        unused(ctx, "dev", "with --method pcfg (it has no iterations or states to select)")
        unused(ctx, "seed", "with --method pcfg (it is deterministic)", refuse=False)
    if not em:
        for name in ("iterations", "tol", "smoothing", "noise", "dev_f1_every"):
            unused(ctx, name, em_only)
    if method != "em":
        why = "it starts from the pivot model" if method == "pivot+em" else "EM only"
        unused(ctx, "init", f"with --method {method} ({why})")
    if method == "pivot+em":
        unused(ctx, "noise", "with --method pivot+em (EM starts from the pivot model)")
    if method == "em" and init:
        unused(ctx, "states", "with --init (the --init model's states are kept)")
        unused(ctx, "noise", "with --init (it perturbs the split PCFG EM starts from "
                             "otherwise)")  # fmt: skip
        unused(ctx, "seed", "with --init (it only perturbs the split PCFG)", refuse=False)
    if em and not dev:
        unused(ctx, "dev_f1_every", "without --dev (it sets how often dev F1 is computed)")
    if not dev:
        unused(ctx, "jobs", "without --dev (worker processes parse the dev trees)",
               refuse=False)  # fmt: skip
    if method != "spectral":
        for name in ("min_singular", "caps", "moment_smoothing", "lexical_count",
                     "lexical_weight", "feature_scaling"):  # fmt: skip
            unused(ctx, name, spectral_only)
    elif lexical_count != 0:
        unused(ctx, "lexical_weight", "unless --lexical-count is 0 (it replaces the "
                                      "count-based weight)")  # fmt: skip
    if method not in ("spectral", "pivot", "pivot+em"):
        for name in ("state_count", "inside_features", "outside_features"):
            unused(ctx, name, features)
    if method not in ("pivot", "pivot+em"):
        unused(ctx, "min_count", f"with --method {method} (pivot only)")


def _train_em(data, meta, states, iterations, dev, start, seed, tol, dev_f1_every, smoothing,
              noise, options, jobs) -> LPCFG:  # noqa: ANN001  # fmt: skip
    """EM with a progress bar and one line per iteration on stderr."""
    dev_bank = scorer = None
    if dev:
        _, dev_bank, dropped = compile_dev(data.grammar, [dev], options)
        scorer = dev_scorer([dev], jobs=jobs)
        if dropped:
            report(f"{dropped} dev trees use rules unseen in training: left out of the dev "
                   "log-likelihood (still parsed for dev F1)")  # fmt: skip
    bar = progress_bar(total=iterations, desc="em", unit="it")

    def iteration(rec: dict) -> None:
        bar.update(1)
        parts = [f"iteration {rec['iteration']:3d}", f"train loglik {rec['train_loglik']:.1f}"]
        if rec.get("dev_loglik") is not None:
            parts.append(f"dev loglik {rec['dev_loglik']:.1f}")
        if rec.get("dev_f1") is not None:
            parts.append(f"dev F1 {rec['dev_f1']:.2f}")
        parts.append(f"{rec['seconds']:.1f} s")
        report(", ".join(parts))

    with bar:
        model = train_em(data.grammar, data.bank, states=states, iterations=iterations,
                         seed=seed, init=start, noise=noise, tol=tol, smoothing=smoothing,
                         dev_bank=dev_bank, dev_f1=scorer, dev_f1_every=dev_f1_every,
                         callback=iteration, meta=meta)  # fmt: skip
    sel = model.meta.get("selected_iteration")
    report(f"selected iteration {sel} of {len(model.meta['history'])}")
    return model


def _parse_states(states: str, method: str, dev: str | None) -> list[int]:
    """``--states``: one number, or for spectral with --dev a comma-separated grid."""
    try:
        grid = [int(x) for x in str(states).split(",")]
    except ValueError:
        raise LpcfgError(f"--states must be a whole number or a comma-separated list, not "
                         f"{states!r}") from None  # fmt: skip
    if min(grid) < 1:
        raise LpcfgError("--states must be at least 1")
    if len(grid) > 1 and method != "spectral":
        raise LpcfgError(f"--states takes a single number for --method {method}")
    if len(grid) > 1 and not dev:
        raise LpcfgError("a --states grid needs --dev to choose among its values")
    return grid


def _templates(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _parse_caps(caps: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for cap in caps:
        label, sep, value = cap.rpartition("=")
        try:
            number = int(value)
        except ValueError:
            number = 0
        if not sep or not label or number < 1:
            raise LpcfgError(f"--cap takes LABEL=M with M >= 1, not {cap!r}")
        out[label] = number
    return out


def _train_spectral(
    data, meta: dict, grid: list[int], dev: str | None, options: SpectralOptions, jobs: int
) -> LPCFG:  # noqa: ANN001
    """Spectral estimation; with --dev, every grid value is scored and the best kept."""
    if data.originals is None:
        raise LpcfgError("the spectral learner needs the original training trees")
    est = SpectralEstimator(data.grammar, data.bank, data.originals, options)
    unknown = sorted(set(options.caps) - set(data.grammar.symbols))
    if unknown:
        raise LpcfgError(f"--cap names a nonterminal not in the training trees: {unknown[0]!r}")
    with progress_bar(total=data.grammar.n_symbols, desc="svd", unit="nt") as bar:
        est.decompose(max(grid), progress=bar.update)
    sec = est.seconds
    report(f"features {sec['features']:.1f} s, SVD of {data.grammar.n_symbols} "
           f"cross-covariances {sec['svd']:.1f} s")  # fmt: skip
    scorer = dev_scorer([dev], jobs=jobs) if dev else None
    best, best_f1, history = None, -1.0, []
    for m in grid:
        t0 = time.perf_counter()
        model = est.model(m, meta)
        line = (f"states {m}: {int(model.states.sum())} in all, moments "
                f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
        rec = {"states": m, "total_states": int(model.states.sum())}
        if scorer is not None:
            t1 = time.perf_counter()
            rec["dev_f1"] = round(scorer(model), 2)
            line += f", dev F1 {rec['dev_f1']:.2f} ({time.perf_counter() - t1:.1f} s)"
        report(line)
        history.append(rec)
        if best is None or rec.get("dev_f1", 0.0) > best_f1:
            best, best_f1 = model, rec.get("dev_f1", 0.0)
    best.meta["dev_grid"] = history
    if len(grid) > 1:
        report(f"selected states {best.meta['states_requested']}")
    return best


def _train_pivot(
    data, meta: dict, m: int, options: PivotOptions, dev: str | None, jobs: int
) -> LPCFG:  # noqa: ANN001
    """The pivot learner with a progress bar; with --dev, the model's dev F1 is reported."""
    if data.originals is None:
        raise LpcfgError("the pivot learner needs the original training trees")
    t0 = time.perf_counter()
    est = PivotEstimator(data.grammar, data.bank, data.originals, options)
    with progress_bar(total=data.grammar.n_symbols, desc="pivot", unit="nt") as bar:
        model = est.model(m, meta, progress=bar.update)
    sec = model.meta["pivot_seconds"]
    distinct = list(model.meta["distinct_states"].values())
    line = (f"pivot: {sum(distinct)} distinct states, decomposition "
            f"{sec['decomposition']:.1f} s, rules {sec['rules']:.1f} s, total "
            f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
    if dev:
        t1 = time.perf_counter()
        model.meta["dev_f1"] = round(dev_scorer([dev], jobs=jobs)(model), 2)
        line += f", dev F1 {model.meta['dev_f1']:.2f} ({time.perf_counter() - t1:.1f} s)"
    report(line)
    return model
