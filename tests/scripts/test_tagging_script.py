"""scripts/tagging_by_frequency.py: tag accuracy by training frequency (the README's lexicon
comparison with the Berkeley parser)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support import SCRIPTS

SCRIPT = SCRIPTS / "tagging_by_frequency.py"


def test_accuracy_by_frequency_bin(tmp_path: Path) -> None:
    (tmp_path / "train.mrg").write_text(
        "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))\n(S (NP (DT the) (NN dog)) (VP (VBZ runs)))\n"
    )
    gold = "(S (NP (DT the) (NN cat)) (VP (VBZ barks)))\n(S (NP (-NONE- *)) (VP (VB go)))\n"
    (tmp_path / "gold.mrg").write_text(gold)
    # "cat" (unseen) right, "barks" (once) wrong, "the" (2-5) right; the second sentence
    # has lost a word to -NONE- in gold and none in the parse: same length after normalising.
    (tmp_path / "a.parsed").write_text(
        "(TOP (S (NP (DT the) (NN cat)) (VP (NNS barks))))\n(TOP (S (VP (VB go))))\n"
    )
    (tmp_path / "b.parsed").write_text("(TOP (S (NP (DT the) (NN cat)) (VP (VBZ barks))))\n()\n")
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--train", "train.mrg", "--gold", "gold.mrg"]
        + ["a.parsed", "b.parsed"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    rows = [line.split(" | ") for line in res.stdout.splitlines()[2:]]
    assert rows[0][1:6] == ["100.0 % (2)", "0.0 % (1)", "100.0 % (1)", "- (0)", "- (0)"]
    assert rows[0][-2] == "75.00 %" and rows[0][-1] == "0 |"
    assert rows[1][-2] == "100.00 %" and rows[1][-1] == "1 |"
