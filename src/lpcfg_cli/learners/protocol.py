"""The shape every learner has: options up front, ``fit`` returns a model.

In the scikit-learn spirit: a learner is built from a frozen options dataclass (its
hyper-parameters, documented with ``hyperparams.hyper``), and
``fit(data, dev=None, start=None, progress=SILENT)`` returns an ``LPCFG``, keeping no state
between calls. ``dev`` (a ``selection.DevSet``, or a ``DevText`` for data read from text)
is for the learner's model selection; ``start`` is a model to start from, for learners that
refine one (EM). Only learners with ``takes_text`` learn from text (``TrainingData.text``).
A ``Chain`` of learners fits each from the previous one's model: ``pivot+em`` is Pivot then
EM.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.learners.selection import DevSet, DevText
from lpcfg_cli.model.lpcfg import LPCFG, check_size


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass


@contextmanager
def _no_bar(**_kwargs: Any) -> Iterator[_NoBar]:
    yield _NoBar()


@dataclass(frozen=True)
class Progress:
    """Where a learner reports: ``report(line)`` for summary lines, ``bar(total=, desc=,
    unit=)`` a context manager giving an object with ``update(n)``. Silent by default; the
    command line passes its stderr reporting and tqdm bars."""

    report: Callable[[str], None] = lambda _line: None
    bar: Callable[..., Any] = _no_bar


SILENT = Progress()

# Latent states per symbol a learner accepts: beyond it no treebank's rule tensors (m^3 floats
# per binary rule) fit in any machine's memory; within it ``LPCFG.check_size`` still refuses
# a model too large for this machine before anything is allocated.
MAX_STATES = 1024

SEED_HELP = "Random seed (a whole number >= 0); the same seed gives the same result."
STATES_HELP = (
    "Latent states per nonterminal (upper bound where a method adapts it); spectral "
    "with --dev also takes a comma-separated grid, e.g. 8,16,24,32."
)


class Learner:
    """The protocol every learner follows, and what they share: built from ``Options`` (a
    frozen dataclass; its defaults when None); ``fit`` checks what every learner checks and
    runs the method's ``_fit``; ``inert`` and ``check`` say nothing unless overridden."""

    method: ClassVar[str]
    Options: ClassVar[type]
    takes_dev: ClassVar[bool] = True
    takes_start: ClassVar[bool] = False
    takes_text: ClassVar[bool] = False  # learns from sentences without trees (EM)
    takes_weights: ClassVar[bool] = False  # counts tree t weights[t] times (merged trees)

    def __init__(self, options: Any = None) -> None:
        self.options = options if options is not None else self.Options()

    def fit(
        self,
        data: TrainingData,
        dev: DevSet | DevText | None = None,
        start: LPCFG | None = None,
        progress: Progress = SILENT,
    ) -> LPCFG:
        """The model of ``data`` (see the module docstring); checks what every learner
        checks, then runs the method's own ``_fit``."""
        if start is not None and not self.takes_start:
            raise LpcfgError(f"the {self.method} learner does not start from a model")
        if data.text is not None and not self.takes_text:
            raise LpcfgError(f"the {self.method} learner learns from trees, not from text")
        if data.weights is not None and not self.takes_weights:
            raise LpcfgError(f"the {self.method} learner does not take weighted (merged) trees")
        self.check(dev is not None)
        if data.bank is not None or data.text is not None:
            check_size(data.grammar, self.largest_states())
        if isinstance(dev, DevSet):
            dev = dev.for_method(self.method)  # dev F1 decoded as this method's models are
        return self._fit(data, dev, start, progress)

    def _fit(
        self, data: TrainingData, dev: DevSet | None, start: LPCFG | None, progress: Progress
    ) -> LPCFG:
        raise NotImplementedError

    def largest_states(self) -> int:
        """The most latent states this learner may give a symbol (its ``states``, the
        largest of a grid, or ``max_states``; 1 for a plain PCFG)."""
        values = [getattr(self.options, name, None) for name in ("states", "max_states")]
        numbers = [max(v) if isinstance(v, tuple) else v for v in values if v]
        return int(max(numbers, default=1))

    def inert(self, dev: bool, start: str | None) -> dict[str, str]:
        """Hyper-parameters that cannot change the model of a fit with (``dev``) or without
        dev trees and from a start model (``start`` says where it comes from, e.g. "with
        --init") or not: name -> why, for the command line's warnings."""
        return {}

    def check(self, dev: bool) -> None:
        """Raise ``LpcfgError`` if these options cannot be fitted with(out) dev trees (so a
        command line fails before reading any data)."""


class Chain(Learner):
    """Learners fitted in turn, each from the previous one's model (``pivot+em``)."""

    takes_dev = True
    takes_start = False

    def __init__(self, method: str, *learners: Learner) -> None:
        if not all(lr.takes_start for lr in learners[1:]):
            raise ValueError("every learner after the first must start from a model")
        self.method = method
        self.learners = learners
        self.options = tuple(lr.options for lr in learners)

    def _fit(
        self, data: TrainingData, dev: DevSet | None, start: LPCFG | None, progress: Progress
    ) -> LPCFG:
        """Each learner from the previous one's model; the steps before the last are kept
        in the model's metadata under ``chain``."""
        model, steps = None, []
        for learner in self.learners:
            if model is not None:
                steps.append({k: v for k, v in model.meta.items() if k != "training"})
            model = learner.fit(data, dev, model, progress)
        assert model is not None
        model.meta.update({"method": self.method, "chain": steps})
        return model

    def check(self, dev: bool) -> None:
        for learner in self.learners:
            learner.check(dev)

    def inert(self, dev: bool, start: str | None) -> dict[str, str]:
        """A hyper-parameter is inert when every learner of the chain that has it says so."""
        found: dict[str, str] = {}
        used: set[str] = set()
        for i, learner in enumerate(self.learners):
            here = learner.inert(dev, start if i == 0 else f"with --method {self.method}")
            for name in (f.name for f in fields(learner.options)):
                if name in here:
                    found.setdefault(name, here[name])
                else:
                    used.add(name)
        return {k: v for k, v in found.items() if k not in used}
