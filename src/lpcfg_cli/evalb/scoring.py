"""Per-sentence matching (EVALB's ``calc_result``) and the totals of a summary block.

A sentence gets a ``Status``: ok, error (length or word mismatch, unbalanced or unreadable
brackets) or skip (a test line with no words, e.g. an empty or failed parse). Brackets
match as a multiset of (label, start, end); a test bracket is crossing when it overlaps a
gold bracket without nesting; complete match is matched = gold = test brackets.

EVALB leaves error and skip sentences out of every total, which flatters a parser that
fails. ``Block`` keeps EVALB's totals and, beside them, the strict ones: each error or
skip sentence (and each gold line with no test line) counts as all wrong, its gold
brackets joining the recall denominator and its test brackets the precision denominator,
with nothing matched. Strict F is their harmonic mean (0 when both are 0).

Percentages with a zero denominator are 0.0. EVALB's F-measure with recall = precision = 0
is C's 0/0, which it prints as ``-nan``: ``Block.figures`` gives it as None (``null`` in
JSON), so that the text and the JSON report say the same; ``fmeasure`` itself (per-label
figures, the strict F) gives 0.0 there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from lpcfg_cli.evalb.messages import ErrorLog
from lpcfg_cli.evalb.reader import Reader, ScoredBracket

__all__ = ["Block", "SentenceResult", "Status", "fmeasure", "pct", "score_sentence"]


class Status(Enum):
    """A sentence's status; the value is EVALB's code in its ``Stat.`` column."""

    OK = 0  # scored: counted in EVALB's totals
    ERROR = 1  # mismatch or bad brackets: left out of EVALB's totals
    SKIP = 2  # no test words: left out of EVALB's totals


def pct(a: float, b: float) -> float:
    """100 a / b, 0.0 when b is 0 (as EVALB prints it)."""
    return 100.0 * a / b if b else 0.0


def fmeasure(recall: float, precision: float) -> float:
    """EVALB's 2PR/(P+R); 0.0 where C gets 0/0 (printed as -nan in the text report)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


@dataclass(slots=True)
class SentenceResult:
    """One line of EVALB's per-sentence table, plus bracket counts for strict figures."""

    id: int
    length: int  # gold words except -NONE- (EVALB's Len.)
    status: Status  # EVALB's Stat.
    matched: int = 0
    gold: int = 0  # brackets as EVALB counts them (0 for skip and mismatch sentences)
    test: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    gold_brackets: int = 0  # brackets of the gold line whatever the status (strict figures)
    test_brackets: int = 0
    labels: dict[str, list[int]] = field(default_factory=dict)  # label -> [gold, test, match]

    @property
    def recall(self) -> float:
        return pct(self.matched, self.gold)

    @property
    def precision(self) -> float:
        return pct(self.matched, self.test)

    @property
    def tagging_accuracy(self) -> float:
        return pct(self.correct_tags, self.words)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "length": self.length,
            "status": self.status.name.lower(),
            "recall": self.recall,
            "precision": self.precision,
            "matched": self.matched,
            "gold": self.gold,
            "test": self.test,
            "crossing": self.crossing,
            "words": self.words,
            "correct_tags": self.correct_tags,
            "tagging_accuracy": self.tagging_accuracy,
        }


def score_sentence(
    reader: Reader, errors: ErrorLog, sid: int, gold_line: str, test_line: str
) -> SentenceResult:
    """EVALB's ``calc_result`` for one pair of lines (messages go to ``errors``)."""
    gold = reader.read(gold_line, sid, errors)
    test = reader.read(test_line, sid, errors)
    gold_kept = reader.kept(gold)
    test_kept = [] if test.unreadable else reader.kept(test)
    strict = {"gold_brackets": len(gold_kept), "test_brackets": len(test_kept)}
    if gold.unreadable or test.unreadable:  # only with no error limit
        return SentenceResult(sid, gold.length, Status.ERROR, **strict)
    if not test.words:
        return SentenceResult(sid, gold.length, Status.SKIP, **strict)
    if len(gold.words) != len(test.words):
        errors(sid, f"Length unmatch ({len(gold.words)}|{len(test.words)})")
        return SentenceResult(sid, gold.length, Status.ERROR, **strict)
    if gold.words != test.words:
        g, t = next((g, t) for g, t in zip(gold.words, test.words, strict=True) if g != t)
        errors(sid, f"Words unmatch ({g}|{t})")
        return SentenceResult(sid, gold.length, Status.ERROR, **strict)

    gold_bag, test_bag = Counter(gold_kept), Counter(test_kept)
    common = gold_bag & test_bag
    labels: dict[str, list[int]] = {}
    for bag, k in ((gold_bag, 0), (test_bag, 1), (common, 2)):
        for (lab, _, _), n in bag.items():
            labels.setdefault(lab, [0, 0, 0])[k] += n
    return SentenceResult(
        id=sid,
        length=gold.length,
        status=Status.ERROR if (gold.bad or test.bad) else Status.OK,
        matched=sum(common.values()),
        gold=len(gold_kept),
        test=len(test_kept),
        crossing=_crossing(gold_kept, test_kept, gold.irregular),
        words=len(gold.words),
        correct_tags=sum(g == t for g, t in zip(gold.tags, test.tags, strict=True)),
        labels=labels,
        **strict,
    )


def _crossing(gold: list[ScoredBracket], test: list[ScoredBracket], irregular: bool) -> int:
    """Test brackets that cross some gold bracket (EVALB counts per test bracket)."""
    gold_spans = {(s, e) for _, s, e in gold}
    count = 0
    for _, ts, te in test:
        # Gold spans nest (they come from balanced brackets), so a test span equal to
        # one of them crosses none; only with a stray close bracket is that not sure.
        if not irregular and (ts, te) in gold_spans:
            continue
        for gs, ge in gold_spans:
            if (gs < ts < ge < te) or (ts < gs < te < ge):
                count += 1
                break
    return count


@dataclass
class Block:
    """The totals of one summary block (all sentences, or those up to the cut-off)."""

    sentences: int = 0
    errors: int = 0
    skips: int = 0
    matched: int = 0
    gold: int = 0
    test: int = 0
    complete: int = 0
    words: int = 0
    crossing: int = 0
    no_crossing: int = 0
    two_crossing: int = 0
    correct_tags: int = 0
    missing: int = 0  # gold lines with no test line (strict figures only)
    strict_gold: int = 0
    strict_test: int = 0

    @property
    def valid(self) -> int:
        return self.sentences - self.errors - self.skips

    @property
    def not_scored(self) -> int:
        """Sentences the strict figures count as all wrong."""
        return self.errors + self.skips + self.missing

    def add(self, s: SentenceResult) -> None:
        """EVALB's ``individual_result`` totals, plus the strict denominators."""
        self.sentences += 1
        self.strict_gold += s.gold_brackets
        self.strict_test += s.test_brackets
        if s.status is Status.ERROR:
            self.errors += 1
        elif s.status is Status.SKIP:
            self.skips += 1
        else:
            self.matched += s.matched
            self.gold += s.gold
            self.test += s.test
            self.complete += s.gold == s.test == s.matched
            self.words += s.words
            self.crossing += s.crossing
            self.no_crossing += s.crossing == 0
            self.two_crossing += s.crossing <= 2
            self.correct_tags += s.correct_tags

    def add_missing(self, gold_brackets: int) -> None:
        """A gold line with no test line: all wrong in the strict figures, not in EVALB's."""
        self.missing += 1
        self.strict_gold += gold_brackets

    @property
    def f1(self) -> float | None:
        """EVALB's bracketing F-measure over the valid sentences (None where it is 0/0)."""
        return self.figures()["fmeasure"]  # type: ignore[return-value]

    @property
    def strict_f1(self) -> float:
        """The strict F-measure: skipped, failed and missing sentences count as wrong."""
        return self.figures()["strict_fmeasure"]  # type: ignore[return-value]

    @property
    def tagging_accuracy(self) -> float:
        return self.figures()["tagging_accuracy"]  # type: ignore[return-value]

    def figures(self) -> dict[str, float | None]:
        """Every figure of the block as numbers (EVALB's, then the strict ones); EVALB's
        F-measure is None where it is 0/0 (``-nan`` in its report)."""
        recall, precision = pct(self.matched, self.gold), pct(self.matched, self.test)
        valid = self.valid
        s_recall = pct(self.matched, self.strict_gold)
        s_precision = pct(self.matched, self.strict_test)
        return {
            "sentences": self.sentences,
            "error_sentences": self.errors,
            "skip_sentences": self.skips,
            "valid_sentences": valid,
            "matched_brackets": self.matched,
            "gold_brackets": self.gold,
            "test_brackets": self.test,
            "recall": recall,
            "precision": precision,
            "fmeasure": fmeasure(recall, precision) if recall + precision else None,
            "complete_match": pct(self.complete, valid),
            "average_crossing": self.crossing / valid if valid else 0.0,
            "no_crossing": pct(self.no_crossing, valid),
            "two_or_less_crossing": pct(self.two_crossing, valid),
            "words": self.words,
            "correct_tags": self.correct_tags,
            "tagging_accuracy": pct(self.correct_tags, self.words),
            "not_scored": self.not_scored,
            "strict_sentences": self.sentences + self.missing,
            "strict_gold_brackets": self.strict_gold,
            "strict_test_brackets": self.strict_test,
            "strict_recall": s_recall,
            "strict_precision": s_precision,
            "strict_fmeasure": fmeasure(s_recall, s_precision),
        }
