"""Errors by kind (``analysis.error_kinds``, Kummerfeld et al. 2012): a planted parse of each
kind is repaired and classified as that kind, every bracket error is accounted for (the
kinds' brackets add up to EVALB's), and ``lpcfg evaluate --errors`` shows them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lpcfg_cli.analysis.error_kinds import KINDS, classify_errors, repairs
from lpcfg_cli.evalb import Status, evaluate_lines
from lpcfg_cli.treebank.ptb import format_tree, parse_tree
from lpcfg_cli.treebank.tree import Tree, is_preterminal
from tests.support import invoke, one_error

DATA = Path(__file__).resolve().parent.parent / "data"

# (kind, gold, parse, repairs as (operation, label), brackets): one error of each kind.
PLANTED = [
    (
        "PP attachment",  # the PP goes to the noun instead of the verb
        "(S (NP (PRP I)) (VP (VBD saw) (NP (DT the) (NN man)) (PP (IN with) (NP (DT a)"
        " (NN telescope)))))",
        "(S (NP (PRP I)) (VP (VBD saw) (NP (NP (DT the) (NN man)) (PP (IN with) (NP"
        " (DT a) (NN telescope))))))",
        [("remove", "NP")],
        1,
    ),
    (
        "PP attachment",  # a move: the PP under the lower VP
        "(S (NP (PRP He)) (VP (VBD said) (SBAR (S (NP (PRP she)) (VP (VBD left)))) (PP"
        " (IN on) (NP (NNP Monday)))))",
        "(S (NP (PRP He)) (VP (VBD said) (SBAR (S (NP (PRP she)) (VP (VBD left) (PP"
        " (IN on) (NP (NNP Monday))))))))",
        [("move", "PP")],
        6,
    ),
    (
        "NP attachment",
        "(S (NP (PRP I)) (VP (VBD said) (SBAR (S (NP (PRP he)) (VP (VBD left) (NP (NN today)))))))",
        "(S (NP (PRP I)) (VP (VBD said) (SBAR (S (NP (PRP he)) (VP (VBD left))))) (NP (NN today)))",
        [("move", "NP")],
        8,
    ),
    (
        "clause attachment",
        "(S (NP (PRP I)) (VP (VBD told) (NP (NP (DT the) (NN man)) (SBAR (IN that) (S"
        " (NP (PRP he)) (VP (VBD won)))))))",
        "(S (NP (PRP I)) (VP (VBD told) (NP (DT the) (NN man)) (SBAR (IN that) (S (NP"
        " (PRP he)) (VP (VBD won))))))",
        [("add", "NP")],
        1,
    ),
    (
        "modifier attachment",
        "(S (NP (PRP It)) (VP (VBD rose) (ADVP (RB sharply)) (PP (IN in) (NP (NNP May)))))",
        "(S (NP (PRP It)) (VP (VBD rose) (PP (ADVP (RB sharply)) (IN in) (NP (NNP May)))))",
        [("move", "ADVP")],
        2,
    ),
    (
        "coordination",  # the second conjunct attached inside the first
        "(S (NP (PRP We)) (VP (VP (VBD came) (PP (IN to) (NP (NNP Rome)))) (CC and) (VP"
        " (VBD left))))",
        "(S (NP (PRP We)) (VP (VP (VBD came) (PP (IN to) (NP (NNP Rome)) (CC and) (VP"
        " (VBD left))))))",
        [("move", "CC VP")],
        4,
    ),
    (
        "NP internal",
        "(S (NP (DT the) (NP (NN stock) (NN market)) (NN crash)) (VP (VBD hurt)))",
        "(S (NP (DT the) (NN stock) (NN market) (NN crash)) (VP (VBD hurt)))",
        [("add", "NP")],
        1,
    ),
    (
        "single word phrase",
        "(S (NP (PRP I)) (VP (VBD ran) (ADVP (RB fast))))",
        "(S (NP (PRP I)) (VP (VBD ran) (ADJP (RB fast))))",
        [("relabel", "ADVP")],
        2,
    ),
    (
        "unary",
        "(S (NP (DT the) (NN dog)) (VP (VBD barked)))",
        "(S (NP (NP (DT the) (NN dog))) (VP (VBD barked)))",
        [("remove", "NP")],
        1,
    ),
    (
        "different label",
        "(S (NP (DT the) (JJ big) (NN dog)) (VP (VBD barked)))",
        "(S (ADJP (DT the) (JJ big) (NN dog)) (VP (VBD barked)))",
        [("relabel", "NP")],
        2,
    ),
    (
        "VP attachment",
        "(S (NP (PRP They)) (VP (VBD tried) (NP (DT a) (NN plan)) (S (VP (TO to) (VP (VB win))))))",
        "(S (NP (PRP They)) (VP (VBD tried) (NP (DT a) (NN plan) (S (VP (TO to)) (VP (VB win))))))",
        None,
        None,
    ),
    (
        "other",  # a bracket over two noun phrases that no rule names
        "(S (FRAG (NP (NNP Paris)) (NP (NNP London))) (VP (VBD won)))",
        "(S (NP (NNP Paris)) (NP (NNP London)) (VP (VBD won)))",
        [("add", "FRAG")],
        1,
    ),
]


@pytest.mark.parametrize(("kind", "gold", "parse", "steps", "brackets"), PLANTED)
def test_planted_errors_are_repaired_and_classified(kind, gold, parse, steps, brackets) -> None:
    out = repairs(gold, parse)
    assert out.scored
    scored = evaluate_lines([gold], [parse]).sentences[0]
    errors = (scored.gold - scored.matched) + (scored.test - scored.matched)
    assert errors > 0 and out.brackets == errors == len(out.extra) + len(out.missing)
    if steps is None:  # several repairs: the kind is among them
        assert kind in {r.kind for r in out.repairs}, out.repairs
        return
    assert [(r.operation, r.label) for r in out.repairs] == steps, out.repairs
    assert [r.kind for r in out.repairs] == [kind] * len(steps)
    assert out.brackets == brackets


def test_every_kind_is_planted() -> None:
    assert {p[0] for p in PLANTED} == set(KINDS)


def test_a_move_fixes_many_brackets_at_once() -> None:
    """The NP-attachment move fixes the four brackets whose span it shortened and the four
    gold ones it restores, in one repair; the wrong and missing brackets are the right
    nodes of the two trees (indices in the order brackets open)."""
    _, gold, parse, _, _ = PLANTED[2]
    out = repairs(gold, parse)
    assert [(r.operation, r.start, r.end, r.fixed) for r in out.repairs] == [("move", 4, 5, 8)]
    # brackets in order: S NP(I) VP(said) SBAR S NP(he) VP(left) NP(today); in both trees
    # the spans of the two VPs, the SBAR and the inner S are wrong
    assert out.extra == [2, 3, 4, 6]
    assert out.missing == [2, 3, 4, 6]


def test_a_correct_parse_has_no_errors() -> None:
    gold = PLANTED[0][1]
    out = repairs(gold, gold)
    assert out.repairs == [] and out.brackets == 0


def test_sentences_evalb_leaves_out_have_no_repairs() -> None:
    gold = PLANTED[0][1]
    analysis = classify_errors([gold, gold, gold], [gold.replace("man", "men"), "()"])
    assert [s.scored for s in analysis.sentences] == [False, False, False]
    assert analysis.brackets == 0


def _random_parse(tree: Tree, rng: random.Random) -> Tree:
    """The same tagged words under a random bracketing with random labels."""
    items: list[Tree] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if is_preterminal(node):
            items.append(node)
        else:
            stack.extend(reversed([c for c in node if isinstance(c, Tree)]))
    labels = ["NP", "VP", "PP", "S", "SBAR", "ADJP", "ADVP", "QP"]
    while len(items) > 1:
        i = rng.randrange(len(items))
        j = min(len(items), i + rng.randint(1, 3))
        items[i:j] = [Tree(rng.choice(labels), items[i:j])]
        if rng.random() < 0.1:
            items[i] = Tree(rng.choice(labels), [items[i]])
    return Tree("", items)


def test_the_kinds_account_for_every_bracket_evalb_counts() -> None:
    """On random parses of treebank sentences (far from their gold trees), the repairs
    end at the gold tree and the kinds' brackets add up, sentence by sentence, to EVALB's
    (gold - matched) + (test - matched)."""
    path = DATA / "dev.mrg"
    if path.exists():
        gold_lines = path.read_text(encoding="utf-8").splitlines()[:30]
    else:
        gold_lines = [p[1] for p in PLANTED] * 3
    rng = random.Random(0)
    test_lines = [format_tree(_random_parse(parse_tree(line), rng)) for line in gold_lines]
    analysis = classify_errors(gold_lines, test_lines)
    result = evaluate_lines(gold_lines, test_lines)
    for s, ev in zip(analysis.sentences, result.sentences, strict=True):
        assert s.scored == (ev.status is Status.OK)
        assert s.brackets == (ev.gold - ev.matched) + (ev.test - ev.matched)
    assert analysis.brackets > 10 * len(gold_lines)
    assert sum(b for _, b in analysis.totals().values()) == analysis.brackets


def test_evaluate_errors_text_and_json(tmp_path: Path) -> None:
    gold = tmp_path / "gold.mrg"
    test = tmp_path / "test.mrg"
    other = tmp_path / "other.mrg"
    gold.write_text("".join(p[1] + "\n" for p in PLANTED), encoding="utf-8")
    test.write_text("".join(p[2] + "\n" for p in PLANTED), encoding="utf-8")
    other.write_text("".join(p[1] + "\n" for p in PLANTED[:-1]) + PLANTED[-1][2] + "\n")
    result = invoke("evaluate", "--errors", str(gold), str(test), "--against", str(other))
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "=== Errors by kind ===" in text
    own, against = text.split("=== Errors by kind: ")
    rows = {line[:21].strip(): line.split() for line in own.splitlines()}
    assert rows["PP attachment"][-3:] == ["2", "7", f"{7 / len(PLANTED):.2f}"]
    # against the other parse (all right but the last): everything but "other" is fixed there
    rows = {line[:21].strip(): line.split() for line in against.splitlines()}
    assert rows["PP attachment"][-3:] == ["0", "7", "+7"]
    assert rows["other"][-3:] == ["1", "1", "+0"]
    result = invoke("evaluate", "--errors", "--json", "--per-sentence", str(gold), str(test))
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    errors = out["errors"]
    evalb = out["all"]
    assert errors["brackets"] == (evalb["gold_brackets"] - evalb["matched_brackets"]) + (
        evalb["test_brackets"] - evalb["matched_brackets"]
    )
    assert errors["kinds"]["coordination"] == {"repairs": 1, "brackets": 4}
    assert len(errors["per_sentence"]) == len(PLANTED)
    assert errors["per_sentence"][0]["repairs"][0]["kind"] == "PP attachment"


def test_evaluate_errors_on_a_bad_file_is_one_error(tmp_path: Path) -> None:
    gold = tmp_path / "gold.mrg"
    gold.write_text(PLANTED[0][1] + "\n", encoding="utf-8")
    result = invoke("evaluate", "--errors", str(gold), str(tmp_path / "missing.mrg"))
    one_error(result, "missing.mrg")
