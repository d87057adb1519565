"""The package's import graph flows one way: no cycles, and no imports inside functions
used to break one (data preparation -> engine and parser -> selection -> learners ->
commands)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parent.parent / "src" / "lpcfg_cli"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = {_module(p): p for p in SRC.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    nested = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            targets = [t for t in targets if t in modules and t != name]
            if not targets:
                continue
            if id(node) not in top:
                nested.append(f"{name}: line {node.lineno}")
            edges[name].update(targets)
    return edges, nested


def test_no_imports_of_the_package_inside_functions():
    _, nested = _graph()
    assert nested == []


def test_the_import_graph_has_no_cycle():
    edges, _ = _graph()
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                raise AssertionError(
                    " -> ".join(path[path.index(n) :] + [n]) if n in path else f"{m} -> {n}"
                )
            if n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
