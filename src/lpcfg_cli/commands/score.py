"""`lpcfg score`: one sentence per line in, the log of its probability per line out."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator

import click

from lpcfg_cli.commands.options import output_option, progress_bar, progress_option, report
from lpcfg_cli.config import config_option
from lpcfg_cli.engine.strings import StringScorer
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.fileio import atomic_output, check_output, display_name, iter_lines
from lpcfg_cli.model import LPCFG

# A block of sentences is scored at once: at most this many spans (as the parser's batches),
# or this many sentences, so memory stays flat on any input.
BLOCK_SPANS = 20_000
BLOCK_SENTENCES = 1_000


def blocks(sentences: Iterable[list[str]]) -> Iterator[list[list[str]]]:
    """Consecutive sentences grouped into blocks (a long sentence is a block of its own)."""
    block: list[list[str]] = []
    spans = 0
    for words in sentences:
        cost = len(words) * (len(words) + 1) // 2
        if block and (spans + cost > BLOCK_SPANS or len(block) == BLOCK_SENTENCES):
            yield block
            block, spans = [], 0
        block.append(words)
        spans += cost
    if block:
        yield block


def format_value(log_p: float, sign: float, words: int, *, prob: bool, as_json: bool) -> str:
    """One output line (see the command's help)."""
    if as_json:
        logprob = log_p if sign != 0 else None
        return json.dumps({"logprob": logprob, "prob_sign": int(sign), "words": words})
    if prob:
        return "%.17g" % (sign * math.exp(log_p) if sign != 0 else 0.0)
    if sign < 0:
        return "nan"
    return "%.17g" % (log_p if sign > 0 else -math.inf)


@click.command(name="score")
@config_option
@click.argument("model", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("input", default="-", type=click.Path(dir_okay=False, allow_dash=True))
@output_option("values")
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
@progress_option
def command(model: str, input: str, output: str, prob: bool, as_json: bool) -> None:
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
    check_output(output)
    lpcfg = LPCFG.load(model)
    if lpcfg.members:
        raise LpcfgError(
            "an ensemble model (lpcfg bundle) gives no probability of a sentence: "
            "score one of the models it bundles",
            source=display_name(model),
        )
    scorer = StringScorer(lpcfg)
    sentences = (line.split() for line in iter_lines(input))
    t0 = time.perf_counter()
    n = words = bad = 0
    total = 0.0
    bar = progress_bar(desc="score", unit="sent")
    with bar, atomic_output(output) as fh:
        for block in blocks(sentences):
            log_p, sign = scorer(block)
            for words_s, lp, sg in zip(block, log_p, sign, strict=True):
                fh.write(format_value(lp, sg, len(words_s), prob=prob, as_json=as_json) + "\n")
            if output == "-":
                fh.flush()  # a pipeline downstream sees each block as soon as it exists
            good = sign > 0
            n += len(block)
            bad += int((~good).sum())
            total += float(log_p[good].sum())
            words += sum(len(s) for s, ok in zip(block, good, strict=True) if ok)
            bar.update(len(block))
    seconds = time.perf_counter() - t0
    perplexity = math.exp(-total / words) if words else math.nan
    report(
        f"scored {n} sentences from {display_name(input)} in {seconds:.1f} s: "
        f"log-probability {total:.6g}, perplexity {perplexity:.6g} per word ({words} words)"
        + (f"; {bad} with a value <= 0, left out of both" if bad else "")
    )
