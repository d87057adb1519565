"""`lpcfg train --method wcfg|wcfg-unsupervised` end to end (issue 17): the model files hold
the learned WCFG (``wcfg.grammar.from_model`` gives back the library's result), `lpcfg score`
computes its function, and what cannot work is refused with one error line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.wcfg.algebraic import from_model
from lpcfg_cli.wcfg.bracketed_samples import sample_bracketed
from lpcfg_cli.wcfg.completion import learn_unsupervised
from lpcfg_cli.wcfg.factorisation import learn_supervised
from lpcfg_cli.wcfg.hankel import bracketed
from lpcfg_cli.wcfg.targets import dyck_pcfg
from tests.support import invoke

WORDS = ["a", "b"]


def _tree(words: tuple[int, ...], nodes: tuple[tuple[int, int, int], ...]) -> str:
    """A PTB tree of a bracketed sentence: phrases X, pre-terminals T over the words."""
    split = {(i, j): k for i, k, j in nodes}

    def build(i: int, j: int) -> str:
        if j - i == 1:
            return f"(T {WORDS[words[i]]})"
        k = split[i, j]
        return f"(X {build(i, k)} {build(k, j)})"

    return build(0, len(words))


@pytest.fixture(scope="module")
def sample() -> list:
    return sample_bracketed(dyck_pcfg(), 400, np.random.default_rng(7), max_length=10)


@pytest.fixture(scope="module")
def d(tmp_path_factory, sample) -> Path:
    d = tmp_path_factory.mktemp("wcfg")
    (d / "train.mrg").write_text("".join(_tree(s.words, s.nodes) + "\n" for s in sample))
    (d / "train.txt").write_text(
        "".join(" ".join(WORDS[w] for w in s.words) + "\n" for s in sample)
    )
    (d / "in.txt").write_text("a b\na a b b\nb a\n")
    return d


def test_wcfg_from_trees_is_the_library_model(d: Path, sample) -> None:
    out = d / "sup.npz"
    res = invoke(
        "train", "--method", "wcfg", "--terminals", "words", "--states", "4",
        "--insides", "30", "--outsides", "30", "--max-length", "0", d / "train.mrg", "-o", out,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    model = LPCFG.load(out)
    assert model.form == "tensor" and model.meta["method"] == "wcfg"
    got, words = from_model(model)
    assert words == WORDS
    # The same samples through the library (the treebank's words sorted: a = 0, b = 1).
    want = learn_supervised(sample, 4, d=2, n_insides=30, n_outsides=30)
    for x in [(0, 1), (0, 0, 1, 1), (0, 1, 0, 1), (1, 0)]:
        # the model file stores float32 parameters (files.packed_arrays)
        assert got.value(x) == pytest.approx(want.value(x), rel=1e-6, abs=1e-12)
    scored = invoke("score", "--prob", out, d / "in.txt", "-q")
    assert scored.exit_code == 0, scored.output
    values = [float(v) for v in scored.output.split()]
    for x, v in zip([(0, 1), (0, 0, 1, 1), (1, 0)], values, strict=True):
        assert v == pytest.approx(got.value(x), rel=1e-9, abs=1e-12)
    assert values[0] == pytest.approx(0.4, abs=0.1)  # p(ab) of the Dyck PCFG is 0.4


def test_wcfg_tags_and_the_default_length(d: Path) -> None:
    out = d / "tags.npz"
    res = invoke("train", "--method", "wcfg", "--states", "2", d / "train.mrg", "-o", out)
    assert res.exit_code == 0, res.output
    _, words = from_model(LPCFG.load(out))
    assert words == ["T"]  # every pre-terminal is tagged T


def test_wcfg_unsupervised_from_text_is_the_library_model(d: Path, sample) -> None:
    out = d / "unsup.npz"
    res = invoke(
        "train", "--method", "wcfg-unsupervised", "--input", "text", "--basis", "simplified",
        "--states", "2", d / "train.txt", "-o", out,
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    model = LPCFG.load(out)
    assert model.meta["method"] == "wcfg-unsupervised"
    got, words = from_model(model)
    seen = Counter(s.words for s in sample)
    order = [words.index(w) for w in WORDS]  # the text's vocabulary order
    strings = [tuple(order[v] for v in x) for x in seen]
    want = learn_unsupervised(strings, list(seen.values()), 2, basis="simplified", d=2)
    for x in [(0, 1), (0, 0, 1, 1), (1, 1)]:
        mapped = tuple(order[v] for v in x)
        assert got.value(mapped) == pytest.approx(want.value(mapped), rel=1e-6, abs=1e-9)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--method", "wcfg", "--input", "text"], "learns from trees"),
        (["--method", "wcfg", "--basis", "closed"], "--basis"),
        (["--method", "em", "--insides", "5"], "--insides"),
    ],
)
def test_refusals(d: Path, args: list[str], message: str) -> None:
    res = invoke("train", *args, d / "train.mrg", "-o", d / "x.npz")
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.startswith("lpcfg: error:")]
    assert len(lines) == 1 and message in lines[0], res.output
    assert not (d / "x.npz").exists()


def test_a_basis_without_whole_sentences_is_refused(tmp_path: Path) -> None:
    """Long sentences only: no sentence is an inside string, the start vector vanishes."""
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(30):
        words = tuple(int(v) for v in rng.integers(0, 2, 12))
        nodes = [(0, k, 12) for k in [1]] + [(i, i + 1, 12) for i in range(1, 11)]
        s = bracketed(words, nodes)
        lines.append(_tree(s.words, s.nodes))
    (tmp_path / "long.mrg").write_text("\n".join(lines) + "\n")
    res = invoke(
        "train", "--method", "wcfg", "--terminals", "words", "--max-length", "0",
        "--insides", "6", "--outsides", "60", "--states", "1", tmp_path / "long.mrg",
        "-o", tmp_path / "m.npz",
    )  # fmt: skip
    assert res.exit_code == 2
    assert "start vector is zero" in res.output
