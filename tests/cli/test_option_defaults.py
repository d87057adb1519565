"""Every subcommand's options come from the library's dataclasses, with the library's
defaults: the sample, unmix, identifiability and evaluate commands, parsed with nothing but
their required arguments, hold each options class's defaults."""

from __future__ import annotations

import click
import pytest

from lpcfg_cli.cli.group import main
from lpcfg_cli.evalb.compare import CompareOptions
from lpcfg_cli.evalb.params import EvaluateOptions
from lpcfg_cli.evalb.report import ReportOptions
from lpcfg_cli.files.packed_arrays import as_stored
from lpcfg_cli.hyperparams import default_of, hyper_fields
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import RandomGrammarOptions, SampleOptions, random_lpcfg
from lpcfg_cli.topology_models.identifiability import CheckOptions, Figure2Options
from lpcfg_cli.topology_models.unmix_learners import PCFGIEOptions, UnmixOptions
from tests.support import invoke

# subcommand -> the fewest arguments it parses with
REQUIRED = {
    "sample": [],
    "unmix": ["--model", "pcfg-ie", "-o", "m.npz"],
    "identifiability": [],
    "evaluate": ["gold.mrg", "test.mrg"],
}
CLASSES = [
    ("sample", SampleOptions),
    ("sample", RandomGrammarOptions),
    ("unmix", UnmixOptions),
    ("unmix", PCFGIEOptions),
    ("identifiability", CheckOptions),
    ("evaluate", EvaluateOptions),
    ("evaluate", ReportOptions),
    ("evaluate", CompareOptions),
]


def _parsed(name: str) -> tuple[click.Command, dict]:
    """The subcommand and its parameter values from its required arguments alone."""
    command = main.get_command(click.Context(main), name)
    assert command is not None
    with command.make_context(name, list(REQUIRED[name])) as ctx:
        return command, dict(ctx.params)


@pytest.mark.parametrize(("name", "cls"), CLASSES, ids=[f"{n}-{c.__name__}" for n, c in CLASSES])
def test_the_command_line_defaults_are_the_librarys(name, cls):
    command, values = _parsed(name)
    options = {p.name: p for p in command.params if isinstance(p, click.Option)}
    for f, spec in hyper_fields(cls):
        assert f.name in options, (name, f.name)  # derived: one option per field
        assert values[f.name] == default_of(f), (name, f.name)
        assert options[f.name].help is not None and spec.help in options[f.name].help


def test_the_figure2_grid_defaults_are_the_librarys(monkeypatch, tmp_path):
    """--table without --words and --length runs Figure2Options' grid, with its seed and
    tolerance; its help states that grid."""
    import lpcfg_cli.cli.identifiability_command as command

    grids: list[Figure2Options] = []

    def figure2(grid: Figure2Options, progress=None) -> list:
        grids.append(grid)
        return []

    monkeypatch.setattr(command, "figure2", figure2)
    res = invoke("identifiability", "--table", "--json", "-o", tmp_path / "t.json")
    assert res.exit_code == 0, res.stderr
    assert grids == [Figure2Options()]
    table = next(p for p in command.command.params if p.name == "table")
    assert "--words (default 2-4)" in table.help and "--length (default 2-6)" in table.help
    assert Figure2Options().words == (2, 3, 4) and Figure2Options().lengths == (2, 3, 4, 5, 6)


def test_the_random_grammar_is_the_command_lines_by_default(tmp_path):
    """random_lpcfg() and `lpcfg sample --random-grammar` give the same grammar (6
    in-terminals, 6 pre-terminals, 50 words, 2 states, seed 0)."""
    assert invoke("sample", "--random-grammar", tmp_path / "g.npz", "-q").exit_code == 0
    cli, library = LPCFG.load(tmp_path / "g.npz"), random_lpcfg()
    assert cli.grammar.symbols == library.grammar.symbols and len(cli.grammar.words) == 50
    assert (cli.binary == as_stored(library.binary)).all() and cli.max_states == 2
