"""`lpcfg sample`: draw trees from a model (sentences from a topology model), or build a
random L-PCFG."""

from __future__ import annotations

from collections.abc import Iterator

import click
import numpy as np

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import (
    OutputPath,
    encoding_option,
    input_path,
    output_option,
    report,
    seed_option,
    unused,
)
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.model_file import PARSING, TOPOLOGY, read_model_file
from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import iter_trees, random_lpcfg
from lpcfg_cli.topology_models import topology_file
from lpcfg_cli.topology_models.samples import draw_lengths, sample_by_length
from lpcfg_cli.treebank.binarize import debinarize
from lpcfg_cli.treebank.ptb import format_tree

# Sentences of a topology model drawn at once (a larger -n is drawn in pieces of this many,
# so memory stays flat); up to this many the draw is one piece, as it always was.
SENTENCES_AT_ONCE = 10_000


def _load(path: str) -> LPCFG | topology_file.TopologyModel:
    """A parsing model or a topology model, told apart by the file's kind; the file is
    read once (it may be stdin or a pipe)."""
    file = read_model_file(path, {PARSING, TOPOLOGY})
    if file.kind == TOPOLOGY:
        return topology_file.from_file(file)
    return LPCFG.from_file(file)


def _sentences(
    model: topology_file.TopologyModel, count: int, length: int | None, seed: int
) -> Iterator[str]:
    """``count`` sentences of ``model`` (``length`` words each, or lengths drawn from the
    stored length distribution), tokens separated by spaces, drawn in pieces."""
    rng = np.random.default_rng(seed)
    vocab = np.asarray(model.vocab, dtype=object)
    for first in range(0, count, SENTENCES_AT_ONCE):
        size = min(SENTENCES_AT_ONCE, count - first)
        if length is None:
            lengths = draw_lengths(model.length_counts, size, rng)
        else:
            lengths = np.full(size, length)
        values, counts = np.unique(lengths, return_counts=True)
        per_length = {int(n): int(c) for n, c in zip(values, counts, strict=True)}
        data = sample_by_length(model.params, per_length, rng)
        lines = np.empty(size, dtype=object)
        for n, words in data.items():
            lines[lengths == n] = [" ".join(row) for row in vocab[words]]
        yield from lines


def _write(lines: Iterator[str], output: str, encoding: str) -> None:
    """One line per item, written as drawn (flushed to stdout as they come)."""
    with atomic_output(output, encoding=encoding) as fh:
        for line in lines:
            fh.write(line + "\n")
            if output == "-":
                fh.flush()


@click.command(name="sample")
@config_option
@click.argument("model", required=False, type=input_path(allow_dash=True))
@click.option(
    "-n",
    "count",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Number of trees (sentences, for a topology model) to draw.",
)
@seed_option
@click.option(
    "--latent",
    is_flag=True,
    help="Label every node with its latent state (A-h); implies --binarized.",
)
@click.option(
    "--binarized",
    is_flag=True,
    help="Write the trees in the model's binarized label space (A+B, @A).",
)
@click.option(
    "--length",
    type=click.IntRange(min=1),
    help="Topology model: every sentence has this many words [default: lengths drawn from "
    "the model's training length distribution].",
)
@output_option("trees")
@click.option(
    "--random-grammar",
    "random_grammar",
    type=OutputPath(dir_okay=False),
    help="Instead of sampling, write a random L-PCFG to this model file.",
)
@click.option(
    "--inter",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Random grammar: in-terminal symbols.",
)
@click.option(
    "--pre",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Random grammar: pre-terminal symbols.",
)
@click.option(
    "--words",
    "n_words",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Random grammar: vocabulary size.",
)
@click.option(
    "--states",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Random grammar: latent states per symbol.",
)
@encoding_option
@click.pass_context
def command(
    ctx: click.Context,
    model: str | None,
    count: int,
    seed: int,
    latent: bool,
    binarized: bool,
    length: int | None,
    output: str,
    random_grammar: str | None,
    inter: int,
    pre: int,
    n_words: int,
    states: int,
    encoding: str,
) -> None:
    """Draw N trees from MODEL (a probabilistic-form model; - reads it from stdin), one
    per line. From a topology model (`lpcfg unmix`) draw N sentences instead, tokens
    separated by spaces: of --length words, or of lengths drawn as in its training data.

    Trees (sentences) are written as they are drawn, so memory stays flat for any N; a
    file given with -o appears only when complete.

    With --random-grammar FILE, write a random L-PCFG of the chosen sizes instead (it can
    then be sampled to make synthetic treebanks). Options of the other mode are refused
    (MODEL, -n, --latent, --binarized, --length, -o with --random-grammar; --inter, --pre,
    --words, --states without it); set in a --config file they are ignored with a warning.

    \b
    Examples:
      lpcfg sample --random-grammar g.npz --states 3 --seed 1
      lpcfg sample g.npz -n 1000 --seed 2 > synthetic.mrg
      lpcfg sample learned.npz -n 5 --length 6   # a topology model (lpcfg unmix)
    """
    if random_grammar:
        if model is not None:
            raise click.UsageError(
                f"--random-grammar writes a new grammar to {random_grammar}: it does not use "
                f"MODEL {model} (sample from it in a second run)",
                ctx,
            )
        for name in ("count", "latent", "binarized", "length", "output"):
            unused(ctx, name, "with --random-grammar (it writes a grammar, not trees)")
        unused(ctx, "encoding", "with --random-grammar (it writes a model file)", refuse=False)
        random_lpcfg(n_inter=inter, n_pre=pre, n_words=n_words, states=states, seed=seed).save(
            random_grammar
        )
        report(f"wrote random L-PCFG to {random_grammar}")
        return
    if model is None:
        raise LpcfgError("give a MODEL to sample from, or --random-grammar FILE")
    for name in ("inter", "pre", "n_words", "states"):
        unused(ctx, name, "without --random-grammar (it sizes the random grammar)")
    loaded = _load(model)
    if isinstance(loaded, topology_file.TopologyModel):
        for name in ("latent", "binarized"):
            unused(ctx, name, "with a topology model (it draws sentences, not trees)")
        _write(_sentences(loaded, count, length, seed), output, encoding)
        return
    unused(ctx, "length", "with a parsing model (its trees' lengths come from the grammar)")
    trees = iter_trees(loaded, count, seed=seed, latent=latent)
    _write(
        (format_tree(t if latent or binarized else debinarize(t)) for t in trees), output, encoding
    )
