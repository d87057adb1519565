"""The settings of an EVALB parameter file: COLLINS.prm, and a minimal set.

EVALB reads its conventions (which labels are deleted, which are equivalent, when to stop)
from a parameter file. They live here as frozen values so that the reader and the scorer
take them as data and ``lpcfg evaluate --param`` can choose among them by name
(``EvaluateOptions``, with the length cut-off of the second summary block).
"""

from __future__ import annotations

from dataclasses import dataclass

from lpcfg_cli.hyperparams import Checked, hyper

__all__ = ["COLLINS", "NONE", "PARAMS", "EvalbParams", "EvaluateOptions"]


@dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter file (``LABELED``, ``DELETE_LABEL``, ...).

    ``equivalent_labels`` pairs (EQ_LABEL) must form equivalence classes; each label maps
    to the first label of its class. ``max_error`` None means never stop.
    """

    name: str
    delete_labels: frozenset[str]
    delete_for_length: frozenset[str]
    equivalent_labels: tuple[tuple[str, str], ...] = ()
    max_error: int | None = 10
    labeled: bool = True

    def canonical(self) -> dict[str, str]:
        """Label -> representative of its EQ_LABEL class."""
        canon: dict[str, str] = {}
        for a, b in self.equivalent_labels:
            canon[b] = canon.get(a, a)
        return canon


COLLINS = EvalbParams(
    name="collins",
    delete_labels=frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."}),
    delete_for_length=frozenset({"-NONE-"}),
    equivalent_labels=(("ADVP", "PRT"),),
    max_error=10,
)
# No deletions but TOP, no equivalences, no error limit; the cut-off length still leaves
# out -NONE- words, so both parameter sets select the same sentences for that block.
NONE = EvalbParams(
    name="none",
    delete_labels=frozenset({"TOP"}),
    delete_for_length=frozenset({"-NONE-"}),
    equivalent_labels=(),
    max_error=None,
)
PARAMS: dict[str, EvalbParams] = {"collins": COLLINS, "none": NONE}


@dataclass(frozen=True)
class EvaluateOptions(Checked):
    """How trees are scored: the length cut-off of the second summary block and the
    parameter file's settings by name (``PARAMS``; ``params`` gives them)."""

    cutoff: int = hyper(
        40, "Length cut-off of the second summary block (gold words except -NONE-).", min=0
    )
    param: str = hyper(
        "collins",
        "collins: COLLINS.prm. none: delete only TOP (-NONE- and punctuation words then "
        "count, so gold traces make length mismatches), no ADVP=PRT, no error limit; label "
        "cutting at '-'/'=' and the skip/error rules stay.",
        choices=tuple(sorted(PARAMS)),
    )

    @property
    def params(self) -> EvalbParams:
        return PARAMS[self.param]
