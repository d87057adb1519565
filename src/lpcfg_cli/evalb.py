"""EVALB (Sekine & Collins) with COLLINS.prm, reproduced exactly, plus a strict F1.

Conventions of the original program, all reproduced:

- Each line is one sentence, read with EVALB's own bracket reader (not nltk): an empty
  line, ``()``, ``(())`` or a tree without words is a *skip* sentence; unbalanced brackets
  make an *error* sentence whose figures are still computed and printed; a bracket holding
  two words aborts the run ("More than two elements in a bracket").
- Labels are cut at the first ``-`` or ``=`` unless they start with ``-`` (``-LRB-``);
  ADVP and PRT are the same label (brackets and tags).
- Pre-terminals labelled ``-NONE- , : `` '' .`` are deleted with their word before spans
  are computed; a nonterminal labelled TOP loses its bracket only (an empty-labelled outer
  bracket or ROOT counts like any other bracket).
- Brackets match as a multiset; a bracket covering only deleted words vanishes.
- The sentence length used for the cut-off counts gold words except -NONE-.
- Length or word mismatches are error sentences (reported on stderr with the line
  number); error and skip sentences are left out of every total; after more than
  MAX_ERROR errors the program stops without a summary.

Because leaving failed sentences out flatters a parser that fails, ``strict`` figures also
count every skipped or error sentence (and gold lines without a test line) as all wrong:
their gold brackets join the recall denominator, their test brackets (if readable) the
precision denominator, with nothing matched.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class EvalbParams:
    """The settings of an EVALB parameter file."""

    delete_labels: frozenset[str]
    delete_for_length: frozenset[str]
    equivalent: dict[str, str]
    max_error: int | None
    labeled: bool = True


COLLINS = EvalbParams(
    delete_labels=frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."}),
    delete_for_length=frozenset({"-NONE-"}),
    equivalent={"PRT": "ADVP"},
    max_error=10,
)
NONE = EvalbParams(
    delete_labels=frozenset({"TOP", "-NONE-"}),
    delete_for_length=frozenset({"-NONE-"}),
    equivalent={},
    max_error=None,
)
PARAMS = {"collins": COLLINS, "none": NONE}


class EvalbAbort(Exception):
    """The original program stops here (too many errors, unreadable bracket)."""


@dataclass
class _Tree:
    """A line as EVALB reads it: terminals and bracket spans over the kept terminals."""

    terminals: list[tuple[str, str]]  # (tag, word), deleted pre-terminals left out
    brackets: list[tuple[str, int, int]]  # (label, start, end) over kept terminals
    length: int  # words whose tag is not a delete-for-length label


class _Errors:
    """EVALB's error reporting: every error is a message, and the run stops at the
    error after more than ``max_error`` of them (counted over the whole run)."""

    def __init__(self, max_error: int | None):
        self.max_error = max_error
        self.count = 0
        self.messages: list[str] = []

    def __call__(self, lineno: int, text: str) -> None:
        self.messages.append(f"{lineno} : {text}")
        self.count += 1
        if self.max_error is not None and self.count - 1 > self.max_error:
            raise EvalbAbort

    def forever(self, lineno: int, text: str) -> None:
        """An error the original program repeats until it gives up."""
        if self.max_error is None:
            raise _Unreadable
        while True:
            self(lineno, text)


class _Unreadable(Exception):
    """A line the original program cannot read (with no error limit: an error sentence)."""


def _read(line: str, lineno: int, params: EvalbParams, errors: _Errors) -> tuple[_Tree, bool]:
    """EVALB's reading of one line; returns (tree, unbalanced)."""
    tokens = _TOKEN.findall(line)
    terminals: list[tuple[str, str]] = []
    brackets: list[tuple[str, int, int]] = []
    stack: list[tuple[str, int]] = []
    length = 0
    unbalanced = False
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if tok == "(":
            label = ""
            if i + 1 < n and tokens[i + 1] not in ("(", ")"):
                label = tokens[i + 1]
                i += 1
            if i + 1 < n and tokens[i + 1] not in ("(", ")"):  # a word follows the label
                after = tokens[i + 2] if i + 2 < n else ")"
                if after == ")":
                    word = tokens[i + 1]
                    if label not in params.delete_for_length:
                        length += 1
                    if label not in params.delete_labels:
                        terminals.append((label, word))
                    i += 3
                    continue
                if after != "(":
                    errors(lineno, "More than two elements in a bracket")
                errors.forever(lineno, "Reading sentence")
            stack.append((label, len(terminals)))
        elif tok == ")":
            if stack:
                label, start = stack.pop()
                brackets.append((label, start, len(terminals)))
            else:
                unbalanced = True
        else:
            errors.forever(lineno, "Reading sentence")
        i += 1
    if stack or unbalanced:
        for label, start in reversed(stack):
            brackets.append((label, start, len(terminals)))
        errors(lineno, "Bracketing is unbalanced (too many open bracket)")
        unbalanced = True
    return _Tree(terminals, brackets, length), unbalanced


def _bracket_label(label: str, params: EvalbParams) -> str:
    """EVALB trims a bracket label at its first '-' or '=' (so '-NONE-' becomes '')."""
    label = re.split(r"[-=]", label, maxsplit=1)[0]
    return params.equivalent.get(label, label)


@dataclass
class _Scored:
    """Brackets and words after deletion."""

    words: list[str]
    tags: list[str]
    brackets: Counter[tuple[str, int, int]]
    length: int  # words except delete_for_length (for the cut-off)


def _score_view(tree: _Tree, params: EvalbParams) -> _Scored:
    deleted = {params.equivalent.get(d, d) for d in params.delete_labels}
    brackets: Counter[tuple[str, int, int]] = Counter()
    for label, start, end in tree.brackets:
        label = _bracket_label(label, params)
        if end > start and label not in deleted:
            brackets[(label if params.labeled else "", start, end)] += 1
    return _Scored(
        [w for _, w in tree.terminals],
        [params.equivalent.get(t, t) for t, _ in tree.terminals],
        brackets,
        tree.length,
    )


@dataclass
class SentenceResult:
    """One line of EVALB's per-sentence table."""

    id: int
    length: int
    status: int  # 0 ok, 1 error, 2 skip
    matched: int = 0
    gold: int = 0
    test: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    gold_brackets: int = 0  # for the strict figures: gold brackets whatever the status
    test_brackets: int = 0
    labels: dict[str, list[int]] = field(default_factory=dict)  # label -> [gold, test, match]

    def line(self) -> str:
        recall = 100.0 * self.matched / self.gold if self.gold else 0.0
        prec = 100.0 * self.matched / self.test if self.test else 0.0
        acc = 100.0 * self.correct_tags / self.words if self.words else 0.0
        return (
            f"{self.id:4d}  {self.length:3d}    {self.status:d}  {recall:6.2f} {prec:6.2f}   "
            f"{self.matched:3d}    {self.gold:3d}  {self.test:3d}    {self.crossing:3d}   "
            f"{self.words:4d}  {self.correct_tags:4d}   {acc:6.2f}"
        )


def _crossing(gold: Counter, test: Counter) -> int:
    spans = [(s, e) for (_, s, e) in gold]
    count = 0
    for (_, ts, te), n in test.items():
        for gs, ge in spans:
            if (gs < ts < ge < te) or (ts < gs < te < ge):
                count += n
                break
    return count


def _compare(sid: int, gold: _Scored, test: _Scored, status: int) -> SentenceResult:
    matched = sum((gold.brackets & test.brackets).values())
    labels: dict[str, list[int]] = {}
    for (lab, _, _), n in gold.brackets.items():
        labels.setdefault(lab, [0, 0, 0])[0] += n
    for (lab, _, _), n in test.brackets.items():
        labels.setdefault(lab, [0, 0, 0])[1] += n
    for (lab, _, _), n in (gold.brackets & test.brackets).items():
        labels[lab][2] += n
    return SentenceResult(
        id=sid,
        length=gold.length,
        status=status,
        matched=matched,
        gold=sum(gold.brackets.values()),
        test=sum(test.brackets.values()),
        crossing=_crossing(gold.brackets, test.brackets),
        words=len(gold.words),
        correct_tags=sum(g == t for g, t in zip(gold.tags, test.tags, strict=False)),
        gold_brackets=sum(gold.brackets.values()),
        test_brackets=sum(test.brackets.values()),
        labels=labels,
    )


@dataclass
class Block:
    """The figures of one summary block (all sentences, or those up to the cut-off)."""

    sentences: int = 0
    errors: int = 0
    skips: int = 0
    matched: int = 0
    gold: int = 0
    test: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    complete: int = 0
    no_crossing: int = 0
    two_crossing: int = 0
    strict_gold: int = 0
    strict_test: int = 0

    @property
    def valid(self) -> int:
        return self.sentences - self.errors - self.skips

    def add(self, s: SentenceResult) -> None:
        self.sentences += 1
        self.strict_gold += s.gold_brackets
        self.strict_test += s.test_brackets
        if s.status == 1:
            self.errors += 1
            return
        if s.status == 2:
            self.skips += 1
            return
        self.matched += s.matched
        self.gold += s.gold
        self.test += s.test
        self.crossing += s.crossing
        self.words += s.words
        self.correct_tags += s.correct_tags
        self.complete += s.matched == s.gold and s.matched == s.test
        self.no_crossing += s.crossing == 0
        self.two_crossing += s.crossing <= 2

    def figures(self) -> dict[str, float]:
        def pct(a: float, b: float) -> float:
            return 100.0 * a / b if b else 0.0

        recall, precision = pct(self.matched, self.gold), pct(self.matched, self.test)
        strict_r = pct(self.matched, self.strict_gold)
        strict_p = pct(self.matched, self.strict_test)
        return {
            "sentences": self.sentences,
            "error_sentences": self.errors,
            "skip_sentences": self.skips,
            "valid_sentences": self.valid,
            "recall": recall,
            "precision": precision,
            "fmeasure": _f(recall, precision),
            "complete_match": pct(self.complete, self.valid),
            "average_crossing": self.crossing / self.valid if self.valid else 0.0,
            "no_crossing": pct(self.no_crossing, self.valid),
            "two_or_less_crossing": pct(self.two_crossing, self.valid),
            "tagging_accuracy": pct(self.correct_tags, self.words),
            "strict_recall": strict_r,
            "strict_precision": strict_p,
            "strict_fmeasure": _f(strict_r, strict_p),
        }

    def summary(self) -> list[str]:
        f = self.figures()
        return [
            f"Number of sentence        = {self.sentences:6d}",
            f"Number of Error sentence  = {self.errors:6d}",
            f"Number of Skip  sentence  = {self.skips:6d}",
            f"Number of Valid sentence  = {self.valid:6d}",
            f"Bracketing Recall         = {f['recall']:6.2f}",
            f"Bracketing Precision      = {f['precision']:6.2f}",
            # C's 2pr/(p+r) with p = r = 0 is a NaN, which glibc prints as -nan.
            "Bracketing FMeasure       = "
            + (f"{f['fmeasure']:6.2f}" if f["recall"] + f["precision"] > 0 else "  -nan"),
            f"Complete match            = {f['complete_match']:6.2f}",
            f"Average crossing          = {f['average_crossing']:6.2f}",
            f"No crossing               = {f['no_crossing']:6.2f}",
            f"2 or less crossing        = {f['two_or_less_crossing']:6.2f}",
            f"Tagging accuracy          = {f['tagging_accuracy']:6.2f}",
        ]


def _f(r: float, p: float) -> float:
    return 2 * r * p / (r + p) if r + p > 0 else 0.0


@dataclass
class EvalResult:
    """Everything EVALB computes, plus the strict figures and the messages it printed."""

    sentences: list[SentenceResult]
    all: Block
    cut: Block
    cutoff: int
    messages: list[str]
    aborted: bool = False
    unscored_gold_lines: int = 0

    def totals_line(self) -> str:
        b = self.all
        f = b.figures()
        head = ""
        if b.gold > 0 and b.test > 0:  # EVALB omits this part otherwise
            head = (f"{'':16}{f['recall']:6.2f} {f['precision']:6.2f} {b.matched:6d} "
                    f"{b.gold:5d} {b.test:5d}  {b.crossing:5d}")  # fmt: skip
        return f"{head}  {b.words:5d} {b.correct_tags:5d}   {f['tagging_accuracy']:6.2f}"

    @property
    def not_scored(self) -> int:
        return self.all.errors + self.all.skips + self.unscored_gold_lines

    def strict_lines(self) -> list[str]:
        out = []
        for name, block in (("all", self.all), (f"len<={self.cutoff}", self.cut)):
            f = block.figures()
            out.append(
                f"Strict FMeasure ({name}; skipped and error sentences counted as wrong) = "
                f"{f['strict_fmeasure']:6.2f}  [R {f['strict_recall']:.2f}, "
                f"P {f['strict_precision']:.2f}; {block.errors + block.skips} of "
                f"{block.sentences} sentences not scored by EVALB]"
            )
        return out

    def label_table(self) -> list[str]:
        totals: dict[str, list[int]] = {}
        for s in self.sentences:
            if s.status == 0:
                for lab, (g, t, m) in s.labels.items():
                    row = totals.setdefault(lab, [0, 0, 0])
                    row[0] += g
                    row[1] += t
                    row[2] += m
        lines = ["", "=== Labels ===", f"{'label':<10} {'gold':>7} {'test':>7} {'match':>7} "
                 f"{'recall':>7} {'prec':>7} {'F1':>7}"]  # fmt: skip
        for lab, (g, t, m) in sorted(totals.items(), key=lambda kv: (-kv[1][0], kv[0])):
            r = 100.0 * m / g if g else 0.0
            p = 100.0 * m / t if t else 0.0
            lines.append(f"{lab or '(empty)':<10} {g:7d} {t:7d} {m:7d} {r:7.2f} {p:7.2f} "
                         f"{_f(r, p):7.2f}")  # fmt: skip
        return lines

    def to_json(self) -> str:
        return json.dumps(
            {
                "all": self.all.figures(),
                f"len<={self.cutoff}": self.cut.figures(),
                "cutoff": self.cutoff,
                "not_scored": self.not_scored,
                "unscored_gold_lines": self.unscored_gold_lines,
                "messages": self.messages,
            },
            indent=2,
        )


HEADER = [
    "  Sent.                        Matched  Bracket   Cross        Correct Tag",
    " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy",
    "=" * 76,
]


def evaluate_lines(
    gold_lines: Sequence[str],
    test_lines: Sequence[str],
    params: EvalbParams = COLLINS,
    cutoff: int = 40,
) -> EvalResult:
    """Score test trees against gold trees, one per line, as EVALB does."""
    errors = _Errors(params.max_error)
    sentences: list[SentenceResult] = []
    all_block, cut_block = Block(), Block()
    aborted = False
    n = min(len(gold_lines), len(test_lines))
    try:
        for i in range(n):
            result = _sentence(i + 1, gold_lines[i], test_lines[i], params, errors)
            sentences.append(result)
            all_block.add(result)
            if result.length <= cutoff:
                cut_block.add(result)
        if len(gold_lines) != len(test_lines):
            which = "gold" if len(gold_lines) > len(test_lines) else "test"
            errors(n + 1, f"Number of lines unmatch (too many lines in {which} file)")
    except EvalbAbort:
        aborted = True
    # Gold lines with no test line count against the strict figures.
    unscored = 0
    for line in gold_lines[n:]:
        try:
            tree, _ = _read(line, 0, params, _Errors(None))
        except _Unreadable:
            continue
        g = _score_view(tree, params)
        all_block.strict_gold += sum(g.brackets.values())
        if g.length <= cutoff:
            cut_block.strict_gold += sum(g.brackets.values())
        unscored += 1
    return EvalResult(sentences, all_block, cut_block, cutoff, errors.messages, aborted,
                      unscored)  # fmt: skip


def _sentence(sid: int, gold_line: str, test_line: str, params: EvalbParams,
              errors: _Errors) -> SentenceResult:  # fmt: skip
    try:
        gold_tree, gold_bad = _read(gold_line, sid, params, errors)
        gold = _score_view(gold_tree, params)
    except _Unreadable:
        return SentenceResult(sid, 0, 1)
    try:
        test_tree, test_bad = _read(test_line, sid, params, errors)
        test = _score_view(test_tree, params)
    except _Unreadable:
        return SentenceResult(sid, gold.length, 1, gold_brackets=sum(gold.brackets.values()))
    gold_n, test_n = sum(gold.brackets.values()), sum(test.brackets.values())
    if not test.words:
        return SentenceResult(sid, gold.length, 2, gold_brackets=gold_n)
    bad = None
    if len(gold.words) != len(test.words):
        bad = f"Length unmatch ({len(gold.words)}|{len(test.words)})"
    else:
        for gw, tw in zip(gold.words, test.words, strict=True):
            if gw != tw:
                bad = f"Words unmatch ({gw}|{tw})"
                break
    if bad:
        errors(sid, bad)
        return SentenceResult(sid, gold.length, 1, gold_brackets=gold_n, test_brackets=test_n)
    return _compare(sid, gold, test, 1 if (gold_bad or test_bad) else 0)


def format_report(result: EvalResult, *, per_sentence: bool = False,
                  labels: bool = False) -> str:  # fmt: skip
    """EVALB's output (per-sentence table optional), then the strict lines."""
    lines: list[str] = []
    if per_sentence:
        lines += HEADER + [s.line() for s in result.sentences]
        if result.aborted:
            return "\n".join(lines) + "\n"
        lines += ["=" * 76, result.totals_line()]
    if result.aborted:
        return "\n".join(lines) + ("\n" if lines else "")
    lines += ["=== Summary ===", "", "-- All --"] + result.all.summary()
    lines += ["", f"-- len<={result.cutoff} --"] + result.cut.summary()
    lines += [""] + result.strict_lines()
    if labels:
        lines += result.label_table()
    return "\n".join(lines) + "\n"


def root_convention(line: str) -> str | None:
    """How a tree line is wrapped: 'empty' ``( (S ..) )``, 'TOP', 'ROOT' or 'none'."""
    tokens = _TOKEN.findall(line)
    if len(tokens) < 2 or tokens[0] != "(":
        return None
    if tokens[1] == "(":
        return "empty"
    if tokens[1] in ("TOP", "ROOT") and len(tokens) > 2 and tokens[2] == "(":
        return tokens[1]
    return "none"


def convention_warning(gold_lines: Sequence[str], test_lines: Sequence[str]) -> str | None:
    """A warning when gold and test wrap their trees differently (it silently costs
    recall or precision, since EVALB deletes only TOP)."""
    g = next((c for c in map(root_convention, gold_lines) if c), None)
    t = next((c for c in map(root_convention, test_lines) if c), None)
    if g is None or t is None or g == t:
        return None
    counted = {"empty", "ROOT"}
    if g not in counted and t not in counted:
        return None
    describe = {"empty": "an empty outer bracket '( ... )'", "TOP": "(TOP ...)",
                "ROOT": "(ROOT ...)", "none": "no root wrapper"}  # fmt: skip
    return (
        f"gold trees use {describe[g]} but test trees use {describe[t]}; EVALB deletes "
        "only TOP, so the extra root bracket is scored as a mismatch"
    )
