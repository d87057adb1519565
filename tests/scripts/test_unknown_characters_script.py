"""scripts/unknown_characters.py: the same model files parsed without and with the character
evidence of unknown uncased words, one table row per setting."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import SCRIPTS, invoke, load_script, uncased_treebank


def test_the_evidence_row_beats_the_off_row_on_words_told_apart_by_their_first_character(
    tmp_path,
):
    train = tmp_path / "train.mrg"
    train.write_text(uncased_treebank())
    dev = tmp_path / "dev.mrg"
    dev.write_text(
        "(S (NP (Na 老甲)) (VP (VA 打乙)))\n(S (VP (VA 吃丙)) (NP (Na 小丁)))\n"
        "(S (VP (VA 打戊)) (NP (Na 老己)))\n(S (NP (Na 小庚)) (VP (VA 吃辛)))\n"
    )
    for seed in (0, 1):
        model = tmp_path / f"pcfg-s{seed}.npz"
        done = invoke("train", train, "--method", "pcfg", "--seed", seed, "-o", model)
        assert done.exit_code == 0, done.output
    done = subprocess.run(
        [sys.executable, SCRIPTS / "unknown_characters.py", "--gold", dev, "--smooth", "5",
         "--json", tmp_path / "record.json", tmp_path / "pcfg-s0.npz", tmp_path / "pcfg-s1.npz"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    header, rule, off, five = done.stdout.strip().splitlines()
    assert header == "| pseudo-count | pcfg |"  # the seeds are one column
    assert off.startswith("| off |") and five.startswith("| **5** |")  # the chosen setting
    cells = [row.replace("*", "").split("|") for row in (off, five)]
    f1 = {c[1].strip(): float(c[2].split("±")[0]) for c in cells}
    assert f1["5"] == 100.0 > f1["off"]
    record = json.loads((tmp_path / "record.json").read_text())
    assert [r["setting"] for r in record["rows"]] == ["off", "5"] and record["chosen"] == "5"
    assert load_script("unknown_characters").markdown(record) == done.stdout
