"""`lpcfg bundle`: several models of the same training trees as one ensemble model file."""

from __future__ import annotations

import click

from lpcfg_cli.commands.options import model_output_option, report
from lpcfg_cli.config import config_option
from lpcfg_cli.fileio import check_output
from lpcfg_cli.model import LPCFG


@click.command(name="bundle")
@config_option
@click.argument(
    "models", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=False)
)
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
    check_output(output, models)
    loaded = [LPCFG.load(path) for path in models]
    ensemble = loaded[0].bundle(*loaded[1:])
    ensemble.save(output)
    where = "<stdout>" if output == "-" else output
    report(f"wrote {where} ({1 + len(ensemble.members)} models)")
