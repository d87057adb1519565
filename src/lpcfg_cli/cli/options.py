"""The subcommands' options, derived from the library's dataclasses (``hyper_options``:
``hyperparams.hyper`` fields give each option's name, default, range and help), and what
they share: the flag of a library parameter (``flag_of``, ``render``), the options every
learner takes, and the refusal or warning for an option that cannot act (``unused``)."""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence
from typing import Any

import click
from click.core import ParameterSource

from lpcfg_cli.cli.paths import set_by
from lpcfg_cli.cli.stderr import warn
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.hyperparams import Spec, default_of, hyper_fields
from lpcfg_cli.parsing.workers import usable_cpus
from lpcfg_cli.treebank.binarize import BinarizeOptions
from lpcfg_cli.treebank.conventions import Conventions, ConventionsOptions


class FiniteFloat(click.FloatRange):
    """A float in a range that refuses ``nan`` and ``inf``, which every comparison of a
    range check lets through (``--prune nan`` would otherwise mean no pruning)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


# Parameters whose flag is not their name: the library's name -> the command line's flag.
FLAGS = {"start": "--init", "caps": "--cap", "count": "-n"}


def flag_of(name: str) -> str:
    """The flag that sets the library parameter ``name`` (``states`` -> ``--states``,
    ``dev_f1_every`` -> ``--dev-f1-every``, ``start`` -> ``--init``)."""
    return FLAGS.get(name) or "--" + name.replace("_", "-")


def render(template: str, **values: str) -> str:
    """A library text that names parameters in braces (a reason of ``Learner.inert``, an
    ``errors.ParameterError``) with each name written as its flag; ``values`` give other
    fields (``method="--method em"``)."""
    names = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    return template.format(**{n: values.get(n, flag_of(n)) for n in names})


def jobs_option(help_text: str) -> Callable[[Any], Any]:
    """``--jobs N``: worker processes (at most the machine's processors: ``usable_jobs``)."""
    return click.option(
        "--jobs", type=click.IntRange(min=1), default=1, show_default=True, help=help_text
    )


def usable_jobs(jobs: int) -> int:
    """``jobs``, or the processors this machine gives lpcfg if there are fewer (with a
    warning): more workers than processors only share them, each with its own memory."""
    cpus = usable_cpus()
    if jobs > cpus:
        warn(f"--jobs {jobs} is more than the {cpus} processors available: using {cpus}")
        return cpus
    return jobs


seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Random seed (a whole number >= 0); the same seed gives the same result.",
)


class CommaOption(click.Option):
    """An option whose value is a comma-separated list (a grid of numbers, or names): a
    config file may give it as a TOML array."""


# What the help of an option a learner may take several values of says (``Spec.grid``).
GRID_HELP = " Several values, comma-separated: a model with each, dev F1 keeping the best."


def hyper_options(owners: Sequence[tuple[str, type, dict[str, Any]]]) -> Callable[[Any], Any]:
    """Decorator adding one click option per hyper-parameter (``hyperparams.hyper`` field)
    of the options classes in ``owners``: ``(owner, class, default overrides)``, e.g.
    ``("pivot+em", EMOptions, {"dev_f1_every": 1})``; a name in several classes is one option.

    Name, help, range and default come from the field. When owners disagree on a default,
    the option defaults to None (each owner's own default) and its help lists them.
    """
    seen: dict[str, list[tuple[str, Any, Spec]]] = {}
    for owner, cls, over in owners:
        for f, spec in hyper_fields(cls):
            value = over.get(f.name, default_of(f))
            seen.setdefault(f.name, []).append((owner, value, spec))
    options = [_hyper_option(name, found) for name, found in seen.items()]

    def decorate(func: Any) -> Any:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def _hyper_option(name: str, found: list[tuple[str, Any, Spec]]) -> Callable[[Any], Any]:
    _, default, spec = found[0]
    flag = spec.flag or name
    flag = flag if flag.startswith("-") else "--" + flag.replace("_", "-")  # "-n" as it is
    defaults = [_plain(d) for _, d, _ in found]
    agreed = all(d == defaults[0] for d in defaults)
    help_text = spec.help
    kwargs: dict[str, Any] = {"help": help_text}
    if isinstance(default, bool) and spec.kind == "switch":
        return click.option(flag, name, is_flag=True, help=help_text)
    if isinstance(default, bool):
        return click.option(
            f"{flag}/--no-{flag[2:]}", name, default=default, show_default=True, help=help_text
        )
    if isinstance(default, dict):
        return click.option(
            flag, name, multiple=True, metavar=spec.metavar, callback=_mapping(spec), help=help_text
        )
    grids = [d for _, d, _ in found if isinstance(d, tuple)]
    grids += [(d,) for _, d, s in found if s.grid and not isinstance(d, tuple)]
    if grids:  # comma-separated: a grid of numbers (states, smoothing) or names (templates)
        items = type(grids[0][0]) if isinstance(grids[0][0], (int, float)) else str
        if any(s.grid for _, _, s in found):
            help_text += GRID_HELP
            kwargs["help"] = help_text
        kwargs["callback"] = _listing(items, spec)
        kwargs["type"] = str
        kwargs["metavar"] = spec.metavar or {int: "N[,N...]", float: "X[,X...]"}.get(
            items, "NAME[,...]"
        )
        kwargs["cls"] = CommaOption
    elif spec.choices:
        kwargs["type"] = click.Choice(spec.choices)
    elif spec.kind == "str":
        kwargs["type"] = str
        kwargs["metavar"] = spec.metavar
    elif spec.kind == "intset":
        kwargs["type"] = IntSet(1 if spec.min is None else int(spec.min))
    elif isinstance(default, int) or spec.kind == "int":
        kwargs["type"] = click.IntRange(min=spec.min, max=spec.max)
    else:
        open_ = spec.exclusive
        kwargs["type"] = FiniteFloat(min=spec.min, max=spec.max, min_open=open_, max_open=open_)
    if spec.metavar and "metavar" not in kwargs:
        kwargs["metavar"] = spec.metavar
    if agreed:
        shown = defaults[0]
        kwargs["default"] = ",".join(map(str, shown)) if isinstance(shown, tuple) else shown
        kwargs["show_default"] = shown is not None
    else:
        kwargs["default"] = None
        by_value: dict[str, list[str]] = {}
        for owner, d, _ in found:
            by_value.setdefault(_show(d), []).append(owner)
        per = ", ".join(f"{v} ({', '.join(o)})" for v, o in by_value.items())
        kwargs["help"] = f"{help_text} [default: {per}]"
    return click.option(flag, name, **kwargs)


def _plain(value: Any) -> Any:
    """A one-value grid is its value (``states``: 8 for em, (8,) for spectral agree)."""
    return (
        value[0]
        if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], int)
        else value
    )


def _show(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _listing(items: type, spec: Spec) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A comma-separated option's value as a tuple (of numbers of type ``items`` for a grid,
    within the field's range)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        parts = tuple(p.strip() for p in str(value).split(",") if p.strip())
        if items is str:
            return parts
        try:
            numbers = tuple(items(p) for p in parts)
        except ValueError:
            numbers = ()
        if not numbers or not all(math.isfinite(x) for x in numbers):
            kind = "whole number" if items is int else "number"
            raise bad_value(
                ctx, param, f"must be a {kind} or a comma-separated list, not {value!r}"
            )
        if spec.min is not None and min(numbers) < spec.min:
            raise bad_value(ctx, param, f"must be at least {spec.min:g}")
        if spec.max is not None and max(numbers) > spec.max:
            raise bad_value(ctx, param, f"must be at most {spec.max:g}")
        return numbers

    return callback


def bad_value(ctx: click.Context, param: click.Parameter, problem: str) -> Exception:
    """The error for an option's value: ``--flag problem``, and where a ``--config`` file
    gave the value, that file and key (the command line did not hold it)."""
    flag = max(param.opts, key=len)
    config = set_by(ctx, param.name)
    if config:
        return LpcfgError(f"option '{flag.lstrip('-')}': {flag} {problem}", source=config)
    return click.UsageError(f"{flag} {problem}", ctx)


def _mapping(spec: Spec) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A repeatable ``KEY=N`` option's values as a dict."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        out = {}
        for item in value or ():
            key, sep, number = str(item).rpartition("=")
            try:
                n = int(number)
            except ValueError:
                n = None
            if not sep or not key or n is None or (spec.min is not None and n < spec.min):
                raise bad_value(
                    ctx,
                    param,
                    f"takes {spec.metavar} with a whole number >= {spec.min:g}, not {item!r}",
                )
            out[key] = n
        return out

    return callback


def binarization_options(func: Any) -> Any:
    """``--horizontal``, ``--vertical`` and ``--factor`` (see ``BinarizeOptions``)."""
    return hyper_options([("binarize", BinarizeOptions, {})])(func)


skip_bad_option = click.option(
    "--skip-bad", is_flag=True, help="Report malformed trees on stderr and skip them."
)


def given(ctx: click.Context, name: str) -> ParameterSource | None:
    """Where parameter ``name`` got its value, or None when it has its default."""
    source = ctx.get_parameter_source(name)
    return None if source in (None, ParameterSource.DEFAULT) else source


def unused(ctx: click.Context, name: str, why: str, *, refuse: bool = True) -> None:
    """Report an option that cannot have an effect in this run, if the user gave one.

    On the command line it is refused (exit 2) when ``refuse``: the user meant something
    that would not happen. From a config file (which may serve several runs) or when it
    cannot change the result (``refuse=False``), one warning line; a config value equal
    to the default (``seed = 0`` in a file shared by every method) says nothing.
    """
    source = given(ctx, name)
    if source is None:
        return
    param = next(p for p in ctx.command.params if p.name == name)
    if source is ParameterSource.DEFAULT_MAP and ctx.params.get(name) == param.default:
        return
    flag = max(param.opts, key=len) if isinstance(param, click.Option) else name
    if source is ParameterSource.DEFAULT_MAP:
        warn(f"{flag} (from --config) has no effect {why}: ignored")
    elif refuse:
        raise click.UsageError(f"{flag} has no effect {why}: drop {flag}", ctx)
    else:
        warn(f"{flag} has no effect {why}: ignored")


class IntSet(click.ParamType):
    """A whole number, a range ``2-8`` or a list ``2,3,5`` (ranges allowed in lists), each
    at least ``least``: a tuple without repeats (a ``hyperparams`` field of kind
    ``intset``)."""

    name = "N|A-B|A,B,..."

    def __init__(self, least: int = 1) -> None:
        self.least = least

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, tuple):
            return value
        out: list[int] = []
        try:
            for part in str(value).split(","):
                lo, sep, hi = part.strip().partition("-")
                first, last = int(lo), int(hi) if sep else int(lo)
                if last < first:
                    raise ValueError
                out.extend(range(first, last + 1))
        except ValueError:
            self.fail(f"{value!r} is not a whole number, a range A-B or a list A,B,...")
        if not out or min(out) < self.least:
            self.fail(f"{value!r}: every value must be at least {self.least}")
        return tuple(dict.fromkeys(out))


# identifiability's CheckOptions.observation is set by --obs (flag_of renders its errors).
FLAGS["observation"] = "--obs"


# ``--conventions`` and its rule options (``treebank.conventions.ConventionsOptions``), on
# every command that reads trees or reads sentences for a model trained on them.
conventions_options = hyper_options([("conventions", ConventionsOptions, {})])
CONVENTIONS_FIELDS = tuple(f.name for f, _ in hyper_fields(ConventionsOptions))


def conventions_from(values: dict[str, Any]) -> Conventions:
    """The conventions the command's ``--conventions`` options name (their values are
    taken out of ``values``)."""
    given = {name: values.pop(name) for name in CONVENTIONS_FIELDS if name in values}
    return ConventionsOptions(**given).resolve()


def conventions_given(ctx: click.Context) -> bool:
    """Whether the command line or a config file set any ``--conventions`` option."""
    return any(given(ctx, name) is not None for name in CONVENTIONS_FIELDS)


def conventions_unused(ctx: click.Context, why: str) -> None:
    """Refuse every ``--conventions`` option given where it cannot act (``unused``)."""
    for name in CONVENTIONS_FIELDS:
        unused(ctx, name, why)


def input_option(kinds: Sequence[str], help: str) -> Callable[[Any], Any]:
    """``--input KIND`` (the parameter ``input_kind``), ``kinds[0]`` by default: what the
    command's input files hold."""
    return click.option(
        "--input",
        "input_kind",
        type=click.Choice(list(kinds)),
        default=kinds[0],
        show_default=True,
        help=help,
    )


def method_option(methods: Sequence[str], default: str, help: str) -> Callable[[Any], Any]:
    """``--method`` among ``methods``."""
    return click.option(
        "--method", type=click.Choice(list(methods)), default=default, show_default=True, help=help
    )
