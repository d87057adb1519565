"""Hyper-parameters as documented dataclass fields: one source of truth for every option.

The learners and the parser state their options as frozen dataclasses whose public fields
are made with ``hyper``: the default, a one-line help text and the valid range travel with
the field. The command line and the ``--config`` keys are derived from these fields
(``cli.options.hyper_options``), so a default or a range is written once, and
``check`` (called by every options class after construction) gives a library user the same
errors as the command line. Fields made with plain ``field`` are internal constants: they
keep their defaults from the command line and can be set from Python.

Value kinds follow the default: ``bool`` (a ``--x/--no-x`` flag), ``int``, ``float``,
``str`` with ``choices``, ``tuple[str, ...]`` (comma-separated on the command line),
``tuple[int, ...]`` (a comma-separated grid) and ``dict[str, int]`` (a repeatable
``KEY=VALUE`` option). ``Spec.kind`` says what the default cannot: ``int`` or ``float`` for
a default of None, ``switch`` for a ``bool`` that is only switched on (``--latent``, no
``--no-latent``), ``intset`` for a whole number given as a set on the command line (``N``,
``A-B`` or ``A,B,...``; the command takes a tuple and checks its size).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lpcfg_cli.errors import ParameterError

SEED_HELP = "Random seed (a whole number >= 0); the same seed gives the same result."


@dataclass(frozen=True)
class Spec:
    """What the command line needs to know of a hyper-parameter besides its default."""

    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    kind: str | None = None  # "int", "float", "switch", "intset": see the module docstring
    flag: str | None = None  # the option's name where it differs from the field's, or "-n"
    exclusive: bool = False  # min and max themselves are out of range


def hyper(default: Any, help: str, **spec: Any) -> Any:
    """A dataclass field that is a documented hyper-parameter (see the module docstring)."""
    meta = {"hyper": Spec(help, **spec)}
    if isinstance(default, dict):
        return dataclasses.field(default_factory=lambda: dict(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def hyper_fields(cls: type) -> Iterator[tuple[dataclasses.Field, Spec]]:
    """The documented hyper-parameters of options class ``cls``, in order."""
    for f in dataclasses.fields(cls):
        if "hyper" in f.metadata:
            yield f, f.metadata["hyper"]


def default_of(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


def check(options: Any) -> None:
    """Raise ``ParameterError`` for a hyper-parameter of ``options`` outside its range
    (naming the parameter; the command line says its flag)."""
    for f, spec in hyper_fields(type(options)):
        value = getattr(options, f.name)
        values = (
            value.values()
            if isinstance(value, dict)
            else (value if isinstance(value, tuple) else (value,))
        )
        for v in values:
            _check_one(f.name, spec, v)


def _check_one(name: str, spec: Spec, value: Any) -> None:
    field = "{" + name + "}"
    if spec.choices is not None and isinstance(value, str):
        if value not in spec.choices:
            raise ParameterError(
                field + " must be one of {choices}, not {value}",
                choices=", ".join(spec.choices),
                value=repr(value),
            )
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if not math.isfinite(value):
        raise ParameterError(field + " must be a finite number, not {value}", value=repr(value))
    if spec.exclusive:
        if spec.min is not None and value <= spec.min:
            raise ParameterError(
                field + " must be greater than {low}, not {value}",
                low=f"{spec.min:g}",
                value=repr(value),
            )
        if spec.max is not None and value >= spec.max:
            raise ParameterError(
                field + " must be less than {high}, not {value}",
                high=f"{spec.max:g}",
                value=repr(value),
            )
    if spec.min is not None and value < spec.min:
        raise ParameterError(
            field + " must be at least {low}, not {value}", low=f"{spec.min:g}", value=repr(value)
        )
    if spec.max is not None and value > spec.max:
        raise ParameterError(
            field + " must be at most {high}, not {value}", high=f"{spec.max:g}", value=repr(value)
        )


def to_dict(options: Any) -> dict[str, Any]:
    """Every field of ``options`` as JSON values (tuples become lists), for model metadata."""
    out = {}
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out
