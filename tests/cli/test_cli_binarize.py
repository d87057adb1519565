"""`lpcfg binarize` and the command line's error conventions."""

from __future__ import annotations

import pytest

from tests.support import ROOT, run

TREES = "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (ADVP (RB down) (RB again))) (. .)) )\n"


def test_binarize_and_reverse_through_pipes():
    res = run("binarize", "-", stdin=TREES)
    assert res.returncode == 0, res.stderr
    assert (
        res.stdout
        == "(S (NP (DT The) (NN cat)) (@S (VP (VBD sat) (ADVP (RB down) (RB again))) (. .)))\n"
    )
    back = run("binarize", "--reverse", stdin=res.stdout)
    assert (
        back.stdout
        == "(S (NP (DT The) (NN cat)) (VP (VBD sat) (ADVP (RB down) (RB again))) (. .))\n"
    )


def test_bad_input_one_line_error_and_no_output_file(tmp_path):
    bad = tmp_path / "bad.mrg"
    bad.write_text("(S (NN a))\n(S (NN b)\n")
    out = tmp_path / "out.txt"
    out.write_text("keep me\n")
    res = run("binarize", str(bad), "-o", str(out))
    assert res.returncode == 2
    assert (
        res.stderr
        == f"lpcfg: error: {bad}:2: unbalanced brackets: 1 '(' not closed at end of input\n"
    )
    assert out.read_text() == "keep me\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".lpcfg-")]


def test_skip_bad_warns_and_continues(tmp_path):
    bad = tmp_path / "bad.mrg"
    bad.write_text("(S (NN a) (VB b))\n(S (NP) (NN b))\n(S (NN c) (VB d))\n")
    res = run("binarize", "--skip-bad", str(bad))
    assert res.returncode == 0
    assert res.stdout.count("\n") == 2
    assert res.stderr.startswith(f"lpcfg: warning: {bad}:2: empty constituent")


def test_usage_errors_are_one_line():
    for args in (["binarize", "--horizontal", "-1"], ["nosuch"], ["binarize", "--factor", "up"]):
        res = run(*args, stdin="")
        assert res.returncode == 2
        assert res.stderr.startswith("lpcfg: error:") and res.stderr.count("\n") == 1, res.stderr


def test_missing_file_and_config(tmp_path):
    res = run("binarize", str(tmp_path / "nope.mrg"))
    assert (res.returncode, res.stderr) == (
        2,
        f"lpcfg: error: {tmp_path / 'nope.mrg'}: no such file\n",
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text("[binarize]\nfactor = 'left'\n")
    res = run("binarize", "--config", str(cfg), stdin="(S (A a) (B b) (C c))\n")
    assert res.stdout == "(S (@S (A a) (B b)) (C c))\n"
    cfg.write_text("[binarize]\nfactr = 'left'\n")
    res = run("binarize", "--config", str(cfg), stdin="(S (A a))\n")
    assert res.returncode == 2 and "unknown option 'factr'" in res.stderr


def test_a_label_both_preterminal_and_phrase_gets_two_symbols(tmp_path):
    """It used to be refused; the pre-terminal uses get a symbol of their own (NN%t)."""
    bank = tmp_path / "tb.mrg"
    bank.write_text("(S (NN (NN a) (NN b)) (VB c))\n")
    res = run("train", "--rare", "0", str(bank), "-o", str(tmp_path / "m.npz"))
    assert res.returncode == 0, res.stderr
    res = run("parse", str(tmp_path / "m.npz"), stdin="a b c\n")
    assert res.stdout == "(TOP (S (NN (NN a) (NN b)) (VB c)))\n"


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "configs").glob("*.toml")))
def test_shipped_configs_name_only_real_options(name):
    """Every key of configs/*.toml is the long name of an option of its table's command (a
    misspelt key would be an error for users), and the config loader keeps every one."""
    import tomllib

    from lpcfg_cli.cli.configfile import load_config
    from lpcfg_cli.cli.group import main

    path = ROOT / "configs" / f"{name}.toml"
    tables = tomllib.loads(path.read_text(encoding="utf-8"))
    assert tables and all(isinstance(t, dict) for t in tables.values())  # [command] tables
    commands = main.all_commands()
    for command, keys in tables.items():
        options = {
            opt[2:]: param.name
            for param in commands[command].params
            for opt in param.opts
            if opt.startswith("--")
        }
        assert set(keys) <= set(options), set(keys) - set(options)
        loaded = load_config(str(path), commands[command], list(commands.values()))
        assert loaded.keys() == {options[key] for key in keys}
