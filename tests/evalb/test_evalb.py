"""The EVALB re-implementation (library level): reference vectors and EVALB's conventions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lpcfg_cli.evalb import (
    COLLINS,
    NONE,
    Status,
    convention_warning,
    evaluate_lines,
    format_report,
    root_convention,
)
from tests.support import FOLDERS, TREE, VECTORS, needs_vectors


def lines(path: Path) -> list[str]:
    out = path.read_text().split("\n")
    return out[:-1] if out[-1] == "" else out


def one(gold: str, test: str, params=COLLINS):
    """The per-sentence record of a single pair."""
    result = evaluate_lines([gold], [test], params)
    return result.sentences[0], result


@needs_vectors
def test_all_vectors_are_present():
    assert len(FOLDERS) >= 21


@needs_vectors
@pytest.mark.parametrize("name", FOLDERS)
def test_vector_report_and_messages(name):
    d = VECTORS / name
    result = evaluate_lines(lines(d / "gold.mrg"), lines(d / "test.mrg"))
    expected_err = (d / "evalb.err").read_text().splitlines()
    assert result.messages == expected_err[:-1]
    assert result.aborted == (expected_err[-1] == "exit status: 1")
    report = format_report(result, per_sentence=True, strict=False)
    assert report == (d / "evalb.out").read_text()


@needs_vectors
def test_vector_figures_as_numbers():
    """The numbers behind the printed figures (what the trainer uses)."""
    d = VECTORS / "berkeley_test_sm6"
    result = evaluate_lines(lines(d / "gold.mrg"), lines(d / "test.mrg"))
    text = (d / "evalb.out").read_text()
    blocks = text.split("-- len<=40 --")
    for block, figures in zip(blocks, (result.all.figures(), result.cut.figures()), strict=True):
        printed = dict(re.findall(r"^(\S.*?)\s+=\s+(\S+)$", block, re.M))
        assert int(printed["Number of sentence"]) == figures["sentences"]
        assert int(printed["Number of Valid sentence"]) == figures["valid_sentences"]
        for label, key in [
            ("Bracketing Recall", "recall"),
            ("Bracketing Precision", "precision"),
            ("Bracketing FMeasure", "fmeasure"),
            ("Complete match", "complete_match"),
            ("Average crossing", "average_crossing"),
            ("No crossing", "no_crossing"),
            ("2 or less crossing", "two_or_less_crossing"),
            ("Tagging accuracy", "tagging_accuracy"),
        ]:
            assert f"{figures[key]:.2f}" == printed[label], label


@needs_vectors
def test_345_sentences_against_themselves_are_perfect():
    gold = lines(VECTORS / "berkeley_test_sm6" / "gold.mrg")
    assert len(gold) == 345
    result = evaluate_lines(gold, gold)
    assert "=== Labels (valid sentences) ===" in format_report(result, labels=True)
    fig = result.all.figures()
    assert fig["fmeasure"] == fig["strict_fmeasure"] == 100.0
    assert fig["complete_match"] == 100.0 and result.not_scored == 0


def test_deletions_and_label_cut():
    s, _ = one(TREE, TREE.replace("NP-SBJ", "NP").replace("(PP ", "(PP-LOC=2 "))
    assert (s.matched, s.gold, s.test, s.words, s.length) == (5, 5, 5, 6, 7)
    # TOP (also TOP-1) is deleted; ROOT and an empty outer bracket are real brackets.
    assert one(TREE, TREE.replace("(TOP ", "(TOP-1 "))[0].test == 5
    assert one(TREE, TREE.replace("(TOP ", "(ROOT "))[0].test == 6
    assert one(TREE, TREE.replace("(TOP ", "( "))[0].test == 6


def test_label_starting_with_dash_is_cut_to_empty_like_evalb():
    """EVALB's modify_label cuts at a leading '-' too: a bracket labelled -NONE- becomes
    the empty label, so it is not deleted and matches an empty outer bracket."""
    gold = "( (S (NN a) (VB b)) )"
    s, _ = one(gold, "( (-NONE- (NN a) (VB b)) )")
    assert (s.matched, s.gold, s.test) == (1, 2, 2)
    s, _ = one(gold, "( (-LRB- (NN a) (VB b)) )")
    assert (s.matched, s.gold, s.test) == (1, 2, 2)


def test_none_and_punctuation_words_deleted_but_length_counts_punctuation():
    gold = "(TOP (S (NP-SBJ (-NONE- *)) (VP (VB Go)) (. !)))"
    s, _ = one(gold, "(TOP (S (VP (VB Go)) (. !)))")
    assert (s.length, s.words, s.matched, s.gold) == (2, 1, 2, 2)  # NP over a trace vanishes
    # A punctuation word tagged differently in test is not deleted there: length error.
    s, result = one(gold, "(TOP (S (VP (VB Go)) (NN !)))")
    assert s.status is Status.ERROR and result.messages == ["1 : Length unmatch (1|2)"]


def test_advp_prt_equivalent_as_labels_and_tags():
    s, _ = one("(S (PRT (RP up)))", "(S (ADVP (RP up)))")
    assert s.matched == 2 and s.correct_tags == 1
    s, _ = one("(S (X (PRT up)))", "(S (X (ADVP up)))")
    assert s.correct_tags == 1
    s, _ = one("(S (PRT (RP up)))", "(S (ADVP (RP up)))", NONE)
    assert s.matched == 1


def test_duplicates_match_as_multiset_and_crossing():
    s, _ = one("(S (NP (NP (NN a))) (VB b))", "(S (NP (NN a)) (VB b))")
    assert (s.matched, s.gold, s.test) == (2, 3, 2)
    # Test (Y b c) crosses gold (A a b); (Z a b c) and (X a) do not cross anything.
    s, result = one("(S (A (N a) (N b)) (N c))", "(S (Z (X (N a)) (Y (N b) (N c))))")
    assert s.crossing == 1 and s.matched == 1
    assert result.all.figures()["two_or_less_crossing"] == 100.0
    assert result.all.complete == 0


def test_skip_sentences():
    for test in ["", "()", "(())", "(TOP)", "(TOP (-NONE- *))"]:
        s, result = one(TREE, test)
        assert s.status is Status.SKIP and result.messages == [], test
    # EVALB reads "( )" as a one-word sentence (empty label, empty word): not a skip.
    s, result = one(TREE, "( )")
    assert s.status is Status.ERROR and result.messages == ["1 : Length unmatch (6|1)"]


def test_unbalanced_brackets_like_evalb():
    # Never closed: the bracket ends at -1 and matches nothing, but figures are printed.
    s, result = one("(S (NP (NN a)) (VP (VB b)))", "(S (NP (NN a)) (VP (VB b))")
    assert s.status is Status.ERROR and (s.matched, s.gold, s.test) == (2, 3, 3)
    assert result.messages == ["1 : Bracketing is unbalanced (too many open bracket)"]
    assert result.all.errors == 1 and result.all.gold == 0
    # One close bracket too many reports "open"; a second one also "close" (EVALB's stack).
    _, result = one("(S (NN a))", "(S (NN a))))")
    assert result.messages == [
        "1 : Bracketing unbalance (too many close bracket)",
        "1 : Bracketing is unbalanced (too many open bracket)",
    ]


def test_two_words_in_a_bracket_stops_the_run():
    bad = "(S (NN a b))"
    result = evaluate_lines([bad], [bad])
    assert result.aborted and result.sentences == []
    assert result.messages[0] == "1 : More than two elements in a bracket"
    assert result.messages[1:] == ["1 : Reading sentence"] * 11
    # A space before the close bracket of a terminal is the same case for EVALB.
    assert evaluate_lines(["(S (NN a))"], ["(S (NN a ))"]).aborted
    # Without an error limit the sentence is an error and the run goes on.
    s, result = one(bad, "(S (NN a))", NONE)
    assert s.status is Status.ERROR and not result.aborted
    assert result.messages == [
        "1 : More than two elements in a bracket",
        "1 : Reading sentence",
    ]


def test_more_than_ten_errors_stop_without_summary():
    gold = ["(S (NN a))"] * 12
    result = evaluate_lines(gold, ["(S (NN b))"] * 12)
    assert result.aborted and len(result.messages) == 12 and len(result.sentences) == 11
    report = format_report(result, per_sentence=True)
    assert "Summary" not in report and report.count("\n") == 3 + 11
    assert format_report(result) == ""
    assert not evaluate_lines(gold, ["(S (NN b))"] * 12, NONE).aborted


def test_line_count_mismatch_messages_and_strict_figures():
    result = evaluate_lines([TREE, TREE, TREE], [TREE])
    assert result.messages == ["2 : Number of lines unmatch (too many lines in gold file)"]
    assert result.all.sentences == 1 and result.all.missing == 2
    fig = result.all.figures()
    assert fig["fmeasure"] == 100.0
    assert fig["strict_recall"] == pytest.approx(100 / 3) and fig["strict_precision"] == 100
    assert result.not_scored == 2
    result = evaluate_lines([TREE], [TREE, TREE])
    assert result.messages == ["2 : Number of lines unmatch (too many lines in test file)"]
    assert result.not_scored == 0


def test_strict_line_counts_skipped_and_error_sentences_as_wrong():
    gold = [TREE, TREE, "(TOP (S (NP (NNP John)) (VP (VBZ sleeps)) (. .)))"]
    test = [TREE, "()", "(TOP (S (NP (NNP Jon)) (VP (VBZ sleeps)) (. .)))"]
    result = evaluate_lines(gold, test)
    fig = result.all.figures()
    assert fig["fmeasure"] == 100.0  # EVALB's figure ignores both failures
    assert (fig["strict_gold_brackets"], fig["strict_test_brackets"]) == (13, 8)
    assert fig["strict_recall"] == pytest.approx(500 / 13)
    assert fig["strict_precision"] == pytest.approx(500 / 8)
    text = format_report(result)
    assert (
        "\nStrict FMeasure (all; skipped/error sentences counted as wrong) =  47.62  "
        "[2 of 3 sentences not scored; R 38.46, P 62.50]\n"
    ) in text
    assert "Strict FMeasure (len<=40;" in text


def test_cutoff_block_and_undefined_fmeasure():
    long_tree = "(S " + " ".join(f"(NN w{i})" for i in range(5)) + ")"
    result = evaluate_lines([long_tree, "(S (NN a))"], [long_tree, "(S (NN b))"], cutoff=3)
    assert result.cut.sentences == 1 and result.all.sentences == 2
    text = format_report(result)
    assert "\n-- len<=3 --\n" in text
    # No matched bracket at all: C computes 0/0 and prints -nan; the figure is None (null
    # in JSON), the same value, not 0.0.
    assert text.split("-- len<=3 --")[1].count("Bracketing FMeasure       =   -nan") == 1
    assert result.cut.figures()["fmeasure"] is None


def test_tags_compared_uncut_and_empty_words():
    s, _ = one("(S (NN-HL a) (VB b))", "(S (NN a) (VB b))")
    assert s.correct_tags == 1 and s.matched == 1


def test_json_and_labels():
    gold = ["(TOP (S (NP (NN a)) (VP (VB b) (PRT (RP c)))))"]
    test = ["(TOP (S (NP (NN a)) (VP (VB b) (ADVP (RP c)))))"]
    result = evaluate_lines(gold, test)
    data = json.loads(result.to_json(per_sentence=True, labels=True))
    assert data["all"]["fmeasure"] == 100.0 and data["len<=40"]["sentences"] == 1
    assert data["labels"]["ADVP"] == {
        "gold": 1,
        "test": 1,
        "matched": 1,
        "recall": 100.0,
        "precision": 100.0,
        "fmeasure": 100.0,
    }
    assert data["sentences"][0]["status"] == "ok" and data["not_scored"] == 0
    table = format_report(result, labels=True).split("=== Labels (valid sentences) ===\n")[1]
    assert table.splitlines()[1].split() == ["ADVP", "1", "1", "1", "100.00", "100.00", "100.00"]


def test_root_conventions():
    assert root_convention("( (S (NN a) (VB b)) )") == "''"
    assert root_convention("(TOP (S (NN a) (VB b)))") == "-"
    assert root_convention("(S (NN a) (VB b))") == "-"
    assert root_convention("(ROOT (S (NN a) (VB b)))") == "ROOT"
    assert root_convention("()") is None
    empty, top = ["( (S (NN a) (VB b)) )"], ["()", "(TOP (S (NN a) (VB b)))"]
    assert "empty outer bracket" in convention_warning(empty, top)
    assert convention_warning(top, ["(S (NN a) (VB b))"]) is None
    assert convention_warning(empty, empty) is None
    result = evaluate_lines(empty, top[1:])
    assert (result.all.gold, result.all.test) == (2, 1)  # the empty root bracket counts


def test_accepts_lines_with_newlines_and_crlf():
    s, result = one(TREE + "\r\n", TREE + "\n")
    assert s.status is Status.OK and s.matched == 5 and result.messages == []


def test_warns_about_lines_longer_than_evalbs_buffer():
    long_tree = "(S " + "(NN a) " * 800 + ")"
    result = evaluate_lines([TREE, long_tree], [TREE, long_tree])
    assert result.all.figures()["fmeasure"] == 100.0
    assert result.warnings == [
        "gold line 2 is longer than EVALB's 5000-byte line buffer: the original program "
        "would misread it (scored here as one sentence)",
        "test line 2 is longer than EVALB's 5000-byte line buffer: the original program "
        "would misread it (scored here as one sentence)",
    ]
    assert evaluate_lines([TREE], [TREE]).warnings == []
