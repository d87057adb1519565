"""EVALB (Sekine & Collins) run with COLLINS.prm, reproduced exactly, plus strict figures.

``evaluate_lines(gold, test)`` scores one tree per line the way the original ``evalb -p
COLLINS.prm`` does, and ``format_report`` prints what it prints (per-sentence table and
``=== Summary ===`` block, byte for byte). The original program's conventions:

- Lines are read with EVALB's own character reader, not a tree library. ``(`` starts a
  label; ``(LABEL WORD)`` is a terminal; an empty line, ``()``, ``(())`` or ``(TOP)`` has no
  words and is a *skip* sentence. Unbalanced brackets make an *error* sentence whose
  per-sentence line still shows computed figures (a bracket never closed ends at -1, so it
  matches nothing). A bracket holding two words, or a word outside brackets, makes the
  reader loop on "Reading sentence" errors until the error limit stops the run.
- Pre-terminals labelled ``-NONE- , : `` '' .`` are deleted with their word before spans
  are computed; other brackets are deleted when they cover no word or their label is one
  of those (or ``TOP``): so ``TOP`` goes, while an empty outer bracket ``( (S ..) )`` or
  ``ROOT`` is a real bracket.
- A bracket label is cut at its first ``-`` or ``=`` (``NP-SBJ-1`` -> ``NP``). The cut
  happens at position 0 too, so ``-NONE-`` or ``-LRB-`` as a *bracket* label becomes the
  empty label (it is not deleted and it matches an empty outer bracket). Tags are compared
  uncut. ADVP and PRT are equivalent, as labels and as tags.
- Brackets match as a multiset of (label, start, end). A test bracket is crossing when it
  overlaps a gold bracket without nesting. Complete match: matched = gold = test brackets.
- The length for the cut-off block counts gold words except ``-NONE-`` (punctuation
  included). Length or word mismatches are error sentences; error and skip sentences are
  left out of every total; after more than MAX_ERROR (10) error messages the program stops
  with no summary. Percentages with a zero denominator are 0.00, but an F-measure with
  recall = precision = 0 is C's 0/0 and prints as ``-nan``.

Not reproduced: EVALB's fixed buffers (5000-byte lines, flagged in ``result.warnings``;
200 words or brackets per sentence) and its undefined behaviour on a close bracket with
nothing open (it reads below its stack array; here the stack just extends below zero, so
that close bracket closes nothing, and the sentence is an error sentence as in EVALB).

Strict figures. EVALB leaves skipped and error sentences out of its totals, which flatters
a parser that fails. The strict figures count each of them as all wrong: its gold brackets
join the recall denominator and its test brackets the precision denominator, with nothing
matched; a gold line with no test line counts as a skipped sentence. Strict recall =
matched / (gold brackets of every gold line), strict precision = matched / (test brackets
of every paired line), strict F = their harmonic mean (0 when both are 0).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "COLLINS",
    "NONE",
    "PARAMS",
    "Block",
    "EvalbParams",
    "EvalResult",
    "SentenceResult",
    "convention_warning",
    "evaluate_lines",
    "format_report",
    "root_convention",
]

# C's isspace() in the C locale; EVALB's terminators are these and the two parentheses.
_WS = " \t\n\v\f\r"
_SCAN = re.compile(
    rf"[{_WS}]*(?:"
    rf"\((?P<label>[^{_WS}()]*)(?:(?P<gap>[{_WS}]+)(?P<word>[^{_WS}()]*))?"
    r"|(?P<close>\))"
    rf"|(?P<other>[^{_WS}()]))",
)
_CUT = re.compile(r"[-=]")


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


class _Stop(Exception):
    """EVALB exits here: more than MAX_ERROR errors."""


class _Unreadable(Exception):
    """EVALB would repeat "Reading sentence" forever (only raised with no error limit)."""


class _Errors:
    """EVALB's ``Error()``: print ``LINE : message``, stop after more than max_error."""

    def __init__(self, max_error: int | None) -> None:
        self.max_error = max_error
        self.count = 0
        self.messages: list[str] = []

    def __call__(self, line: int, text: str) -> None:
        self.messages.append(f"{line} : {text}")
        self.count += 1
        if self.max_error is not None and self.count - 1 > self.max_error:
            raise _Stop

    def forever(self, line: int, text: str) -> None:
        """An error the reader repeats without advancing: the run stops (or, with no
        error limit, the line is given up after one message)."""
        self(line, text)
        if self.max_error is None:
            raise _Unreadable
        while True:
            self(line, text)


class _Silent(_Errors):
    """Reading a line only to count its brackets: no messages, never stops."""

    def __init__(self) -> None:
        super().__init__(None)

    def __call__(self, line: int, text: str) -> None:
        pass


@dataclass(slots=True)
class _Line:
    """One line as EVALB's ``read_line`` leaves it."""

    tags: list[str]  # terminal labels (canonical for EQ_LABEL), deleted terminals left out
    words: list[str]
    brackets: list[list[Any]]  # [label, start, end]; end -1 when never closed
    length: int  # words whose label is not in DELETE_LABEL_FOR_LENGTH
    bad: bool = False  # an error was reported while reading (unbalanced brackets)
    irregular: bool = False  # a close bracket with nothing open (EVALB: undefined)
    unreadable: bool = False


class _Scorer:
    """Reading and scoring with one parameter set (label look-ups cached)."""

    def __init__(self, params: EvalbParams) -> None:
        self.params = params
        self.canon = params.canonical()
        self.deleted_terminals = params.delete_labels
        self.for_length = params.delete_for_length
        self.deleted_brackets = {self.canon.get(d, d) for d in params.delete_labels}
        self._labels: dict[str, str | None] = {}

    def read(self, text: str, line: int, errors: _Errors) -> _Line:
        """EVALB's reader, character for character (see the module docstring)."""
        tags: list[str] = []
        words: list[str] = []
        brackets: list[list[Any]] = []
        stack: dict[int, int] = {}  # EVALB's stack array; below 0 it reads stray memory
        top = 0
        length = 0
        out = _Line(tags, words, brackets, 0)
        canon, deleted, for_length = self.canon, self.deleted_terminals, self.for_length
        match, pos, n = _SCAN.match, 0, len(text)
        try:
            while True:
                m = match(text, pos)
                if m is None:
                    break
                pos = m.end()
                label = m.group("label")
                if label is not None:
                    if m.group("gap") is not None:
                        word = m.group("word")
                        nxt = text[pos] if pos < n else ""
                        if nxt == ")":
                            pos += 1
                            if label not in for_length:
                                length += 1
                            if label not in deleted:
                                tags.append(canon.get(label, label))
                                words.append(word)
                            continue
                        if nxt != "(":
                            errors(line, "More than two elements in a bracket")
                            out.bad = True
                        if word:  # the reader resumes on the word and cannot move
                            errors.forever(line, "Reading sentence")
                    stack[top] = len(brackets)
                    top += 1
                    brackets.append([label, len(words), -1])
                elif m.group("close") is not None:
                    b = stack.get(top - 1)
                    if top <= 0:
                        out.irregular = True
                        if top < 0:
                            errors(line, "Bracketing unbalance (too many close bracket)")
                            out.bad = True
                    top -= 1
                    if b is not None:
                        brackets[b][2] = len(words)
                else:
                    errors.forever(line, "Reading sentence")
            if top != 0:
                errors(line, "Bracketing is unbalanced (too many open bracket)")
                out.bad = True
        except _Unreadable:
            out.unreadable = out.bad = True
        out.length = length
        return out

    def label(self, raw: str) -> str | None:
        """A bracket's label for matching (cut, canonical), None if the bracket is deleted."""
        try:
            return self._labels[raw]
        except KeyError:
            pass
        cut = _CUT.split(raw, maxsplit=1)[0]
        cut = self.canon.get(cut, cut)
        out = None if cut in self.deleted_brackets else (cut if self.params.labeled else "")
        self._labels[raw] = out
        return out

    def kept(self, tree: _Line) -> list[tuple[str, int, int]]:
        """EVALB's ``massage_data``: brackets that count (covering a word, label kept)."""
        label = self.label
        out = []
        for raw, start, end in tree.brackets:
            if start != end:
                lab = label(raw)
                if lab is not None:
                    out.append((lab, start, end))
        return out


@dataclass(slots=True)
class SentenceResult:
    """One line of EVALB's per-sentence table, plus bracket counts for strict figures."""

    id: int
    length: int  # gold words except -NONE- (EVALB's Len.)
    status: int  # 0 ok, 1 error, 2 skip (EVALB's Stat.)
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
        return 100.0 * self.matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return 100.0 * self.matched / self.test if self.test else 0.0

    @property
    def tagging_accuracy(self) -> float:
        return 100.0 * self.correct_tags / self.words if self.words else 0.0

    def line(self) -> str:
        """The sentence's row of EVALB's table (same printf formats)."""
        return (
            f"{self.id:4d}  {self.length:3d}    {self.status:d}  "
            f"{self.recall:6.2f} {self.precision:6.2f}   {self.matched:3d}    "
            f"{self.gold:3d}  {self.test:3d}    {self.crossing:3d}"
            f"   {self.words:4d}  {self.correct_tags:4d}   {self.tagging_accuracy:6.2f}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "length": self.length,
            "status": ("ok", "error", "skip")[self.status],
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


def _pct(a: float, b: float) -> float:
    return 100.0 * a / b if b else 0.0


def _fmeasure(recall: float, precision: float) -> float:
    """EVALB's 2PR/(P+R); 0.0 where C gets 0/0 (printed as -nan in the text report)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


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
        if s.status == 1:
            self.errors += 1
        elif s.status == 2:
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

    def figures(self) -> dict[str, float]:
        """Every figure of the block as numbers (EVALB's, then the strict ones)."""
        recall, precision = _pct(self.matched, self.gold), _pct(self.matched, self.test)
        valid = self.valid
        s_recall = _pct(self.matched, self.strict_gold)
        s_precision = _pct(self.matched, self.strict_test)
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
            "fmeasure": _fmeasure(recall, precision),
            "complete_match": _pct(self.complete, valid),
            "average_crossing": self.crossing / valid if valid else 0.0,
            "no_crossing": _pct(self.no_crossing, valid),
            "two_or_less_crossing": _pct(self.two_crossing, valid),
            "words": self.words,
            "correct_tags": self.correct_tags,
            "tagging_accuracy": _pct(self.correct_tags, self.words),
            "not_scored": self.not_scored,
            "strict_sentences": self.sentences + self.missing,
            "strict_gold_brackets": self.strict_gold,
            "strict_test_brackets": self.strict_test,
            "strict_recall": s_recall,
            "strict_precision": s_precision,
            "strict_fmeasure": _fmeasure(s_recall, s_precision),
        }

    def summary(self) -> list[str]:
        """The block's lines of EVALB's summary (same labels and printf formats)."""
        f = self.figures()
        fmeasure = f"{f['fmeasure']:6.2f}" if f["recall"] + f["precision"] else "  -nan"
        return [
            f"Number of sentence        = {self.sentences:6d}",
            f"Number of Error sentence  = {self.errors:6d}",
            f"Number of Skip  sentence  = {self.skips:6d}",
            f"Number of Valid sentence  = {self.valid:6d}",
            f"Bracketing Recall         = {f['recall']:6.2f}",
            f"Bracketing Precision      = {f['precision']:6.2f}",
            f"Bracketing FMeasure       = {fmeasure}",
            f"Complete match            = {f['complete_match']:6.2f}",
            f"Average crossing          = {f['average_crossing']:6.2f}",
            f"No crossing               = {f['no_crossing']:6.2f}",
            f"2 or less crossing        = {f['two_or_less_crossing']:6.2f}",
            f"Tagging accuracy          = {f['tagging_accuracy']:6.2f}",
        ]

    def strict_line(self, name: str) -> str:
        f = self.figures()
        return (
            f"Strict FMeasure ({name}; skipped/error sentences counted as wrong) = "
            f"{f['strict_fmeasure']:6.2f}  [{self.not_scored} of {self.sentences + self.missing}"
            f" sentences not scored; R {f['strict_recall']:.2f}, P {f['strict_precision']:.2f}]"
        )


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

    @property
    def not_scored(self) -> int:
        """Skipped and error sentences, and gold lines with no test line."""
        return self.all.not_scored

    def totals_line(self) -> str:
        """The line under the per-sentence table (EVALB omits its bracket part when
        there are no gold or no test brackets)."""
        b = self.all
        head = ""
        if b.gold > 0 and b.test > 0:
            head = (
                f"{'':16}{_pct(b.matched, b.gold):6.2f} {_pct(b.matched, b.test):6.2f} "
                f"{b.matched:6d} {b.gold:5d} {b.test:5d}  {b.crossing:5d}"
            )
        return f"{head}  {b.words:5d} {b.correct_tags:5d}   {_pct(b.correct_tags, b.words):6.2f}"

    def label_rows(self) -> list[tuple[str, int, int, int]]:
        """(label, gold, test, matched) over valid sentences, most frequent gold first."""
        totals: dict[str, list[int]] = {}
        for s in self.sentences:
            if s.status == 0:
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
                    "recall": _pct(m, g),
                    "precision": _pct(m, t),
                    "fmeasure": _fmeasure(_pct(m, g), _pct(m, t)),
                }
                for lab, g, t, m in self.label_rows()
            }
        if per_sentence:
            out["sentences"] = [s.to_dict() for s in self.sentences]
        return out

    def to_json(self, *, per_sentence: bool = False, labels: bool = False) -> str:
        """Machine-readable summary: both blocks' figures, strict figures, counts."""
        return json.dumps(self.to_dict(per_sentence=per_sentence, labels=labels), indent=2)


HEADER = (
    "  Sent.                        Matched  Bracket   Cross        Correct Tag\n"
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy\n" + "=" * 76
)


def evaluate_lines(
    gold_lines: Sequence[str],
    test_lines: Sequence[str],
    params: EvalbParams = COLLINS,
    cutoff: int = 40,
) -> EvalResult:
    """Score test trees against gold trees, one tree per line, exactly as EVALB does.

    Lines may keep or lose their newline. Never raises on bad trees: problems become
    EVALB's messages (``result.messages``), error sentences, or ``result.aborted``.
    """
    scorer = _Scorer(params)
    errors = _Errors(params.max_error)
    sentences: list[SentenceResult] = []
    all_block, cut_block = Block(), Block()
    paired = min(len(gold_lines), len(test_lines))
    aborted = False
    try:
        for i in range(paired):
            s = _sentence(scorer, errors, i + 1, gold_lines[i], test_lines[i])
            sentences.append(s)
            all_block.add(s)
            if s.length <= cutoff:
                cut_block.add(s)
        if len(gold_lines) > paired:
            # EVALB reads the next gold line (reporting its errors) before it notices.
            scorer.read(gold_lines[paired], paired + 1, errors)
            errors(paired + 1, "Number of lines unmatch (too many lines in gold file)")
        elif len(test_lines) > paired:
            errors(paired + 1, "Number of lines unmatch (too many lines in test file)")
    except _Stop:
        aborted = True
    for line in gold_lines[paired:]:  # strict figures: a gold line with no parse is wrong
        tree = scorer.read(line, 0, _Silent())
        n = len(scorer.kept(tree))
        for block in (all_block, cut_block) if tree.length <= cutoff else (all_block,):
            block.missing += 1
            block.strict_gold += n
    warnings = []
    for name, source in (("gold", gold_lines), ("test", test_lines)):
        long = next(
            (i for i, line in enumerate(source) if len(line.rstrip("\n").encode()) > 4998), None
        )
        if long is not None:
            warnings.append(
                f"{name} line {long + 1} is longer than EVALB's 5000-byte line buffer: the "
                "original program would misread it (scored here as one sentence)"
            )
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
        warnings=warnings,
    )


def _sentence(
    scorer: _Scorer, errors: _Errors, sid: int, gold_line: str, test_line: str
) -> SentenceResult:
    """EVALB's ``calc_result`` for one pair of lines."""
    gold = scorer.read(gold_line, sid, errors)
    test = scorer.read(test_line, sid, errors)
    gold_kept = scorer.kept(gold)
    test_kept = [] if test.unreadable else scorer.kept(test)
    strict = {"gold_brackets": len(gold_kept), "test_brackets": len(test_kept)}
    if gold.unreadable or test.unreadable:  # only with no error limit
        return SentenceResult(sid, gold.length, 1, **strict)
    if not test.words:
        return SentenceResult(sid, gold.length, 2, **strict)
    if len(gold.words) != len(test.words):
        errors(sid, f"Length unmatch ({len(gold.words)}|{len(test.words)})")
        return SentenceResult(sid, gold.length, 1, **strict)
    if gold.words != test.words:
        g, t = next((g, t) for g, t in zip(gold.words, test.words, strict=True) if g != t)
        errors(sid, f"Words unmatch ({g}|{t})")
        return SentenceResult(sid, gold.length, 1, **strict)

    gold_bag, test_bag = Counter(gold_kept), Counter(test_kept)
    common = gold_bag & test_bag
    labels: dict[str, list[int]] = {}
    for bag, k in ((gold_bag, 0), (test_bag, 1), (common, 2)):
        for (lab, _, _), n in bag.items():
            labels.setdefault(lab, [0, 0, 0])[k] += n
    return SentenceResult(
        id=sid,
        length=gold.length,
        status=1 if (gold.bad or test.bad) else 0,
        matched=sum(common.values()),
        gold=len(gold_kept),
        test=len(test_kept),
        crossing=_crossing(gold_kept, test_kept, gold.irregular),
        words=len(gold.words),
        correct_tags=sum(g == t for g, t in zip(gold.tags, test.tags, strict=True)),
        labels=labels,
        **strict,
    )


def _crossing(
    gold: list[tuple[str, int, int]], test: list[tuple[str, int, int]], irregular: bool
) -> int:
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
        out.extend(s.line() for s in result.sentences)
    if result.aborted:
        return "".join(line + "\n" for line in out)
    if per_sentence:
        out += ["=" * 76, result.totals_line()]
    out += ["=== Summary ===", "", "-- All --", *result.all.summary()]
    out += ["", f"-- len<={result.cutoff} --", *result.cut.summary()]
    if strict:
        out += [
            "",
            result.all.strict_line("all"),
            result.cut.strict_line(f"len<={result.cutoff}"),
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
        r, p = _pct(m, g), _pct(m, t)
        lines.append(
            f"{lab or '(empty)':<12}{g:7d}{t:7d}{m:7d}{r:8.2f}{p:8.2f}{_fmeasure(r, p):9.2f}"
        )
    return lines


def root_convention(line: str, params: EvalbParams = COLLINS) -> str | None:
    """The root bracket a tree line adds, as EVALB scores it.

    ``"''"`` for an empty outer bracket ``( (S ..) )``, the label for a wrapper such as
    ``(ROOT (S ..))``, ``"-"`` when there is no scored wrapper (none, or a deleted one such
    as TOP), None when the line has no words (nothing to judge).
    """
    scorer = _Scorer(params)
    tree = scorer.read(line, 0, _Silent())
    if not tree.words or tree.unreadable or not tree.brackets:
        return None
    outer = tree.brackets[0]
    inner = tree.brackets[1] if len(tree.brackets) > 1 else None
    n = len(tree.words)
    wraps = (
        outer[1] == 0
        and outer[2] == n
        and inner is not None
        and inner[1] == 0
        and inner[2] == n
        and outer[0] in ("", "TOP", "ROOT", "VROOT", "S1")
    )
    if not wraps:
        return "-"
    label = scorer.label(outer[0])
    if label is None:
        return "-"
    return label or "''"


def convention_warning(
    gold_lines: Sequence[str], test_lines: Sequence[str], params: EvalbParams = COLLINS
) -> str | None:
    """A one-line warning when the first trees of GOLD and TEST wrap their root
    differently in a way EVALB scores (e.g. ``( (S ..) )`` vs ``(TOP (S ..))``): the extra
    root bracket then misses in every sentence."""
    gold = next((c for c in map(lambda s: root_convention(s, params), gold_lines) if c), None)
    test = next((c for c in map(lambda s: root_convention(s, params), test_lines) if c), None)
    if gold is None or test is None or gold == test:
        return None

    def describe(conv: str) -> str:
        if conv == "''":
            return "an empty outer bracket '( (S ..) )'"
        if conv == "-":
            return "no scored root bracket"
        return f"a '({conv} ..)' root bracket"

    return (
        f"root conventions differ: gold trees have {describe(gold)}, test trees have "
        f"{describe(test)}; EVALB scores that root bracket, so every sentence loses it "
        "(normalise the roots, e.g. both with TOP, which EVALB deletes)"
    )
