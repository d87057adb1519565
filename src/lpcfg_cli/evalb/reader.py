"""One bracketed line as EVALB reads it (``read_line``) and massages it (``massage_data``).

Lines are read with EVALB's own character reader, not a tree library, because the figures
must match the original program's on any input, malformed ones included:

- ``(`` starts a label; ``(LABEL WORD)`` is a terminal; an empty line, ``()``, ``(())`` or
  ``(TOP)`` has no words (the scorer makes it a *skip* sentence).
- Unbalanced brackets are reported and mark the line bad (an *error* sentence, whose
  figures are still computed: a bracket never closed ends at -1, so it matches nothing).
  A close bracket with nothing open is undefined behaviour in EVALB (it reads below its
  stack array); here the stack just extends below zero, so that bracket closes nothing.
- A bracket holding two words, or a word outside brackets, makes EVALB loop on "Reading
  sentence" errors until its error limit stops the run.
- Pre-terminals whose label is in DELETE_LABEL (COLLINS: ``-NONE- , : `` '' .``) are
  deleted with their word; tags are kept uncut, mapped through EQ_LABEL (ADVP = PRT).
  The length counts every word whose tag is not in DELETE_LABEL_FOR_LENGTH.
- A bracket counts if it covers a word and its label, cut at the first ``-`` or ``=``
  (``NP-SBJ-1`` -> ``NP``) and mapped through EQ_LABEL, is not deleted. The cut happens at
  position 0 too, so ``-NONE-`` or ``-LRB-`` as a *bracket* label becomes the empty label
  (kept, and matching an empty outer bracket ``( (S ..) )``); ``TOP`` goes, ``ROOT`` stays.

Not reproduced: EVALB's 200 words or brackets per sentence (its 5000-byte line buffer is
flagged by the run, see ``result.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lpcfg_cli.evalb.messages import ErrorLog, Unreadable
from lpcfg_cli.evalb.params import EvalbParams

__all__ = ["Line", "Reader", "ScoredBracket"]

# C's isspace() in the C locale; EVALB's terminators are these and the two parentheses.
_WS = " \t\n\v\f\r"
_SCAN = re.compile(
    rf"[{_WS}]*(?:"
    rf"\((?P<label>[^{_WS}()]*)(?:(?P<gap>[{_WS}]+)(?P<word>[^{_WS}()]*))?"
    r"|(?P<close>\))"
    rf"|(?P<other>[^{_WS}()]))",
)
_CUT = re.compile(r"[-=]")

ScoredBracket = tuple[str, int, int]  # (label as compared, start, end)


@dataclass(slots=True)
class Line:
    """One line as EVALB's ``read_line`` leaves it."""

    tags: list[str]  # terminal labels (canonical for EQ_LABEL), deleted terminals left out
    words: list[str]
    brackets: list[list[Any]]  # [raw label, start, end]; end -1 when never closed
    length: int  # words whose label is not in DELETE_LABEL_FOR_LENGTH
    bad: bool = False  # an error was reported while reading (unbalanced brackets)
    irregular: bool = False  # a close bracket with nothing open (EVALB: undefined)
    unreadable: bool = False


class Reader:
    """Reading and massaging lines with one parameter set (label look-ups cached)."""

    def __init__(self, params: EvalbParams) -> None:
        self.params = params
        self.canon = params.canonical()
        self.deleted_terminals = params.delete_labels
        self.for_length = params.delete_for_length
        self.deleted_brackets = {self.canon.get(d, d) for d in params.delete_labels}
        self._labels: dict[str, str | None] = {}

    def read(self, text: str, line: int, errors: ErrorLog) -> Line:
        """EVALB's reader, character for character (see the module docstring)."""
        tags: list[str] = []
        words: list[str] = []
        brackets: list[list[Any]] = []
        stack: dict[int, int] = {}  # EVALB's stack array; below 0 it reads stray memory
        top = 0
        length = 0
        out = Line(tags, words, brackets, 0)
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
        except Unreadable:
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

    def kept(self, tree: Line) -> list[ScoredBracket]:
        """EVALB's ``massage_data``: brackets that count (covering a word, label kept)."""
        return [b for _, b in self.kept_at(tree)]

    def kept_at(self, tree: Line) -> list[tuple[int, ScoredBracket]]:
        """``kept``, each with its index among the line's brackets (the order they open:
        the tree's phrase nodes in pre-order)."""
        label = self.label
        out = []
        for k, (raw, start, end) in enumerate(tree.brackets):
            if start != end:
                lab = label(raw)
                if lab is not None:
                    out.append((k, (lab, start, end)))
        return out
