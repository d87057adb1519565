"""`lpcfg score`: one sentence per line in, the log of its probability per line out."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator

import click
import numpy as np

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.paths import encoding_option, input_path, output_option
from lpcfg_cli.cli.stderr import progress_bar, progress_option, report
from lpcfg_cli.engine.string_charts import StringScorer
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import atomic_output, display_name
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.parser import OUT_OF_MEMORY, chart_length_limit
from lpcfg_cli.treebank.sentences import SPAN_BUDGET, read_sentences
from lpcfg_cli.treebank.sentences import blocks as sentence_blocks

# A block of sentences is scored at once: at most this many spans (as the parser's batches),
# or this many sentences, so memory stays flat on any input.
BLOCK_SPANS = SPAN_BUDGET
BLOCK_SENTENCES = 1_000
NAMED_LINES = 10  # line numbers named in the summary per reason a sentence was not scored


def blocks(sentences: Iterable[list[str]]) -> Iterator[list[list[str]]]:
    """Consecutive sentences grouped into blocks (a long sentence is a block of its own)."""
    return sentence_blocks(sentences, size=BLOCK_SENTENCES, span_budget=BLOCK_SPANS)


def score_block(
    scorer: StringScorer, block: list[list[str]], max_length: int
) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """(log |p|, sign p, why not scored) of each sentence of ``block``: a sentence longer
    than ``max_length``, or whose chart does not fit in memory even alone, is not scored
    (log nan, sign 0) and says why."""
    n = len(block)
    log_p, sign = np.full(n, np.nan), np.zeros(n)
    why: list[str | None] = [None] * n
    todo = []
    for i, words in enumerate(block):
        if len(words) > max_length:
            why[i] = f"longer than {max_length} words"
        else:
            todo.append(i)
    try:
        if todo:
            lp, sg = scorer([block[i] for i in todo])
            log_p[todo], sign[todo] = lp, sg
        return log_p, sign, why
    except MemoryError:
        if len(todo) == 1:
            why[todo[0]] = OUT_OF_MEMORY
            return log_p, sign, why
    for i in todo:  # each alone: the ones whose chart fits are scored
        log_p[i : i + 1], sign[i : i + 1], why[i : i + 1] = score_block(
            scorer, [block[i]], max_length
        )
    return log_p, sign, why


def format_value(
    log_p: float,
    sign: float,
    words: int,
    *,
    prob: bool,
    as_json: bool,
    skipped: str | None = None,
) -> str:
    """One output line (see the command's help)."""
    if skipped is not None:
        if as_json:
            return json.dumps(
                {"logprob": None, "prob_sign": None, "words": words, "skipped": skipped}
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
@config_option
@click.argument("model", type=input_path(allow_dash=True))
@click.argument("input", default="-", type=input_path(allow_dash=True))
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
    lpcfg = LPCFG.load(model)
    if lpcfg.members:
        raise LpcfgError(
            "an ensemble model (lpcfg bundle) gives no probability of a sentence: "
            "score one of the models it bundles",
            source=display_name(model),
        )
    scorer = StringScorer(lpcfg)
    # The latent chart holds every state of every symbol of each span.
    limit = max_length or chart_length_limit(int(lpcfg.states.sum()))
    t0 = time.perf_counter()
    n = words = bad = 0
    total = 0.0
    skipped: dict[str, list[int]] = {}
    bar = progress_bar(desc="score", unit="sent")
    with bar, atomic_output(output, encoding=encoding) as fh:
        # Tokens as the model's treebank writes them (penn-historical: lemmas, *pro*), read
        # with its conventions as parse reads them.
        rules = lpcfg.conventions
        sentences = (
            rules.words(s) if rules.reads_tokens else s for s in read_sentences(input, encoding)
        )
        for block in blocks(sentences):
            log_p, sign, why = score_block(scorer, block, limit)
            for i, (words_s, lp, sg) in enumerate(zip(block, log_p, sign, strict=True)):
                line = format_value(
                    lp, sg, len(words_s), prob=prob, as_json=as_json, skipped=why[i]
                )
                fh.write(line + "\n")
                if why[i] is not None:
                    skipped.setdefault(why[i], []).append(n + i + 1)
            if output == "-":
                fh.flush()  # a pipeline downstream sees each block as soon as it exists
            good = sign > 0
            n += len(block)
            bad += int((~good).sum()) - sum(w is not None for w in why)
            total += float(log_p[good].sum())
            words += sum(len(s) for s, ok in zip(block, good, strict=True) if ok)
            bar.update(len(block))
    seconds = time.perf_counter() - t0
    perplexity = math.exp(-total / words) if words else math.nan
    report(
        f"scored {n} sentences from {display_name(input)} in {seconds:.1f} s: "
        f"log-probability {total:.6g}, perplexity {perplexity:.6g} per word ({words} words)"
        + (f"; {bad} with a value <= 0, left out of both" if bad else "")
        + "".join(
            f"; {len(at)} not scored ({reason}): line{'s' if len(at) > 1 else ''} "
            + ", ".join(map(str, at[:NAMED_LINES]))
            + (f" and {len(at) - NAMED_LINES} more" if len(at) > NAMED_LINES else "")
            for reason, at in sorted(skipped.items())
        )
    )
