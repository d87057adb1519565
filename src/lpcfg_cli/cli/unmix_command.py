"""`lpcfg unmix`: learn a PCFG-IE or DEP-IES model from sentences by unmixing their moments
(Hsu, Kakade & Liang 2012, section 5).

Thin by design, as `lpcfg train`: ``--model`` chooses the method of
``learners.registry.TOPOLOGY_METHODS``, whose options classes give the options
(``topology_models.unmix_learners``); the learner (``UnmixLearner``) does the work, and this module
reads the input, refuses options the method cannot use, reports and saves.
"""

from __future__ import annotations

import time
from typing import Any

import click

from lpcfg_cli.cli.configfile import config_option
from lpcfg_cli.cli.options import given, hyper_options, unused
from lpcfg_cli.cli.paths import encoding_option, input_path, model_output_option
from lpcfg_cli.cli.stderr import report
from lpcfg_cli.files.streams import display_name
from lpcfg_cli.hyperparams import hyper_fields
from lpcfg_cli.learners.registry import TOPOLOGY_METHODS as METHODS
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.model.protocol import TOPOLOGY, Progress
from lpcfg_cli.topology_models import topology_file
from lpcfg_cli.topology_models.unmix_learners import TopologyData, UnmixLearner
from lpcfg_cli.treebank.sentences import read_sentences

OWNERS = [(m.name, cls, m.defaults) for m in METHODS.values() for cls in m.option_classes()]
HYPER = list(dict.fromkeys(f.name for _, cls, _ in OWNERS for f, _ in hyper_fields(cls)))
# Why a method cannot use an option it does not have.
WHY = {"dep-ies": "its states are the words"}


def _per_length(counts: dict[int, int]) -> str:
    return ", ".join(f"{n}:{c}" for n, c in counts.items())


@click.command(name="unmix")
@config_option
@click.argument("sentences", required=False, type=input_path(allow_dash=True))
@click.option(
    "--model",
    "method",
    type=click.Choice(list(METHODS)),
    required=True,
    help="pcfg-ie: constituency model with B = T (x)_C T (section 5.2); dep-ies: dependency "
    "model with A = left = right and pi = A pi (section 5.3).",
)
@hyper_options(OWNERS)
@click.option(
    "--exact-moments",
    "exact",
    type=input_path(allow_dash=True),
    help="Instead of SENTENCES: unmix the exact moments (infinite data) of this topology "
    "model file.",
)
@model_output_option("Topology model file")
@encoding_option
@click.pass_context
def command(
    ctx: click.Context,
    sentences: str | None,
    method: str,
    exact: str | None,
    output: str,
    encoding: str,
    **hyper: Any,
) -> None:
    """Learn a --model pcfg-ie or dep-ies from SENTENCES (one per line, tokens separated by
    whitespace; '-' for stdin) by unmixing their moments, and write it to -o MODEL.

    The vocabulary is the distinct tokens (most frequent first); empty lines and lines
    longer than --length-max are skipped. pcfg-ie unmixes the eta-sliced triple moments of
    lengths 3..--length-max through the mixing matrix (Proposition 1) and decomposes the
    compound parameter Psi2 (section 5.2); dep-ies solves AA + A from the pair moments of
    lengths 2 and 3 (section 5.3). Estimates are projected onto the probability simplex.
    The model file keeps the vocabulary and the lengths seen, for `lpcfg sample`.

    \b
    Examples:
      lpcfg unmix --model pcfg-ie --states 3 sentences.txt -o learned.npz
      lpcfg unmix --model dep-ies --exact-moments truth.npz -o learned.npz
    """
    if (sentences is None) == (exact is None):
        raise click.UsageError(
            "give SENTENCES or --exact-moments MODEL (one of them, not both)"
            if sentences is None
            else f"give SENTENCES or --exact-moments MODEL, not both ({sentences} and {exact})",
            ctx,
        )
    spec = METHODS[method]
    for name in HYPER:
        if given(ctx, name) is not None and not spec.uses(name):
            users = ", ".join(m.name for m in METHODS.values() if m.uses(name))
            unused(ctx, name, f"with --model {method} ({WHY.get(method, f'used by {users}')})")
    unmixer = learner(method, family=TOPOLOGY, **{k: v for k, v in hyper.items() if spec.uses(k)})
    assert isinstance(unmixer, UnmixLearner)
    unmixer.check_data(exact=exact is not None)
    length_max = unmixer.options.length_max
    if exact is None:
        assert sentences is not None
        source = display_name(sentences)
        data = TopologyData.from_sentences(
            read_sentences(sentences, encoding), length_max, source=source
        )
        s = data.summary
        report(
            f"read {s['sentences']} sentences from {source} (skipped {s['empty']} empty, "
            f"{s['too_long']} longer than {length_max} words); per length: "
            f"{_per_length(s['per_length']) or 'none'}"
        )
    else:
        unused(ctx, "encoding", "with --exact-moments (no text is read)", refuse=False)
        source = display_name(exact)
        data = TopologyData.exact(topology_file.load(exact), method, length_max, source=source)
        report(f"exact moments of {source} ({method}, {data.summary['used']})")
    start = time.perf_counter()
    model = unmixer.fit(data, progress=Progress(report=report))
    seconds = time.perf_counter() - start  # not in meta: one seed, one file
    topology_file.save(output, model)
    report(f"unmixed in {seconds:.2f} s; wrote {method} model to {display_name(output)}")
