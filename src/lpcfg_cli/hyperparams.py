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
``A-B`` or ``A,B,...``; the command takes a tuple and checks its size), ``str`` for a
string option with a default of None and no choices. ``Spec.grid`` marks a number a
learner may be given several of (``smoothing=(0.01, 0.1)``; comma-separated on the command
line): the learner is trained with each and dev F1 keeps the best
(``learners.selection.OptionGrid``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lpcfg_cli.errors import ParameterError, ParameterTypeError

SEED_HELP = "Random seed (a whole number >= 0); the same seed gives the same result."


@dataclass(frozen=True)
class Spec:
    """What the command line needs to know of a hyper-parameter besides its default."""

    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    kind: str | None = None  # "int", "float", "str", "switch", "intset": see the docstring
    flag: str | None = None  # the option's name where it differs from the field's, or "-n"
    exclusive: bool = False  # min and max themselves are out of range
    grid: bool = False  # several values may be given, each trained, dev choosing (OptionGrid)


def hyper(default: Any, help: str, **spec: Any) -> Any:
    """A dataclass field that is a documented hyper-parameter (see the module docstring)."""
    meta = {"hyper": Spec(help, **spec)}
    if isinstance(default, dict):
        return dataclasses.field(default_factory=lambda: dict(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def switch(help: str) -> Any:
    """A yes-or-no hyper-parameter, off by default: a ``--flag`` on the command line."""
    return hyper(False, help, kind="switch")


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
    """Raise ``ParameterError`` (a ``ValueError``) for a hyper-parameter of ``options``
    outside its range and ``ParameterTypeError`` (a ``TypeError``) for one of the wrong
    kind, naming the parameter (the command line says its flag). The kind is the
    default's, as on the command line: ``states=2.5``, ``states=True`` or
    ``states="8"`` are refused, not truncated or compared as they come."""
    for f, spec in hyper_fields(type(options)):
        value = getattr(options, f.name)
        kind = value_kind(f, spec)
        if value is None and default_of(f) is None:
            continue
        if kind.startswith("tuple"):
            if not isinstance(value, tuple):
                _wrong_kind(f.name, "a tuple", value)
            values: Any = value
        elif kind.startswith("dict"):
            if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
                _wrong_kind(f.name, "a dict of names to whole numbers", value)
            values = value.values()
        elif kind == "intset" and isinstance(value, tuple):
            values = value
        else:
            values = (value,)
        element = _ELEMENT.get(kind, kind)
        for v in values:
            if not _is_kind(v, element):
                _wrong_kind(f.name, _KIND_NAMES[element], v)
            _check_one(f.name, spec, v)


class Checked:
    """Base of an options dataclass whose hyper-parameters are checked (``check``) when it
    is made; a subclass with checks of its own calls ``super().__post_init__()`` first."""

    def __post_init__(self) -> None:
        check(self)


# What a value of each kind must be, and how a message names it.
_ELEMENT = {
    "tuple[int]": "int",
    "tuple[float]": "float",
    "tuple[str]": "str",
    "dict": "int",
    "intset": "int",
}
_KIND_NAMES = {
    "bool": "True or False",
    "int": "a whole number",
    "float": "a number",
    "str": "a string",
}


def value_kind(f: dataclasses.Field, spec: Spec) -> str:
    """The kind of field ``f``'s values: ``bool``, ``int``, ``float``, ``str``,
    ``tuple[int]``, ``tuple[float]``, ``tuple[str]``, ``dict`` (names to whole numbers) or
    ``intset``."""
    if spec.kind in ("switch", "int", "float", "intset", "str"):
        return {"switch": "bool"}.get(spec.kind, spec.kind)
    default = default_of(f)
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, dict):
        return "dict"
    if isinstance(default, tuple):
        if default:
            element = type(default[0]).__name__
        else:  # the annotation says: "tuple[str, ...]"
            element = next((k for k in ("str", "float", "int") if k in str(f.type)), "str")
        return f"tuple[{element}]"
    for kind in (int, float, str):
        if isinstance(default, kind):
            return kind.__name__
    return "str"


def _is_kind(value: Any, kind: str) -> bool:
    if kind == "bool":
        return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy's too
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, numbers.Integral)
    if kind == "float":
        return isinstance(value, numbers.Real)
    return isinstance(value, str)


def _wrong_kind(name: str, kind: str, value: Any) -> None:
    raise ParameterTypeError(
        "{" + name + "} must be {kind}, not {value}", kind=kind, value=_show(value)
    )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
