"""The shape every learner has: options up front, ``fit`` returns a model.

In the scikit-learn spirit: a learner is built from a frozen options dataclass (its
hyper-parameters, documented with ``hyperparams.hyper``), and
``fit(data, dev=None, start=None, progress=SILENT)`` returns a model, keeping no state between
calls. One protocol for every family of learner, each with its data and model:

- ``parsing``: ``grammar.training_data.TrainingData`` -> ``model.lpcfg.LPCFG`` (the treebank
  PCFG, EM, split-merge, spectral, pivot, the WCFGs); ``dev`` is ``grammar.heldout.DevTrees``
  (scored by a scorer handed in with them) or ``DevText``; the learner records in the model
  the decoder its models want (``decode``), which the parser reads.
- ``lm``: sentences -> a language model (``lm``); ``dev`` is ``DevText``.
- ``topology``: sentences or exact moments -> a topology model (``topology_models``).

``start`` is a model to start from, for learners that refine one (EM). Model selection is a
wrapper around a learner (``learners.selection``: early stopping, state grids and search),
chaining is ``learners.chain.Chain`` (``pivot+em`` is Pivot then EM), ensembles
``learners.ensemble.Ensemble``; ``learners.registry`` composes them per method.

``check`` and ``inert`` speak in parameter names: ``errors.ParameterError`` templates and
reasons with ``{dev}``, ``{start}`` and ``{method}`` for the command line to render as
its flags.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from lpcfg_cli.errors import ParameterError
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.model.lpcfg import check_size

PARSING, LM, TOPOLOGY = "parsing", "lm", "topology"


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass


@contextmanager
def _no_bar(**_kwargs: Any) -> Iterator[_NoBar]:
    yield _NoBar()


@dataclass(frozen=True)
class Progress:
    """Where a learner reports: ``report(line)`` for summary lines, ``bar(total=, desc=,
    unit=)`` a context manager giving an object with ``update(n)``, ``record(dict)`` for each
    step of a learner that iterates. Silent by default; the command line passes its stderr
    reporting, tqdm bars and ``--log`` file."""

    report: Callable[[str], None] = lambda _line: None
    bar: Callable[..., Any] = _no_bar
    # Each step's record of a learner that iterates (an EM iteration, a split-merge cycle:
    # ``selection.run_steps``), as the model's history keeps it, with the learner's method.
    record: Callable[[dict[str, Any]], None] = lambda _record: None


SILENT = Progress()

# Latent states per symbol a learner accepts: beyond it no treebank's rule tensors (m^3 floats
# per binary rule) fit in any machine's memory; within it ``LPCFG.check_size`` still refuses
# a model too large for this machine before anything is allocated.
MAX_STATES = 1024

STATES_HELP = (
    "Latent states per nonterminal (upper bound where a method adapts it); spectral "
    "and pivot with --dev also take a comma-separated grid, e.g. 8,16,24,32."
)


class Learner:
    """The protocol every learner follows, and what they share: built from ``Options`` (a
    frozen dataclass; its defaults when None); ``fit`` checks what every learner checks,
    runs the method's ``_fit`` and records the decoder; ``inert`` and ``check`` say nothing
    unless overridden."""

    method: ClassVar[str]
    family: ClassVar[str] = PARSING
    Options: ClassVar[type]
    # Parsing: the decoder this learner's models want (``parsing.parser_options``; why each
    # learner wants its own: ``learners.registry``); the measurements behind each choice are
    # in docs/parsing.md (Decoders).
    decode: ClassVar[str | None] = None
    takes_dev: ClassVar[bool] = True
    takes_start: ClassVar[bool] = False
    takes_text: ClassVar[bool] = False  # learns from sentences without trees (EM)
    takes_weights: ClassVar[bool] = False  # counts tree t weights[t] times (merged trees)

    def __init__(self, options: Any = None) -> None:
        self.options = options if options is not None else self.Options()

    def fit(
        self,
        data: Any,
        dev: Any = None,
        start: Any = None,
        progress: Progress = SILENT,
    ) -> Any:
        """The model of ``data`` (see the module docstring); checks what every learner
        checks, then runs the method's own ``_fit``."""
        if start is not None and not self.takes_start:
            raise ParameterError(
                f"the {self.method} learner does not start from a model ({{start}})"
            )
        if dev is not None and not self.takes_dev:
            raise ParameterError(f"the {self.method} learner has nothing to select on {{dev}}")
        if isinstance(data, TrainingData):
            self._check_training_data(data)
            if isinstance(dev, DevTrees):
                dev.check_matches(data.grammar, data.originals)
        self.check(dev is not None)
        if isinstance(dev, DevTrees):
            dev = dev.decoding(self.decode)  # dev F1 decoded as this learner's models are
        model = self._fit(data, dev, start, progress)
        if self.decode is not None:
            model.meta["decode"] = self.decode
        return model

    def _check_training_data(self, data: TrainingData) -> None:
        if data.text is not None and not self.takes_text:
            raise ParameterError(f"the {self.method} learner learns from trees, not from text")
        if data.weights is not None and not self.takes_weights:
            raise ParameterError(f"the {self.method} learner does not take weighted (merged) trees")
        if data.bank is not None or data.text is not None:
            check_size(data.grammar, self.largest_states())

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> Any:
        raise NotImplementedError

    def option_values(self) -> list[Any]:
        """Every options object this learner was built from (a wrapper's and its inner
        learner's), outermost first."""
        return [self.options]

    def largest_states(self) -> int:
        """The most latent states this learner may give a symbol (its ``states``, the
        largest of a grid, or ``max_states``; 1 for a plain PCFG)."""
        numbers = [1]
        for options in self.option_values():
            for name in ("states", "max_states"):
                value = getattr(options, name, None)
                if value:
                    numbers.append(max(value) if isinstance(value, tuple) else value)
        return int(max(numbers))

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        """Hyper-parameters that cannot change the model of a fit with (``dev``) or without
        dev data, from a start model (``start``) or not: name -> why, a reason that may name
        ``{dev}``, ``{start}`` or ``{method}`` (the command line says its flags)."""
        return {}

    def check(self, dev: bool) -> None:
        """Raise ``errors.ParameterError`` if these options cannot be fitted with(out) dev
        data (so that a command line fails before reading any)."""
