"""EVALB (Sekine & Collins) run with COLLINS.prm, reproduced exactly, plus strict figures.

``evaluate_lines(gold, test)`` scores one tree per line the way the original ``evalb -p
COLLINS.prm`` does, and ``format_report`` prints what it prints (per-sentence table and
``=== Summary ===`` block, byte for byte); ``tests/data/evalb`` holds the original
program's output that this is checked against. EVALB leaves skipped and error sentences
out of its totals, which flatters a parser that fails; the strict figures count them as
all wrong.

One module a job, imported one way (each only from those above it):

- ``params``: the parameter files' settings (COLLINS.prm, a minimal set).
- ``messages``: EVALB's error messages and its MAX_ERROR stop.
- ``reader``: a line read and massaged as EVALB does (tokens, deletions, label cut).
- ``scoring``: one sentence's matching and status; a summary block's totals and figures.
- ``run``: ``evaluate_lines`` over two lists of lines; the result as numbers and JSON.
- ``report``: the text EVALB prints, the strict lines, the per-label table.
- ``conventions``: a warning when gold and test wrap their roots differently.
- ``compare``: is one parser's strict F1 better than another's (paired bootstrap,
  approximate randomization)?
"""

from __future__ import annotations

from lpcfg_cli.evalb.params import COLLINS, NONE, PARAMS, EvalbParams
from lpcfg_cli.evalb.report import format_report, label_table
from lpcfg_cli.evalb.root_wrapping import convention_warning, root_convention
from lpcfg_cli.evalb.run import EvalResult, evaluate_lines
from lpcfg_cli.evalb.scoring import Block, SentenceResult, Status

__all__ = [
    "COLLINS",
    "NONE",
    "PARAMS",
    "Block",
    "EvalResult",
    "EvalbParams",
    "SentenceResult",
    "Status",
    "convention_warning",
    "evaluate_lines",
    "format_report",
    "label_table",
    "root_convention",
]
