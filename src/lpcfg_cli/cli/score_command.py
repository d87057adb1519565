"""`lpcfg score`: one sentence per line in, the log of its probability per line out."""

from __future__ import annotations

import json
import math

import click

from lpcfg_cli.cli.configfile import model_command
from lpcfg_cli.cli.paths import encoding_option
from lpcfg_cli.cli.stderr import progress_bar, progress_option, report
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output, display_name
from lpcfg_cli.parsing.parser import Parser, SentenceScore
from lpcfg_cli.parsing.parser_options import ParserOptions
from lpcfg_cli.treebank.sentences import read_sentences

NAMED_LINES = 10  # line numbers named in the summary per reason a sentence was not scored


def format_value(score: SentenceScore, *, prob: bool, as_json: bool) -> str:
    """One output line (see the command's help)."""
    log_p, sign, words = score.log_prob, score.sign, score.words
    if score.skipped is not None:
        if as_json:
            return json.dumps(
                {"logprob": None, "prob_sign": None, "words": words, "skipped": score.skipped}
            )
        return "nan"
    if as_json:
        logprob = log_p if sign != 0 else None
        return json.dumps({"logprob": logprob, "prob_sign": int(sign), "words": words})
    if prob:
        return "%.17g" % (sign * math.exp(log_p) if sign != 0 else 0.0)
    if sign < 0:
        return "nan"
    return "%.17g" % (log_p if sign > 0 else -math.inf)


@click.command(name="score")
@model_command("values")
@click.option(
    "--prob",
    is_flag=True,
    help="Print the probability itself (%.17g; it underflows to 0 for long sentences) "
    "instead of its natural log.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object per line: {"logprob": log |p| (null where p is 0), '
    '"prob_sign": 1, -1 or 0, "words": n}.',
)
@click.option(
    "--max-length",
    type=click.IntRange(min=1),
    default=None,
    help="Longer sentences are not scored (nan; null in JSON, with the reason) "
    "[default: the longest whose chart fits in about 2 GB for the model: 165 words for an "
    "m = 16 PTB model, 660 for a PCFG].",
)
@encoding_option
@progress_option
def command(
    model: str,
    input: str,
    output: str,
    prob: bool,
    as_json: bool,
    max_length: int | None,
    encoding: str,
) -> None:
    """Print the probability of each sentence of INPUT (default stdin) under MODEL.

    One sentence per line, tokens separated by spaces; one output line per input line, in
    order: the natural log of the sentence's probability, summed over every tree and every
    latent assignment (inside-outside with no pruning; words the model never saw are scored
    as the parser scores them, through unknown-word signatures). A sentence with
    probability 0 gives -inf; so does an empty line (no tree yields the empty string). A
    spectral (tensor-form) model may give a negative value, whose log is printed as nan
    (--prob and --json keep its sign). Any model file lpcfg train writes works, except an
    ensemble (lpcfg bundle: a product of grammars is no distribution over sentences).

    The summary on stderr gives the total log-probability and the perplexity per word
    (words only, no end-of-sentence) over the sentences with a positive value, and how many
    had a value of zero or below (left out of both).

    A sentence longer than --max-length, or whose chart this machine cannot hold, is not
    scored: nan (in JSON, null with the reason), named by line in the summary.

    Input is read and values are written as they are computed, in blocks of sentences, so
    memory stays flat on any input; a file given with -o appears only when complete.

    \b
    Examples:
      lpcfg score em8.npz test.txt -o test.logprob
      lpcfg score --json em8.npz < test.txt | jq .logprob
    """
    if model == "-" and input == "-":
        raise LpcfgError("MODEL and INPUT cannot both be stdin ('-'): give INPUT as a file")
    if prob and as_json:
        raise click.UsageError("--prob has no effect with --json (which gives log |p| and sign)")
    parser = Parser(model, ParserOptions(max_length=max_length))
    skipped: dict[str, list[int]] = {}
    bar = progress_bar(desc="score", unit="sent")
    with bar, atomic_output(output, encoding=encoding) as fh:
        # Tokens as the model's treebank writes them (penn-historical: lemmas, *pro*), read
        # with its conventions as parse reads them.
        rules = parser.model.conventions
        sentences = (
            rules.words(s) if rules.reads_tokens else s for s in read_sentences(input, encoding)
        )
        for number, score in enumerate(parser.score(sentences, progress=bar.update), 1):
            fh.write(format_value(score, prob=prob, as_json=as_json) + "\n")
            if score.skipped is not None:
                skipped.setdefault(score.skipped, []).append(number)
            if output == "-":
                fh.flush()  # a pipeline downstream sees each value as soon as it exists
    totals = parser.score_stats
    bad = totals.nonpositive
    report(
        f"scored {totals.sentences} sentences from {display_name(input)} in "
        f"{totals.seconds:.1f} s: log-probability {totals.log_prob:.6g}, perplexity "
        f"{totals.perplexity:.6g} per word ({totals.words} words)"
        + (f"; {bad} with a value <= 0, left out of both" if bad else "")
        + "".join(
            f"; {len(at)} not scored ({reason}): line{'s' if len(at) > 1 else ''} "
            + ", ".join(map(str, at[:NAMED_LINES]))
            + (f" and {len(at) - NAMED_LINES} more" if len(at) > NAMED_LINES else "")
            for reason, at in sorted(skipped.items())
        )
    )
