"""Write ``src/lpcfg_cli/engine/precompiled_signatures.py``: the argument types of every
call the parser makes from Python into a compiled kernel, recorded while it parses with the
given models and every decoder, which are the signatures the kernels' extension module is
built for (``lpcfg_cli.engine.precompiled``).

    python scripts/kernel_signatures.py --data data --models em16.npz,best.npz,pcfg.npz

A call with other argument types still works (numba compiles it), only without the quick
start-up; ``tests/engine/test_precompiled.py`` checks that a parse imports no numba.
"""

from __future__ import annotations

import collections
import json
import os
import sys
from pathlib import Path

import click

TARGET = Path(__file__).resolve().parents[1] / "src/lpcfg_cli/engine/precompiled_signatures.py"

HEADER = '''"""The signatures the kernels' extension module is built for (``precompiled``): the
argument types, in numba's notation, of every call the parser makes from Python into a
kernel.

Written by ``scripts/kernel_signatures.py``; a kernel called with other types is compiled by
numba instead (``dispatch``).
"""

# ruff: noqa: E501

SIGNATURES: dict[str, list[tuple[str, ...]]] = {
'''


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--data", type=click.Path(exists=True, file_okay=False), default="data")
@click.option("--models", required=True, help="Comma-separated model files.")
@click.option("--sentences", type=int, default=60, help="Test sentences per decoder.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=str(TARGET))
def main(data: str, models: str, sentences: int, output: str) -> None:
    os.environ["LPCFG_PRECOMPILED"] = "0"  # every call through numba, so that all are seen
    from lpcfg_cli.engine import dispatch
    from lpcfg_cli.engine.jit import numba_notation
    from lpcfg_cli.model.lpcfg import LPCFG
    from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions

    calls: dict[str, set[tuple[str, ...]]] = collections.defaultdict(set)
    plain_call = dispatch.Kernel.__call__

    def recording_call(self, *args, **kwargs):
        calls[self.qualified_name].add(tuple(map(numba_notation, args)))
        return plain_call(self, *args, **kwargs)

    dispatch.Kernel.__call__ = recording_call
    text = [line.split() for line in open(Path(data) / "test.txt", encoding="utf-8")]
    variants = [
        {},
        {"decode": "max-marginal"},
        {"decode": "max-bracket"},
        {"decode": "max-rule-product"},
        {"decode": "variational"},
        {"combine": "mean"},
        {"prune": 0.0, "coarse_beam": 0.0},
    ]
    for path in models.split(","):
        model = LPCFG.load(path)
        for options in variants:
            BlockParser(model, ParserOptions(**options)).parse(text[:sentences])
            print(f"{path} {options}: {sum(map(len, calls.values()))} signatures", file=sys.stderr)
    lines = [HEADER]
    for name in sorted(calls):
        lines.append(f"    {json.dumps(name)}: [\n")
        for signature in sorted(calls[name]):
            lines.append("        (\n")
            lines.extend(f"            {json.dumps(spec)},\n" for spec in signature)
            lines.append("        ),\n")
        lines.append("    ],\n")
    lines.append("}\n")
    Path(output).write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
