"""Parse errors by kind: the tree repairs that turn a parse into its gold tree.

Kummerfeld, Hall, Curran & Klein (2012), "Parser Showdown at the Wall Street Corral: An
Empirical Investigation of Error Types in Parser Output" (EMNLP), section 3. A parse is
repaired into the gold tree by a greedy search: at each step every available repair is
tried and the one that removes the most bracket errors is applied (the first such in the
order below), until no error is left. The repairs are

- *relabel* a bracket whose span is right and label wrong;
- *add* a missing gold bracket over a run of siblings (one that crosses no bracket);
- *remove* an extra bracket, its children going to its parent;
- *move* a run of siblings to another parent (the paper's attachment repair), where the
  run stays contiguous: down into an extra bracket beside it, out of an extra bracket
  into an extra bracket that ends where the run starts (or starts where it ends), or up
  to an ancestor it is at the edge of. A move may also add, in its new place, the
  smallest missing gold bracket that holds the run (section 3: an attachment often
  needs the node it attaches under).

Each step is then classified by what it moved or made (``classify``, the paper's Table
1): PP, NP, VP, clause and modifier attachment, coordination, NP-internal structure,
single-word phrase, unary, different label, other. Each step removes a number of bracket
errors, and every error is removed by some step, so the brackets of all kinds add up to
the errors EVALB counts: ``(gold - matched) + (test - matched)`` over its valid sentences.

Brackets are EVALB's (``evalb.reader``): with COLLINS.prm, punctuation, ``-NONE-`` and
``TOP`` are gone, function tags cut, ADVP and PRT one label. Deviations from the paper's
analyser: the search stops when no repair removes an error (it never takes a step that
removes none, so it cannot loop), and a run of siblings never moves to the root's parent
(there is none here: the brackets of a line hang from one node that is not a bracket).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from lpcfg_cli.evalb.messages import SilentLog
from lpcfg_cli.evalb.params import COLLINS, EvalbParams
from lpcfg_cli.evalb.reader import Reader

__all__ = [
    "KINDS",
    "ErrorAnalysis",
    "Repair",
    "SentenceErrors",
    "classify_errors",
    "compare_kinds",
    "format_kinds",
    "repairs",
]

# The kinds, in the order of the paper's tables (most brackets first on the WSJ).
KINDS = (
    "PP attachment",
    "clause attachment",
    "different label",
    "modifier attachment",
    "NP attachment",
    "coordination",
    "single word phrase",
    "unary",
    "NP internal",
    "VP attachment",
    "other",
)

_PHRASES = frozenset(
    "S SBAR SBARQ SINV SQ ADJP ADVP CONJP FRAG INTJ LST NAC NP NX PP PRN PRT QP RRC UCP VP "
    "WHADJP WHAVP WHADVP WHNP WHPP X".split()
)
_CLAUSES = frozenset({"S", "SINV", "SBAR"})
_COORDINATORS = frozenset({"CC"})

Bracket = tuple[str, int, int]  # (label as EVALB compares it, start, end)


class Node:
    """A bracket (``word`` None) or a pre-terminal over word ``word``; the root has label
    None and is no bracket."""

    __slots__ = ("label", "children", "parent", "start", "end", "word")

    def __init__(self, label: str | None, word: int | None = None) -> None:
        self.label = label
        self.children: list[Node] = []
        self.parent: Node | None = None
        self.word = word
        self.start = self.end = word if word is not None else 0
        if word is not None:
            self.end = word + 1

    @property
    def bracket(self) -> Bracket | None:
        """What EVALB counts for this node (pre-terminals and the root: nothing)."""
        if self.word is not None or self.label is None:
            return None
        return (self.label, self.start, self.end)

    def walk(self) -> Iterator[Node]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def refresh(self) -> None:
        """Spans of this subtree's brackets from their words (children first)."""
        for node in reversed(list(self.walk())):
            if node.word is None and node.children:
                node.start, node.end = node.children[0].start, node.children[-1].end


def _tree(tags: Sequence[str], brackets: Sequence[Bracket]) -> Node:
    """The tree of a line's kept brackets (in the order they open, as EVALB reads them)
    over its kept words: a bracket's parent is the last open one that holds it."""
    root = Node(None)
    root.start, root.end = 0, len(tags)
    stack = [root]
    owner = [root] * len(tags)
    for label, start, end in brackets:
        while len(stack) > 1 and not (stack[-1].start <= start and end <= stack[-1].end):
            stack.pop()
        node = Node(label)
        node.start, node.end, node.parent = start, end, stack[-1]
        stack[-1].children.append(node)
        stack.append(node)
        for i in range(start, end):
            owner[i] = node
    for i, tag in enumerate(tags):
        leaf = Node(tag, i)
        leaf.parent = owner[i]
        owner[i].children.append(leaf)
    for node in root.walk():
        node.children.sort(key=lambda c: (c.start, -c.end))
    return root


@dataclass(frozen=True)
class Repair:
    """One step of the search: what it did, its kind, and how many errors it removed."""

    kind: str
    operation: str  # relabel, add, remove, move
    label: str  # the bracket made, removed or relabelled; for a move, the movers' labels
    start: int
    end: int
    fixed: int  # bracket errors removed
    detail: str = ""  # relabel: old -> new; move: old parent -> new parent

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "operation": self.operation,
            "label": self.label,
            "span": [self.start, self.end],
            "brackets": self.fixed,
            "detail": self.detail,
        }


@dataclass
class _Candidate:
    """A repair not yet applied: its bracket changes and what ``classify`` reads."""

    operation: str
    removed: list[Bracket]
    added: list[Bracket]
    info: dict[str, Any]
    apply: Any  # () -> None, changes the tree
    extend: Any = None  # a move's () -> bool: adds the bracket it makes where it lands


class _Search:
    """The greedy search over one sentence (see the module)."""

    def __init__(self, tree: Node, gold: Counter[Bracket]) -> None:
        self.tree = tree
        self.gold = gold
        self.test: Counter[Bracket] = Counter(
            b for n in tree.walk() if (b := n.bracket) is not None
        )
        # Per step (``candidates``): the best gain so far, the missing brackets, each
        # node's depth, the extra brackets by where they end and start.
        self.best = 0
        self.missing: list[Bracket] = []
        self.depth: dict[int, int] = {}
        self.ending: dict[int, list[Node]] = {}
        self.starting: dict[int, list[Node]] = {}

    def gain(self, removed: Sequence[Bracket], added: Sequence[Bracket]) -> int:
        """Errors removed by taking ``removed`` out of the parse's brackets and putting
        ``added`` in."""
        change: dict[Bracket, int] = {}
        for b in added:
            change[b] = change.get(b, 0) + 1
        for b in removed:
            change[b] = change.get(b, 0) - 1
        test, gold = self.test, self.gold
        out = 0
        for b, d in change.items():
            if d:
                t, g = test.get(b, 0), gold.get(b, 0)
                out += abs(t - g) - abs(t + d - g)
        return out

    def extra(self, node: Node) -> bool:
        b = node.bracket
        return b is not None and self.test[b] > self.gold[b]

    def run(self) -> list[Repair]:
        steps = []
        while True:
            best: tuple[int, _Candidate] | None = None
            self.best = 0
            for cand in self.candidates():
                g = self.gain(cand.removed, cand.added)
                # A move's bracket made where it lands gains one more at most: looked for
                # only where that could make the move the best.
                if cand.extend is not None and (best is None or g + 1 > best[0]):
                    if cand.extend():
                        g = self.gain(cand.removed, cand.added)
                if g > 0 and (best is None or g > best[0]):
                    best = (g, cand)
                    self.best = g
            if best is None:
                return steps
            g, cand = best
            steps.append(classify(cand.operation, cand.info, g))
            self.test.subtract(cand.removed)
            self.test.update(cand.added)
            self.test = +self.test
            cand.apply()

    # -- the repairs -----------------------------------------------------------------------

    def candidates(self) -> Iterator[_Candidate]:
        # In the analyser's order (ties go to the first): gold and test spans left to right.
        missing = sorted((self.gold - self.test).elements(), key=lambda b: (b[1], b[2]))
        self.missing = missing
        extra = sorted(
            (n for n in self.tree.walk() if self.extra(n)), key=lambda n: (n.start, n.end)
        )
        for label, start, end in missing:  # relabel
            for node in extra:
                if (start, end) == (node.start, node.end) and label != node.label:
                    yield self._relabel(node, label)
        for b in missing:  # add
            cand = self._add(b)
            if cand is not None:
                yield cand
        for node in extra:  # remove
            yield self._remove(node)
        self.ending, self.starting = {}, {}
        for node in extra:
            self.ending.setdefault(node.end, []).append(node)
            self.starting.setdefault(node.start, []).append(node)
        self.depth = {}
        for node in self.tree.walk():  # parents come first
            self.depth[id(node)] = 0 if node.parent is None else self.depth[id(node.parent)] + 1
        for node in self.tree.walk():  # move
            if node.word is None:
                yield from self._moves(node)

    def _relabel(self, node: Node, label: str) -> _Candidate:
        old = node.bracket
        assert old is not None

        def apply() -> None:
            node.label = label

        info = {
            "label": label,
            "span": (node.start, node.end),
            "over_word": _over_word(node),
            "detail": f"{node.label} -> {label}",
        }
        return _Candidate("relabel", [old], [(label, node.start, node.end)], info, apply)

    def _add(self, b: Bracket) -> _Candidate | None:
        label, start, end = b
        host = _holder(self.tree, start, end)
        if host is None:
            return None
        kids = host.children
        i = next(k for k, c in enumerate(kids) if c.start == start)
        j = next(k for k, c in enumerate(kids) if c.end == end)

        def apply() -> None:
            node = Node(label)
            node.children = kids[i : j + 1]
            for c in node.children:
                c.parent = node
            node.parent = host
            node.start, node.end = start, end
            kids[i : j + 1] = [node]

        info = {
            "label": label,
            "span": (start, end),
            "subtrees": [c.label for c in kids[i : j + 1]],
            "parent": host.label,
            "right_siblings": [c.label for c in kids[j + 1 :]],
            "over_word": i == j and kids[i].word is not None,
        }
        return _Candidate("add", [], [b], info, apply)

    def _remove(self, node: Node) -> _Candidate:
        parent = node.parent
        assert parent is not None and node.bracket is not None
        at = parent.children.index(node)

        def apply() -> None:
            for c in node.children:
                c.parent = parent
            parent.children[at : at + 1] = node.children

        info = {
            "label": node.label,
            "span": (node.start, node.end),
            "subtrees": [c.label for c in node.children],
            "parent": parent.label,
            "family": len(parent.children),
            "right_siblings": [c.label for c in parent.children[at + 1 :]],
            "over_word": _over_word(node),
        }
        return _Candidate("remove", [node.bracket], [], info, apply)

    def _moves(self, source: Node) -> Iterator[_Candidate]:
        kids = source.children
        k = len(kids)
        for left in range(k):
            for right in range(left, k):
                if left == 0 and right == k - 1:
                    continue
                for target in self._targets(source, left, right):
                    cand = self._move(source, left, right, target)
                    if cand is not None:
                        yield cand

    def _targets(self, source: Node, left: int, right: int) -> Iterator[Node]:
        """Where the run ``source.children[left..right]`` may go (see the module)."""
        kids = source.children
        if left > 0:  # down, into an extra bracket on the right edge of the left sibling
            node = kids[left - 1]
            while node.word is None:
                if self.extra(node):
                    yield node
                node = node.children[-1]
        if right < len(kids) - 1:  # down, into the right sibling's left edge
            node = kids[right + 1]
            while node.word is None:
                if self.extra(node):
                    yield node
                node = node.children[0]
        if not self.extra(source):
            return
        start, end = kids[left].start, kids[right].end
        if left == 0:
            yield from self.ending.get(start, ())  # out, into an extra bracket before it
            node = source.parent  # up, while the run stays at the left edge
            while node is not None and node.parent is not None:
                yield node
                if node.parent.start < source.start:
                    break
                node = node.parent
        if right == len(kids) - 1:
            yield from self.starting.get(end, ())
            node = source.parent
            while node is not None and node.parent is not None:
                yield node
                if node.parent.end > source.end:
                    break
                node = node.parent

    def _common_ancestor(self, source: Node, target: Node) -> tuple[Node, int]:
        """The lowest node above both, and how many nodes lie below it on their paths
        (those whose spans a move from one to the other changes)."""
        depth = self.depth
        a, b = source, target
        below = 0
        while a is not b:
            if depth[id(a)] >= depth[id(b)]:
                a = a.parent  # type: ignore[assignment]
            else:
                b = b.parent  # type: ignore[assignment]
            below += 1
        return a, below

    def _move(self, source: Node, left: int, right: int, target: Node) -> _Candidate | None:
        movers = source.children[left : right + 1]
        start, end = movers[0].start, movers[-1].end
        width = end - start
        # The brackets whose spans change can gain 2 each at most, and the X over X and the
        # bracket made 1 each: a move that cannot beat the best repair so far is not built.
        lca, changed = self._common_ancestor(source, target)
        if 2 * changed + 2 <= self.best:
            return None
        removed, added = [], []
        node = source  # the old side loses the run, at its left or right edge
        while node is not lca:
            s, e = (
                (node.start + width, node.end)
                if node.start == start
                else (node.start, node.end - width)
            )
            if (b := node.bracket) is not None:
                removed.append(b)
                added.append((node.label, s, e))
            node = node.parent
        node = target  # the new side gains it
        new_span = (target.start, target.end)
        while node is not lca:
            s, e = (start, node.end) if node.start >= end else (node.start, end)
            if node is target:
                new_span = (s, e)
            if (b := node.bracket) is not None:
                removed.append(b)
                added.append((node.label, s, e))
            node = node.parent
        if target is lca:
            new_span = (target.start, target.end)
        # What the run leaves behind: a bracket over one phrase of its own label (X over X)
        # goes with the move, as in the analyser.
        rest = source.children[:left] + source.children[right + 1 :]
        trivial = len(rest) == 1 and rest[0].word is None and rest[0].label == source.label
        if trivial:  # its bracket now has the span the source is left with
            kept = (source.start, source.end)
            if source is not lca:
                kept = (
                    (source.start + width, source.end)
                    if source.start == start
                    else (source.start, source.end - width)
                )
            removed.append((source.label, *kept))
        # The new parent's children after the move, and the smallest missing gold bracket
        # over some of them that holds the run (added in the same step).
        others = [c for c in target.children if c not in movers]
        at = sum(c.start < start for c in others)
        bounds = {c.start for c in others} | {c.end for c in others}
        bounds |= {c.start for c in movers} | {end}
        also: Bracket | None = None

        def extend() -> bool:
            """Add the smallest gold bracket missing after the move that holds the run
            and some of the new parent's children (the first, left to right, of those)."""
            nonlocal also
            change = Counter(added)
            change.subtract(removed)
            # Only a bracket missing now, or made missing by this move, can be missing after.
            for b in (*self.missing, *removed):
                label, s, e = b
                if not (s <= start and end <= e and (s, e) != (start, end)):
                    continue
                if s not in bounds or e not in bounds:
                    continue
                if not (new_span[0] <= s and e <= new_span[1]):
                    continue
                if self.test[b] + change[b] >= self.gold[b]:
                    continue
                if also is None or (e - s, s, e, label) < (also[2] - also[1], *also[1:], also[0]):
                    also = b
            if also is not None:
                added.append(also)
            return also is not None

        def apply() -> None:
            del source.children[left : right + 1]
            target.children[at:at] = movers
            for c in movers:
                c.parent = target
            home = target
            if trivial:
                source.children = rest[0].children
                for c in source.children:
                    c.parent = source
                if target is rest[0]:  # the run went into the phrase that was lifted
                    home = source
            self.tree.refresh()
            if also is not None:
                kids = home.children
                i = next(k for k, c in enumerate(kids) if c.start == also[1])
                j = next(k for k, c in enumerate(kids) if c.end == also[2])
                made = Node(also[0])
                made.children = kids[i : j + 1]
                for c in made.children:
                    c.parent = made
                made.parent = home
                made.start, made.end = also[1], also[2]
                kids[i : j + 1] = [made]

        info = {
            "span": (start, end),
            "movers": [c.label for c in movers],
            "old_parent": source.label,
            "new_parent": target.label,
            "start_left": [c.label for c in source.children[:left]],
            "start_right": [c.label for c in source.children[right + 1 :]],
            "end_left": [c.label for c in others[:at]],
            "end_right": [c.label for c in others[at:]],
        }
        return _Candidate("move", removed, added, info, apply, extend)


def _over_word(node: Node) -> bool:
    return len(node.children) == 1 and node.children[0].word is not None


def _holder(tree: Node, start: int, end: int) -> Node | None:
    """The lowest node whose children have boundaries at ``start`` and ``end``: where a
    bracket over those words can be added (None: it would cross a bracket)."""
    node = tree
    while True:
        inner = next(
            (c for c in node.children if c.start <= start and end <= c.end and c.word is None),
            None,
        )
        if inner is None or (inner.start, inner.end) == (start, end):
            break
        node = inner
    starts = {c.start for c in node.children}
    ends = {c.end for c in node.children}
    return node if start in starts and end in ends else None


def classify(operation: str, info: dict[str, Any], fixed: int) -> Repair:
    """A step's kind, by the paper's rules (section 3, Table 1), in their order: a move is
    an attachment error of what it moved, unless a coordinator is beside the run where it
    was or where it goes; what is over one word is a single-word phrase; a relabelling is
    a different label; a bracket over one child is a unary; the rest by the labels of the
    bracket, its children and its siblings."""
    if operation == "move":
        movers = info["movers"]
        label = " ".join(movers)
        detail = f"{info['old_parent']} -> {info['new_parent']}"

        def repair(kind: str) -> Repair:
            return Repair(kind, "move", label, *info["span"], fixed, detail)

        beside = (info["start_left"][-1:], info["start_right"][:1], info["end_left"][-1:])
        beside += (info["end_right"][:1], movers[:1], movers[-1:])
        if any(labels and labels[0] in _COORDINATORS for labels in beside):
            return repair("coordination")
        for kind, labels in (
            ("PP attachment", {"PP"}),
            ("NP attachment", {"NP"}),
            ("VP attachment", {"VP"}),
            ("clause attachment", _CLAUSES),
            ("modifier attachment", {"RB", "ADVP", "ADJP"}),
        ):
            if labels.intersection(movers):
                return repair(kind)
        if {info["old_parent"], info["new_parent"]} <= {"NP", "QP"}:
            return repair("NP internal")
        return repair("other")
    kind = _kind(operation, info)
    return Repair(kind, operation, info["label"], *info["span"], fixed, info.get("detail", ""))


def _kind(operation: str, info: dict[str, Any]) -> str:
    """The kind of a relabelling, an added or a removed bracket (see ``classify``)."""
    if info["over_word"]:
        return "single word phrase"
    if operation == "relabel":
        return "different label"
    subtrees, label = info["subtrees"], info["label"]
    if len(subtrees) == 1 or (operation == "remove" and info["family"] == 1):
        return "unary"
    if label == "UCP" or info["right_siblings"][:1] and info["right_siblings"][0] in _COORDINATORS:
        return "coordination"
    later = set(subtrees[1:])
    if "PP" in later:
        return "PP attachment"
    if later & _CLAUSES:
        return "clause attachment"
    if info["parent"] == "NP" and not _PHRASES.intersection(subtrees):
        return "NP internal"
    if label in ("ADVP", "ADJP") or later & {"ADVP", "ADJP"}:
        return "modifier attachment"
    if all(s == label for s in subtrees):
        return "NP internal" if label == "NP" else "coordination"
    return "other"


def _unmatched(kept: list[tuple[int, Bracket]], other: Counter[Bracket]) -> list[int]:
    """Indices of the brackets of ``kept`` beyond those ``other`` matches (the later
    copies of a bracket the other line has fewer of)."""
    left = Counter(b for _, b in kept) - other
    out = []
    for k, b in reversed(kept):
        if left[b] > 0:
            left[b] -= 1
            out.append(k)
    return sorted(out)


@dataclass
class SentenceErrors:
    """One sentence's repairs, and which of its brackets are wrong: ``extra`` and
    ``missing`` index the test and gold lines' brackets in the order they open (the
    order of a tree's phrase nodes, pre-terminals left out), as EVALB reads them."""

    id: int
    length: int
    words: list[str] = field(default_factory=list)  # the gold words EVALB keeps: spans index them
    repairs: list[Repair] = field(default_factory=list)
    extra: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    scored: bool = True  # False: EVALB leaves the sentence out (skip, error, no test line)

    @property
    def brackets(self) -> int:
        return sum(r.fixed for r in self.repairs)

    def kinds(self) -> Counter[str]:
        """Brackets each kind costs in this sentence."""
        out: Counter[str] = Counter()
        for r in self.repairs:
            out[r.kind] += r.fixed
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "length": self.length,
            "scored": self.scored,
            "brackets": self.brackets,
            "extra": self.extra,
            "missing": self.missing,
            "repairs": [r.to_dict() for r in self.repairs],
        }


def repairs(gold_line: str, test_line: str, params: EvalbParams = COLLINS) -> SentenceErrors:
    """The repairs that turn ``test_line``'s tree into ``gold_line``'s (see the module);
    ``scored`` False, with no repairs, where EVALB would not score the pair."""
    return _sentence(Reader(params), 1, gold_line, test_line)


def _sentence(reader: Reader, sid: int, gold_line: str, test_line: str | None) -> SentenceErrors:
    log = SilentLog()
    gold = reader.read(gold_line, sid, log)
    if test_line is None:
        return SentenceErrors(sid, gold.length, gold.words, scored=False)
    test = reader.read(test_line, sid, log)
    if gold.bad or test.bad or not test.words or gold.words != test.words:
        return SentenceErrors(sid, gold.length, gold.words, scored=False)
    gold_kept, test_kept = reader.kept_at(gold), reader.kept_at(test)
    gold_bag = Counter(b for _, b in gold_kept)
    test_bag = Counter(b for _, b in test_kept)
    search = _Search(_tree(test.tags, [b for _, b in test_kept]), gold_bag)
    out = SentenceErrors(
        sid,
        gold.length,
        gold.words,
        repairs=search.run(),
        extra=_unmatched(test_kept, gold_bag),
        missing=_unmatched(gold_kept, test_bag),
    )
    if out.brackets != len(out.extra) + len(out.missing):  # the search always finishes
        raise AssertionError(f"sentence {sid}: repairs left bracket errors")
    return out


@dataclass
class ErrorAnalysis:
    """Errors by kind over a test file: per kind, how many repairs and how many brackets
    (``totals``), and every sentence's repairs."""

    sentences: list[SentenceErrors]

    def totals(self) -> dict[str, tuple[int, int]]:
        """kind -> (repairs, brackets), every kind of ``KINDS``, in that order."""
        out = {kind: [0, 0] for kind in KINDS}
        for s in self.sentences:
            for r in s.repairs:
                out[r.kind][0] += 1
                out[r.kind][1] += r.fixed
        return {k: (v[0], v[1]) for k, v in out.items()}

    @property
    def scored(self) -> int:
        return sum(s.scored for s in self.sentences)

    @property
    def brackets(self) -> int:
        """Every bracket error of the scored sentences: EVALB's ``(gold - matched) +
        (test - matched)`` over its valid sentences."""
        return sum(s.brackets for s in self.sentences)

    def to_dict(self, *, per_sentence: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sentences": len(self.sentences),
            "scored": self.scored,
            "brackets": self.brackets,
            "kinds": {k: {"repairs": r, "brackets": b} for k, (r, b) in self.totals().items()},
        }
        if per_sentence:
            out["per_sentence"] = [s.to_dict() for s in self.sentences]
        return out


def classify_errors(
    gold_lines: Sequence[str], test_lines: Sequence[str], params: EvalbParams = COLLINS
) -> ErrorAnalysis:
    """Every sentence's errors by kind, one tree per line as ``evaluate_lines`` reads them
    (a gold line with no test line, and the sentences EVALB does not score, have none)."""
    reader = Reader(params)
    sentences = [
        _sentence(reader, i + 1, gold, test_lines[i] if i < len(test_lines) else None)
        for i, gold in enumerate(gold_lines)
    ]
    return ErrorAnalysis(sentences)


def format_kinds(analysis: ErrorAnalysis, name: str = "") -> str:
    """The summary table: each kind's repairs, brackets, and brackets per scored
    sentence."""
    n = max(analysis.scored, 1)
    title = f"=== Errors by kind{f' ({name})' if name else ''} ==="
    lines = [title, f"{'kind':<21}{'repairs':>9}{'brackets':>10}{'per sent':>10}"]
    for kind, (reps, brackets) in analysis.totals().items():
        lines.append(f"{kind:<21}{reps:>9}{brackets:>10}{brackets / n:>10.2f}")
    reps = sum(r for r, _ in analysis.totals().values())
    lines.append(f"{'total':<21}{reps:>9}{analysis.brackets:>10}{analysis.brackets / n:>10.2f}")
    lines.append(
        f"(over {analysis.scored} scored sentences; brackets = (gold - matched) + (test - matched))"
    )
    return "\n".join(lines) + "\n"


def compare_kinds(a: ErrorAnalysis, b: ErrorAnalysis, name_a: str, name_b: str) -> str:
    """Brackets each kind costs under two parses of the same gold trees, and the
    difference: a negative one is a kind ``name_b`` fixes, a positive one a kind it
    introduces."""
    ta, tb = a.totals(), b.totals()
    width = max(len(name_a), len(name_b), 8) + 2
    lines = [
        f"=== Errors by kind: {name_b} against {name_a} (brackets) ===",
        f"{'kind':<21}{name_a:>{width}}{name_b:>{width}}{'change':>9}",
    ]
    for kind in KINDS:
        x, y = ta[kind][1], tb[kind][1]
        lines.append(f"{kind:<21}{x:>{width}}{y:>{width}}{y - x:>+9}")
    x, y = a.brackets, b.brackets
    lines.append(f"{'total':<21}{x:>{width}}{y:>{width}}{y - x:>+9}")
    return "\n".join(lines) + "\n"
