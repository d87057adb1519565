"""The signatures the kernels' extension module is built for (``precompiled``): the
argument types, in numba's notation, of every call the parser makes from Python into a
kernel.

Written by ``scripts/kernel_signatures.py``; a kernel called with other types is compiled by
numba instead (``dispatch``).
"""

# ruff: noqa: E501

SIGNATURES: dict[str, list[tuple[str, ...]]] = {
    "lpcfg_cli.engine.chart_grammars._stored_pass": [
        (
            "Tuple((uint8[::1], int64, float32[::1],))",
            "Tuple((int64[::1], int64[:, ::1], int64[::1], int64[::1],))",
            "float64",
            "UniTuple(boolean[:, ::1], 3)",
            "boolean",
            "Tuple((int64[::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], int64[::1], int64[::1],))",
            "float32[::1]",
        ),
    ],
    "lpcfg_cli.engine.coarse.batch_posteriors": [
        (
            "float64[:, ::1]",
            "int64[:, ::1]",
            "int64[::1]",
            "int64",
            "float64[::1]",
            "Tuple((int64[::1], uint64[:, ::1], int64[:, ::1], int64[::1], int64[::1], float64[::1],))",
            "float64[:, ::1]",
            "float64[::1]",
            "float64",
            "float64",
        ),
    ],
    "lpcfg_cli.engine.kernels.add_lexical": [
        (
            "float32[:, ::1]",
            "int64[::1]",
            "int64[::1]",
            "float64[::1]",
            "float32[:, ::1]",
        ),
    ],
    "lpcfg_cli.engine.kernels.find_keys": [
        (
            "int64[::1]",
            "int64[::1]",
        ),
    ],
    "lpcfg_cli.engine.kernels.flush_and_cut": [
        (
            "float32[:, ::1]",
            "float32[:, ::1]",
            "int64",
            "int64",
            "float64",
            "float64",
        ),
    ],
    "lpcfg_cli.engine.kernels.inside_chunk": [
        (
            "int64",
            "int64",
            "int64[::1]",
            "float64[::1]",
            "Tuple((int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], float32[::1],))",
            "float32[:, ::1]",
            "float64",
            "Tuple((int64[::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1],))",
        ),
    ],
    "lpcfg_cli.engine.kernels.normalise_spans": [
        (
            "float32[:, ::1]",
            "float64[::1]",
            "int64[::1]",
            "int64",
            "int64",
            "float64",
        ),
    ],
    "lpcfg_cli.engine.kernels.outside_chunk": [
        (
            "float64[::1]",
            "Tuple((int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], float32[::1],))",
            "float32[:, ::1]",
            "float32[:, ::1]",
            "Tuple((int64[::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1],))",
        ),
    ],
    "lpcfg_cli.engine.kernels.plan_chunk": [
        (
            "int64",
            "int64",
            "int64",
            "Tuple((int64[:, ::1], int64[::1], int64[::1], int64[::1], int64[::1], float64[::1],))",
            "Tuple((int64, int32[::1], int64[::1], int64[::1],))",
            "Tuple((int64[::1], boolean[::1], int64[::1],))",
            "boolean",
        ),
    ],
    "lpcfg_cli.engine.kernels.refresh_plan": [
        (
            "int64",
            "int64",
            "int64[::1]",
            "Tuple((int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1],))",
            "int64[::1]",
            "float64[::1]",
        ),
    ],
    "lpcfg_cli.engine.kernels.rule_posteriors_chunk": [
        (
            "float64[::1]",
            "Tuple((int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], float32[::1],))",
            "float32[:, ::1]",
            "float32[:, ::1]",
            "Tuple((int64[::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1], int64[::1], float64[::1], int64[::1], int64[::1],))",
        ),
    ],
    "lpcfg_cli.engine.tokens._expand": [
        (
            "int64[::1]",
            "int64[::1]",
            "float64[::1]",
            "int64[::1]",
            "int64[::1]",
            "int64[::1]",
            "int64[::1]",
            "int64",
            "uint8[::1]",
        ),
    ],
    "lpcfg_cli.parsing.decoders._best_rules": [
        (
            "int64",
            "int64[::1]",
            "int64[::1]",
            "int64[::1]",
            "float64[::1]",
            "boolean[::1]",
            "float64[::1]",
        ),
    ],
    "lpcfg_cli.parsing.decoders._best_splits": [
        (
            "int64[:, ::1]",
            "int64[::1]",
            "int64[::1]",
            "int64[::1]",
            "float64[::1]",
            "int64[::1]",
        ),
    ],
    "lpcfg_cli.parsing.decoders._bracket_gains": [
        (
            "int64[::1]",
            "int64[::1]",
            "float64[::1]",
            "int64[::1]",
            "int64[::1]",
            "int64",
            "float64",
        ),
    ],
    "lpcfg_cli.parsing.decoders._span_best": [
        (
            "int64",
            "int64[::1]",
            "int64[::1]",
            "float64[::1]",
            "float64[::1]",
            "boolean[::1]",
            "boolean[::1]",
        ),
    ],
}
