"""The results records: what every benchmark and experiment script writes beside its figures.

A record is a JSON file in ``docs/figures/`` holding a run's figures and where they came
from: the command, the commit measured (and the tracked files changed since), the machine.
The tables of README.md and the docs pages are drawn from the records
(``scripts/doc_tables.py``), never typed in.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from lpcfg_cli.files.streams import atomic_output

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"


def commit() -> dict:
    """The commit measured, and the tracked files changed since (uncommitted work)."""

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        except OSError:
            return ""
        return done.stdout.rstrip() if done.returncode == 0 else ""

    changed = git("status", "--porcelain", "--untracked-files=no").splitlines()
    return {"commit": git("rev-parse", "HEAD"), "changed": [line[3:] for line in changed]}


def machine(java: bool = False) -> dict:
    """The machine: platform, processors, memory, Python (and Java's version with ``java``)."""
    out: dict[str, Any] = {
        "host": platform.node(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "note": "a shared 2-core machine: wall times are noisy",
    }
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            model = next((line for line in fh if line.startswith("model name")), "")
        if model:
            out["processor"] = model.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            out["memory"] = fh.readline().split(":", 1)[1].strip()
    except OSError:
        pass
    if java:
        try:
            done = subprocess.run(["java", "-version"], capture_output=True, text=True)
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            out["java"] = lines[0] if lines else ""
        except OSError:
            out["java"] = "not found"
    return out


def provenance(java: bool = False) -> dict:
    """``command`` (this script's command line, as run from the repository), ``commit`` and
    ``machine``: the fields every record starts with."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(ROOT)
    except ValueError:
        pass
    return {
        "command": shlex.join(["python", str(script), *sys.argv[1:]]),
        "commit": commit(),
        "machine": machine(java),
    }


def write(path: Path | str, record: dict, also: Path | str | None = None) -> Path:
    """Write ``record`` to ``path`` whole or not at all (indented JSON, a final newline),
    and to ``also`` too when given (a script's ``--json``: the record kept in the docs)."""
    path = Path(path)
    for target in [path, *([Path(also)] if also else [])]:
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(target) as fh:
            fh.write(json.dumps(record, indent=1) + "\n")
    return path


def read(name: str, folder: Path = FIGURES) -> dict:
    """The record ``folder/name.json``."""
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


def lpcfg(*args: str) -> subprocess.CompletedProcess:
    """Run one ``lpcfg`` command for a script; a failure ends the script with the command
    and its stderr, named after the script."""
    done = subprocess.run(
        [sys.executable, "-m", "lpcfg_cli", *args], capture_output=True, text=True
    )
    if done.returncode != 0:
        script = Path(sys.argv[0]).stem
        raise SystemExit(f"{script}: `lpcfg {' '.join(args)}` failed:\n{done.stderr.strip()}")
    return done
