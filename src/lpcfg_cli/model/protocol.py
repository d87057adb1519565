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

``start`` is a model to start from, for learners that refine one (EM). What selection reads
of a learner is here too: ``Iterative`` (a model improved step by step, ``run_steps``) and
``Decomposable`` (one decomposition, a model for any number of states). Model selection is a
wrapper around a learner (``learners.selection``: early stopping, state grids and search),
chaining is ``learners.chain.Chain`` (``pivot+em`` is Pivot then EM), ensembles
``learners.ensemble.Ensemble``; ``learners.registry`` composes them per method.

``check`` and ``inert`` speak in parameter names: ``errors.ParameterError`` templates and
reasons with ``{dev}``, ``{start}`` and ``{method}`` for the command line to render as
its flags.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.grammar.heldout import DevTrees
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.model.lpcfg import LPCFG, check_size
from lpcfg_cli.numerics.patience import Patience

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
    # ``model.protocol.run_steps``), as the model's history keeps it, with the learner's method.
    record: Callable[[dict[str, Any]], None] = lambda _record: None


SILENT = Progress()

# Latent states per symbol a learner accepts: beyond it no treebank's rule tensors (m^3 floats
# per binary rule) fit in any machine's memory; within it ``LPCFG.check_size`` still refuses
# a model too large for this machine before anything is allocated.
MAX_STATES = 1024

STATE_COUNT_HELP = (
    "Spectral, pivot: training nodes per latent state; a nonterminal seen n times gets at "
    "most n / this states (0: no frequency cap)."
)
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


# What a wrapper around learners of one method (a selection, an ensemble) says of itself as
# its learner does: the method, the decoder, and which data it takes.
FOLLOWED = ("method", "decode", "takes_dev", "takes_start", "takes_text", "takes_weights")


def follow(wrapper: Learner, inner: Learner, names: Sequence[str] = FOLLOWED) -> None:
    """Give ``wrapper`` ``inner``'s ``names`` (of ``FOLLOWED``): a wrapper that selects on
    dev data takes them whether or not its learner does, so it leaves ``takes_dev`` out."""
    for name in names:
        setattr(wrapper, name, getattr(inner, name))


# --- what model selection reads: candidates, steps, decompositions ------------------------


def best_of(
    candidates: Iterable[tuple[dict[str, Any], LPCFG]],
    dev: DevTrees | None,
    report: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[LPCFG, list[dict[str, Any]]]:
    """The candidate model with the best dev F1 (the first one without ``dev``).

    ``candidates`` yields ``(record, model)``, built lazily so that only one model of a grid
    is in memory at a time besides the best; each record gets its ``dev_f1`` and is passed
    to ``report``. Returns the chosen model and every record.
    """
    best: LPCFG | None = None
    best_f1 = float("-inf")
    history: list[dict[str, Any]] = []
    for record, model in candidates:
        if dev is not None:
            t0 = time.perf_counter()
            record["dev_f1"] = round(dev.f1(model), 2)
            record["dev_seconds"] = round(time.perf_counter() - t0, 3)
        history.append(record)
        if report:
            report(record)
        if record.get("dev_f1", 0.0) > best_f1:  # ties keep the earlier candidate
            best, best_f1 = model, record.get("dev_f1", 0.0)
        if dev is None:
            break
    if best is None:
        raise ValueError("best_of needs at least one candidate")
    return best, history


def scores_f1(dev: Any) -> bool:
    """Whether ``dev`` can score a model's parses (dev trees with a scorer)."""
    return isinstance(dev, DevTrees) and dev.scores_f1


@dataclass
class Iterate:
    """One step of an ``Iterative`` learner: its ``record`` for the model's history, the
    model after it (built only when asked: ``model()``), what the learner needs to finish
    from it (``state``), and what early stopping reads."""

    index: int
    record: dict[str, Any]
    model: Callable[[], LPCFG]
    state: Any
    started: float  # time.perf_counter() when the step began
    heldout: float | None = None  # a held-out log-likelihood, where F1 is not scored
    converged: bool = False
    last: bool = False


class Iterative(Learner):
    """A learner that improves one model step by step (``iterates``) and makes the model of
    a chosen step (``finish``). On its own it keeps the last step; ``EarlyStopping`` chooses
    among them."""

    unit: ClassVar[str]  # "iteration" or "cycle", in the records and the report
    seconds_digits: ClassVar[int] = 3
    f1_digits: ClassVar[int | None] = None  # dev F1 rounded to this many digits (None: not)

    def iterates(self, data: Any, dev: Any, start: Any, progress: Progress) -> Iterator[Iterate]:
        raise NotImplementedError

    def finish(
        self, data: Any, chosen: Iterate, history: list[dict[str, Any]], extra: dict[str, Any]
    ) -> LPCFG:
        """The model of step ``chosen``, its metadata holding ``history`` and ``extra``."""
        raise NotImplementedError

    def line(self, record: dict[str, Any]) -> str:
        """The progress line of one step's record."""
        raise NotImplementedError

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        """Every step, the last kept (no selection)."""
        return run_steps(self, data, dev, start, progress, every=0, patience=None)


def run_steps(
    inner: Iterative,
    data: Any,
    dev: Any,
    start: Any,
    progress: Progress,
    every: int,
    patience: int | None,
) -> LPCFG:
    """The steps of ``inner``; with ``patience`` the best by dev F1 (scored every ``every``
    steps, and at the last or converged one) or else by held-out log-likelihood, stopping
    after ``patience`` scores without improvement; without, the last step."""
    f1 = patience is not None and scores_f1(dev)
    keep: Patience[Iterate] = Patience(patience or 1)
    history: list[dict[str, Any]] = []
    step: Iterate | None = None
    for step in inner.iterates(data, dev, start, progress):
        if f1 and (step.index % every == 0 or step.last or step.converged):
            score = float(dev.f1(step.model()))
            digits = inner.f1_digits
            step.record["dev_f1"] = round(score, digits) if digits is not None else score
        step.record["seconds"] = round(time.perf_counter() - step.started, inner.seconds_digits)
        history.append(step.record)
        progress.report(inner.line(step.record))
        progress.record({"method": inner.method, **step.record})
        score = step.record.get("dev_f1") if f1 else step.heldout
        if patience is not None and score is not None:
            keep.offer(score, step)
        if step.converged or (patience is not None and dev is not None and keep.stop):
            break
    if step is None:
        raise LpcfgError(f"{inner.method} made no {inner.unit}: nothing to choose from")
    chosen = keep.best if keep.best is not None else step
    progress.report(f"selected {inner.unit} {chosen.index} of {len(history)}")
    return inner.finish(data, chosen, history, {})


class Decomposable(Learner):
    """A learner whose one decomposition of the training data gives a model for any number
    of states (spectral: the leading directions of each symbol's SVD; pivot: each symbol's
    step 1 with its own cap): ``estimator`` decomposes, ``model`` and ``model_for`` build."""

    def estimator(self, data: Any, largest: int, progress: Progress) -> Any:
        raise NotImplementedError

    def model(self, est: Any, m: int, data: Any, progress: Progress) -> LPCFG:
        """The model with at most ``m`` states per symbol."""
        raise NotImplementedError

    def model_for(self, est: Any, states: np.ndarray, data: Any) -> LPCFG:
        """The model with (at most) ``states[a]`` states for symbol ``a``."""
        raise NotImplementedError

    def search_bounds(self, est: Any, m: int) -> np.ndarray:
        """The most states the search may give each symbol, from a start of ``m``."""
        raise NotImplementedError

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> LPCFG:
        """The model with the options' ``states`` (no selection)."""
        states = int(self.options.states)
        return self.model(self.estimator(data, states, progress), states, data, progress)
