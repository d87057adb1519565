"""Options are never silently ignored (issue 12, items 7 and 9): an option the run cannot
use is refused or warned about, config keys are the option names, and stderr carries
progress bars only for a terminal, nothing but errors and warnings with --quiet.

All runs are in process (CliRunner, whose stderr is not a terminal) on a tiny treebank.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from lpcfg_cli.cli.group import main
from lpcfg_cli.model.lpcfg import LPCFG
from tests.support import ROOT, invoke

TREES = [
    "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))",
    "(S (NP (DT a) (NN dog)) (VP (VBD ran)))",
    "(S (NP (NNP Kim)) (VP (VBD saw) (NP (DT the) (NN dog))))",
]
TREE = "(S (NP (DT the) (NN cat)) (VP (VBD sat)))"


@pytest.fixture(scope="module")
def d(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("options")
    (d / "t.mrg").write_text("\n".join(TREES) + "\n")
    (d / "x.txt").write_text("the cat sat\n")
    assert invoke("train", d / "t.mrg", "-o", d / "pcfg.npz").exit_code == 0
    return d


# (train options, the refusal) -- each option given on the command line for a run that
# cannot use it.
REFUSED = [
    (["--method", "em", "--min-singular", "0.1"], "--min-singular has no effect with --method em"),
    (["--method", "em", "--cap", "S=1"], "--cap has no effect with --method em (used by spectral)"),
    (
        ["--method", "spectral", "--iterations", "3"],
        "--iterations has no effect with --method spectral (used by em, pivot+em, splitmerge)",
    ),
    (["--method", "pivot", "--tol", "0"], "--tol has no effect with --method pivot"),
    (
        ["--method", "spectral", "--min-count", "3"],
        "--min-count has no effect with --method spectral (used by pivot, pivot+em)",
    ),
    (
        ["--method", "em", "--inside-features", "word"],
        "--inside-features has no effect with --method em (used by spectral, pivot, pivot+em)",
    ),
    (["--method", "pcfg", "--no-feature-scaling"], "--feature-scaling has no effect"),
    (["--method", "em", "--dev-f1-every", "2"], "--dev-f1-every has no effect without --dev"),
    (
        ["--method", "em", "--init", "{d}/pcfg.npz", "--states", "4"],
        "--states has no effect with --init (the start model's states are kept)",
    ),
    (
        ["--method", "em", "--init", "{d}/pcfg.npz", "--noise", "0.5"],
        "--noise has no effect with --init",
    ),
    (["--method", "pivot+em", "--noise", "0.5"], "--noise has no effect with --method pivot+em"),
    (
        ["--method", "em", "--init", "{d}/pcfg.npz", "--unaries"],
        "--unaries has no effect with --init (EM continues on the start model's grammar)",
    ),
    (["--method", "pivot+em", "--no-unaries"], "--unaries has no effect with --method pivot+em"),
    (["--method", "splitmerge", "--init", "{d}/pcfg.npz", "--no-unaries"], "--unaries has no"),
    (
        ["--method", "spectral", "--lexical-weight", "0.5"],
        "--lexical-weight has no effect unless --lexical-count is 0",
    ),
]


@pytest.mark.parametrize(("options", "message"), REFUSED, ids=[" ".join(o) for o, _ in REFUSED])
def test_options_the_method_cannot_use_are_refused(d, options, message):
    args = [a.format(d=d) for a in options]
    res = invoke("train", *args, d / "t.mrg", "-o", d / "o.npz")
    assert res.exit_code == 2, res.stderr
    assert res.stderr == f"lpcfg: error: {message}" + res.stderr.split(message, 1)[1]
    flag = message.split()[0]
    assert res.stderr.endswith(f": drop {flag} (see 'lpcfg train --help')\n")
    assert not (d / "o.npz").exists()


def test_an_option_with_an_effect_is_accepted(d, tmp_path):
    """The same options where they do apply (so the refusals above are about the method)."""
    for args in (
        [
            "--method",
            "spectral",
            "--states",
            "2",
            "--lexical-count",
            "0",
            "--lexical-weight",
            "0.5",
            "--cap",
            "S=1",
        ],
        ["--method", "em", "--iterations", "1", "--init", d / "pcfg.npz"],
    ):
        res = invoke("train", "-q", *args, d / "t.mrg", "-o", tmp_path / "m.npz")
        assert (res.exit_code, res.stderr) == (0, ""), args
    spectral = invoke(
        "train",
        "-q",
        "--method",
        "spectral",
        "--states",
        "2",
        "--cap",
        "S=1",
        d / "t.mrg",
        "-o",
        tmp_path / "s.npz",
    )
    assert spectral.exit_code == 0
    model = LPCFG.load(tmp_path / "s.npz")
    assert model.states[model.grammar.symbol_index["S"]] == 1


def test_harmless_unused_options_are_a_warning(d, tmp_path):
    """--jobs without --dev and --seed for the deterministic PCFG cannot change the model:
    one warning line each, shown even with --quiet, and the model is written."""
    res = invoke(
        "train", "--quiet", "--jobs", "2", "--seed", "3", d / "t.mrg", "-o", tmp_path / "m.npz"
    )
    assert res.exit_code == 0
    assert res.stderr == (
        "lpcfg: warning: --seed has no effect with --method pcfg (it is deterministic): "
        "ignored\n"
        "lpcfg: warning: --jobs has no effect without --dev (worker processes parse the dev "
        "trees): ignored\n"
    )
    assert (tmp_path / "m.npz").exists()


def test_config_values_the_run_cannot_use_are_a_warning(d, tmp_path):
    """A config file may serve several methods: what this run cannot use is a warning,
    unless it is the default anyway (seed = 0, tol = 1e-5 here)."""
    config = tmp_path / "em.toml"
    config.write_text(
        '[train]\nmethod = "em"\nstates = "16"\niterations = 40\n'
        "dev-f1-every = 5\nseed = 0\ntol = 1e-5\n"
    )
    res = invoke(
        "train", "-q", "--config", config, "--method", "pcfg", d / "t.mrg", "-o", tmp_path / "m.npz"
    )
    assert res.exit_code == 0, res.stderr
    assert res.stderr.splitlines() == [
        "lpcfg: warning: --states (from --config) has no effect with --method pcfg (the "
        "treebank PCFG has one state per symbol): ignored",
        "lpcfg: warning: --iterations (from --config) has no effect with --method pcfg (used "
        "by em, pivot+em, splitmerge): ignored",
        "lpcfg: warning: --dev-f1-every (from --config) has no effect with --method pcfg (used "
        "by em, pivot+em): ignored",
    ]
    assert LPCFG.load(tmp_path / "m.npz").meta["method"] == "pcfg"


@pytest.mark.parametrize(
    "text",
    [
        '[train]\nmethod = "spectral"\nstates = 2\ncap = ["S=1"]\n',
        '[train]\nmethod = "spectral"\nstates = 2\ncap = "S=1"\n',
        'method = "spectral"\nstates = 2\ncap = "S=1"\nprune = 0.5\n',  # top level, prune: parse's
        '[train]\nmethod = "spectral"\nstates = 2\ncap = ["S=1"]\nmin_singular = 0.01\n'
        "moment-smoothing = 30\n",
    ],
)
def test_config_keys_are_the_option_names(d, tmp_path, text):
    """`cap` for --cap (a list or one string), with - or _; top-level keys of other
    subcommands allowed."""
    config = tmp_path / "c.toml"
    config.write_text(text)
    res = invoke("train", "-q", "--config", config, d / "t.mrg", "-o", tmp_path / "m.npz")
    assert (res.exit_code, res.stderr) == (0, "")
    model = LPCFG.load(tmp_path / "m.npz")
    assert model.meta["method"] == "spectral"
    assert model.states[model.grammar.symbol_index["S"]] == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[train]\ncaps = ["S=1"]\n', "unknown option 'caps' in [train] (did you mean 'cap'?)"),
        (
            "[train]\ndev_f1 = 2\n",
            "unknown option 'dev_f1' in [train] (did you mean 'dev-f1-every'?)",
        ),
        ("[train]\ncap = 3\n", "option 'cap' takes a list of strings"),
        ("[train]\nrare = [1]\n", "option 'rare' takes one value, not a list"),
        ("[parse]\nmodel = 'm.npz'\n", "unknown option 'model' in [parse]"),
        ("[trian]\nrare = 1\n", "unknown table [trian]"),
    ],
)
def test_config_errors_name_the_key(d, tmp_path, text, message):
    config = tmp_path / "c.toml"
    config.write_text(text)
    command = "parse" if "[parse]" in text else "train"
    res = invoke(command, "--config", config, d / "t.mrg", "-o", tmp_path / "m.npz")
    assert (res.exit_code, res.stderr) == (2, f"lpcfg: error: {config}: {message}\n")


def test_lm_subcommands_read_their_nested_tables(tmp_path):
    """[lm.train] and [lm.perplexity] configure `lpcfg lm train` and `lpcfg lm perplexity`;
    top-level keys of any subcommand are allowed; a misspelt nested table is an error."""
    text = tmp_path / "t.txt"
    text.write_text("the cat sat\nthe dog sat\na cat ran\n")
    config = tmp_path / "c.toml"
    config.write_text(
        'states = 2\nprune = 0.5\n[lm.train]\nmethod = "pivot"\nsmoothing = "0.2"\n'
        "[lm.perplexity]\njson = true\n"
    )
    model = tmp_path / "lm.npz"
    res = invoke("lm", "train", "-q", "--config", config, text, "-o", model)
    assert (res.exit_code, res.stderr) == (0, "")
    res = invoke("lm", "perplexity", "--config", config, model, text)
    assert res.exit_code == 0 and json.loads(res.stdout)["tokens"] == 12
    config.write_text("[lm.trian]\nstates = 2\n")
    res = invoke("lm", "train", "--config", config, text, "-o", model)
    assert (res.exit_code, res.stderr) == (2, f"lpcfg: error: {config}: unknown table [lm.trian]\n")


def test_quiet_on_every_subcommand(d, tmp_path):
    """--quiet leaves stderr empty on success (no summaries, no bars) for each subcommand."""
    (tmp_path / "gold.mrg").write_text(f"{TREE}\n")
    runs = {
        "binarize": ["binarize", d / "t.mrg"],
        "train": [
            "train",
            "--method",
            "em",
            "--states",
            "2",
            "--iterations",
            "2",
            "--dev",
            d / "t.mrg",
            d / "t.mrg",
            "-o",
            tmp_path / "m.npz",
        ],
        "parse": ["parse", d / "pcfg.npz", d / "x.txt", "--progress"],
        "score": ["score", d / "pcfg.npz", d / "x.txt", "--progress"],
        "bundle": ["bundle", d / "pcfg.npz", "-o", tmp_path / "b.npz"],
        "evaluate": ["evaluate", tmp_path / "gold.mrg", tmp_path / "gold.mrg"],
        "draw": ["draw", tmp_path / "gold.mrg"],
        "report": [
            "report",
            tmp_path / "gold.mrg",
            tmp_path / "gold.mrg",
            "-o",
            tmp_path / "r.html",
        ],
        "sample": ["sample", d / "pcfg.npz", "-n", "2"],
        "unmix": [
            "unmix",
            "--model",
            "pcfg-ie",
            "--states",
            "2",
            d / "x.txt",
            "-o",
            tmp_path / "u.npz",
        ],
        "identifiability": [
            "identifiability",
            "--model",
            "dep-ie",
            "--obs",
            "phi12",
            "--length",
            "2",
            "--words",
            "3",
        ],
        "lm": [
            "lm",
            "train",
            "--method",
            "em",
            "--states",
            "2",
            d / "x.txt",
            "-o",
            tmp_path / "lm.npz",
        ],
    }
    assert set(runs) == set(main.all_commands())
    for name, args in runs.items():
        loud, quiet = invoke(*args), invoke(*args, "--quiet")
        assert (quiet.exit_code, quiet.stderr) == (0, ""), name
        assert quiet.stdout == loud.stdout, name
        if name in ("train", "parse", "score"):
            assert loud.stderr.startswith("lpcfg: ") or f"{name}:" in loud.stderr, name
    errors = invoke("parse", "--quiet", d / "missing.npz", d / "x.txt")
    assert errors.stderr == f"lpcfg: error: {d / 'missing.npz'}: no such model file\n"


def test_progress_bars_only_on_a_terminal(d, monkeypatch):
    """Without a terminal on stderr the summary lines come alone; --progress forces the
    bar, --no-progress and --quiet remove it."""
    import lpcfg_cli.cli.stderr as stderr

    args = ["parse", d / "pcfg.npz", d / "x.txt"]
    plain = invoke(*args)
    assert plain.stderr.startswith("lpcfg: parsed 1 sentences") and "sent/s" not in plain.stderr
    assert "sent/s" in invoke(*args, "--progress").stderr
    monkeypatch.setattr(stderr, "_isatty", lambda _stream: True)
    assert "sent/s" in invoke(*args).stderr
    assert "sent/s" not in invoke(*args, "--no-progress").stderr
    assert invoke(*args, "--quiet").stderr == ""
    train_em = ("train", "--method", "em", "--states", "2", "--iterations", "2", d / "t.mrg")
    train_em += ("-o", d / "em.npz")
    em = invoke(*train_em)
    assert "it/s" in em.stderr or "s/it" in em.stderr
    monkeypatch.undo()
    em = invoke(*train_em)
    assert all(line.startswith("lpcfg: ") for line in em.stderr.splitlines()), em.stderr


def test_sample_random_grammar_refuses_the_other_mode(d, tmp_path):
    out = tmp_path / "g.npz"
    for args, message in [
        ([d / "pcfg.npz", "--random-grammar", out], "it does not use MODEL"),
        (["--random-grammar", out, "--latent"], "--latent has no effect with --random-grammar"),
        (["--random-grammar", out, "-o", tmp_path / "t"], "--output has no effect with"),
        ([d / "pcfg.npz", "--words", "9"], "--words has no effect without --random-grammar"),
    ]:
        res = invoke("sample", *args)
        assert res.exit_code == 2 and message in res.stderr, (args, res.stderr)
        assert res.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
    res = invoke("sample", "--random-grammar", out, "--states", "3", "--seed", "2")
    assert res.exit_code == 0 and LPCFG.load(out).max_states == 3


def test_docs_cli_md_lists_every_option():
    """docs/cli.md (the CLI contract) names every option of every subcommand."""
    text = (ROOT / "docs" / "cli.md").read_text()
    blocks = re.split(r"\n(?=lpcfg [\w ]+ \[OPTIONS\])", text)
    commands = []
    for name, command in main.all_commands().items():
        if isinstance(command, click.Group):  # lpcfg lm: one block per subcommand
            commands += [(f"{name} {sub}", c) for sub, c in command.commands.items()]
        else:
            commands.append((name, command))
    for name, command in commands:
        block = next(b for b in blocks if b.startswith(f"lpcfg {name} [OPTIONS]"))
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            for opt in param.opts + param.secondary_opts:
                assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", block), (name, opt)


def _factor(path: Path) -> str:
    return LPCFG.load(path).grammar.binarization["factor"]


def test_each_method_factors_as_measured_unless_told(d, tmp_path):
    """--factor defaults to the method's (registry.FACTOR_LEFT: left for the EM family,
    right for pcfg and spectral); given on the command line or in a config, it wins; with
    --init the start model's binarization is kept, so EM continues on its grammar."""
    from lpcfg_cli.learners.registry import binarization

    assert (binarization("em").factor, binarization("spectral").factor) == ("left", "right")
    assert binarization("em", factor="right", horizontal=None).factor == "right"
    runs = {
        "em": (["--method", "em", "--states", "2", "--iterations", "1"], "left"),
        "em-right": (
            ["--method", "em", "--states", "2", "--iterations", "1", "--factor", "right"],
            "right",
        ),
        "pcfg": (["--method", "pcfg"], "right"),
        "pivot": (["--method", "pivot", "--states", "2"], "left"),
        "init": (["--method", "em", "--iterations", "1", "--init", d / "pcfg.npz"], "right"),
    }
    bank = tmp_path / "t3.mrg"  # n-ary nodes, so that left and right factoring differ
    bank.write_text("\n".join([*TREES, "(S (NP (DT the) (JJ big) (NN cat)) (VP (VBD sat)))"]))
    for name, (args, factor) in runs.items():
        trees = d / "t.mrg" if name == "init" else bank
        res = invoke("train", "-q", *args, trees, "-o", tmp_path / f"{name}.npz")
        assert (res.exit_code, res.stderr) == (0, ""), name
        assert _factor(tmp_path / f"{name}.npz") == factor, name
    config = tmp_path / "c.toml"
    config.write_text('[train]\nmethod = "em"\nstates = "2"\niterations = 1\nfactor = "right"\n')
    res = invoke("train", "-q", "--config", config, bank, "-o", tmp_path / "c.npz")
    assert res.exit_code == 0, res.stderr
    assert _factor(tmp_path / "c.npz") == "right"
    # Models binarized differently cannot be bundled, and the error says why.
    res = invoke("bundle", tmp_path / "em.npz", tmp_path / "em-right.npz", "-o", tmp_path / "b.npz")
    assert res.exit_code == 2
    assert "factor left against right" in res.stderr
    assert not (tmp_path / "b.npz").exists()


def test_train_log_writes_one_record_per_step(d, tmp_path):
    """--log FILE: one JSON object per EM iteration (the learning curve, as the model's
    history keeps it); with a method that does not iterate it is a warning, not silence."""
    (tmp_path / "dev.mrg").write_text(TREE + "\n")
    log = tmp_path / "em.jsonl"
    args = ["--method", "em", "--states", "2", "--iterations", "3", "--tol", "0"]
    result = invoke(
        "train", d / "t.mrg", *args, "--dev", tmp_path / "dev.mrg", "--log", log,
        "-o", tmp_path / "em.npz",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2, 3]
    assert {r["method"] for r in records} == {"em"}
    assert all("dev_f1" in r and "seconds" in r for r in records)
    history = LPCFG.load(tmp_path / "em.npz").meta["history"]
    assert [r["iteration"] for r in history] == [1, 2, 3]
    result = invoke("train", d / "t.mrg", "--log", tmp_path / "p.jsonl", "-o", tmp_path / "p.npz")
    assert result.exit_code == 0
    assert "--log has no effect with --method pcfg (it does not iterate)" in result.stderr
