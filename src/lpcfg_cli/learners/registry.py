"""Method name -> learner, per family: what ``lpcfg train --method``, ``lpcfg lm train
--method`` and ``lpcfg unmix --model`` choose from, and what library users build.

A method is a sequence of steps, each a learner, possibly wrapped by its model selection
(``learners.selection``: ``EarlyStopping``, ``StateSelection``, and ``OptionGrid`` where
an option is given several values), chained when there are several (``pivot+em`` is Pivot
then EM, not a special case), with per-method defaults where it wants other ones (pivot+em
scores dev F1 after every EM iteration: it runs few of them).
``learner(method, **values)`` builds one from hyper-parameter values by name, each going to
every options class that has it (``states`` and ``seed`` to both steps of pivot+em):

    model = learner("em", states=16, iterations=40).fit(data, dev=read_dev_trees([path]))

A parsing method also says how its training trees are binarized unless the user chooses
(``binarization``), and the decoder its models are parsed with (each learner's ``decode``,
recorded in the model file): max-bracket for EM and split-merge models, which it parses
better on dev; max-marginal (Goodman's) for the spectral family, as in the spectral papers
(Cohen et al. 2012, 2014; Cohen & Collins 2014), and for the treebank PCFG, which loses
with max-bracket. The measurements are in docs/parsing.md (Decoders).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any

from lpcfg_cli.errors import ParameterError, ParameterTypeError
from lpcfg_cli.files.model_file import KINDS, read_model_file
from lpcfg_cli.files.model_file import LANGUAGE as LANGUAGE_FILE
from lpcfg_cli.files.model_file import PARSING as PARSING_FILE
from lpcfg_cli.grammar.heldout import DevText, DevTrees
from lpcfg_cli.grammar.training_data import DataOptions, prepare, prepare_trees
from lpcfg_cli.hyperparams import hyper_fields
from lpcfg_cli.latent_pcfg.em import EMLearner
from lpcfg_cli.latent_pcfg.pcfg import PCFGLearner
from lpcfg_cli.latent_pcfg.pivot import PivotLearner
from lpcfg_cli.latent_pcfg.spectral import SpectralLearner
from lpcfg_cli.latent_pcfg.splitmerge import SplitMergeLearner
from lpcfg_cli.learners.chain import Chain
from lpcfg_cli.learners.ensemble import Ensemble
from lpcfg_cli.learners.selection import (
    EarlyStopping,
    GridOptions,
    OptionGrid,
    StateSelection,
    StoppingOptions,
)
from lpcfg_cli.learners.statesearch import SearchOptions
from lpcfg_cli.lm import lm_file
from lpcfg_cli.lm.aggregate import OPTIONS as AGGREGATE_OPTIONS
from lpcfg_cli.lm.kneserney import KNOptions
from lpcfg_cli.lm.lm_learners import AggregateLearner, KneserNeyLearner
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import LM, PARSING, SILENT, TOPOLOGY, Learner, Progress
from lpcfg_cli.topology_models import topology_file
from lpcfg_cli.topology_models.unmix_learners import OPTIONS as UNMIX_OPTIONS
from lpcfg_cli.topology_models.unmix_learners import UnmixLearner
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.conventions import PTB, Conventions
from lpcfg_cli.treebank.conventions import conventions as conventions_preset
from lpcfg_cli.treebank.tree import Tree
from lpcfg_cli.wcfg.wcfg_learners import WCFGLearner, WCFGUnsupervisedLearner


@dataclass(frozen=True)
class Step:
    """One learner of a method and the selection around it: ``select`` is a wrapper class
    (``EarlyStopping``, ``StateSelection``) or None; ``fixed`` holds wrapper options the
    method sets and does not offer (split-merge scores every cycle with patience 1)."""

    learner: type[Learner]
    select: type[Learner] | None = None
    fixed: dict[str, Any] = field(default_factory=dict)
    options: type | None = None  # the learner's options class where it is not ``Options``
    make: Any = None  # how to build the learner from its options (default: the class)

    def option_classes(self) -> list[type]:
        """The options classes whose fields the user may set, the learner's first."""
        own = [self.options or self.learner.Options]
        if self.select is EarlyStopping and not self.fixed:
            own.append(StoppingOptions)
        elif self.select is StateSelection:
            own += [GridOptions, SearchOptions]
        return own

    def build(self, method: str, values: dict[str, Any]) -> Learner:
        """The step's learner with these values; several values of a ``grid`` option
        (``Spec.grid``) give one learner per combination, dev F1 choosing (``OptionGrid``)."""
        grid: dict[str, tuple[Any, ...]] = {}
        for f, spec in hyper_fields(self.options or self.learner.Options):
            value = values.get(f.name)
            if spec.grid and isinstance(value, (tuple, list)):
                grid[f.name] = tuple(dict.fromkeys(value))  # each value once, in order
        values = {**values, **{name: v[0] for name, v in grid.items() if len(v) == 1}}
        grid = {name: v for name, v in grid.items() if len(v) > 1}
        if not grid:
            return self._build(method, values)
        combinations = [
            dict(zip(grid, values_, strict=True)) for values_ in itertools.product(*grid.values())
        ]
        return OptionGrid([(c, self._build(method, {**values, **c})) for c in combinations])

    def _build(self, method: str, values: dict[str, Any]) -> Learner:
        classes = self.option_classes()
        made = [
            cls(**_values_for(method, cls, values, grid=self.select is StateSelection))
            for cls in classes
        ]
        inner = (self.make or self.learner)(made[0])
        if self.select is EarlyStopping:
            stopping = made[1] if len(made) > 1 else StoppingOptions(**self.fixed)
            return EarlyStopping(inner, stopping)
        if self.select is StateSelection:
            return StateSelection(inner, made[1], made[2])
        return inner


def _values_for(method: str, cls: type, values: dict[str, Any], grid: bool) -> dict[str, Any]:
    """The values of ``cls``'s fields. Grid-valued and scalar fields share names
    (``states``): a one-value grid is a number and a number a one-value grid; a longer grid
    for a scalar field is an error, except for the learner inside a ``StateSelection``
    (``grid``), which the selection gives each value of the grid in turn (it is told the
    largest)."""
    out = {}
    for f in fields(cls):
        if f.name not in values:
            continue
        value = values[f.name]
        scalar = not isinstance(f.default, tuple) if f.default is not None else True
        if scalar and isinstance(value, (tuple, list)):
            if len(value) != 1 and not grid:
                template = "{" + f.name + "} takes a single number for {method} {name}"
                raise ParameterError(template, name=method)
            value = max(value)
        elif not scalar and isinstance(value, int):
            value = (value,)
        elif not scalar and isinstance(value, list):
            value = tuple(value)
        out[f.name] = value
    return out


@dataclass(frozen=True)
class Method:
    """A learner, or a chain of learners each starting from the previous one's model."""

    name: str
    steps: tuple[Step, ...]
    family: str = PARSING
    defaults: dict[str, Any] = field(default_factory=dict)  # overrides of option defaults
    binarize: dict[str, Any] = field(default_factory=dict)  # overrides of BinarizeOptions'
    decode: str | None = None  # a chain's decoder (a single learner says its own)

    def option_classes(self) -> list[type]:
        return list(dict.fromkeys(cls for step in self.steps for cls in step.option_classes()))

    def build(self, **values: Any) -> Learner:
        """The learner with these hyper-parameters (a name no step has is an error; a
        value of ``None`` means the default)."""
        values = {k: v for k, v in values.items() if v is not None}
        unknown = sorted(set(values) - self.parameters())
        if unknown:
            raise ParameterError(
                "{method} {name} has no option {option}", name=self.name, option=repr(unknown[0])
            )
        values = {**self.defaults, **values}
        learners = [step.build(self.name, values) for step in self.steps]
        if len(learners) == 1:
            return learners[0]
        return Chain(self.name, *learners, decode=self.decode)

    def parameters(self) -> set[str]:
        """Every hyper-parameter name the method takes."""
        return {f.name for cls in self.option_classes() for f in fields(cls)}

    def uses(self, name: str) -> bool:
        return name in self.parameters()

    @property
    def iterates(self) -> bool:
        """Whether a step improves a model iteration by iteration (``model.protocol.Iterative``:
        EM, split-merge), so that training has a learning curve."""
        return any(step.select is EarlyStopping for step in self.steps)


# Factoring n-ary nodes to the left (``X -> @X c_n``, the intermediate symbols nesting to
# the left, as the Berkeley parser's default "RIGHT" binarization does) instead of to the
# right suits the EM family and pivot better on dev; the treebank PCFG and spectral keep the
# right (measurements: docs/experiments/ptb.md, Factoring n-ary nodes).
FACTOR_LEFT = {"factor": "left"}

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("pcfg", (Step(PCFGLearner),)),
        Method("em", (Step(EMLearner, EarlyStopping),), binarize=FACTOR_LEFT),
        Method("spectral", (Step(SpectralLearner, StateSelection),)),
        Method("pivot", (Step(PivotLearner, StateSelection),), binarize=FACTOR_LEFT),
        Method(
            "pivot+em",
            (Step(PivotLearner, StateSelection), Step(EMLearner, EarlyStopping)),
            defaults={"dev_f1_every": 1},
            binarize=FACTOR_LEFT,
            decode="max-marginal",
        ),
        Method(
            "splitmerge",
            (Step(SplitMergeLearner, EarlyStopping, {"dev_f1_every": 1, "patience": 1}),),
            binarize=FACTOR_LEFT,
        ),
        Method("wcfg", (Step(WCFGLearner),)),
        Method("wcfg-unsupervised", (Step(WCFGUnsupervisedLearner),)),
    )
}


def _kneser_ney(order: int) -> Step:
    return Step(
        KneserNeyLearner,
        options=KNOptions,
        make=lambda options: KneserNeyLearner(options, f"kn{order}"),
    )


def _aggregate(name: str) -> Step:
    return Step(
        AggregateLearner,
        options=AGGREGATE_OPTIONS[name],
        make=lambda options: AggregateLearner(options, name),
    )


# Language models (``lpcfg lm train --method``): Kneser-Ney baselines and the aggregate
# bigram model.
LM_METHODS: dict[str, Method] = {
    "kn2": Method("kn2", (_kneser_ney(2),), LM, defaults={"order": 2}),
    "kn3": Method("kn3", (_kneser_ney(3),), LM, defaults={"order": 3}),
    **{name: Method(name, (_aggregate(name),), LM) for name in AGGREGATE_OPTIONS},
}

# Topology models by unmixing moments (``lpcfg unmix --model``; Hsu, Kakade & Liang 2012,
# section 5): pcfg-ie and dep-ies.
TOPOLOGY_METHODS: dict[str, Method] = {
    name: Method(
        name,
        (Step(UnmixLearner, options=options, make=partial(UnmixLearner, method=name)),),
        TOPOLOGY,
    )
    for name, options in UNMIX_OPTIONS.items()
}

# Every family's methods (the conformance tests go over all of them).
FAMILIES: dict[str, dict[str, Method]] = {
    PARSING: METHODS,
    LM: LM_METHODS,
    TOPOLOGY: TOPOLOGY_METHODS,
}


def _spec(method: str, family: str = PARSING) -> Method:
    """The method of ``family``, or an error naming the methods there are."""
    methods = FAMILIES[family]
    if method not in methods:
        raise ParameterError(
            "unknown {method} {name} (one of {known})", name=repr(method), known=", ".join(methods)
        )
    return methods[method]


def method_of(options: Any) -> tuple[str, str]:
    """(method, family) of the one learner whose options class ``options`` is an instance
    of (``EMOptions`` -> em), or ``ParameterTypeError``."""
    found = [
        (name, family)
        for family, methods in FAMILIES.items()
        for name, spec in methods.items()
        if len(spec.steps) == 1 and type(options) is spec.steps[0].option_classes()[0]
    ]
    if len(found) > 1:
        raise ParameterError(
            "{method}: {kind} are the options of {methods}: give the method's name",
            kind=type(options).__name__,
            methods=", ".join(name for name, _ in found),
        )
    if not found:
        raise ParameterTypeError(
            "{method} must be a method's name or the options of one learner "
            "(EMOptions, SpectralOptions...), not {kind}",
            kind=type(options).__name__,
        )
    return found[0]


def binarization(method: str, **values: Any) -> BinarizeOptions:
    """How ``method`` binarizes its training trees: ``BinarizeOptions`` with the method's
    defaults (``FACTOR_LEFT``) and then ``values`` (a value of ``None`` means the default)."""
    given = {k: v for k, v in values.items() if v is not None}
    return BinarizeOptions(**{**_spec(method).binarize, **given})


def learner(
    method: str | Any, ensemble: int = 1, *, family: str = PARSING, **values: Any
) -> Learner:
    """The learner of ``method`` (a key of ``FAMILIES[family]``) with these
    hyper-parameters, or of an options dataclass instance (``learner(EMOptions(states=16))``:
    the one method of one learner that takes it, its fields the hyper-parameters, ``values``
    on top); with ``ensemble`` N > 1, N of them with seeds ``seed, seed + 1, ...`` bundled
    into one model."""
    if not isinstance(method, str):
        options = method
        method, family = method_of(options)
        values = {**{f.name: getattr(options, f.name) for f in fields(options)}, **values}
    spec = _spec(method, family)
    if ensemble == 1:
        return spec.build(**values)
    if not spec.uses("seed"):
        raise ParameterError(
            "{ensemble} needs a method with random choices ({method} {name} gives the same "
            "model for every seed)",
            name=method,
        )
    seed = values.get("seed") or 0
    members = [spec.build(**{**values, "seed": seed + i}) for i in range(ensemble)]
    return Ensemble(method, members)


def product(*parts: Learner) -> Ensemble:
    """A learner whose model bundles the models of ``parts``, each fitted on the same
    training data and selecting on the same dev set: a product of grammars of one method or
    several (Petrov 2010), e.g. ``product(learner("splitmerge", ensemble=6), learner("em",
    states=16))``. An ``Ensemble`` among ``parts`` gives its members. The parts must take
    the same data (one binarization, one ``rare``: ``prepare`` makes it once)."""
    members = [
        m for part in parts for m in (part.members if isinstance(part, Ensemble) else [part])
    ]
    if len(members) < 2:
        raise ParameterError("{parts}: a product needs two learners or more")
    for member in members:
        if not isinstance(member, Learner) or member.family != PARSING:
            raise ParameterTypeError(
                "{parts} must be parsing learners (registry.learner), not {kind}",
                kind=type(member).__name__,
            )
    return Ensemble(members[0].method, members)


def train(
    treebank: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[Tree],
    method: str = "pcfg",
    *,
    dev: DevTrees | DevText | None = None,
    ensemble: int = 1,
    members: Sequence[Learner] = (),
    rare: int = DataOptions.rare,
    binarize: BinarizeOptions | None = None,
    conventions: Conventions | str = PTB,
    progress: Progress = SILENT,
    **options: Any,
) -> LPCFG:
    """A parsing model of ``treebank`` (files, or ``Tree`` objects) by ``method`` with these
    hyper-parameters (``learner``), its trees binarized as the method binarizes them unless
    ``binarize`` says otherwise; ``conventions``: the treebank's (``treebank.conventions``:
    a ``Conventions`` or a preset's name); ``dev``: dev trees with their scorer
    (``parsing.dev_f1.read_dev_trees``, given the same conventions), for the methods that
    select; ``members``: learners of other methods whose models join the product
    (``product``), trained on the same trees."""
    if isinstance(conventions, str):
        conventions = conventions_preset(conventions)
    fitter = learner(method, ensemble, **options)
    if members:
        fitter = product(fitter, *members)
    how = binarize or binarization(method)
    if isinstance(treebank, (str, os.PathLike)):
        treebank = [treebank]
    if isinstance(treebank, (bytes, Tree)) or not isinstance(treebank, Iterable):
        raise TypeError(
            f"treebank must be a file name, file names or trees, not {type(treebank).__name__}"
        )
    items = list(treebank)
    if not items:
        raise ParameterError("{treebank} holds no file names or trees")
    if all(isinstance(t, Tree) for t in items):
        data = prepare_trees(items, how, rare=rare, conventions=conventions)
    else:
        data = prepare([os.fspath(p) for p in items], how, rare=rare, conventions=conventions)
    return fitter.fit(data, dev, progress=progress)


def load_model(path: str | os.PathLike[str]) -> Any:
    """The model in a model file of any kind (``-``: stdin): an ``LPCFG`` (``lpcfg
    train``), a language model (``lpcfg lm train``) or a topology model (``lpcfg unmix``)."""
    file = read_model_file(path, KINDS)
    if file.kind == PARSING_FILE:
        return LPCFG.from_file(file)
    if file.kind == LANGUAGE_FILE:
        return lm_file.from_file(file)
    return topology_file.from_file(file)


def save_model(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model`` (any kind ``load_model`` reads) to ``path`` atomically (``-``:
    stdout)."""
    if isinstance(model, LPCFG):
        model.save(path)
    elif isinstance(model, topology_file.TopologyModel):
        topology_file.save(path, model)
    else:
        lm_file.save_model(path, model)
