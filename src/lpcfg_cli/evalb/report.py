"""The text EVALB prints, byte for byte, then our strict lines and a per-label table.

``format_report`` prints the per-sentence table (optional) and the ``=== Summary ===``
block with the original program's labels and printf formats (an F-measure that is C's
0/0 prints as ``-nan``); then the strict F-measure of each block and, optionally, the
per-label table. The numbers come from ``run.EvalResult``; only their text is made here.
"""

from __future__ import annotations

from dataclasses import dataclass

from lpcfg_cli.evalb.run import EvalResult
from lpcfg_cli.evalb.scoring import Block, SentenceResult, fmeasure, pct
from lpcfg_cli.hyperparams import switch

__all__ = ["HEADER", "ReportOptions", "format_report", "label_table"]


@dataclass(frozen=True)
class ReportOptions:
    """What a report holds besides the summary (``format_report``, ``EvalResult.to_dict``)."""

    per_sentence: bool = switch(
        "EVALB's per-sentence table (and its totals line) before the summary."
    )
    labels: bool = switch("Per-label recall/precision/F1 table after the summary.")
    errors: bool = switch(
        "Errors by kind after the summary (Kummerfeld et al. 2012: PP attachment, "
        "coordination, unary...): the repairs that turn each parse into its gold tree, and "
        "the brackets each kind costs (JSON: 'errors', with --per-sentence each sentence's "
        "repairs)."
    )


_RULE = "=" * 76
HEADER = (
    "  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n" + _RULE
)


def format_report(
    result: EvalResult, *, per_sentence: bool = False, labels: bool = False, strict: bool = True
) -> str:
    """EVALB's output: the per-sentence table (optional) and the summary, exactly as the
    original prints them; then the strict lines and, optionally, a per-label table.

    If EVALB stopped (too many errors) this is only what it printed before stopping.
    """
    out: list[str] = []
    if per_sentence:
        out.append(HEADER)
        out.extend(_sentence_row(s) for s in result.sentences)
    if result.aborted:
        return "".join(line + "\n" for line in out)
    if per_sentence:
        out += [_RULE, _totals_line(result.all)]
    out += ["=== Summary ===", "", "-- All --", *_summary(result.all)]
    out += ["", f"-- len<={result.cutoff} --", *_summary(result.cut)]
    if strict:
        out += [
            "",
            _strict_line(result.all, "all"),
            _strict_line(result.cut, f"len<={result.cutoff}"),
        ]
    if labels:
        out += ["", *label_table(result)]
    return "".join(line + "\n" for line in out)


def label_table(result: EvalResult) -> list[str]:
    """Per-label recall, precision and F1 over the valid sentences (labels as EVALB
    compares them: cut, ADVP standing for ADVP/PRT, ``(empty)`` for an empty label)."""
    lines = [
        "=== Labels (valid sentences) ===",
        f"{'Label':<12}{'Gold':>7}{'Test':>7}{'Match':>7}{'Recall':>8}{'Prec.':>8}{'FMeasure':>9}",
    ]
    for lab, g, t, m in result.label_rows():
        r, p = pct(m, g), pct(m, t)
        lines.append(
            f"{lab or '(empty)':<12}{g:7d}{t:7d}{m:7d}{r:8.2f}{p:8.2f}{fmeasure(r, p):9.2f}"
        )
    return lines


def _sentence_row(s: SentenceResult) -> str:
    """The sentence's row of EVALB's table (same printf formats)."""
    return (
        f"{s.id:4d}  {s.length:3d}    {s.status.value:d}  "
        f"{s.recall:6.2f} {s.precision:6.2f}   {s.matched:3d}    "
        f"{s.gold:3d}  {s.test:3d}    {s.crossing:3d}"
        f"   {s.words:4d}  {s.correct_tags:4d}   {s.tagging_accuracy:6.2f}"
    )


def _totals_line(b: Block) -> str:
    """The line under the per-sentence table (EVALB omits its bracket part when there
    are no gold or no test brackets)."""
    head = ""
    if b.gold > 0 and b.test > 0:
        head = (
            f"{'':16}{pct(b.matched, b.gold):6.2f} {pct(b.matched, b.test):6.2f} "
            f"{b.matched:6d} {b.gold:5d} {b.test:5d}  {b.crossing:5d}"
        )
    return f"{head}  {b.words:5d} {b.correct_tags:5d}   {pct(b.correct_tags, b.words):6.2f}"


def _summary(b: Block) -> list[str]:
    """The block's lines of EVALB's summary (same labels and printf formats)."""
    f = b.figures()
    fm = "  -nan" if f["fmeasure"] is None else f"{f['fmeasure']:6.2f}"
    return [
        f"Number of sentence        = {b.sentences:6d}",
        f"Number of Error sentence  = {b.errors:6d}",
        f"Number of Skip  sentence  = {b.skips:6d}",
        f"Number of Valid sentence  = {b.valid:6d}",
        f"Bracketing Recall         = {f['recall']:6.2f}",
        f"Bracketing Precision      = {f['precision']:6.2f}",
        f"Bracketing FMeasure       = {fm}",
        f"Complete match            = {f['complete_match']:6.2f}",
        f"Average crossing          = {f['average_crossing']:6.2f}",
        f"No crossing               = {f['no_crossing']:6.2f}",
        f"2 or less crossing        = {f['two_or_less_crossing']:6.2f}",
        f"Tagging accuracy          = {f['tagging_accuracy']:6.2f}",
    ]


def _strict_line(b: Block, name: str) -> str:
    """The block's strict F-measure line (not EVALB's: skipped/error sentences as wrong)."""
    f = b.figures()
    return (
        f"Strict FMeasure ({name}; skipped/error sentences counted as wrong) = "
        f"{f['strict_fmeasure']:6.2f}  [{b.not_scored} of {b.sentences + b.missing}"
        f" sentences not scored; R {f['strict_recall']:.2f}, P {f['strict_precision']:.2f}]"
    )
