"""Names cited in docstrings and comments exist: a ``package.module`` or
``package.module.name`` in double backticks, whose first part is one of lpcfg_cli's packages,
names a module of the package and, where it goes on, a function, class or constant of that
module (or an attribute of such a class). A module renamed or a function moved then fails
here instead of leaving the prose that cites it wrong. (The docs' ``::: module`` entries are
checked by the strict docs build.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "lpcfg_cli"
CITED = re.compile(r"``(?:lpcfg_cli\.)?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?``")


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def defined(path: Path) -> dict[str, set[str]]:
    """Top-level names of a module, each with the names its class body defines."""
    out: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = set()
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        inner.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        inner.add(item.target.id)
                    elif isinstance(item, ast.Assign):
                        inner |= {t.id for t in item.targets if isinstance(t, ast.Name)}
            out[node.name] = inner
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                elements = t.elts if isinstance(t, ast.Tuple) else [t]
                out.update({e.id: set() for e in elements if isinstance(e, ast.Name)})
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update({(a.asname or a.name).split(".")[0]: set() for a in node.names})
    return out


def unresolved(root: Path) -> list[str]:
    """``file: name`` of every cited name of ``root`` (a package folder) that is not there."""
    known = modules(root)
    packages = {m.split(".")[0] for m in known if m}
    names: dict[str, dict[str, set[str]]] = {}

    def exists(cited: str) -> bool:
        parts = cited.split(".")
        if parts[0] not in packages:
            return True  # not a path into the package (``np.einsum``, ``self.stats``)
        for k in range(len(parts), 0, -1):
            module = ".".join(parts[:k])
            if module in known:
                rest = parts[k:]
                if not rest:
                    return True
                table = names.setdefault(module, defined(known[module]))
                if rest[0] not in table:
                    return False
                return len(rest) == 1 or not table[rest[0]] or rest[1] in table[rest[0]]
        return False

    bad = []
    for path in sorted(known.values()):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(root).as_posix()
        docs = [
            ast.get_docstring(node, clean=False) or ""
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
        for chunk in docs + comments:
            bad += [
                f"{where}: {m.group(1)}" for m in CITED.finditer(chunk) if not exists(m.group(1))
            ]
    return bad


def test_every_name_cited_in_a_docstring_or_comment_exists():
    assert unresolved(SRC) == []


def test_a_stale_citation_is_found(tmp_path):
    """Plant a module that cites a function its neighbour does not have, and a module that
    is not there: both are named; a real citation and an outside name are not."""
    (tmp_path / "grammar").mkdir()
    (tmp_path / "grammar" / "__init__.py").write_text('"""grammar."""\n')
    (tmp_path / "grammar" / "indexed.py").write_text(
        "class Grammar:\n    symbols: list\n\ndef single_symbol_grammar():\n    pass\n"
    )
    (tmp_path / "grammar" / "user.py").write_text(
        '"""Uses ``grammar.indexed.single_symbol_grammar`` and\n'
        "``grammar.indexed.Grammar.symbols``, not ``grammar.indexed.all_strings``, nor\n"
        "``grammar.gone``; ``np.einsum`` is no concern.\n"
        '"""\n'
        "# ``grammar.indexed.Grammar.rules`` is not an attribute either\n"
    )
    assert unresolved(tmp_path) == [
        "grammar/user.py: grammar.indexed.all_strings",
        "grammar/user.py: grammar.gone",
        "grammar/user.py: grammar.indexed.Grammar.rules",
    ]
