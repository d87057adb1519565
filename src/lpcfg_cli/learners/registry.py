"""Method name -> learner: what ``lpcfg train --method`` and library users choose from.

A method is one learner or a chain of them (``pivot+em`` is Pivot then EM, not a special
case), with per-method defaults where the chain wants other ones (pivot+em scores dev F1
after every EM iteration: it runs few of them). ``learner(method, **values)`` builds a
learner from hyper-parameter values by name, each going to every step that has it
(``states`` and ``seed`` to both steps of pivot+em):

    model = learner("em", states=16, iterations=40).fit(data, dev=DevSet.read([path]))

A method also says how its training trees are binarized unless the user chooses
(``binarization``): the factoring direction is measured per learner (see ``FACTOR_LEFT``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.learners.em import EMLearner
from lpcfg_cli.learners.ensemble import Ensemble
from lpcfg_cli.learners.pcfg import PCFGLearner
from lpcfg_cli.learners.pivot import PivotLearner
from lpcfg_cli.learners.protocol import Chain, Learner
from lpcfg_cli.learners.spectral import SpectralLearner
from lpcfg_cli.learners.splitmerge import SplitMergeLearner
from lpcfg_cli.learners.wcfg import WCFGLearner, WCFGUnsupervisedLearner
from lpcfg_cli.treebank.binarize import BinarizeOptions


@dataclass(frozen=True)
class Method:
    """A learner, or a chain of learners each starting from the previous one's model."""

    name: str
    steps: tuple[type, ...]  # learner classes
    defaults: dict[str, Any] = field(default_factory=dict)  # overrides of option defaults
    binarize: dict[str, Any] = field(default_factory=dict)  # overrides of BinarizeOptions'

    def option_classes(self) -> list[type]:
        return [step.Options for step in self.steps]

    def build(self, **values: Any) -> Learner:
        """The learner with these hyper-parameters (a name no step has is an error; a
        value of ``None`` means the default)."""
        values = {k: v for k, v in values.items() if v is not None}
        known = {f.name for cls in self.option_classes() for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise LpcfgError(f"--method {self.name} has no option {unknown[0]!r}")
        values = {**self.defaults, **values}
        learners = []
        for step, cls in zip(self.steps, self.option_classes(), strict=True):
            own = {
                f.name: _convert(self.name, f, values[f.name])
                for f in fields(cls)
                if f.name in values
            }
            learners.append(step(cls(**own)))
        return learners[0] if len(learners) == 1 else Chain(self.name, *learners)

    def uses(self, name: str) -> bool:
        return any(name in {f.name for f in fields(cls)} for cls in self.option_classes())


def _convert(method: str, f: Any, value: Any) -> Any:
    """Grid-valued and scalar fields share names (``states``): a one-value grid is a number
    and a number is a one-value grid; a longer grid for a scalar field is an error."""
    scalar = not isinstance(f.default, tuple) if f.default is not None else True
    if scalar and isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise LpcfgError(
                f"--{f.name.replace('_', '-')} takes a single number for --method {method}"
            )
        return value[0]
    if not scalar and isinstance(value, int):
        return (value,)
    if not scalar and isinstance(value, list):
        return tuple(value)
    return value


# Factoring n-ary nodes to the left (``X -> @X c_n``, the intermediate symbols nesting to
# the left, as the Berkeley parser's default "RIGHT" binarization does) instead of to the
# right, measured on the standard split (strict dev F1, shipped configs, seeds 0-2, mean;
# right -> left): em m = 16 85.83 -> 86.26, pivot 83.46 -> 84.25, pivot+em 85.86 -> 86.37,
# split-merge 87.16 -> 87.52. The others keep the right: the treebank PCFG 69.87 -> 66.10,
# spectral 85.06 -> 84.63 (not analysed further). The README has the test figures.
FACTOR_LEFT = {"factor": "left"}

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("pcfg", (PCFGLearner,)),
        Method("em", (EMLearner,), binarize=FACTOR_LEFT),
        Method("spectral", (SpectralLearner,)),
        Method("pivot", (PivotLearner,), binarize=FACTOR_LEFT),
        Method("pivot+em", (PivotLearner, EMLearner), {"dev_f1_every": 1}, FACTOR_LEFT),
        Method("splitmerge", (SplitMergeLearner,), binarize=FACTOR_LEFT),
        Method("wcfg", (WCFGLearner,)),
        Method("wcfg-unsupervised", (WCFGUnsupervisedLearner,)),
    )
}


def _spec(method: str) -> Method:
    """``METHODS[method]``, or an error naming the methods there are."""
    if method not in METHODS:
        raise LpcfgError(f"unknown method {method!r} (one of {', '.join(METHODS)})")
    return METHODS[method]


def binarization(method: str, **values: Any) -> BinarizeOptions:
    """How ``method`` binarizes its training trees: ``BinarizeOptions`` with the method's
    defaults (``FACTOR_LEFT``) and then ``values`` (a value of ``None`` means the default)."""
    given = {k: v for k, v in values.items() if v is not None}
    return BinarizeOptions(**{**_spec(method).binarize, **given})


def learner(method: str, ensemble: int = 1, **values: Any) -> Learner:
    """The learner of ``method`` (a key of ``METHODS``) with these hyper-parameters; with
    ``ensemble`` N > 1, N of them with seeds ``seed, seed + 1, ...`` bundled into one model."""
    spec = _spec(method)
    if ensemble == 1:
        return spec.build(**values)
    if not spec.uses("seed"):
        raise LpcfgError(
            f"--ensemble needs a method with random choices (--method {method} "
            "gives the same model for every seed)"
        )
    seed = values.get("seed") or 0
    members = [spec.build(**{**values, "seed": seed + i}) for i in range(ensemble)]
    return Ensemble(method, members)
