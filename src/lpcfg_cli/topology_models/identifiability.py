"""CHECKIDENTIFIABILITY (Hsu, Kakade & Liang 2012, section 4.2) and their Figure 2.

A model family is locally identifiable from an observation function iff the Jacobian of
its observed moments has full column rank at a random parameter point (Theorem 1, with
probability one). ``check`` draws the point (every distribution uniform on its simplex),
computes the Jacobian by the complex step (``jacobian``) and compares its numerical rank
with the number of free parameters.

``CheckOptions`` holds one check's settings and ``Figure2Options`` the grid's, with their
defaults and ranges (``hyperparams.hyper``: ``lpcfg identifiability`` derives its options from
them); errors name these parameters (``errors.ParameterError``).

``figure2`` runs the check over a grid of vocabulary sizes ``d``, state counts ``k``
(``2 <= k <= d``, constituency models only, the paper's regime) and lengths ``L`` and
summarises each (model, observation) cell as the paper does ("Yes iff L >= 3", "No").
A cell where the observation needs more words than ``L`` has is "No" at that ``L`` (there
is nothing to observe). The PCFG row needs only ``phiall``: every other observation is a
function of the whole distribution, so a PCFG that ``phiall`` cannot identify no other
observation can (the paper's "No, even from phiall"); the table says so instead of
computing them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.hyperparams import SEED_HELP, hyper
from lpcfg_cli.hyperparams import check as check_ranges
from lpcfg_cli.topology_models import families
from lpcfg_cli.topology_models.jacobian import TOLERANCE, MomentMap, jacobian, numerical_rank
from lpcfg_cli.topology_models.observations import ETAS, OBSERVATIONS, blocks, eta_vector

MAX_ENTRIES = 20_000_000  # moments x parameters of one Jacobian (8 bytes each)

_TOLERANCE_HELP = "Singular values below this fraction of the largest count as zero."


@dataclass(frozen=True)
class CheckOptions:
    """One CHECKIDENTIFIABILITY run (section 4.2): the model family (section 3), the
    observation function (section 4.1) of sentences of ``length`` words over ``words``
    word types, the latent ``states`` of a constituency model (dependency models' states
    are the words: ignored), the slicing vector ``eta``, the rank ``tolerance`` and the
    ``seed`` of the random parameter point. ``model``, ``observation``, ``length`` and
    ``words`` have no default; on the command line ``length`` and ``words`` are sets of
    numbers (one each without ``--table``)."""

    model: str | None = hyper(None, "The model family (section 3).", choices=families.FAMILIES)
    observation: str | None = hyper(
        None,
        "The observation function (section 4.1; quote phi** and phi*** in the shell): "
        + "; ".join(f"{k} = {v[0]}" for k, v in OBSERVATIONS.items())
        + ".",
        choices=tuple(OBSERVATIONS),
        flag="obs",
    )
    length: int | None = hyper(
        None, "Sentence length L (with --table: a range or list).", min=1, kind="intset"
    )
    words: int | None = hyper(
        None, "Word types d (with --table: a range or list).", min=2, kind="intset"
    )
    states: int | None = hyper(None, "Latent states k (constituency models).", min=2, kind="int")
    eta: str = hyper(
        "e1",
        "The slicing vector of the eta observations (the paper's Figure 2 uses e1).",
        choices=ETAS,
    )
    tolerance: float = hyper(TOLERANCE, _TOLERANCE_HELP, min=0, max=1, exclusive=True)
    seed: int = hyper(0, SEED_HELP, min=0)

    def __post_init__(self) -> None:
        missing = [
            name
            for name in ("model", "observation", "length", "words")
            if getattr(self, name) is None
        ]
        if missing:
            raise ParameterError("a check needs " + ", ".join("{" + n + "}" for n in missing))
        if self.length < 1:  # type: ignore[operator]
            raise ParameterError("{length} must be at least 1, not {value}", value=self.length)
        families.check_sizes(self.model, self.words, self.states)  # type: ignore[arg-type]
        check_ranges(self)


@dataclass(frozen=True)
class Figure2Options:
    """The grid of ``figure2``: word types ``words`` and sentence ``lengths`` (``k`` runs
    over ``2..d``), with the seed and tolerance of every check (``eta`` is e1, as in the
    paper). The default grid is every cell of Figure 2 over the sizes that run in about two
    minutes (the paper: d in 2..8, k in 2..d, L in 2..9)."""

    words: tuple[int, ...] = hyper((2, 3, 4), "Word types d of the grid.", min=2)
    lengths: tuple[int, ...] = hyper((2, 3, 4, 5, 6), "Sentence lengths L of the grid.", min=1)
    seed: int = hyper(0, SEED_HELP, min=0)
    tolerance: float = hyper(TOLERANCE, _TOLERANCE_HELP, min=0, max=1, exclusive=True)

    def __post_init__(self) -> None:
        for name in ("words", "lengths"):  # any iterable of numbers: sorted, no repeats
            object.__setattr__(self, name, tuple(sorted(set(getattr(self, name)))))
            if not getattr(self, name):
                raise ParameterError("{" + name + "} needs at least one value")
        check_ranges(self)


def n_moments(observation: str, length: int, words: int) -> int:
    """Rows of the Jacobian: the observation's distinct moments (eta axes contracted)."""
    return sum(words ** sum(op != "eta" for op in b.ops) for b in blocks(observation, length))


def too_large(model: str, observation: str, length: int, words: int, states: int | None) -> bool:
    """Whether the Jacobian would exceed ``MAX_ENTRIES`` (phiall grows as d^L)."""
    if length < OBSERVATIONS[observation][1]:
        return False  # nothing to observe, nothing to compute
    n = families.n_params(model, words, states)
    return n_moments(observation, length, words) * n > MAX_ENTRIES


@dataclass(frozen=True)
class Verdict:
    """The outcome of one CHECKIDENTIFIABILITY run."""

    model: str
    observation: str
    length: int
    words: int
    states: int | None
    identifiable: bool
    rank: int
    parameters: int
    moments: int
    gap: float
    smallest_kept: float
    largest_dropped: float
    uncertain: bool
    tolerance: float
    seed: int
    eta: str
    seconds: float

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("gap", "smallest_kept", "largest_dropped"):  # JSON has no inf
            out[key] = None if not np.isfinite(out[key]) else out[key]
        return out


def check(
    model: str,
    observation: str,
    length: int,
    words: int,
    states: int | None = None,
    **values: Any,
) -> Verdict:
    """Is ``model`` (with ``words`` word types, ``states`` states) locally identifiable
    from ``observation`` of sentences of ``length`` words? (section 4.2) ``values``: the
    other fields of ``CheckOptions`` (``eta``, ``tolerance``, ``seed``)."""
    options = CheckOptions(model, observation, length, words, states, **values)
    return check_identifiability(options)


def check_identifiability(options: CheckOptions) -> Verdict:
    """CHECKIDENTIFIABILITY (section 4.2) with ``options``: draw the parameter point,
    compute the Jacobian of the observed moments, compare its rank with the parameters."""
    model, observation = options.model, options.observation
    length, words = options.length, options.words
    seed, eta, tolerance = options.seed, options.eta, options.tolerance
    assert model is not None and observation is not None  # CheckOptions: not None
    assert length is not None and words is not None
    k = families.check_sizes(model, words, options.states)
    states = None if model in families.DEPENDENCY else k
    rng = np.random.default_rng(seed)
    theta = families.random_theta(model, words, states, rng)
    eta_vec = eta_vector(eta, words, rng)
    obs = blocks(observation, length)
    n = len(theta)
    if too_large(model, observation, length, words, states):
        m = n_moments(observation, length, words)
        raise LpcfgError(
            f"{observation} of {length}-word sentences over {words} words has {m:,} moments: "
            f"a {m:,} x {n} Jacobian is too large (at most {MAX_ENTRIES:,} entries)"
        )
    start = time.perf_counter()
    jac = jacobian(MomentMap(model, words, states, length, obs, eta_vec), theta)
    rank = numerical_rank(jac, tolerance)
    return Verdict(
        model=model,
        observation=observation,
        length=length,
        words=words,
        states=states,
        identifiable=rank.rank == n,
        rank=rank.rank,
        parameters=n,
        moments=jac.shape[0],
        gap=rank.gap,
        smallest_kept=rank.smallest_kept,
        largest_dropped=rank.largest_dropped,
        uncertain=rank.uncertain,
        tolerance=tolerance,
        seed=seed,
        eta=eta,
        seconds=time.perf_counter() - start,
    )


# Figure 2's columns (eta = e1 as in the paper) and rows, and the paper's verdicts. Our copy
# of the paper is text extracted from the PDF and its Figure 2 is garbled: only the cells
# below can be read from it or from section 4.4's text (which says where); "?" marks a
# cell that cannot, "-" one the figure does not have.
FIGURE_COLUMNS = ("phi12", "phi**", "phi123eta", "phi***eta", "phi123", "phi***", "phiall")
FIGURE_ROWS = families.FAMILIES
_NO_PCFG = "No, even from phiall for L in {3,4,5}"
_PCFG_I = {
    "phi12": "No",
    "phi**": "Yes iff L >= 4",
    "phi123eta": "Yes iff L >= 3 (text: 'e.g. phi123eta')",
    "phi***eta": "?",
    "phi123": "?",
    "phi***": "?",
    "phiall": "-",
}
_DEP = {
    "phi12": "?",
    "phi**": "Yes iff L >= 3 (text)",
    "phi123eta": "?",
    "phi***eta": "?",
    "phi123": "?",
    "phi***": "Yes iff L >= 3 (contains phi**)",
    "phiall": "-",
}
PAPER: dict[str, dict[str, str]] = {
    "pcfg": dict.fromkeys(FIGURE_COLUMNS, _NO_PCFG),
    "pcfg-i": _PCFG_I,
    "pcfg-ie": _PCFG_I,
    "dep-i": _DEP,
    "dep-ie": {**_DEP, "phi12": "No at L = 2 (section 4's example); ? for L >= 3"},
    "dep-ies": _DEP,
}


@dataclass
class Cell:
    """One (model, observation) cell: the lengths at which every checked size said yes."""

    model: str
    observation: str
    yes: dict[int, bool]  # length -> identifiable for every (d, k) checked
    mixed: dict[int, list[tuple[int, int | None, bool]]]  # length -> per-size verdicts
    uncertain: int
    implied: bool = False
    skipped: list[int] = field(default_factory=list)  # lengths too large to compute
    verdicts: list[Verdict] = field(default_factory=list)  # every check run for the cell

    def summary(self) -> str:
        """The paper's wording: "Yes iff L >= 3", "No", ...; sizes that disagree listed."""
        if self.implied:
            return "No (implied by phiall)"
        lengths = sorted(self.yes)
        text = self._threshold(lengths, [n for n in lengths if self.yes[n]])
        for n, verdicts in sorted(self.mixed.items()):
            yes = [f"d{d}k{k}" if k else f"d{d}" for d, k, y in verdicts if y]
            no = [f"d{d}k{k}" if k else f"d{d}" for d, k, y in verdicts if not y]
            if len(yes) <= len(no):
                text += f"; L = {n}: yes only for {','.join(yes)}"
            else:
                text += f"; L = {n}: yes except for {','.join(no)}"
        if self.skipped:
            text += f"; L in {{{','.join(map(str, self.skipped))}}} not computed (too large)"
        return text

    @staticmethod
    def _threshold(lengths: list[int], ok: list[int]) -> str:
        if not ok:
            return "No"
        if ok == [n for n in lengths if n >= ok[0]]:
            return "Yes" if ok[0] == lengths[0] else f"Yes iff L >= {ok[0]}"
        return "Yes for L in {" + ",".join(map(str, ok)) + "}"


def sizes(model: str, words: Iterable[int]) -> list[tuple[int, int | None]]:
    """The (d, k) pairs of the grid: k in 2..d for constituency models (the paper's d >= k
    regime), no k for dependency models."""
    if model in families.DEPENDENCY:
        return [(d, None) for d in words]
    return [(d, k) for d in words for k in range(2, d + 1)]


def _planned(
    model: str, obs: str, words: list[int], lengths: list[int]
) -> list[tuple[int, list[tuple[int, int | None]]]]:
    """The (length, sizes) checks of one cell; ``[]`` for a PCFG cell implied by phiall,
    no sizes for a length too short for the observation, ``None`` sizes when too large."""
    if model == "pcfg" and obs != "phiall":
        return []
    plan = []
    for n in lengths:
        grid = sizes(model, words)
        if n < OBSERVATIONS[obs][1]:
            plan.append((n, []))
        elif any(too_large(model, obs, n, d, k) for d, k in grid):
            plan.append((n, None))
        else:
            plan.append((n, grid))
    return plan


def planned_checks(
    words: Iterable[int],
    lengths: Iterable[int],
    models: Iterable[str] = FIGURE_ROWS,
    observations: Iterable[str] = FIGURE_COLUMNS,
) -> int:
    """How many checks ``figure2`` will run (for a progress bar's total)."""
    words, lengths = sorted(set(words)), sorted(set(lengths))
    return sum(
        len(grid or ())
        for model in models
        for obs in observations
        for _, grid in _planned(model, obs, words, lengths)
    )


def figure2(
    options: Figure2Options | None = None,
    /,
    *,
    models: Iterable[str] = FIGURE_ROWS,
    observations: Iterable[str] = FIGURE_COLUMNS,
    progress: Callable[[Verdict], None] | None = None,
    **values: Any,
) -> list[Cell]:
    """Run CHECKIDENTIFIABILITY over the grid of ``options`` (``Figure2Options``' defaults
    when None, ``values`` replacing fields by name: ``figure2(words=[2, 3])``; module
    docstring); one ``Cell`` per (model, observation) pair."""
    grid = Figure2Options(**{**asdict(options or Figure2Options()), **values})
    words, lengths = list(grid.words), list(grid.lengths)
    seed, tolerance = grid.seed, grid.tolerance
    cells = []
    for model in models:
        for obs in observations:
            if model == "pcfg" and obs != "phiall":
                cells.append(Cell(model, obs, {}, {}, 0, implied=True))
                continue
            yes: dict[int, bool] = {}
            mixed: dict[int, list[tuple[int, int | None, bool]]] = {}
            uncertain = 0
            skipped = []
            checks: list[Verdict] = []
            for n, grid in _planned(model, obs, words, lengths):
                if grid is None:
                    skipped.append(n)
                    continue
                if not grid:  # too short to observe anything: not identifiable
                    yes[n] = False
                    continue
                verdicts = []
                for d, k in grid:
                    v = check(model, obs, n, d, k, seed=seed, eta="e1", tolerance=tolerance)
                    uncertain += v.uncertain
                    checks.append(v)
                    verdicts.append((d, k, v.identifiable))
                    if progress:
                        progress(v)
                flags = {y for _, _, y in verdicts}
                yes[n] = flags == {True}
                if len(flags) > 1:
                    mixed[n] = verdicts
            cells.append(Cell(model, obs, yes, mixed, uncertain, skipped=skipped, verdicts=checks))
    return cells


def figure2_markdown(cells: list[Cell], words: list[int], lengths: list[int]) -> str:
    """The grid as a markdown table, ours beside the paper's verdict in each cell."""
    obs = list(dict.fromkeys(c.observation for c in cells))
    head = "| model | " + " | ".join(obs) + " |"
    lines = [head, "|---" * (len(obs) + 1) + "|"]
    for model in dict.fromkeys(c.model for c in cells):
        row = [f"**{model}**"]
        for c in (c for c in cells if c.model == model):
            flag = f" ({c.uncertain} uncertain)" if c.uncertain else ""
            row.append(f"{c.summary()}{flag} <br> paper: {PAPER[model][c.observation]}")
        lines.append("| " + " | ".join(row) + " |")
    runs = [v for c in cells for v in c.verdicts]
    kept = min((v.smallest_kept for v in runs), default=0.0)
    deficient = [v for v in runs if not v.identifiable]
    dropped = max((v.largest_dropped for v in deficient), default=0.0)
    gap = min((v.gap for v in deficient), default=float("inf"))
    footer = (
        f"\n{len(runs)} checks ({len(deficient)} rank-deficient) in "
        f"{sum(v.seconds for v in runs):.0f} s: smallest kept singular value {kept:.1e} of "
        f"the largest, largest dropped {dropped:.1e}, smallest gap at a cut {gap:.1e}.\n"
    )
    grid = (
        f"d in {{{','.join(map(str, words))}}}, k in 2..d (constituency), "
        f"L in {{{','.join(map(str, lengths))}}}, eta = e1"
    )
    return f"Checked for {grid}.\n\n" + "\n".join(lines) + "\n" + footer
