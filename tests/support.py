"""Oracles and runners shared by the test modules (which never import one another).

- The command line: ``run`` (a subprocess of the real entry point), ``lpcfg`` (its argv,
  for ``Popen``) and ``invoke`` (in process, through click's CliRunner).
- Brute force: ``binary_trees`` enumerates every binary tree over a span; on it,
  ``labelled_trees`` lists a grammar's trees of a sentence, ``latent_tree_prob`` sums a tree
  over every latent assignment, ``brute_force`` gives a sentence's probability and item
  marginals from the two.
- The chart engine on sentences drawn from a model: ``short_sentences``, ``run_latent``.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from lpcfg_cli.cli.group import main
from lpcfg_cli.engine.chart_grammars import LatentGrammar
from lpcfg_cli.engine.latent import inside_pass, lexical_items, outside_pass
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.latent_pcfg.em import EMLearner, EMOptions
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import Tree, leaves

# --- a real browser -----------------------------------------------------------------------

# Debian's Chromium (.ci/run installs it): the tests that open a page in it are skipped
# without it, but never in CI.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and os.environ.get("CI") != "true",
    reason="Debian's chromium is not installed (apt-get install chromium)",
)


def chromium(folder: Path, *args: str) -> str:
    """Headless Chromium run with ``args`` (``--dump-dom URL``, ``--screenshot=PNG URL``),
    its profile in ``folder``, no network; its stdout."""
    assert CHROMIUM is not None, "CI must install Debian's chromium (see .ci/run)"
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={folder / 'chromium-profile'}", "--virtual-time-budget=5000",
        "--allow-file-access-from-files",
    ]  # fmt: skip
    done = subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


# --- the command line ---------------------------------------------------------------------

# A tiny treebank the command-line tests train on: four sentences, two of which repeat words
# of the others (so that words are known, not all rare).
TINY_TREES = [
    "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))",
    "(S (NP (DT a) (NN dog)) (VP (VBD ran)))",
    "(S (NP (NNP Kim)) (VP (VBD saw) (NP (DT the) (NN dog))))",
    "(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (NNP Kim))))",
]


def one_error(result: Any, fragment: str, status: int = 2) -> None:
    """``result`` (of ``invoke``) ended with ``status`` and exactly one line on stderr: the
    error, which holds ``fragment``; no traceback anywhere."""
    assert result.exit_code == status, (result.exit_code, result.stderr, result.exception)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("lpcfg: error: "), result.stderr
    assert fragment in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def lpcfg(*args: Any) -> list[str]:
    """The command line of the real entry point (``python -m lpcfg_cli ARGS``)."""
    return [sys.executable, "-m", "lpcfg_cli", *(str(a) for a in args)]


def run(
    *args: Any, stdin: str | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the command line in a subprocess: its real exit status, stdout and stderr."""
    return subprocess.run(
        lpcfg(*args), input=stdin, capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


ROOT = Path(__file__).resolve().parent.parent  # the repository
DATA = ROOT / "tests" / "data"  # what the tests read that the repository holds
SCRIPTS = ROOT / "scripts"

# The EVALB tests' reference vectors (the original program's output) and their one tree.
VECTORS = DATA / "evalb"
FOLDERS = sorted(p.name for p in VECTORS.iterdir() if p.is_dir())
needs_vectors = pytest.mark.skipif(
    not FOLDERS, reason=f"EVALB reference vectors not found at {VECTORS}"
)
TREE = (
    "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"
)


def load_script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (the scripts are files, not a package), registered
    in ``sys.modules`` as an import would be (dataclasses look their module up there), with
    the scripts' folder on the path while it loads."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(SCRIPTS))  # the scripts import each other (records, bench_parse)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


def invoke(*args: Any, stdin: str | bytes | None = None):
    """Run the command line in process (through the group's one-line error handling)."""
    return CliRunner().invoke(main, [str(a) for a in args], input=stdin)


# --- brute-force enumeration ----------------------------------------------------------------


def binary_trees(
    i: int,
    j: int,
    leaf: Callable[[int], Iterator],
    join: Callable[[int, int, int, Any, Any], Iterator],
) -> Iterator:
    """Every binary tree over the span [i, j): ``leaf(i)`` yields the trees of the word at
    ``i``; ``join(i, k, j, left, right)`` yields those made of a tree over [i, k) and one
    over [k, j) (none if they cannot be joined)."""
    if j - i == 1:
        yield from leaf(i)
        return
    for k in range(i + 1, j):
        for left in binary_trees(i, k, leaf, join):
            for right in binary_trees(k, j, leaf, join):
                yield from join(i, k, j, left, right)


def labelled_trees(model, i: int, j: int, words: list[str]) -> Iterator:
    """Every (tree, items) of ``model``'s grammar over words[i:j]; a tree is ("l", lexical
    rule) or ("b", binary rule, left, right), items are (symbol, start, end), root last."""
    g = model.grammar

    def leaf(k):
        w = g.words.index(words[k])
        for lx in np.flatnonzero(g.lexical[:, 1] == w):
            yield ("l", int(lx)), [(int(g.lexical[lx, 0]), k, k + 1)]

    def join(i, k, j, left, right):
        (lt, litems), (rt, ritems) = left, right
        b, c = litems[-1][0], ritems[-1][0]
        for r in np.flatnonzero((g.binary[:, 1] == b) & (g.binary[:, 2] == c)):
            yield ("b", int(r), lt, rt), litems + ritems + [(int(g.binary[r, 0]), i, j)]

    return binary_trees(i, j, leaf, join)


def rule_tree(grammar, tree: Tree):
    """A tree of ``grammar``'s symbols and words in the form ``labelled_trees`` gives."""
    a = grammar.symbol_index[tree.label()]
    if isinstance(tree[0], str):
        return ("l", grammar.lexical_id(a, grammar.words.index(tree[0])))
    b, c = (grammar.symbol_index[kid.label()] for kid in tree)
    return ("b", grammar.rule_id(a, b, c), rule_tree(grammar, tree[0]), rule_tree(grammar, tree[1]))


def latent_tree_prob(model, tree) -> float:
    """p(tree) (a ``labelled_trees`` tree, root probability included) summed over every
    latent assignment of its nodes, one assignment at a time."""
    g = model.grammar
    nodes = []

    def collect(t):
        nodes.append(t)
        if t[0] == "b":
            collect(t[2])
            collect(t[3])

    collect(tree)

    def sym(t):
        return int(g.lexical[t[1], 0]) if t[0] == "l" else int(g.binary[t[1], 0])

    total = 0.0
    for hs in itertools.product(*[range(model.states[sym(t)]) for t in nodes]):
        h = {id(t): v for t, v in zip(nodes, hs, strict=True)}
        p = model.root_vector(sym(tree))[h[id(tree)]]
        for t in nodes:
            if t[0] == "l":
                p *= model.lexical_vector(t[1])[h[id(t)]]
            else:
                p *= model.binary_tensor(t[1])[h[id(t)], h[id(t[2])], h[id(t[3])]]
        total += p
    return float(total)


def brute_force(model, words: list[str], allowed: Callable | None = None):
    """(p(words), {(symbol, start, end): marginal}) summing every tree of the sentence
    (only those whose every item ``allowed`` accepts, when given)."""
    z = 0.0
    mu: dict[tuple[int, int, int], float] = {}
    for tree, items in labelled_trees(model, 0, len(words), words):
        root = items[-1][0]
        if model.root_vector(root).sum() == 0:
            continue
        if allowed is not None and not all(allowed(item) for item in items):
            continue
        p = latent_tree_prob(model, tree)
        z += p
        for item in items:
            mu[item] = mu.get(item, 0.0) + p
    return z, {k: v / z for k, v in mu.items()} if z > 0 else {}


# --- the chart engine on sampled sentences ------------------------------------------------


def short_sentences(model, n: int, max_len: int, seed: int) -> list[list[str]]:
    """Up to ``n`` sentences drawn from the model (so they have parses), at most ``max_len``
    words each."""
    out = []
    for t in sample_trees(model, 400, seed=seed):
        if len(leaves(t)) <= max_len:
            out.append(leaves(t))
        if len(out) == n:
            break
    return out


def lexical_triples(g, layout, sentences):
    """(span, lexical rule, weight 1) for every rule of every word of ``sentences``."""
    spans, rules = [], []
    for s, words in enumerate(sentences):
        for t, w in enumerate(words):
            for lx in np.flatnonzero(g.lexical[:, 1] == g.words.index(w)):
                spans.append(layout.base[1, s] + t)
                rules.append(lx)
    return np.array(spans), np.array(rules), np.ones(len(rules))


def run_latent(model, sentences, dtype=np.float64, keys=None):
    """The latent pass over the items ``keys`` (default: every item of the full chart)."""
    g = model.grammar
    layout = SpanLayout([len(s) for s in sentences])
    if keys is None:
        keys = np.arange(layout.n_spans * g.n_symbols)
    lexical = lexical_triples(g, layout, sentences)
    lg = LatentGrammar.from_model(model, dtype)
    chart = inside_pass(lg, layout, keys, lexical_items(lg, layout, keys, lexical))
    outside_pass(lg, chart)
    return layout, chart


def synthetic_treebank(d: Path, n_train: int, n_test: int) -> list[Tree]:
    """Trees sampled from a fixed random 2-state L-PCFG (the latent pass has work to do):
    ``test.txt`` and ``test.mrg`` in ``d`` hold the last ``n_test``; returns the first
    ``n_train``."""
    truth = random_lpcfg(
        inter=5, pre=5, words=30, states=2, rules_per_symbol=4, words_per_tag=8, seed=3
    )
    trees = sample_trees(truth, n_train + n_test, seed=4)
    test = trees[n_train:]
    (d / "test.txt").write_text("".join(" ".join(leaves(t)) + "\n" for t in test))
    (d / "test.mrg").write_text("".join(format_tree(t) + "\n" for t in test))
    return trees[:n_train]


def fit_em(grammar: Grammar, bank: CompiledTreebank, **options: Any) -> LPCFG:
    """EM with these ``EMOptions`` on a grammar and treebank built without ``prepare``."""
    return EMLearner(EMOptions(**options)).fit(TrainingData(grammar, bank, {}))


def latent_trees(n: int) -> list[Tree]:
    """``n`` trees of a fixed 2-state L-PCFG whose states differ sharply (sparse Dirichlet),
    so that latent states pay off over the PCFG."""
    truth = random_lpcfg(
        inter=4,
        pre=4,
        words=20,
        states=2,
        rules_per_symbol=4,
        words_per_tag=6,
        seed=9,
        concentration=0.5,
    )
    return sample_trees(truth, n, seed=10)


# A treebank of an uncased script (``uncased_treebank``): nouns start with 老 or 小, verbs
# with 打 or 吃; every word is seen once and ends in a character of its own, so that no
# ending is frequent enough to be a learned suffix and only the first character tells a
# noun from a verb.
NOUN_HEADS, VERB_HEADS = "老小", "打吃"
UNCASED_ENDS = [chr(0x4E00 + 200 + k) for k in range(400)]


def uncased_treebank(n: int = 100) -> str:
    """``n`` two-word trees, one per line, in both orders (NP VP and VP NP) so that the
    grammar alone cannot tell which of two unknown words is the noun (``lexicon.
    CharacterEvidence`` can, from their first characters)."""
    lines = []
    for i in range(n):
        noun = NOUN_HEADS[i % 2] + UNCASED_ENDS[2 * i]
        verb = VERB_HEADS[i % 2] + UNCASED_ENDS[2 * i + 1]
        if i % 2:
            lines.append(f"(S (NP (Na {noun})) (VP (VA {verb})))")
        else:
            lines.append(f"(S (VP (VA {verb})) (NP (Na {noun})))")
    return "\n".join(lines) + "\n"
