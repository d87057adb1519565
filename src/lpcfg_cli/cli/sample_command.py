"""`lpcfg sample`: draw trees from a model (sentences from a topology model), or build a
random L-PCFG.

The options come from the library's dataclasses (``model.sampling.SampleOptions`` and
``RandomGrammarOptions``), with its defaults; the drawing is the library's
(``model.sampling.iter_trees``, ``topology_models.samples.draw_sentences``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import click

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import hyper_options, unused
from lpcfg_cli.cli.paths import OutputPath, encoding_option, input_path, output_option
from lpcfg_cli.cli.stderr import report
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.model_file import PARSING, TOPOLOGY, read_model_file
from lpcfg_cli.files.streams import atomic_output
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import RandomGrammarOptions, SampleOptions, iter_trees, random_lpcfg
from lpcfg_cli.topology_models import topology_file
from lpcfg_cli.topology_models.samples import draw_sentences
from lpcfg_cli.treebank.binarize import debinarize
from lpcfg_cli.treebank.ptb import format_tree

OWNERS = [("sample", SampleOptions, {}), ("random grammar", RandomGrammarOptions, {})]


def _options(cls: type, values: dict[str, Any]) -> Any:
    """An options object of ``cls`` from the command's values of its fields."""
    return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})


def _load(path: str) -> LPCFG | topology_file.TopologyModel:
    """A parsing model or a topology model, told apart by the file's kind; the file is
    read once (it may be stdin or a pipe)."""
    file = read_model_file(path, {PARSING, TOPOLOGY})
    if file.kind == TOPOLOGY:
        return topology_file.from_file(file)
    return LPCFG.from_file(file)


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
@hyper_options(OWNERS)
@output_option("trees")
@click.option(
    "--random-grammar",
    "random_grammar",
    type=OutputPath(dir_okay=False),
    help="Instead of sampling, write a random L-PCFG to this model file.",
)
@encoding_option
@click.pass_context
def command(
    ctx: click.Context,
    model: str | None,
    output: str,
    random_grammar: str | None,
    encoding: str,
    **values: Any,
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
        random_lpcfg(_options(RandomGrammarOptions, values)).save(random_grammar)
        report(f"wrote random L-PCFG to {random_grammar}")
        return
    if model is None:
        raise LpcfgError("give a MODEL to sample from, or --random-grammar FILE")
    for name in ("inter", "pre", "words", "states"):
        unused(ctx, name, "without --random-grammar (it sizes the random grammar)")
    options: SampleOptions = _options(SampleOptions, values)
    loaded = _load(model)
    if isinstance(loaded, topology_file.TopologyModel):
        for name in ("latent", "binarized"):
            unused(ctx, name, "with a topology model (it draws sentences, not trees)")
        sentences = draw_sentences(loaded, options.count, options.length, options.seed)
        _write((" ".join(tokens) for tokens in sentences), output, encoding)
        return
    unused(ctx, "length", "with a parsing model (its trees' lengths come from the grammar)")
    latent, binarized = options.latent, options.binarized
    trees = iter_trees(loaded, options.count, seed=options.seed, latent=latent)
    _write(
        (format_tree(t if latent or binarized else debinarize(t)) for t in trees), output, encoding
    )
