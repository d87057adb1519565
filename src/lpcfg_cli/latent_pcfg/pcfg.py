"""The treebank PCFG as a learner (``method="pcfg"``): the estimates of
``model.treebank_pcfg``, the baseline every latent method is measured against.
"""

from __future__ import annotations

from dataclasses import dataclass

from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import Learner, Progress
from lpcfg_cli.model.treebank_pcfg import train_pcfg


@dataclass(frozen=True)
class PCFGOptions:
    """The treebank PCFG has no hyper-parameters (smoothing comes from the lexicon)."""


class PCFGLearner(Learner):
    """Relative frequencies of the training trees (deterministic; nothing to select)."""

    method = "pcfg"
    Options = PCFGOptions
    decode = "max-marginal"
    takes_dev = False
    takes_weights = True

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        return {
            "states": "with {method} (the treebank PCFG has one state per symbol)",
            "seed": "with {method} (it is deterministic)",
        }

    def _fit(self, data: TrainingData, dev: None, start: None, progress: Progress) -> LPCFG:
        return train_pcfg(data.grammar, data.bank, data.meta(), data.weights)
