"""The spectral learning algorithm for L-PCFGs (Cohen et al. 2012 ACL; 2014 JMLR, figs. 7-8),
with the engineering of their 2013 experiments (Cohen, Stratos, Collins, Foster & Ungar).

For every nonterminal ``a``:

1. ``Omega^a = E[phi(t) psi(o)^T | a]`` over *all* nodes labelled ``a`` (the papers recommend
   all nodes over one per tree), ``phi``/``psi`` the sparse inside/outside features of
   ``features``; truncated SVD ``Omega^a ~ U diag(s) V^T`` (``linalg.truncated_svd``: only
   singular values above ``min_singular`` are kept, so the inverse below stays bounded).
   ``m_a = min(m, directions kept, count(a) / state_count)``: rare nonterminals get
   fewer states.
2. Projections ``y = U^T phi(t)`` (inside) and ``z = diag(1/s) V^T psi(o)`` (outside), so that
   ``E[y z^T | a] = I`` on the training data and figure 7's ``Sigma^a`` needs no inverse.
3. Moments (all batched by rule):
   ``C^{a->b c}[i,j,k] = p(a->b c | a) E~[z_i y2_j y3_k | a->b c]``,
   ``c_inf^{a->x}[i] = p(a->x | a) E~[z_i | a->x]``, ``c_1^a[i] = p(root a) E[y_i | a, root]``,
   where ``E~`` is the smoothed moment: with ``lambda = sqrt(n) / (C + sqrt(n))`` (``n`` the
   rule's count) the third-order moment is interpolated with the average of products of
   the rule's second- and first-order moments, and that with the product of the
   per-nonterminal means (``lambda E + (1 - lambda)(lambda F + (1 - lambda) K)``); a lexical
   moment is ``v E[z | a->x] + (1 - v) E[z | a]`` (the pre-terminal mean alone for tied
   emissions never seen with that pre-terminal). Rule probabilities are the treebank
   PCFG's (with its tied emissions).

   The 2013 paper fixes ``v = 0.6``. That keeps 40% of every word's moment at the
   pre-terminal mean however often the word is seen, so the estimate is no longer
   consistent (``tests/test_spectral.py`` shows its error stalling as data grow). We use
   ``v = sqrt(n) / (C' + sqrt(n))`` like the binary rules, with ``C' = 10``: consistent, and
   better on the dev split than ``v = 0.6`` or no smoothing (docs/learners/spectral.md,
   Where lpcfg departs from the papers); ``lexical_count = 0`` restores the fixed ``v``.

The result is a ``tensor``-form model: entries may be negative, and so may marginals; the
parser's decoder scores items by absolute marginal, as the authors' parser does.

Optional per-tree ``weights`` turn every average over nodes into a weighted one (tree ``t``
counted ``weights[t]`` times; counts become weighted sums): integer weights equal repeating
the trees, and every tree of a finite support weighted by its probability gives the
population moments, from which the estimate is exact (JMLR 2014, theorem 2: the
``M -> infinity`` end of theorem 3; ``consistency.exact_support``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper, to_dict
from lpcfg_cli.latent_pcfg.features import (
    INSIDE,
    OUTSIDE,
    FeatureOptions,
    NodeFeatures,
    TreeSample,
    check_templates,
    node_features,
    node_weights,
)
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import (
    MAX_STATES,
    STATE_COUNT_HELP,
    STATES_HELP,
    Decomposable,
    Progress,
)
from lpcfg_cli.model.treebank_pcfg import estimate_pcfg
from lpcfg_cli.numerics.svd import SVD, truncated_svd


@dataclass(frozen=True)
class SpectralOptions(Checked):
    """Constants of the estimator (defaults: Cohen et al. 2013, tuned on the dev split)."""

    states: int = hyper(8, STATES_HELP, min=1, max=MAX_STATES)
    min_singular: float = hyper(
        0.01, "Spectral: keep SVD directions with singular values above this only.", min=0.0
    )
    state_count: float = hyper(10.0, STATE_COUNT_HELP, min=0.0)
    caps: dict[str, int] = hyper(
        {},
        "Spectral: at most M states for nonterminal LABEL (repeatable).",
        min=1,
        metavar="LABEL=M",
        flag="cap",
    )
    moment_smoothing: float = hyper(
        30.0,
        "Spectral: C of lambda = sqrt(n) / (C + sqrt(n)) smoothing rule moments (0: off).",
        min=0.0,
    )
    lexical_weight: float = hyper(
        0.6,
        "Spectral: fixed weight of a word's own moment against "
        "its pre-terminal's mean, used when --lexical-count is 0 (1: "
        "no lexical smoothing).",
        min=0.0,
        max=1.0,
    )
    lexical_count: float = hyper(
        10.0,
        "Spectral: C' of the word's weight sqrt(n) / (C' + "
        "sqrt(n)) against its pre-terminal's mean (n: the word's count "
        "with that pre-terminal; 0: fixed weight).",
        min=0.0,
    )
    inside_features: tuple[str, ...] = hyper(
        INSIDE, "Spectral, pivot: inside feature templates, comma-separated."
    )
    outside_features: tuple[str, ...] = hyper(
        OUTSIDE, "Spectral, pivot: outside feature templates, comma-separated."
    )
    feature_scaling: bool = hyper(
        True, "Spectral: weigh each active feature by sqrt(M / (count + 5))."
    )
    seed: int = hyper(0, SEED_HELP, min=0)
    feature_offset: float = 5.0  # the 5 of sqrt(M / (count + 5))

    def __post_init__(self) -> None:
        super().__post_init__()
        check_templates("inside", self.inside_features)
        check_templates("outside", self.outside_features)

    @property
    def features(self) -> FeatureOptions:
        return FeatureOptions(
            self.inside_features, self.outside_features, self.feature_scaling, self.feature_offset
        )


class SpectralEstimator:
    """Features and SVDs of one treebank, from which models with any ``m`` are built.

    The SVDs are computed once for the largest ``m`` asked for; a smaller ``m`` keeps the
    leading directions of the same decomposition, so a ``--states 8,16,24,32`` grid costs
    little more than its largest member. ``weights[t]``: how many times tree ``t`` counts
    (default once; see the module's docstring).
    """

    def __init__(self, sample: TreeSample, options: SpectralOptions | None = None) -> None:
        grammar, bank, _, weights = sample
        self.grammar, self.bank = grammar, bank
        self.options = options or SpectralOptions()
        t0 = time.perf_counter()
        self.features: NodeFeatures = node_features(sample, self.options.features)
        self.coarse = estimate_pcfg(grammar, bank, weights)
        self.node_w = node_weights(bank, weights)  # None: every node counts once
        self.counts = np.bincount(bank.symbol, self.node_w, minlength=grammar.n_symbols)
        self._nodes = bank.by_symbol(grammar.n_symbols)
        self._rows: dict[int, tuple[sp.csr_matrix, sp.csr_matrix]] = {}
        self._svds: list[SVD] = []
        self._svd_k = 0
        self.seconds = {"features": time.perf_counter() - t0}

    def decompose(self, k: int, progress: Callable[[int], None] | None = None) -> None:
        """Truncated SVD of every ``Omega^a`` with up to ``k`` directions (cached)."""
        if k <= self._svd_k:
            return
        t0 = time.perf_counter()
        opts = self.options
        self._svds = []
        for a, nodes in enumerate(self._nodes):
            phi, psi = self._restricted(a)
            if self.node_w is None:
                omega = (phi.T @ psi) / max(len(nodes), 1)
            else:
                w = self.node_w[nodes]
                omega = (phi.T @ (sp.diags(w) @ psi)) / _positive(w.sum())
            self._svds.append(
                truncated_svd(omega, k, min_value=opts.min_singular, seed=opts.seed + a)
            )
            if progress:
                progress(1)
        self._svd_k = k
        self.seconds["svd"] = time.perf_counter() - t0

    def _restricted(self, a: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Symbol ``a``'s feature rows, restricted to the columns they use (cached: both
        the SVD and every projection need them)."""
        if a not in self._rows:
            out = []
            for mat in (self.features.inside, self.features.outside):
                rows = mat[self._nodes[a]]
                out.append(rows[:, np.unique(rows.indices)].tocsr())
            self._rows[a] = (out[0], out[1])
        return self._rows[a]

    def states_for(self, m: int) -> np.ndarray:
        """``m_a`` for every symbol: capped by the requested ``m``, the directions kept and
        the symbol's frequency."""
        if m < 1:
            raise ParameterError("{states} must be at least 1")
        self.decompose(m)
        return np.minimum(self.bounds(), m)

    def project(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Y, Z)``: inside and outside projections of every node, padded to max m_a."""
        n, width = self.bank.n_nodes, int(states.max())
        y, z = np.zeros((n, width)), np.zeros((n, width))
        for a, nodes in enumerate(self._nodes):
            if not len(nodes):
                continue
            k = int(states[a])
            svd = self._svds[a]
            phi, psi = self._restricted(a)
            y[nodes, :k] = phi @ svd.u[:, :k]
            z[nodes, :k] = (psi @ svd.v[:, :k]) / svd.s[:k]
        return y, z

    def kept(self) -> np.ndarray:
        """The SVD directions ``decompose`` kept for each symbol."""
        return np.array([svd.k for svd in self._svds], dtype=np.int64)

    def bounds(self) -> np.ndarray:
        """The most states each symbol may have: the SVD directions kept (``decompose``
        first), with ``state_count`` the symbol's frequency, and its ``--cap``."""
        bound = self.kept()
        per = self.options.state_count
        if per > 0:
            bound = np.minimum(bound, np.maximum(1, self.counts // per).astype(np.int64))
        for label, cap in self.options.caps.items():
            a = self.grammar.symbol_index.get(label)
            if a is not None:
                bound[a] = min(bound[a], cap)
        return np.maximum(1, bound)

    def model(self, m: int, meta: dict[str, Any] | None = None) -> LPCFG:
        """The tensor-form model with at most ``m`` states per nonterminal."""
        model = self.model_for(self.states_for(m), meta)
        model.meta["states_requested"] = m
        return model

    def model_for(self, states: np.ndarray, meta: dict[str, Any] | None = None) -> LPCFG:
        """The tensor-form model with ``states[a]`` states for symbol ``a`` (each at most
        the directions ``decompose`` kept for it)."""
        t0 = time.perf_counter()
        states = np.asarray(states, dtype=np.int64)
        if (
            len(states) != self.grammar.n_symbols
            or (states < 1).any()
            or (states > self.kept()).any()
        ):
            raise ValueError("state counts must be between 1 and the directions kept")
        y, z = self.project(states)
        g, bank, opts = self.grammar, self.bank, self.options
        w = self.node_w
        y_mean = _group_mean(bank.symbol, y, g.n_symbols, w)
        z_mean = _group_mean(bank.symbol, z, g.n_symbols, w)
        model = LPCFG.zeros(g, states, self.coarse, form="tensor", meta=dict(meta or {}))
        self._binary(model, y, z, y_mean, z_mean)
        self._lexical(model, z, z_mean)
        roots = bank.roots
        root_y = _group_mean(
            bank.symbol[roots], y[roots], g.n_symbols, None if w is None else w[roots]
        )
        for a in range(g.n_symbols):
            model.root_vector(a)[:] = self.coarse.root[a] * root_y[a, : states[a]]
        model.meta.update(
            {
                "method": "spectral",
                "spectral": to_dict(opts),
                "singular_values": {
                    g.symbols[a]: np.round(svd.s, 6).tolist() for a, svd in enumerate(self._svds)
                },
                "spectral_seconds": {
                    **{k: round(v, 3) for k, v in self.seconds.items()},
                    "moments": round(time.perf_counter() - t0, 3),
                },
            }
        )
        return model

    def _binary(self, model: LPCFG, y, z, y_mean, z_mean) -> None:
        g, bank, c = self.grammar, self.bank, self.options.moment_smoothing
        states = model.states
        nodes = np.flatnonzero(bank.rule >= 0)
        nodes = nodes[np.argsort(bank.rule[nodes], kind="stable")]
        bounds = np.searchsorted(bank.rule[nodes], np.arange(g.n_binary + 1))
        for r in range(g.n_binary):
            sel = nodes[bounds[r] : bounds[r + 1]]
            n = len(sel)
            w = None if self.node_w is None else self.node_w[sel]
            a, b, cc = g.binary[r]
            ma, mb, mc = states[a], states[b], states[cc]
            k = (
                z_mean[a, :ma][:, None, None]
                * y_mean[b, :mb][None, :, None]
                * y_mean[cc, :mc][None, None, :]
            )
            if w is not None:
                n = w.sum()  # the weighted count: averages below become weighted ones
            if n == 0:
                moment = k
            else:
                zz, yl, yr = z[sel, :ma], y[bank.left[sel], :mb], y[bank.right[sel], :mc]
                zw = zz if w is None else zz * w[:, None]  # weights enter with z
                pairs = (yl[:, :, None] * yr[:, None, :]).reshape(len(sel), mb * mc)
                third = (zw.T @ pairs) / n
                moment = third.reshape(ma, mb, mc)
                if c > 0:
                    lam = np.sqrt(n) / (c + np.sqrt(n))
                    jz, jl, jr = _mean(zz, w), _mean(yl, w), _mean(yr, w)
                    ylw = yl if w is None else yl * w[:, None]
                    f = (
                        (zw.T @ yl / n)[:, :, None] * jr[None, None, :]
                        + (zw.T @ yr / n)[:, None, :] * jl[None, :, None]
                        + jz[:, None, None] * (ylw.T @ yr / n)[None, :, :]
                    ) / 3.0
                    moment = lam * moment + (1 - lam) * (lam * f + (1 - lam) * k)
            model.binary_tensor(r)[:] = self.coarse.binary[r] * moment

    def _lexical(self, model: LPCFG, z: np.ndarray, z_mean: np.ndarray) -> None:
        g, bank, v = self.grammar, self.bank, self.options.lexical_weight
        pre = np.flatnonzero(bank.lex >= 0)
        w = None if self.node_w is None else self.node_w[pre]
        lex_mean = _group_mean(bank.lex[pre], z[pre], g.n_lexical, w)
        count = np.bincount(bank.lex[pre], w, minlength=g.n_lexical).astype(float)
        if self.options.lexical_count > 0:
            v = np.sqrt(count) / (self.options.lexical_count + np.sqrt(count))
        v = np.where(count > 0, v, 0.0)[:, None]
        parent_mean = z_mean[g.lexical[:, 0]]
        moment = v * lex_mean + (1 - v) * parent_mean
        moment *= self.coarse.lexical[:, None]
        width = np.arange(moment.shape[1])[None, :] < model.states[g.lexical[:, 0]][:, None]
        model.lexical[:] = moment[width]  # row-major: rule by rule, as the flat layout


class SpectralLearner(Decomposable):
    """The spectral learner: one truncated SVD per nonterminal serves a model of any number
    of states (a smaller ``m`` keeps the leading directions), so that
    ``selection.StateSelection`` chooses among them at the cost of the models alone."""

    method = "spectral"
    Options = SpectralOptions
    decode = "max-marginal"

    def inert(self, dev: bool, start: bool) -> dict[str, str]:
        found = {}
        if self.options.lexical_count != 0:
            found["lexical_weight"] = (
                "unless {lexical_count} is 0 (it replaces the count-based weight)"
            )
        return found

    def estimator(self, data: TrainingData, largest: int, progress: Progress) -> SpectralEstimator:
        """The features and the SVD of every symbol's cross-covariance, with up to
        ``largest`` directions."""
        opts, g = self.options, data.grammar
        if data.originals is None:
            raise LpcfgError("the spectral learner needs the original training trees")
        unknown = sorted(set(opts.caps) - set(g.symbols))
        if unknown:
            raise ParameterError(
                "{caps} names a nonterminal not in the training trees: {name}",
                name=repr(unknown[0]),
            )
        est = SpectralEstimator(TreeSample(g, data.bank, data.originals), opts)
        with progress.bar(total=g.n_symbols, desc="svd", unit="nt") as bar:
            est.decompose(largest, progress=bar.update)
        sec = est.seconds
        progress.report(
            f"features {sec['features']:.1f} s, SVD of {g.n_symbols} "
            f"cross-covariances {sec['svd']:.1f} s"
        )
        return est

    def model(
        self, est: SpectralEstimator, m: int, data: TrainingData, progress: Progress
    ) -> LPCFG:
        return est.model(m, data.meta())

    def model_for(self, est: SpectralEstimator, states: np.ndarray, data: TrainingData) -> LPCFG:
        return est.model_for(states, data.meta())

    def search_bounds(self, est: SpectralEstimator, m: int) -> np.ndarray:
        """Each symbol's SVD directions, frequency and ``caps`` (``SpectralEstimator.bounds``)."""
        return est.bounds()


def _group_mean(
    group: np.ndarray, values: np.ndarray, n_groups: int, weights: np.ndarray | None = None
) -> np.ndarray:
    """Row means of ``values`` per group id (zero for empty groups), row ``i`` weighted by
    ``weights[i]`` if given."""
    w = np.ones(len(group)) if weights is None else weights
    ind = sp.csr_matrix((w, (group, np.arange(len(group)))), shape=(n_groups, len(group)))
    sums = np.asarray(ind @ values)
    totals = np.bincount(group, weights, minlength=n_groups).astype(float)
    return sums / np.where(totals > 0, totals, 1.0)[:, None]


def _mean(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Column means of ``values``, row ``i`` weighted by ``weights[i]`` if given."""
    return values.mean(0) if weights is None else (weights @ values) / weights.sum()


def _positive(total: float) -> float:
    """``total``, or 1 if it is zero (an empty average is zero)."""
    return total if total > 0 else 1.0
