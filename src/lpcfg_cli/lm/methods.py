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
from functools import partial
from typing import Any

from lpcfg_cli.hyperparams import hyper_fields
from lpcfg_cli.learners.protocol import Progress
from lpcfg_cli.lm import aggregate, kneserney
from lpcfg_cli.lm.corpus import Sentence
from lpcfg_cli.lm.kneserney import KNOptions
from lpcfg_cli.lm.lm_file import SavedModel

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


METHODS: dict[str, LMMethod] = {
    "kn2": LMMethod("kn2", KNOptions, kneserney.fit, {"order": 2}),
    "kn3": LMMethod("kn3", KNOptions, kneserney.fit, {"order": 3}),
    **{
        name: LMMethod(name, aggregate.OPTIONS[name], partial(aggregate.fit, name), takes_dev=True)
        for name in aggregate.METHODS
    },
}

# Every options class whose hyper-parameters the command line offers.
OPTION_CLASSES: list[type] = list(dict.fromkeys(m.options for m in METHODS.values()))
