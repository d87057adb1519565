"""Ensembles: products of grammars (Petrov 2010).

``Ensemble`` fits its member learners in turn on the same training data (each selects on
dev on its own, as it would alone) and bundles their models into one (``LPCFG.bundle``):
the parser combines their posteriors per chart item. The members are learners of one method
whose seeds are ``seed, seed + 1, ...`` (``registry.learner(method, ensemble=N)``), or of
several methods (``registry.product``). Petrov (2010) reports 91.8 F1 on WSJ for 8
split-merge grammars against 90.2 for one, from the grammars' different local optima; on
the PTB sample a bundle of split-merge seeds gains most from its first few members, and one
grammar of another method (EM or pivot+EM) adds more than more split-merge seeds do
(docs/learners/splitmerge.md, Products of grammars).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.hyperparams import Checked, hyper
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import Learner, Progress, follow, scores_f1


@dataclass(frozen=True)
class EnsembleOptions(Checked):
    """How many models of the method to train and bundle."""

    ensemble: int = hyper(
        1,
        "Train N models with seeds S, S+1, ... and bundle them into one "
        "model file (parsed as a product of grammars).",
        min=1,
    )


class Ensemble(Learner):
    """``members`` fitted in turn and bundled; ``method`` names the first member's method
    (the model file records each member's)."""

    Options = EnsembleOptions

    def __init__(self, method: str, members: list[Learner]) -> None:
        self.method = method
        self.members = members
        self.options = EnsembleOptions(len(members))
        follow(self, members[0], ("decode", "takes_dev"))
        # Every member starts from the start model, so all of them must be able to.
        self.takes_start = all(m.takes_start for m in members)

    def option_values(self) -> list[Any]:
        return [self.options, *self.members[0].option_values()]

    def check(self, dev: bool) -> None:
        for member in self.members:
            member.check(dev)

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        return self.members[0].inert(dev, start)

    def _fit(self, data: TrainingData, dev: Any, start: LPCFG | None, progress: Progress) -> LPCFG:
        models = []
        for i, learner in enumerate(self.members):
            progress.report(f"ensemble member {i + 1} of {len(self.members)}")
            models.append(learner.fit(data, dev, start, progress))
        model = models[0].bundle(*models[1:])
        if scores_f1(dev):
            t0 = time.perf_counter()
            model.meta["ensemble_dev_f1"] = round(dev.f1(model), 2)
            progress.report(
                f"ensemble of {len(models)}: dev F1 "
                f"{model.meta['ensemble_dev_f1']:.2f} "
                f"({time.perf_counter() - t0:.1f} s)"
            )
        return model
