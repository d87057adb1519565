"""Learners of topology models (the ``topology`` family): UNMIX of Hsu, Kakade & Liang
(2012), section 5, on the protocol of every learner: options up front,
``fit(data) -> model``.

``UnmixLearner`` learns a PCFG-IE (``pcfg-ie``, section 5.2: the eta-sliced triple moments
of lengths ``3..length_max`` unmixed through the mixing matrix, Proposition 1, then
DECOMPOSE of ``Psi2``) or a DEP-IES (``dep-ies``, section 5.3: ``AA + A`` from the pair
moments of lengths 2 and 3) from ``TopologyData``: sentences read from text
(``TopologyData.from_sentences``) or the exact moments of a model (``TopologyData.exact``,
infinite data). The algorithms are ``topology_models.unmix``; the learner checks what they
need, draws ``tau`` from the seed and returns a ``TopologyModel`` with the vocabulary, the
length counts and how it was learned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper
from lpcfg_cli.model.protocol import TOPOLOGY, Learner, Progress
from lpcfg_cli.topology_models.samples import (
    ByLength,
    PairMoments,
    TripleMoments,
    exact_pair_moments,
    exact_triple_moments,
    from_sentences,
    triples,
)
from lpcfg_cli.topology_models.topology_file import TopologyModel
from lpcfg_cli.topology_models.unmix import (
    ROW_SPACE_TOLERANCE,
    check_row_space,
    unmix_dep_ies,
    unmix_pcfg_ie,
)

PCFG_IE, DEP_IES = "pcfg-ie", "dep-ies"

# Exact triple moments hold n_triples * d^3 floats: at most this many.
EXACT_LIMIT = 5 * 10**7


@dataclass(frozen=True)
class UnmixOptions(Checked):
    """Options of every unmixing learner (all that ``dep-ies`` has)."""

    length_max: int = hyper(
        10,
        "Longest sentence used (longer lines are skipped); pcfg-ie's mixing matrix covers "
        "lengths 3..L.",
        min=3,
    )
    seed: int = hyper(0, SEED_HELP, min=0)


@dataclass(frozen=True)
class PCFGIEOptions(UnmixOptions):
    """Options of ``pcfg-ie``: its latent states and the slicing vectors it tries."""

    states: int | None = hyper(
        None,
        "pcfg-ie: latent states k (at most the number of word types). Default with "
        "--exact-moments: the model's.",
        min=2,
        kind="int",
    )
    taus: int = hyper(
        16,
        "pcfg-ie: random slicing vectors tau drawn from --seed; the one that best separates "
        "DECOMPOSE's eigenvalues is used (1: the paper's single tau).",
        min=1,
    )


# Method -> its options class (``learners.registry.TOPOLOGY_METHODS``).
OPTIONS: dict[str, type[UnmixOptions]] = {PCFG_IE: PCFGIEOptions, DEP_IES: UnmixOptions}


@dataclass
class TopologyData:
    """What an unmixing learner fits: the vocabulary (token strings in id order), what is
    observed (``ByLength`` sentences of word ids, or the exact ``TripleMoments`` or
    ``PairMoments`` of a model of ``family``), the sentences per length (index = length),
    the longest sentence kept, a ``summary`` for reports, the model's family and states
    (exact moments only) and where the data came from (``source``: for messages and the
    model's meta)."""

    vocab: list[str]
    observed: ByLength | TripleMoments | PairMoments
    length_counts: np.ndarray
    length_max: int
    summary: dict[str, Any] = field(default_factory=dict)
    family: str | None = None  # exact moments: the model's family (None: sentences)
    states: int | None = None  # exact moments: the model's latent states
    source: str | None = None

    @classmethod
    def from_sentences(
        cls, sentences: Iterable[Sequence[str]], length_max: int, source: str | None = None
    ) -> TopologyData:
        """Sentences as token lists (``treebank.sentences.read_sentences``: a blank line is
        the empty sentence); empty ones and those of more than ``length_max`` tokens are
        skipped and counted. The vocabulary is the kept sentences' distinct tokens, most
        frequent first."""
        corpus = from_sentences(sentences, length_max)
        counts = corpus.length_counts
        summary = {
            "sentences": int(counts.sum()),
            "empty": corpus.empty,
            "too_long": corpus.too_long,
            "per_length": {n: int(c) for n, c in enumerate(counts) if c},
        }
        return cls(corpus.vocab, corpus.data, counts, length_max, summary, source=source)

    @classmethod
    def exact(
        cls, truth: TopologyModel, family: str, length_max: int, source: str | None = None
    ) -> TopologyData:
        """The exact moments (infinite data) of model ``truth`` that the ``family`` learner
        unmixes: triple moments of lengths ``3..length_max`` for pcfg-ie (refused when
        they would not fit in memory), the pair moments of lengths 2 and 3 for dep-ies."""
        if truth.family != family:
            raise LpcfgError(
                f"a {truth.family} model: {family} unmixes {family} moments only", source=source
            )
        d = truth.d
        if family == PCFG_IE:
            if len(triples(length_max)) * d**3 > EXACT_LIMIT:
                error = ParameterError(
                    "exact triple moments of d = {d} words up to length {longest} are too "
                    "large; lower {length_max} (3 is enough: longer sentences do not change "
                    "the estimate)",
                    d=d,
                    longest=length_max,
                )
                error.source = source
                raise error
            observed: TripleMoments | PairMoments = exact_triple_moments(
                truth.params,  # type: ignore[arg-type]
                length_max,
            )
            used = f"lengths 3..{length_max}"
        else:
            observed = exact_pair_moments(truth.params)  # type: ignore[arg-type]
            used = "lengths 2 and 3"
        counts = np.asarray(truth.length_counts)
        summary = {"used": used}
        return cls(
            list(truth.vocab), observed, counts, length_max, summary, family, truth.k, source
        )


class UnmixLearner(Learner):
    """UNMIX by ``method`` (``pcfg-ie`` or ``dep-ies``; see the module docstring). Nothing
    to select on dev data and no model to start from; the only random choice is pcfg-ie's
    ``tau``, drawn from ``seed``."""

    family = TOPOLOGY
    Options = UnmixOptions
    takes_dev = False

    def __init__(self, options: UnmixOptions | None, method: str) -> None:
        if method not in OPTIONS:
            raise LpcfgError(f"unknown unmixing method {method!r} (one of {', '.join(OPTIONS)})")
        super().__init__(options if options is not None else OPTIONS[method]())
        if not isinstance(self.options, OPTIONS[method]):
            raise TypeError(f"{method} takes {OPTIONS[method].__name__}")
        self.method = method  # type: ignore[misc]

    def check_data(self, exact: bool) -> None:
        """Refuse, before any data is read, options that cannot fit sentences (``exact``
        False) or a model's exact moments (``TopologyData.exact``)."""
        if self.method == PCFG_IE and not exact and self.options.states is None:
            raise ParameterError(
                "pcfg-ie needs {states} to learn from sentences (only exact moments give "
                "the model's)"
            )

    def _fit(self, data: TopologyData, dev: Any, start: Any, progress: Progress) -> TopologyModel:
        options = self.options
        exact = data.family is not None
        self.check_data(exact)
        if exact and data.family != self.method:
            raise LpcfgError(
                f"a {data.family} model: {self.method} unmixes {self.method} moments only",
                source=data.source,
            )
        if data.length_max != options.length_max:
            raise ParameterError(
                "the data were read for sentences of at most {longest} words, not "
                "{length_max} {value}",
                longest=data.length_max,
                value=options.length_max,
            )
        if not exact and not data.length_counts.sum():
            raise LpcfgError("no sentences to learn from", source=data.source)
        meta: dict[str, Any] = {
            "learner": "unmix",
            "length_max": options.length_max,
            "seed": options.seed,
        }
        if exact:
            meta["exact_moments"] = data.source
        else:
            meta["sentences"] = {str(n): c for n, c in data.summary["per_length"].items()}
        if self.method == PCFG_IE:
            params = self._pcfg_ie(data, exact, meta, progress)
        else:
            progress.report(f"d = {len(data.vocab)} word types (the states)")
            try:
                params = unmix_dep_ies(data.observed, len(data.vocab))  # type: ignore[arg-type]
            except ValueError as exc:  # no sentences of length 2 or 3
                raise LpcfgError(f"dep-ies: {exc}") from None
        counts = np.asarray(data.length_counts)
        return TopologyModel(self.method, params, list(data.vocab), counts, meta)

    def _pcfg_ie(
        self, data: TopologyData, exact: bool, meta: dict[str, Any], progress: Progress
    ) -> Any:
        """PCFG-IE (section 5.2): ``d >= k``, Proposition 1's row-space condition on the
        observed lengths, then ``unmix_pcfg_ie`` with ``taus`` vectors drawn from the seed."""
        options: PCFGIEOptions = self.options  # type: ignore[assignment]
        d, length_max = len(data.vocab), options.length_max
        states = options.states or data.states  # None only for sentences: check_data
        assert states is not None
        rng = np.random.default_rng(options.seed)
        if d < states:
            raise ParameterError(
                "pcfg-ie needs at least as many word types as states: d = {d} < k = {k} "
                "(lower {states})",
                d=d,
                k=states,
            )
        progress.report(f"d = {d} word types, k = {states} states")
        lengths = data.length_counts
        if exact:
            observed = tuple(range(3, length_max + 1))
        else:
            observed = tuple(n for n in range(3, length_max + 1) if n < len(lengths) and lengths[n])
        check = check_row_space(length_max, observed)
        if check["residual"] > ROW_SPACE_TOLERANCE:
            raise LpcfgError(
                "pcfg-ie needs sentences of length 3: without them Psi2 is not in the row "
                f"space of the mixing matrix (residual {check['residual']:.2g})"
            )
        progress.report(
            f"Psi2 is in the row space of the mixing matrix ({check['rows']} x "
            f"{check['columns']}, rank {check['rank']}): residual {check['residual']:.1e}; "
            f"pinv(M) weighs lengths {', '.join(map(str, check['uses']))}"
        )
        tau = rng.uniform(size=(options.taus, d))
        params = unmix_pcfg_ie(data.observed, d, states, length_max, tau)  # type: ignore[arg-type]
        meta.update({"states": states, "taus": options.taus})
        return params
