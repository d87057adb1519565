"""`lpcfg train`: learn a model from PTB treebank files (or, ``--input text``, sentences).

Thin by design: the options come from the learners' dataclasses (``learners.registry``),
the learner does the work and the selection (``fit``), and this module checks the files,
refuses options that cannot have an effect, and reports on stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import click

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import (
    conventions_from,
    conventions_given,
    conventions_options,
    conventions_unused,
    flag_of,
    given,
    hyper_options,
    input_option,
    jobs_option,
    method_option,
    render,
    skip_bad_option,
    unused,
    usable_jobs,
)
from lpcfg_cli.cli.paths import (
    CONFIG,
    OutputPath,
    encoding_option,
    input_path,
    model_output_option,
)
from lpcfg_cli.cli.stderr import progress_bar, progress_option, report, warn
from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.files.streams import display_name
from lpcfg_cli.grammar.heldout import DevText, DevTrees
from lpcfg_cli.grammar.training_data import DataOptions, TrainingData, prepare, prepare_text
from lpcfg_cli.hyperparams import hyper_fields
from lpcfg_cli.learners.chain import Chain
from lpcfg_cli.learners.ensemble import Ensemble, EnsembleOptions
from lpcfg_cli.learners.registry import METHODS, binarization, product
from lpcfg_cli.learners.registry import learner as build
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import Learner, Progress
from lpcfg_cli.parsing.dev_f1 import read_dev_trees
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.conventions import Conventions

OWNERS = [(m.name, cls, m.defaults) for m in METHODS.values() for cls in m.option_classes()]
# --horizontal, --vertical, --factor with each method's defaults (--factor: its help lists them).
BINARIZE_OWNERS = [(m.name, BinarizeOptions, m.binarize) for m in METHODS.values()]
HYPER = list(dict.fromkeys(f.name for _, cls, _ in OWNERS for f, _ in hyper_fields(cls)))
# Options that mean nothing for sentences without trees: name -> why.
TEXT_UNUSED = {
    "horizontal": "sentences are not binarized",
    "vertical": "sentences are not binarized",
    "factor": "sentences are not binarized",
    "skip_bad": "it skips malformed trees",
    "noise": "EM from text starts from random parameters",
    "dev_f1_every": "there are no trees to score F1 on",
}


def _warn(err: LpcfgError) -> None:
    warn(f"{err} (skipped)")


@click.command(name="train")
@config_option
@click.argument(
    "treebank", nargs=-1, required=True, type=input_path(allow_dash=True, dir_okay=True)
)
@model_output_option("Model file")
@method_option(
    METHODS,
    "pcfg",
    "Learning algorithm.",
)
@input_option(
    ["trees", "text"],
    "`text`: learn from sentences without trees, one per line, tokens separated by "
    "spaces (--method em: inside-outside over every tree of each sentence).",
)
@click.option(
    "--dev",
    "dev",
    type=input_path(allow_dash=False),
    help="Dev trees for model selection and per-iteration F1 (with --input text: dev "
    "sentences, selection by their log-likelihood).",
)
@click.option(
    "--init",
    "init",
    type=input_path(),
    help="Start EM from an existing probabilistic model (the trees are binarized as its "
    "were, unless --horizontal, --vertical or --factor say otherwise).",
)
@jobs_option("Worker processes for parsing the --dev trees.")
@click.option(
    "--log",
    type=OutputPath(dir_okay=False, allow_dash=False),
    help="Write one JSON object per EM iteration or split-merge cycle to FILE as training "
    "goes (method, iteration or cycle, train and dev log-likelihood, dev F1 when scored, "
    "seconds): the learning curve, for plotting.",
)
@hyper_options(BINARIZE_OWNERS)
@hyper_options([("train", DataOptions, {})])
@hyper_options(OWNERS)
@hyper_options([("train", EnsembleOptions, {})])
@click.option(
    "--member",
    "members",
    multiple=True,
    type=input_path(allow_dash=False),
    metavar="CONFIG",
    help="Also train the model that config file CONFIG's [train] table describes (its "
    "--method and options, e.g. configs/em16.toml) on the same trees, with this run's --dev "
    "and --seed, and bundle it with this run's model(s) into one product of grammars. "
    "Repeatable. Its binarization and --rare must be this run's; it reads the trees with "
    "this run's --conventions, --encoding and --skip-bad (a config that sets its own must "
    "agree).",
)
@conventions_options
@skip_bad_option
@encoding_option
@progress_option
@click.pass_context
def command(
    ctx: click.Context,
    treebank: tuple[str, ...],
    output: str,
    method: str,
    input_kind: str,
    dev: str | None,
    init: str | None,
    jobs: int,
    log: str | None,
    horizontal: int,
    vertical: int,
    factor: str | None,
    rare: int,
    skip_bad: bool,
    ensemble: int,
    members: tuple[str, ...],
    encoding: str,
    **hyper: Any,
) -> None:
    """Learn a model from PTB TREEBANK files or folders of them (normalised as the
    treebank's --conventions say and binarized as `binarize` does; the model records the
    conventions, and `parse` reads sentences with them).

    With --input text the files hold sentences without trees (one per line, tokens
    separated by spaces; empty lines are skipped) and --method em learns the single-symbol
    grammar X -> X X | word with --states latent states (a PCFG in Chomsky normal form) by
    inside-outside over every tree of each sentence, from seeded random parameters; each
    distinct sentence is run once, counted as often as it was seen. --dev then takes dev
    sentences and keeps the iteration of best dev log-likelihood.

    Every option and file is checked before any work (-o writable, --dev and --init
    readable and well-formed), so a typo cannot cost a long run. An option the chosen
    --method cannot use is refused (e.g. --states or --dev with pcfg, --init with spectral,
    --cap with em, --vertical with --input text); set in a --config file, or when it could
    not change the model (--jobs without --dev, --seed with pcfg), it is ignored with a
    warning.

    \b
    Examples:
      lpcfg train --method pcfg data/train.mrg -o pcfg.npz
      lpcfg train --method em --states 16 --iterations 40 --dev data/dev.mrg \\
          data/train.mrg -o em16.npz
      lpcfg train --method spectral --states 8,16,24,32 --dev data/dev.mrg \\
          data/train.mrg -o spectral.npz
      lpcfg train --method pivot+em --states 16 --iterations 3 --dev data/dev.mrg \\
          data/train.mrg -o pivot_em16.npz
      lpcfg train --method em --input text --states 8 --dev dev.txt train.txt -o em8.npz
      lpcfg train --conventions penn-historical icepahc/psd -o icepahc.npz
    """
    conventions = conventions_from(hyper)
    text = input_kind == "text"
    spec = METHODS[method]
    learner = build(method, ensemble, **{k: v for k, v in hyper.items() if spec.uses(k)})
    if text:
        _check_text(ctx, method, learner)
        conventions_unused(ctx, "with --input text (sentences have no trees to normalise)")
        if given(ctx, "rare") is None:
            rare = 0  # from text, every word is kept unless asked
    _check_unused(ctx, method, learner, dev, init, text)
    start = _check_files(treebank, init)
    options = _binarization(ctx, method, start, horizontal, vertical, factor)
    if members:
        if text:
            raise click.UsageError("--member learns from trees only: drop it with --input text")
        if init:
            raise click.UsageError("--member trains every member from the trees: drop --init")
        learner = product(
            learner, *(_member(ctx, path, dev, options, rare, conventions) for path in members)
        )
    learner.check(dev is not None)
    if text and start is not None and start.grammar.n_symbols != 1:
        raise LpcfgError(
            "--init with --input text needs a model trained from text (one symbol)", source=init
        )
    dev_set: DevTrees | DevText | None = None
    if dev:
        dev_set = (
            DevText.read([dev], encoding=encoding)
            if text
            else read_dev_trees(
                [dev], jobs=usable_jobs(jobs), encoding=encoding, conventions=conventions
            )
        )
    t0 = time.perf_counter()
    if text:
        data = prepare_text(treebank, rare=rare, encoding=encoding)
    else:
        data = prepare(
            treebank,
            options,
            rare=rare,
            skip_bad=skip_bad,
            on_bad=_warn,
            encoding=encoding,
            conventions=conventions,
        )
    report(_summary(data))
    with _log(log) as record:
        progress = Progress(report=report, bar=progress_bar, record=record)
        model = learner.fit(data, dev_set, start, progress)
    model.meta["train_seconds"] = round(time.perf_counter() - t0, 3)
    model.save(output)
    where = "<stdout>" if output == "-" else output
    report(f"wrote {where} ({method}, {time.perf_counter() - t0:.1f} s)")


def _member(
    ctx: click.Context,
    path: str,
    dev: str | None,
    options: BinarizeOptions,
    rare: int,
    conventions: Conventions,
) -> Learner:
    """The learner config file ``path`` describes for ``--member`` (its ``[train]`` table's
    method and options, read as ``--config`` reads them, with this run's --seed), after
    checking that it would train on this run's trees (``options``, ``rare``, and the
    conventions, encoding and ``--skip-bad`` where its config sets them: otherwise it reads
    the trees as this run does)."""
    args = ["--config", path, *ctx.params["treebank"], "-o", ctx.params["output"]]
    config = ctx.meta.get(CONFIG)  # shared with the member's context, which sets its own
    try:
        sub = ctx.command.make_context(ctx.info_name, args, parent=ctx.parent)
    except click.ClickException as exc:
        raise LpcfgError(f"--member: {exc.format_message()}", source=path) from None
    values = dict(sub.params)
    try:
        if values["members"]:
            raise LpcfgError("--member: a member cannot name members of its own", source=path)
        if values["input_kind"] != "trees":
            raise LpcfgError("--member: members learn from trees, not --input text", source=path)
        method = values["method"]
        theirs_conventions = conventions_from(values)
        spec = METHODS[method]
        chosen = {k: values[k] for k in HYPER if k in values and spec.uses(k)}
        if spec.uses("seed"):
            chosen["seed"] = ctx.params.get("seed")
        try:
            learner = build(method, values["ensemble"], **chosen)
        except ParameterError as exc:
            exc.source = path
            raise
        _check_unused(sub, method, learner, dev, None)
        binarized = _binarization(
            sub, method, None, values["horizontal"], values["vertical"], values["factor"]
        )
        mine = {**options.to_dict(), "rare": rare}
        theirs = {**binarized.to_dict(), "rare": values["rare"]}
        differ = [
            f"{flag_of(k)} {theirs[k]} (this run: {v})" for k, v in mine.items() if theirs[k] != v
        ]
        # How the treebank reads is the data's, not the method's: a member whose config is
        # silent on it reads the trees as this run does; one that sets it must agree.
        if conventions_given(sub) and theirs_conventions != conventions:
            differ.append("other treebank conventions (--conventions and its options)")
        for name in ("encoding", "skip_bad"):
            if given(sub, name) is not None and values[name] != ctx.params[name]:
                run = ctx.params[name]
                run = ("on" if run else "off") if isinstance(run, bool) else run
                differ.append(f"{_render_flag(name, values[name])} (this run: {run})")
        if differ:
            raise LpcfgError(
                f"--member: the members of a product are trained on the same trees, but it "
                f"has {', '.join(differ)}",
                source=path,
            )
    finally:
        ctx.meta[CONFIG] = config
    return learner


@contextlib.contextmanager
def _log(path: str | None) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Where each step's record goes: one JSON line each in ``path``, written and flushed as
    training goes (a log, not an output: an interrupted run keeps the lines so far)."""
    if path is None:
        yield lambda _record: None
        return
    try:
        fh = open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise LpcfgError(exc.strerror or str(exc), source=path) from None
    with fh:

        def record(step: dict[str, Any]) -> None:
            fh.write(json.dumps(step) + "\n")
            fh.flush()

        yield record


def _binarization(
    ctx: click.Context,
    method: str,
    start: LPCFG | None,
    horizontal: int,
    vertical: int,
    factor: str | None,
) -> BinarizeOptions:
    """The method's binarization (``registry.binarization``: its measured factoring), or
    with --init the start model's, so that EM continues on the grammar it was trained on;
    options the user gave override either."""
    values = {"horizontal": horizontal, "vertical": vertical, "factor": factor}
    chosen = {k: v for k, v in values.items() if given(ctx, k) is not None}
    if start is not None:
        return BinarizeOptions(**{**start.grammar.binarization, **chosen})
    return binarization(method, **chosen)


def _check_files(treebank: tuple[str, ...], init: str | None) -> LPCFG | None:
    """Check the inputs and read the small ones before any work (the outputs are checked
    before the command runs), so that a typo cannot cost a long run; returns the --init
    model."""
    for path in treebank:
        if path != "-" and not os.path.exists(path):
            raise LpcfgError("no such file", source=display_name(path))
    if not init:
        return None
    start = LPCFG.load(init)
    if start.form != "probabilistic":
        raise LpcfgError(
            "--init needs a probabilistic model (em, pivot, pivot+em, pcfg), "
            f"not a {start.meta.get('method', start.form)} one",
            source=init,
        )
    return start


def _summary(data: TrainingData) -> str:
    """The line reporting the training data."""
    s = data.summary
    if data.text is not None:
        k = s["empty_lines"]
        empty = f", {k} empty line{'s' if k > 1 else ''} skipped" if k else ""
        return (
            f"{s['sentences']} sentences ({s['distinct_sentences']} distinct), "
            f"{s['words']} words, vocabulary of {s['vocabulary']}{empty}"
        )
    k = s.get("dropped_trees", 0)
    dropped = f" ({k} more dropped: no words once empty elements are removed)" if k else ""
    return (
        f"{s['trees']} trees{dropped}, {s['words']} words, {s['symbols']} symbols, "
        f"{s['binary_rules']} binary and {s['lexical_rules']} lexical rules"
    )


def _check_text(ctx: click.Context, method: str, learner: Learner) -> None:
    """Refuse a learner and the options that cannot work on sentences without trees."""
    if isinstance(learner, Ensemble):
        raise click.UsageError("--ensemble learns from trees only: drop it with --input text", ctx)
    if not learner.takes_text:
        users = ", ".join(m for m in METHODS if METHODS[m].build().takes_text)
        raise click.UsageError(
            f"--method {method} learns from trees: --input text needs --method {users}", ctx
        )
    for name, why in TEXT_UNUSED.items():
        unused(ctx, name, f"with --input text ({why})")


def _render_flag(name: str, value: object) -> str:
    """``--encoding latin-1``, ``--skip-bad`` or ``no --skip-bad``: option ``name`` with
    ``value``, as an error message names it."""
    if isinstance(value, bool):
        return flag_of(name) if value else f"no {flag_of(name)}"
    return f"{flag_of(name)} {value}"


def _check_unused(
    ctx: click.Context,
    method: str,
    learner: Learner,
    dev: str | None,
    init: str | None,
    text: bool = False,
) -> None:
    """Options the chosen method cannot use: refused when given on the command line (the
    user meant something that would not happen), a warning when set in a config file or
    when they could not change the model (--jobs, --seed)."""
    if not learner.takes_dev:
        unused(ctx, "dev", f"with --method {method} (it has nothing to select)")
    if not learner.takes_start:
        why = (
            f"it starts from the {learner.learners[0].method} model"
            if isinstance(learner, Chain)
            else "EM only"
        )
        unused(ctx, "init", f"with --method {method} ({why})")
    inert = learner.inert(dev is not None, init is not None)
    for name in HYPER:
        if given(ctx, name) is None:
            continue
        if name in inert:
            why = render(inert[name], method=f"--method {method}")
            unused(ctx, name, why, refuse=name != "seed")
        elif not METHODS[method].uses(name):
            users = ", ".join(m.name for m in METHODS.values() if m.uses(name))
            unused(ctx, name, f"with --method {method} (used by {users})")
    if not METHODS[method].iterates:
        unused(ctx, "log", f"with --method {method} (it does not iterate)", refuse=False)
    if text:
        unused(ctx, "jobs", "with --input text (nothing is parsed)", refuse=False)
    elif not dev:
        unused(ctx, "jobs", "without --dev (worker processes parse the dev trees)", refuse=False)
