"""What ``lpcfg lm train --method`` can fit: method name -> options class and fit function.

Each ``LMMethod`` has a frozen options dataclass whose ``hyperparams.hyper`` fields become
the command line's options (as for ``lpcfg train``), fixed option values the method sets
(``kn2``: ``order=2``), whether it uses ``--dev`` sentences, and
``fit(train, dev, options, progress) -> model``: ``train`` and ``dev`` are lists of
sentences (``dev`` None without ``--dev``), ``progress`` a ``learners.base.Progress`` and the
model a ``modelfile.SavedModel`` whose method has a class in ``modelfile.MODEL_CLASSES``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lpcfg_cli.hyperparams import check, hyper, hyper_fields
from lpcfg_cli.learners.base import SEED_HELP, Progress
from lpcfg_cli.lm import kneserney
from lpcfg_cli.lm.corpus import Sentence
from lpcfg_cli.lm.kneserney import KNOptions
from lpcfg_cli.lm.modelfile import SavedModel

FitFunction = Callable[[Sequence[Sentence], Sequence[Sentence] | None, Any, Progress], SavedModel]


@dataclass(frozen=True)
class LMMethod:
    """A method of ``lpcfg lm train`` (see the module docstring)."""

    name: str
    options: type
    fit: FitFunction
    fixed: dict[str, Any] = field(default_factory=dict)
    takes_dev: bool = False

    def make_options(self, **values: Any) -> Any:
        """The options object from hyper-parameter ``values`` (missing ones: defaults)."""
        return self.options(**self.fixed, **values)

    def uses(self, name: str) -> bool:
        """Whether ``name`` is one of the method's hyper-parameters."""
        return any(f.name == name for f, _ in hyper_fields(self.options))


@dataclass(frozen=True)
class AggregateOptions:
    """Options of the aggregate bigram learners (em, pivot, pivot+em): a placeholder that
    gives the command line ``--states``, ``--iterations`` and ``--seed`` before those
    methods are registered; replace or extend it with the learners' own options class."""

    states: int = hyper(
        16, "Aggregate model: latent states m of p(w2|w1) = sum_h r(h|w1) s(w2|h).", min=1
    )
    iterations: int = hyper(
        20, "Aggregate model: EM iterations (pivot+em: after the pivot estimate).", min=0
    )
    seed: int = hyper(0, SEED_HELP, min=0)
    rare: int = hyper(
        1, "Training words seen at most this often are <unk> (1: words seen once).", min=0
    )

    def __post_init__(self) -> None:
        check(self)


METHODS: dict[str, LMMethod] = {
    "kn2": LMMethod("kn2", KNOptions, kneserney.fit, {"order": 2}),
    "kn3": LMMethod("kn3", KNOptions, kneserney.fit, {"order": 3}),
    # --- the aggregate bigram learners: register em, pivot and pivot+em here, e.g.
    # "em": LMMethod("em", AggregateOptions, aggregate.fit_em, takes_dev=True),
}

# Every options class whose hyper-parameters the command line offers (AggregateOptions
# until the aggregate learners are registered with it or their own class).
OPTION_CLASSES: list[type] = list(
    dict.fromkeys([*(m.options for m in METHODS.values()), AggregateOptions])
)
