"""Learners fitted in turn, each from the previous one's model: ``pivot+em`` is Pivot then
EM (Cohen & Collins 2014, section 6: the pivot estimate as EM's starting point)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from lpcfg_cli.model.protocol import Learner, Progress


class Chain(Learner):
    """``learners`` fitted in turn, each from the previous one's model; the model records
    the chain's ``method`` and ``decode`` and, under ``chain``, the earlier steps' metadata."""

    takes_dev = True
    takes_start = False

    def __init__(self, method: str, *learners: Learner, decode: str | None = None) -> None:
        if not all(lr.takes_start for lr in learners[1:]):
            raise ValueError("every learner after the first must start from a model")
        self.method = method
        self.learners = learners
        self.decode = decode  # type: ignore[misc]
        self.options = tuple(lr.options for lr in learners)

    def option_values(self) -> list[Any]:
        return [o for lr in self.learners for o in lr.option_values()]

    def _fit(self, data: Any, dev: Any, start: Any, progress: Progress) -> Any:
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

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        """A hyper-parameter is inert when every learner of the chain that has it says so
        (the later steps always start from the chain's own model)."""
        found: dict[str, str] = {}
        used: set[str] = set()
        for i, learner in enumerate(self.learners):
            here = learner.inert(dev, start)
            if i:  # a later step starts from the chain's model, whatever the user gives
                here = learner.inert(dev, True)
                here = {k: v.replace("{start}", "{method}") for k, v in here.items()}
            for options in learner.option_values():
                for name in (f.name for f in fields(options)):
                    if name in here:
                        found.setdefault(name, here[name])
                    else:
                        used.add(name)
        return {k: v for k, v in found.items() if k not in used}
