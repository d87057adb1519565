"""A whole EVALB run over two lists of lines: ``evaluate_lines`` and its ``EvalResult``.

The run pairs gold and test lines in order, scores each pair, adds it to the two summary
blocks (all sentences; gold length up to the cut-off), and reports a line-count mismatch
as EVALB does. Gold lines with no test line still count in the strict figures. After more
than MAX_ERROR messages EVALB stops with no summary: the result is then ``aborted`` and
holds the sentences scored so far.

The result carries every figure as numbers and as JSON (what the trainer and ``--json``
read); the text EVALB prints is built from it in ``report.py``.

Not reproduced: EVALB's 5000-byte line buffer (a longer line is scored here as one
sentence, with a warning in ``result.warnings``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lpcfg_cli.evalb.messages import ErrorLog, SilentLog, Stop
from lpcfg_cli.evalb.params import COLLINS, EvalbParams, EvaluateOptions
from lpcfg_cli.evalb.reader import Reader
from lpcfg_cli.evalb.scoring import Block, SentenceResult, Status, fmeasure, pct, score_sentence

__all__ = ["EvalResult", "evaluate_lines"]

_LINE_BUFFER = 4998  # longest line (bytes, without newline) EVALB's 5000-byte fgets reads whole


@dataclass
class EvalResult:
    """Everything EVALB computes, the strict figures, and the messages it printed."""

    params: EvalbParams
    cutoff: int
    sentences: list[SentenceResult]  # the per-sentence table, in order
    all: Block
    cut: Block
    messages: list[str]  # EVALB's stderr lines ("2 : Words unmatch (sat|sit)")
    gold_lines: int
    test_lines: int
    aborted: bool = False  # EVALB stopped (more than MAX_ERROR errors): no summary
    warnings: list[str] = field(default_factory=list)  # ours, not EVALB's
    missing_brackets: list[int] = field(default_factory=list)  # gold lines with no test line

    def strict_counts(self) -> list[tuple[int, int, int]]:
        """``(matched, gold, test)`` brackets of every gold line as the strict figures count
        them: a skipped or error sentence, or a gold line with no test line, matches
        nothing (the totals are the "all" block's strict ones)."""
        rows = [
            (s.matched if s.status is Status.OK else 0, s.gold_brackets, s.test_brackets)
            for s in self.sentences
        ]
        return rows + [(0, n, 0) for n in self.missing_brackets]

    @property
    def strict_f1(self) -> float:
        """The strict F-measure over every sentence (``all.strict_f1``)."""
        return self.all.strict_f1

    @property
    def f1(self) -> float | None:
        """EVALB's F-measure over every valid sentence (``all.f1``)."""
        return self.all.f1

    @property
    def not_scored(self) -> int:
        """Skipped and error sentences, and gold lines with no test line."""
        return self.all.not_scored

    def label_rows(self) -> list[tuple[str, int, int, int]]:
        """(label, gold, test, matched) over valid sentences, most frequent gold first."""
        totals: dict[str, list[int]] = {}
        for s in self.sentences:
            if s.status is Status.OK:
                for lab, counts in s.labels.items():
                    row = totals.setdefault(lab, [0, 0, 0])
                    for k in range(3):
                        row[k] += counts[k]
        rows = [(lab, g, t, m) for lab, (g, t, m) in totals.items()]
        return sorted(rows, key=lambda r: (-r[1], -r[2], r[0]))

    def to_dict(self, *, per_sentence: bool = False, labels: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "param": self.params.name,
            "cutoff": self.cutoff,
            "aborted": self.aborted,
            "gold_lines": self.gold_lines,
            "test_lines": self.test_lines,
            "not_scored": self.not_scored,
            "all": self.all.figures(),
            f"len<={self.cutoff}": self.cut.figures(),
            "messages": self.messages,
            "warnings": self.warnings,
        }
        if labels:
            out["labels"] = {
                (lab or "(empty)"): {
                    "gold": g,
                    "test": t,
                    "matched": m,
                    "recall": pct(m, g),
                    "precision": pct(m, t),
                    "fmeasure": fmeasure(pct(m, g), pct(m, t)),
                }
                for lab, g, t, m in self.label_rows()
            }
        if per_sentence:
            out["sentences"] = [s.to_dict() for s in self.sentences]
        return out

    def to_json(self, *, per_sentence: bool = False, labels: bool = False) -> str:
        """Machine-readable summary: both blocks' figures, strict figures, counts."""
        return json.dumps(self.to_dict(per_sentence=per_sentence, labels=labels), indent=2)


def evaluate_lines(
    gold_lines: Sequence[str],
    test_lines: Sequence[str],
    params: EvalbParams = COLLINS,
    cutoff: int = EvaluateOptions.cutoff,
) -> EvalResult:
    """Score test trees against gold trees, one tree per line, exactly as EVALB does.

    Lines may keep or lose their newline. Never raises on bad trees: problems become
    EVALB's messages (``result.messages``), error sentences, or ``result.aborted``.

    Speed matters: training scores the dev set with this after every EM iteration (a few
    hundred sentences take some tens of milliseconds).
    """
    reader = Reader(params)
    errors = ErrorLog(params.max_error)
    sentences: list[SentenceResult] = []
    all_block, cut_block = Block(), Block()
    paired = min(len(gold_lines), len(test_lines))
    aborted = False
    try:
        for i in range(paired):
            s = score_sentence(reader, errors, i + 1, gold_lines[i], test_lines[i])
            sentences.append(s)
            all_block.add(s)
            if s.length <= cutoff:
                cut_block.add(s)
        if len(gold_lines) > paired:
            # EVALB reads the next gold line (reporting its errors) before it notices.
            reader.read(gold_lines[paired], paired + 1, errors)
            errors(paired + 1, "Number of lines unmatch (too many lines in gold file)")
        elif len(test_lines) > paired:
            errors(paired + 1, "Number of lines unmatch (too many lines in test file)")
    except Stop:
        aborted = True
    missing = []
    for line in gold_lines[paired:]:  # strict figures: a gold line with no parse is wrong
        tree = reader.read(line, 0, SilentLog())
        n = len(reader.kept(tree))
        missing.append(n)
        for block in (all_block, cut_block) if tree.length <= cutoff else (all_block,):
            block.add_missing(n)
    return EvalResult(
        params=params,
        cutoff=cutoff,
        sentences=sentences,
        all=all_block,
        cut=cut_block,
        messages=errors.messages,
        gold_lines=len(gold_lines),
        test_lines=len(test_lines),
        aborted=aborted,
        warnings=_buffer_warnings(gold_lines, test_lines),
        missing_brackets=missing,
    )


def _buffer_warnings(gold_lines: Sequence[str], test_lines: Sequence[str]) -> list[str]:
    """A warning for the first gold and the first test line EVALB's buffer would cut."""
    warnings = []
    for name, source in (("gold", gold_lines), ("test", test_lines)):
        long = next(
            (i for i, line in enumerate(source) if len(line.rstrip("\n").encode()) > _LINE_BUFFER),
            None,
        )
        if long is not None:
            warnings.append(
                f"{name} line {long + 1} is longer than EVALB's 5000-byte line buffer: the "
                "original program would misread it (scored here as one sentence)"
            )
    return warnings
