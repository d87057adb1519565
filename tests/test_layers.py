"""The folder listing is the architecture: the package's stages and the order of their imports.

Each stage of the pipeline is a package with one job; a module may import only from its own
package or from a lower layer (``LAYERS``, bottom first; packages on one layer are peers and
never import one another). These tests read the code (``ast``), so they fail on the offending
import itself, and they also hold the shape rules: no cycle, no package import hidden in a
function, at most four plain modules beside the packages, no file name used twice, no
function longer than 120 lines, learners free of the parser, the parser free of learner
names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lpcfg_cli.cli.names import SUBCOMMANDS

SRC = Path(__file__).resolve().parent.parent / "src" / "lpcfg_cli"

# Bottom first. A module's layer is that of its top package (or plain module) under
# lpcfg_cli; ``__init__`` is the public API, above everything.
LAYERS: list[set[str]] = [
    {"errors"},
    {"hyperparams"},
    {"files", "numerics", "evalb"},
    {"treebank"},
    {"grammar", "analysis"},
    {"model"},
    {"engine"},
    {"parsing"},
    {"latent_pcfg", "lm", "wcfg", "topology_models"},
    {"learners"},
    {"cli"},
    {"__init__", "__main__"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
MAX_FUNCTION_LINES = 120


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part(module: str) -> str:
    """The package (or plain module) of ``lpcfg_cli`` a module belongs to."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in SRC.rglob("*.py")}


def imports() -> dict[str, list[tuple[str, int, bool]]]:
    """module -> [(imported module, line, at top level)], the package's own modules only;
    the subcommand modules the CLI imports by name (``cli.names.SUBCOMMANDS``) included."""
    known = modules()
    out: dict[str, list[tuple[str, int, bool]]] = {m: [] for m in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target in known and target != name:
                    out[name].append((target, node.lineno, id(node) in top))
    out["lpcfg_cli.cli.group"] += [(f"lpcfg_cli.cli.{m}", 0, True) for m in SUBCOMMANDS.values()]
    return out


def layer_violations(edges: dict[str, list[tuple[str, int, bool]]]) -> list[str]:
    """Every import that points up the layers or across peers, as ``FILE:LINE imports X``."""
    bad = []
    for source, targets in sorted(edges.items()):
        for target, line, _ in targets:
            a, b = part(source), part(target)
            if a == b or (target == "lpcfg_cli" and source.startswith("lpcfg_cli.cli")):
                continue  # within a package; the CLI reads lpcfg_cli.__version__
            if a not in RANK or b not in RANK:
                bad.append(f"{source}:{line} imports {target} (a package not in LAYERS)")
            elif RANK[b] >= RANK[a]:
                how = "a peer" if RANK[b] == RANK[a] else "a higher layer"
                bad.append(f"{source}:{line} imports {target} ({how}: {b} over {a})")
    return bad


def test_every_import_points_down_the_layers():
    assert layer_violations(imports()) == []


def test_a_planted_violation_is_named_with_its_import():
    edges = imports()
    edges["lpcfg_cli.model.lpcfg"].append(("lpcfg_cli.parsing.parser", 7, True))
    edges["lpcfg_cli.lm.corpus"].append(("lpcfg_cli.wcfg.automaton", 9, True))
    assert layer_violations(edges) == [
        "lpcfg_cli.lm.corpus:9 imports lpcfg_cli.wcfg.automaton (a peer: wcfg over lm)",
        "lpcfg_cli.model.lpcfg:7 imports lpcfg_cli.parsing.parser "
        "(a higher layer: parsing over model)",
    ]


def test_every_package_has_a_layer():
    assert {part(m) for m in modules()} <= set(RANK)


def test_no_package_import_hides_in_a_function():
    nested = [
        f"{source}:{line}"
        for source, targets in imports().items()
        for _, line, top in targets
        if not top and line
    ]
    assert nested == []


def test_the_import_graph_has_no_cycle():
    edges = {m: sorted({t for t, _, _ in ts}) for m, ts in imports().items()}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in edges[m]:
            if state.get(n) == 1:
                raise AssertionError(" -> ".join(path[path.index(n) :] + [n]))
            if n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])


def test_learners_do_not_import_the_parser():
    found = [
        f"{source}:{line} imports {target}"
        for source, targets in imports().items()
        if part(source) in ("learners", "latent_pcfg")
        for target, line, _ in targets
        if part(target) == "parsing"
    ]
    assert found == []


def test_every_algorithm_is_in_its_family_package():
    """``learners/`` composes (registry, selection, chains, ensembles); each method's
    learner is defined in its family's package: the latent-PCFG algorithms in ``latent_pcfg``,
    the others beside the models they learn."""
    from lpcfg_cli.learners.registry import FAMILIES

    homes = {"parsing": {"latent_pcfg", "wcfg"}, "lm": {"lm"}, "topology": {"topology_models"}}
    misplaced = [
        f"{family} {name}: {step.learner.__module__}"
        for family, methods in FAMILIES.items()
        for name, method in methods.items()
        for step in method.steps
        if part(step.learner.__module__) not in homes[family]
    ]
    assert misplaced == []


def test_the_parser_names_no_learner():
    """No string constant under parsing/ is a learner's method name: the decoder a model
    wants is in its file, not in a table of learners."""
    from lpcfg_cli.learners.registry import METHODS

    names = set(METHODS)
    found = []
    for source, path in modules().items():
        if part(source) != "parsing":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{source}:{node.lineno} {node.value!r}")
    assert found == []


def test_at_most_four_plain_modules_beside_the_packages():
    plain = sorted(p.name for p in SRC.glob("*.py"))
    assert len(plain) <= 4, plain


def test_no_two_modules_share_a_file_name():
    seen: dict[str, list[str]] = {}
    for path in SRC.rglob("*.py"):
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(str(path.relative_to(SRC)))
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_function_is_longer_than_120_lines(path):
    """Counted from ``def`` to the last line of the body (decorators excluded)."""
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []
