"""`lpcfg lm`: bigram and trigram language models of text (one sentence per line).

``lpcfg lm train`` fits a model by one of the methods of ``learners.registry.LM_METHODS`` (options
derived from their dataclasses, as for ``lpcfg train``) and writes a model file;
``lpcfg lm perplexity`` scores a text with one (``lm.perplexity.perplexity``), ``lpcfg lm
score`` each of its lines (``lm.perplexity.sentence_scores``).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import click

from lpcfg_cli.cli.configfile import config_option, model_command
from lpcfg_cli.cli.options import given, hyper_options, method_option, unused
from lpcfg_cli.cli.paths import encoding_option, input_path, model_output_option, output_option
from lpcfg_cli.cli.stderr import progress_bar, progress_option, quiet_param, report
from lpcfg_cli.engine.batching import blocks
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output, display_name
from lpcfg_cli.hyperparams import hyper_fields
from lpcfg_cli.learners.registry import LM_METHODS as METHODS
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.lm.corpus import Sentence, read_corpus
from lpcfg_cli.lm.lm_file import load_model, save_model
from lpcfg_cli.lm.perplexity import LanguageModel, sentence_scores
from lpcfg_cli.lm.perplexity import perplexity as text_perplexity
from lpcfg_cli.model.protocol import Progress
from lpcfg_cli.treebank.sentences import read_sentences

OWNERS = [(m.name, cls, m.defaults) for m in METHODS.values() for cls in m.option_classes()]
HYPER = list(dict.fromkeys(f.name for _, cls, _ in OWNERS for f, _ in hyper_fields(cls)))


@click.group(name="lm", invoke_without_command=True, no_args_is_help=False)
@click.pass_context
def command(ctx: click.Context) -> None:
    """Bigram and trigram language models of text, one sentence per line.

    The setting of Cohen & Collins (2014, section 8): Kneser-Ney baselines (kn2, kn3) and
    the aggregate bigram model p(w2|w1) = sum_h r(h|w1) s(w2|h). Words seen once in
    training are <unk>; every word and each sentence's end are predicted.

    \b
    Examples:
      lpcfg lm train --method kn3 data/brown/train.txt -o kn3.npz
      lpcfg lm perplexity kn3.npz data/brown/test.txt --json
      lpcfg lm score kn3.npz data/brown/test.txt > test.logprob
    """
    if ctx.invoked_subcommand is None:  # `lpcfg lm` alone: the help, as `lpcfg` alone
        click.echo(ctx.get_help(), color=ctx.color)


def _read(path: str, what: str, encoding: str) -> list[Sentence]:
    sentences = read_corpus(path, encoding)
    if not sentences:
        raise LpcfgError(
            f"no sentences in the {what} (one sentence per line)", source=display_name(path)
        )
    return sentences


@command.command(name="train", short_help="Fit a language model to a text.")
@config_option
@click.argument("text", type=input_path(allow_dash=True))
@model_output_option("Language model file")
@method_option(
    METHODS,
    "kn2",
    "kn2, kn3: interpolated Kneser-Ney bigram, trigram; em, pivot, pivot+em: the "
    "aggregate bigram model p(w2|w1) = sum_h r(h|w1) s(w2|h).",
)
@click.option(
    "--dev",
    type=input_path(allow_dash=False),
    help="Dev sentences (one per line) for methods that select on them.",
)
@hyper_options(OWNERS)
@encoding_option
@progress_option
@click.pass_context
def train(
    ctx: click.Context,
    text: str,
    output: str,
    method: str,
    dev: str | None,
    encoding: str,
    **hyper: Any,
) -> None:
    """Fit a language model to TEXT (one sentence per line, tokens separated by spaces;
    '-' for stdin) and write it to -o MODEL.

    Options the chosen --method does not use are refused (e.g. --states with kn2).

    \b
    Examples:
      lpcfg lm train --method kn2 data/brown/train.txt -o kn2.npz
      lpcfg lm train --method kn3 --no-modified data/brown/train.txt -o kn3u.npz
    """
    spec = METHODS[method]
    fitter = learner(
        method, family="lm", **{k: v for k, v in hyper.items() if spec.uses(k) and v is not None}
    )
    if not fitter.takes_dev:
        unused(ctx, "dev", f"with --method {method} (it has nothing to select)")
    for name in HYPER:
        if given(ctx, name) is not None and not spec.uses(name):
            users = ", ".join(m.name for m in METHODS.values() if m.uses(name))
            unused(ctx, name, f"with --method {method} (used by {users or 'no method yet'})")
    if given(ctx, "discount") is not None:
        unused(ctx, "modified", "with --discount (one fixed discount at every order)")
    t0 = time.perf_counter()
    sentences = _read(text, "training text", encoding)
    dev_sentences = _read(dev, "dev text", encoding) if dev else None
    report(f"{len(sentences)} sentences, {sum(map(len, sentences))} tokens")
    model = fitter.fit(sentences, dev_sentences, progress=Progress(report=report, bar=progress_bar))
    model.meta["train_seconds"] = round(time.perf_counter() - t0, 3)
    save_model(output, model)
    where = "<stdout>" if output == "-" else output
    report(f"wrote {where} ({method}, {len(model.vocab)} ids, {time.perf_counter() - t0:.1f} s)")


@command.command(name="perplexity", short_help="Perplexity of a language model on a text.")
@config_option
@click.argument("model", type=input_path(allow_dash=True))
@click.argument("text", type=input_path(allow_dash=True))
@output_option("result line")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='JSON output: {"perplexity": float, "tokens": int, "oov": int}.',
)
@click.option(
    "--skip-unknown",
    is_flag=True,
    help="Leave words outside the vocabulary out of the perplexity (SRILM's convention, and "
    "Cohen & Collins's for NYT) instead of scoring them as <unk>.",
)
@encoding_option
def perplexity(
    model: str, text: str, output: str, as_json: bool, skip_unknown: bool, encoding: str
) -> None:
    """Perplexity of language MODEL on TEXT (one sentence per line; '-' for stdin).

    Every word and the end of each sentence is predicted (tokens = words + sentences);
    words outside the model's vocabulary are scored as <unk> (or, with --skip-unknown, not
    predicted: tokens leaves them out) and counted as OOV. One line on stdout (or -o FILE);
    a probability of zero gives perplexity inf (null in JSON).

    \b
    Examples:
      lpcfg lm perplexity kn2.npz data/brown/test.txt
      lpcfg lm perplexity --json kn3.npz - < data/brown/dev.txt
    """
    if model == "-" and text == "-":
        raise click.UsageError("MODEL and TEXT cannot both be '-' (stdin)")
    lm = load_model(model)
    sentences = _read(text, "text", encoding)
    t0 = time.perf_counter()
    result = text_perplexity(lm, lm.vocab.events(sentences, lm.order, skip_unknown=skip_unknown))
    report(f"scored {len(sentences)} sentences in {time.perf_counter() - t0:.1f} s")
    if as_json:
        figures = result.to_dict()
        if not math.isfinite(figures["perplexity"]):
            figures["perplexity"] = None
        line = json.dumps(figures)
    else:
        line = (
            f"perplexity {result.perplexity:.2f} on {result.tokens} tokens "
            f"({result.oov} out of vocabulary, "
            f"{'left out' if skip_unknown else 'scored as <unk>'})"
        )
    with atomic_output(output, encoding=encoding) as fh:
        fh.write(line + "\n")


SCORE_BLOCK = 10_000  # lines scored at once: memory stays flat on any input


@command.command(name="score", short_help="Each line's log probability under a language model.")
@model_command("values")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object per line: {"logprob": float (null where p is 0), "tokens": int, '
    '"oov": int}.',
)
@encoding_option
def score_lines(model: str, input: str, output: str, as_json: bool, encoding: str) -> None:
    """Print the log probability of each sentence of INPUT (default stdin) under language
    MODEL.

    One sentence per line, tokens separated by spaces; one output line per input line, in
    order: the natural log of the probability of the sentence's words and its end, counted
    as `lm perplexity` counts them (words outside the vocabulary are scored as <unk>). An
    empty line is the empty sentence (the probability of its end right after its start); a
    probability of zero gives -inf (null in JSON). The sum of the values over a text, with
    its tokens (words + sentences), gives `lm perplexity`'s figure for the same lines
    (which skips blank ones).

    \b
    Examples:
      lpcfg lm score kn3.npz data/brown/test.txt > test.logprob
      lpcfg lm score --json pivot_em128.npz - < sentences.txt
    """
    if model == "-" and input == "-":
        raise click.UsageError("MODEL and INPUT cannot both be '-' (stdin)")
    lm = load_model(model)
    t0, lines = time.perf_counter(), 0
    with atomic_output(output, encoding=encoding) as fh:
        for block in blocks(read_sentences(input, encoding), size=SCORE_BLOCK):
            fh.write(_score_block(lm, block, as_json))
            lines += len(block)
    report(f"scored {lines} sentences in {time.perf_counter() - t0:.1f} s")


def _score_block(lm: LanguageModel, block: list[Sentence], as_json: bool) -> str:
    """The output lines of one block of sentences (see ``score_lines``)."""
    got = sentence_scores(lm, block)
    rows = zip(got.logprob.tolist(), got.tokens.tolist(), got.oov.tolist(), strict=True)
    out = []
    for logprob, tokens, oov in rows:
        finite = math.isfinite(logprob)
        if as_json:
            value = logprob if finite else None
            out.append(json.dumps({"logprob": value, "tokens": tokens, "oov": oov}))
        else:
            out.append(f"{logprob:.17g}" if finite else "-inf")
    return "".join(line + "\n" for line in out)


def _quiet() -> click.Option:
    """``-q/--quiet`` for a subcommand; one given to the group (``lpcfg lm -q train``, which
    ``cli`` adds) holds too, since the subcommand's unset flag does not reset it."""
    option = quiet_param()
    remember = option.callback
    assert remember is not None
    option.callback = lambda ctx, param, value: remember(ctx, param, value) if value else None
    return option


for _sub in (train, perplexity, score_lines):
    _sub.params.append(_quiet())
