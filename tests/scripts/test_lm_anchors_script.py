"""scripts/lm_anchors.py: how far EM's aggregate bigram model satisfies the anchor assumption
(the README's explanation of pivot+EM at large m)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.support import SCRIPTS, load_script

SCRIPT = SCRIPTS / "lm_anchors.py"
lm_anchors = load_script("lm_anchors")


def test_anchor_statistics_over_the_most_frequent_words() -> None:
    post = np.array([[0.9, 0.1], [0.5, 0.5], [0.05, 0.95], [1.0, 0.0]])
    frequency = np.array([10, 9, 8, 1])  # the last word is outside a pool of 3
    stats = lm_anchors.anchor_stats(post, frequency, pool=3)
    assert stats["states_with_anchor"] == 2
    assert np.isclose(stats["q50"], 0.9)
    only_mixed = lm_anchors.anchor_stats(post[[1]], frequency[[1]], pool=1)
    assert only_mixed["states_with_anchor"] == 0 and np.isclose(only_mixed["q10"], 0.5)


def test_runs_on_a_planted_corpus_with_anchors(tmp_path: Path) -> None:
    """Three states, each with words only it emits and a context that uses it alone: EM's
    solution has an anchor word for every state, and every start is reported."""
    rng = np.random.default_rng(0)
    own = [["a1", "a2", "a3"], ["b1", "b2", "b3"], ["c1", "c2", "c3"]]
    nxt = {w: k for k, ws in enumerate(own) for w in ws}
    sentences = []
    for _ in range(400):
        state, words = int(rng.integers(3)), []
        for _ in range(8):
            word = own[state][int(rng.integers(3))]
            words.append(word)
            state = (nxt[word] + 1) % 3  # the next state is a function of the word
        sentences.append(" ".join(words))
    (tmp_path / "train.txt").write_text("\n".join(sentences[:300]) + "\n")
    (tmp_path / "dev.txt").write_text("\n".join(sentences[300:]) + "\n")
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path), "--states", "3"]
        + ["--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    record = json.loads((tmp_path / "out.json").read_text())
    assert record["command"].startswith("python scripts/lm_anchors.py")
    (row,) = record["rows"]
    assert row["m"] == 3 and row["next_word_anchors"]["states_with_anchor"] == 3
    for start in ("em", "pivot+em", "em_s_fitted_r", "em_r_pivot_s"):
        assert row[start]["best"] < 10  # every word has 3 successors: perplexity near 3-4
    assert "| 3 | 0 |" in (tmp_path / "out.md").read_text()
