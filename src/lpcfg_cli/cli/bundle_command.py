"""`lpcfg bundle`: several models of the same training trees as one ensemble model file."""

from __future__ import annotations

import click
import numpy as np

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.paths import input_path, model_output_option
from lpcfg_cli.cli.stderr import report, warn
from lpcfg_cli.model.lpcfg import LPCFG


@click.command(name="bundle")
@config_option
@click.argument("models", nargs=-1, required=True, type=input_path(allow_dash=False))
@model_output_option("Ensemble model file")
def command(models: tuple[str, ...], output: str) -> None:
    """Bundle MODELS (trained on the same trees with the same binarization, e.g. EM or
    split-merge runs with different seeds, or different methods) into one model file.

    `lpcfg parse` parses with all of them at once: the coarse pass is shared and each
    model's posteriors are combined per chart item (`parse --combine mean|product`), a
    product of grammars (Petrov 2010).

    \b
    Example:
      lpcfg bundle sm0.npz sm1.npz sm2.npz -o sm_x3.npz
      lpcfg parse sm_x3.npz data/test.txt -o test.parsed
    """
    loaded = [LPCFG.load(path) for path in models]
    ensemble = loaded[0].bundle(*loaded[1:])
    _warn_repeats(models, loaded)
    ensemble.save(output)
    where = "<stdout>" if output == "-" else output
    report(f"wrote {where} ({1 + len(ensemble.members)} models)")


def _same(a: LPCFG, b: LPCFG) -> bool:
    """Whether two loaded models (of one grammar: ``bundle`` checked) have the same
    parameters, members included."""
    if len(a.members) != len(b.members):
        return False
    return all(
        np.array_equal(x.states, y.states)
        and np.array_equal(x.binary, y.binary)
        and np.array_equal(x.lexical, y.lexical)
        and np.array_equal(x.root, y.root)
        for x, y in zip((a, *a.members), (b, *b.members), strict=True)
    )


def _warn_repeats(paths: tuple[str, ...], models: list[LPCFG]) -> None:
    """A model given twice (the same file, or another file with the same parameters) adds
    nothing to a product or a mean of grammars but parsing time: say so."""
    for j in range(1, len(models)):
        for i in range(j):
            if _same(models[i], models[j]):
                warn(
                    f"{paths[j]} holds the same model as {paths[i]}: bundling it twice "
                    "changes no parse, it only costs parsing time"
                )
                break
