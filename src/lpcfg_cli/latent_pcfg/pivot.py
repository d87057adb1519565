"""The pivot algorithm for L-PCFGs (Cohen & Collins 2014), which returns real probabilities.

Step 0. Per nonterminal ``a``: the one-hot inside and outside feature vectors of its nodes
  (several templates, ``features.template_keys``; a template that does not apply is its own
  value ``none``, so every node has exactly one value per template) and their
  co-occurrence matrix ``Q^a = E[phi psi^T | a]`` (the sum of one matrix per template pair).
Step 1 (section 5). CCA on ``Q^a`` gives each outside feature ``g`` a representation in
  ``R^k``; ``v_f = E[rep(g) | f]`` lies in the convex hull of one vertex per latent state
  (``v_f = sum_h p(h | f) w_h``) and pivot features sit on the vertices. FastAnchorWords
  (Arora et al. 2013: greedily the point farthest from the affine span of those picked)
  finds ``k`` pivots among features seen at least ``min_count`` times (rare features are
  too noisy to be vertices); Frank-Wolfe gives every ``f`` its convex weights
  ``q(h | f)``; then ``r(f | h, a)`` per template and ``p(h | a)``. The same on the
  transpose gives ``s(g | h', a)``, and the EM of Eq. 3 (concave) finds ``t(h' | h)``
  aligning the two state orders: ``s(g | h, a) = sum_h' t(h' | h) s(g | h', a)``.
Step 2. Per binary rule the EM of Eq. 1 (concave) for the joint ``t(h1, h2, h3 | a -> b c)``
  with the multi-feature objective of section 6.2: one log term per (outside template of
  the parent, inside template of each child) triple, from ``rule_outside`` and
  ``rule_inside``. All rules are updated together in batched products.
Step 3 and section 6.1. ``t(a -> b c, h2, h3 | a, h1) ∝ p(a -> b c | a) t(h1, h2, h3 | ...)``;
  ``q(a -> x | a, h) = r(a -> x | h, a)`` (the ``lexrule`` template) interpolated with the
  treebank lexicon by ``lexicon_smoothing`` (so tied and rare emissions keep mass);
  ``pi(a, h) ∝ s(root | h, a) p(h | a) p(a)``.

The CCA is ridge-regularised (``cca_ridge`` occurrences added to every feature's count
where it scales by it, ``anchors.cca_vectors``; the paper does not say how it regularised its
CCA): features seen a few times that always occur together have canonical correlation one
and take directions from the frequent ones the pivots are picked among. The default ridge
was chosen on dev with ``configs/pivot16.toml`` over three seeds; pivot+EM gains from it
too (docs/learners/pivot.md, Where lpcfg departs from the paper).

Robustness: a nonterminal gets ``k_a = min(m, count(a) / state_count, CCA rank,
candidate pivots)`` distinct states; the model has ``m`` states for every symbol (so EM can
start from it) with the extra ones exact copies (same distributions, children's mass split
evenly), which defines the same distribution over trees. Probabilities are clipped at 0 and
renormalised after every optimisation.

Optional per-tree ``weights`` make every count and average a weighted one (tree ``t``
counted ``weights[t]`` times, so integer weights equal repeating the trees): every tree of a
finite support weighted by its probability gives the population moments, theorem 1's
infinite-data assumption, under which it promises exact recovery
(``consistency.exact_support``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.training_data import TrainingData
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper, to_dict
from lpcfg_cli.latent_pcfg.features import (
    OUTSIDE,
    TreeSample,
    check_templates,
    node_weights,
    template_keys,
)
from lpcfg_cli.latent_pcfg.products import accumulate_outer, apply_rules
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import (
    MAX_STATES,
    STATE_COUNT_HELP,
    STATES_HELP,
    Decomposable,
    Progress,
)
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.numerics.anchors import anchor_posteriors, cca_vectors

PIVOT_INSIDE = (
    "node_rule",
    "lexrule",
    "left",
    "right",
    "rule+left",
    "rule+right",
    "head",
    "length",
)


@dataclass(frozen=True)
class PivotOptions(Checked):
    """Templates and constants of the pivot learner."""

    states: int = hyper(8, STATES_HELP, min=1, max=MAX_STATES)
    inside_features: tuple[str, ...] = hyper(
        PIVOT_INSIDE, "Spectral, pivot: inside feature templates, comma-separated."
    )
    outside_features: tuple[str, ...] = hyper(
        OUTSIDE, "Spectral, pivot: outside feature templates, comma-separated."
    )
    min_count: int = hyper(
        10, "Pivot: features seen fewer times cannot be pivots (too noisy to be vertices).", min=1
    )
    cca_ridge: float = hyper(
        10.0,
        "Pivot: occurrences added to every feature's count where the CCA scales by it "
        "(ridge-regularised CCA; 0: plain CCA).",
        min=0.0,
    )
    state_count: float = hyper(10.0, STATE_COUNT_HELP, min=0.0)
    seed: int = hyper(0, SEED_HELP, min=0)
    rule_inside: tuple[str, ...] = ("node_rule",)
    rule_outside: tuple[str, ...] = ("parent", "parent2")
    min_singular: float = 1e-3
    frank_wolfe_iterations: int = 200
    align_iterations: int = 200
    rule_iterations: int = 30
    lexicon_smoothing: float = 0.05
    floor: float = 1e-3  # mixed-in uniform mass: no rule or alignment is exactly zero

    def __post_init__(self) -> None:
        super().__post_init__()
        check_templates("inside", self.inside_features)
        check_templates("outside", self.outside_features)
        if "lexrule" not in self.inside_features or "parent" not in self.outside_features:
            raise LpcfgError(
                "the pivot learner needs the lexrule inside and parent outside templates "
                "(its lexical and root parameters come from them)"
            )
        for t in self.rule_inside:
            if t not in self.inside_features:
                raise LpcfgError(f"rule template {t!r} must be one of the inside templates")
        for t in self.rule_outside:
            if t not in self.outside_features:
                raise LpcfgError(f"rule template {t!r} must be one of the outside templates")


@dataclass
class _Side:
    """One side of a nonterminal's decomposition: ``cond[f, h] = p(f | h)`` within each
    template block and ``post[f, h] = q(h | f)``."""

    cond: np.ndarray
    post: np.ndarray


def _decompose_side(
    vectors: np.ndarray,
    p: np.ndarray,
    counts: np.ndarray,
    blocks: np.ndarray,
    k: int,
    opts: PivotOptions,
) -> tuple[_Side, np.ndarray]:
    """Pivots, convex weights and per-template conditionals for one side; returns the side
    and ``p(h)``."""
    post = anchor_posteriors(vectors, counts, k, opts.min_count, opts.frank_wolfe_iterations)
    joint = p[:, None] * post  # p(f) q(h | f)
    per_block = np.zeros((blocks.max() + 1, post.shape[1]))
    np.add.at(per_block, blocks, joint)
    cond = joint / np.maximum(per_block[blocks], 1e-300)
    n_blocks = blocks.max() + 1
    p_h = joint.sum(axis=0) / n_blocks
    return _Side(cond, post), p_h / max(p_h.sum(), 1e-300)


def align(
    omega: sp.coo_matrix,
    post_in: np.ndarray,
    cond_out: np.ndarray,
    iterations: int,
    tol: float = 1e-7,
) -> np.ndarray:
    """``t(h' | h)`` maximising Eq. 3, ``sum_fg Q_fg log sum_hh' q(h|f) t(h'|h) s(g|h')``, by
    EM (the objective is concave in t); stops when it gains less than ``tol`` relatively.

    EM creeps along the flat directions of this objective, so it starts from the
    least-squares fit of ``Q ~ diag(p_f) q T S^T`` (clipped to the simplex, every entry kept
    positive so that EM can still move it)."""
    k_out = cond_out.shape[1]
    a, b, w = post_in[omega.row], cond_out[omega.col], omega.data
    p_f = np.bincount(omega.row, w, minlength=len(post_in))
    left = post_in * p_f[:, None]  # (d, k_in)
    rhs = left.T @ (omega.tocsr() @ cond_out)  # (k_in, k_out)
    fit = np.linalg.pinv(left.T @ left) @ rhs @ np.linalg.pinv(cond_out.T @ cond_out)
    t = np.clip(fit, 0.0, None) + 0.01 / k_out
    t /= t.sum(axis=1, keepdims=True)
    previous = -np.inf
    for _ in range(iterations):
        z = np.maximum(((a @ t) * b).sum(axis=1), 1e-300)
        objective = float(w @ np.log(z))
        counts = t * (a.T @ (b * (w / z)[:, None]))
        t = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1e-300)
        if objective - previous <= tol * abs(objective):
            break
        previous = objective
    return t


@dataclass
class Decomposition:
    """Step 1 for one nonterminal: ``k`` states, ``p(h | a)``, and for every template a table
    ``(values, k)`` of ``p(value | h, a)``, rows indexed by the node's ``rows_in`` /
    ``rows_out`` entry (one per node of the symbol, in ``bank.by_symbol`` order)."""

    k: int
    p_h: np.ndarray
    inside: dict[str, np.ndarray]
    outside: dict[str, np.ndarray]
    rows_in: dict[str, np.ndarray] = field(default_factory=dict)
    rows_out: dict[str, np.ndarray] = field(default_factory=dict)


class PivotEstimator:
    """Steps 0-3 for one treebank; ``weights[t]``: how many times tree ``t`` counts
    (default once; see the module's docstring)."""

    def __init__(self, sample: TreeSample, options: PivotOptions | None = None) -> None:
        grammar, bank, originals, weights = sample
        self.grammar, self.bank = grammar, bank
        self.options = opts = options or PivotOptions()
        inside, outside = template_keys(grammar, bank, originals)
        self.keys_in = {t: inside[t] for t in opts.inside_features}
        self.keys_out = {t: outside[t] for t in opts.outside_features}
        self.nodes = bank.by_symbol(grammar.n_symbols)
        self.node_w = node_weights(bank, weights)  # None: every node counts once
        self.counts = np.bincount(bank.symbol, self.node_w, minlength=grammar.n_symbols)
        self.pcfg = train_pcfg(grammar, bank, {}, weights)
        self._decompositions: dict[tuple[int, int], Decomposition] = {}  # (symbol, cap)

    @staticmethod
    def _one_hot(
        nodes: np.ndarray,
        keys: dict[str, np.ndarray],
        rows: dict[str, Any],
        node_w: np.ndarray | None = None,
    ):
        """(csr one-hot, block of each column, value count of each column) for ``nodes``,
        node ``i`` counted ``node_w[i]`` times if given; fills ``rows[template]``: each
        node's row in the symbol's table of that template."""
        cols, blocks, width = [], [], 0
        for b, (name, key) in enumerate(keys.items()):
            uniq, inv = np.unique(key[nodes], return_inverse=True)
            rows[name] = inv
            cols.append(inv + width)
            blocks.append(np.full(len(uniq), b))
            width += len(uniq)
        n = len(nodes)
        col = np.stack(cols, axis=1).ravel()
        row = np.repeat(np.arange(n), len(keys))
        mat = sp.csr_matrix((np.ones(len(col)), (row, col)), shape=(n, width))
        weights = None if node_w is None else node_w[row]
        counts = np.bincount(col, weights, minlength=width).astype(float)
        return mat, np.concatenate(blocks), counts

    def decompose(self, a: int, m: int) -> Decomposition:
        """Step 1 for nonterminal ``a`` with at most ``m`` states."""
        opts, nodes = self.options, self.nodes[a]
        w = None if self.node_w is None else self.node_w[nodes]
        rows_in: dict[str, np.ndarray] = {}
        rows_out: dict[str, np.ndarray] = {}
        phi, blk_in, cnt_in = self._one_hot(nodes, self.keys_in, rows_in, w)
        psi, blk_out, cnt_out = self._one_hot(nodes, self.keys_out, rows_out, w)
        if w is None:
            n = len(nodes)
            omega = (phi.T @ psi).tocsr() / n
        else:  # the weighted count and average
            n = float(w.sum())
            omega = (phi.T @ (sp.diags(w) @ psi)).tocsr() / n
        p_in, p_out = cnt_in / n, cnt_out / n
        cap = m if opts.state_count <= 0 else int(min(m, max(1, n // opts.state_count)))
        v_in, v_out = cca_vectors(
            omega, p_in, p_out, cap, opts.min_singular, opts.seed + a, ridge=opts.cca_ridge / n
        )
        k = v_in.shape[1]  # >= 1: omega is non-negative and not zero
        side_in, p_h = _decompose_side(v_in, p_in, cnt_in, blk_in, k, opts)
        side_out, _ = _decompose_side(v_out, p_out, cnt_out, blk_out, k, opts)
        # Eq. 3 over the features frequent enough to be reliable (most of the mass, and a
        # fraction of the entries of omega).
        keep_in = sp.diags((cnt_in >= opts.min_count).astype(float))
        keep_out = sp.diags((cnt_out >= opts.min_count).astype(float))
        frequent = (keep_in @ omega @ keep_out).tocoo()
        frequent.eliminate_zeros()
        if frequent.nnz == 0:
            frequent = omega.tocoo()
        t = align(frequent, side_in.post, side_out.cond, opts.align_iterations)
        # EM may empty a column of t; every s(g | h') must still reach some h.
        t = (1 - opts.floor) * t + opts.floor / t.shape[1]
        cond_out = side_out.cond @ t.T  # s(g | h) = sum_h' t(h' | h) s(g | h')
        k = side_in.post.shape[1]
        return Decomposition(
            k,
            p_h,
            self._split(side_in.cond, blk_in, self.keys_in),
            self._split(cond_out, blk_out, self.keys_out),
            rows_in,
            rows_out,
        )

    @staticmethod
    def _split(cond: np.ndarray, blocks: np.ndarray, keys: dict[str, Any]) -> dict[str, Any]:
        return {name: cond[blocks == b] for b, name in enumerate(keys)}

    def model(
        self,
        m: int,
        meta: dict[str, Any] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> LPCFG:
        """The probabilistic model with ``m`` states per symbol."""
        if m < 1:
            raise ParameterError("{states} must be at least 1")
        return self.model_for(np.full(self.grammar.n_symbols, m), meta, progress)

    def bounds(self) -> np.ndarray:
        """The most distinct states each symbol can have by its frequency (``state_count``;
        its CCA rank may give it fewer)."""
        per = self.options.state_count
        if per <= 0:
            return np.full(len(self.counts), np.iinfo(np.int32).max, dtype=np.int64)
        return np.maximum(1, self.counts // per).astype(np.int64)

    def model_for(
        self,
        caps: np.ndarray,
        meta: dict[str, Any] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> LPCFG:
        """The probabilistic model where symbol ``a`` has at most ``caps[a]`` distinct states
        (every symbol padded to ``max(caps)`` with copies). Step 1 of each (symbol, cap) is
        computed once and kept (``--state-search`` varies one symbol at a time)."""
        caps = np.asarray(caps, dtype=np.int64)
        if len(caps) != self.grammar.n_symbols or (caps < 1).any():
            raise ValueError("one cap of at least 1 per symbol")
        m = int(caps.max())
        t0 = time.perf_counter()
        g, opts = self.grammar, self.options
        decs = []
        for a in range(g.n_symbols):
            key = (a, int(caps[a]))
            if key not in self._decompositions:
                self._decompositions[key] = (
                    self.decompose(a, key[1])
                    if len(self.nodes[a])
                    else Decomposition(1, np.ones(1), {}, {})
                )
            decs.append(self._decompositions[key])
            if progress:
                progress(1)
        t1 = time.perf_counter()
        k = np.array([d.k for d in decs])
        rows_in = self._rows(decs, "rows_in", self.options.inside_features)
        rows_out = self._rows(decs, "rows_out", self.options.outside_features)
        joint = self._rules(decs, m, rows_in, rows_out)
        t2 = time.perf_counter()
        model = self._assemble(decs, k, joint, m, rows_in, rows_out)
        model.meta.update(
            {
                **(meta or {}),
                "method": "pivot",
                "pivot": {**to_dict(opts), "states": m},
                "distinct_states": {g.symbols[a]: int(k[a]) for a in range(g.n_symbols)},
                "pivot_seconds": {
                    "decomposition": round(t1 - t0, 3),
                    "rules": round(t2 - t1, 3),
                    "assemble": round(time.perf_counter() - t2, 3),
                },
            }
        )
        return model

    def _rows(
        self, decs: list[Decomposition], side: str, templates: Sequence[str]
    ) -> dict[str, np.ndarray]:
        """Per template, every node's row in its own symbol's table."""
        rows = {t: np.zeros(self.bank.n_nodes, np.int64) for t in templates}
        for nodes, d in zip(self.nodes, decs, strict=True):
            for t, r in getattr(d, side).items():
                rows[t][nodes] = r
        return rows

    def _stack(self, decs: list[Decomposition], m: int, side: str, name: str) -> np.ndarray:
        """Every symbol's table for template ``name`` stacked (rows offset per symbol),
        padded to ``m`` columns; returns (table, offset per symbol)."""
        tables = [getattr(d, side).get(name, np.zeros((0, d.k))) for d in decs]
        offsets = np.zeros(len(tables) + 1, dtype=np.int64)
        np.cumsum([len(t) for t in tables], out=offsets[1:])
        out = np.zeros((offsets[-1], m))
        for t, lo in zip(tables, offsets[:-1], strict=True):
            out[lo : lo + len(t), : t.shape[1]] = t
        return out, offsets

    def _rules(
        self,
        decs: list[Decomposition],
        m: int,
        rows_in: dict[str, np.ndarray],
        rows_out: dict[str, np.ndarray],
    ) -> np.ndarray:
        """Step 2: ``T[r, h1, h2 * m + h3]`` joint over states given rule ``r``."""
        g, bank, opts = self.grammar, self.bank, self.options
        nodes = np.flatnonzero(bank.rule >= 0)
        nodes = nodes[np.argsort(bank.rule[nodes], kind="stable")]
        rules = bank.rule[nodes]
        left, right, sym = bank.left[nodes], bank.right[nodes], bank.symbol
        w = None if self.node_w is None else self.node_w[nodes][:, None]
        views_out, views_in_l, views_in_r = [], [], []
        for name in opts.rule_outside:
            table, off = self._stack(decs, m, "outside", name)
            views_out.append(table[off[sym[nodes]] + rows_out[name][nodes]])
        for name in opts.rule_inside:
            table, off = self._stack(decs, m, "inside", name)
            views_in_l.append(table[off[sym[left]] + rows_in[name][left]])
            views_in_r.append(table[off[sym[right]] + rows_in[name][right]])
        k = np.array([d.k for d in decs])
        valid = np.arange(m)[None, :] < k[:, None]  # (N, m)
        a, b, c = g.binary[:, 0], g.binary[:, 1], g.binary[:, 2]
        t = valid[a][:, :, None, None] & valid[b][:, None, :, None] & valid[c][:, None, None, :]
        valid_t = t.astype(float).reshape(g.n_binary, m, m * m)
        t = valid_t / valid_t.sum(axis=(1, 2), keepdims=True)
        for _ in range(opts.rule_iterations):
            counts = np.zeros_like(t)
            for s_view in views_out:
                for l_view in views_in_l:
                    for r_view in views_in_r:
                        kr = (l_view[:, :, None] * r_view[:, None, :]).reshape(len(nodes), m * m)
                        z = (apply_rules(t, rules, kr) * s_view).sum(axis=1)
                        post = s_view / np.maximum(z, 1e-300)[:, None]
                        accumulate_outer(counts, rules, post if w is None else post * w, kr)
            counts *= t
            t = counts / np.maximum(counts.sum(axis=(1, 2), keepdims=True), 1e-300)
        # Clip and renormalise: a uniform share over the valid states keeps every rule usable
        # by every state (a tree must never get probability zero, and EM cannot revive it).
        uniform = valid_t / valid_t.sum(axis=(1, 2), keepdims=True)
        return (1 - opts.floor) * t + opts.floor * uniform

    def _assemble(
        self,
        decs: list[Decomposition],
        k: np.ndarray,
        joint: np.ndarray,
        m: int,
        rows_in: dict[str, np.ndarray],
        rows_out: dict[str, np.ndarray],
    ) -> LPCFG:
        """Step 3 and section 6.1, then every symbol's states expanded to ``m``."""
        g, opts, pcfg = self.grammar, self.options, self.pcfg
        n_sym = g.n_symbols
        # Step 3: t(a -> b c, h2, h3 | a, h1).
        rule_p = pcfg.coarse.binary
        weighted = joint * rule_p[:, None, None]
        norm = np.zeros((n_sym, m))
        np.add.at(norm, g.binary[:, 0], weighted.sum(axis=2))
        binary = weighted / np.maximum(norm[g.binary[:, 0]], 1e-300)[:, :, None]
        # q(a -> x | a, h) from the lexrule template, smoothed with the treebank lexicon.
        lexical = np.zeros((g.n_lexical, m))
        for a in np.flatnonzero(g.is_preterminal):
            d = decs[a]
            if "lexrule" not in d.inside or not len(self.nodes[a]):
                continue
            nodes = self.nodes[a]
            value_of_row = np.full(len(d.inside["lexrule"]), -1)
            value_of_row[rows_in["lexrule"][nodes]] = self.bank.lex[nodes]
            lexical[value_of_row, : d.k] = d.inside["lexrule"]
        prior = pcfg.lexical.copy()
        mass = np.bincount(g.lexical[:, 0], prior, minlength=n_sym)
        prior /= np.where(mass > 0, mass, 1.0)[g.lexical[:, 0]]
        lam = opts.lexicon_smoothing
        valid = np.arange(m)[None, :] < k[g.lexical[:, 0]][:, None]
        lexical = np.where(valid, (1 - lam) * lexical + lam * prior[:, None], 0.0)
        # pi(a, h) from s(root | h, a) p(h | a) p(a).
        counts = np.bincount(self.bank.symbol, self.node_w, minlength=n_sym).astype(float)
        root = np.zeros((n_sym, m))
        root_code = 2 * g.n_binary
        for a in range(n_sym):
            nodes = self.nodes[a]
            at_root = nodes[self.keys_out["parent"][nodes] == root_code]
            if not len(at_root):
                continue
            row = rows_out["parent"][at_root[0]]
            d = decs[a]
            root[a, : d.k] = d.outside["parent"][row] * d.p_h * counts[a]
        root /= max(root.sum(), 1e-300)
        binary, lexical, root = _expand(g, k, m, binary, lexical, root)
        return LPCFG(
            g,
            np.full(n_sym, m),
            binary.ravel(),
            lexical.ravel(),
            root.ravel(),
            pcfg.coarse,
            "probabilistic",
            {},
        )


class PivotLearner(Decomposable):
    """The pivot learner (Cohen & Collins 2014): ``selection.StateSelection`` records its
    dev F1 and runs ``state_search``."""

    method = "pivot"
    Options = PivotOptions
    decode = "max-marginal"

    def estimator(self, data: TrainingData, largest: int, progress: Progress) -> PivotEstimator:
        """The features and CCA of the training trees (each symbol's decomposition is made
        per model, with its own cap)."""
        if data.originals is None:
            raise LpcfgError("the pivot learner needs the original training trees")
        return PivotEstimator(TreeSample(data.grammar, data.bank, data.originals), self.options)

    def model(self, est: PivotEstimator, m: int, data: TrainingData, progress: Progress) -> LPCFG:
        t0 = time.perf_counter()
        with progress.bar(total=est.grammar.n_symbols, desc="pivot", unit="nt") as bar:
            model = est.model(m, data.meta(), progress=bar.update)
        sec = model.meta["pivot_seconds"]
        distinct = list(model.meta["distinct_states"].values())
        progress.report(
            f"pivot: {sum(distinct)} distinct states, decomposition "
            f"{sec['decomposition']:.1f} s, rules {sec['rules']:.1f} s, total "
            f"{time.perf_counter() - t0:.1f} s"
        )
        return model

    def model_for(self, est: PivotEstimator, states: np.ndarray, data: TrainingData) -> LPCFG:
        return est.model_for(states, data.meta())

    def search_bounds(self, est: PivotEstimator, m: int) -> np.ndarray:
        """Each symbol's frequency bound, and at most ``m``: every symbol is padded to the
        largest count, so one count above ``m`` would make the rule step and the parser pay
        for it everywhere."""
        return np.minimum(est.bounds(), m)


def _expand(g: Grammar, k: np.ndarray, m: int, binary, lexical, root):
    """Give every symbol ``m`` states, state ``j >= k_a`` a copy of state ``j mod k_a``.

    A copied parent state has the original's distribution; a child state's probability is
    split evenly among its copies, so the model defines the same distribution over trees.
    """
    src = np.arange(m)[None, :] % np.maximum(k, 1)[:, None]  # (N, m) source state
    copies = np.zeros((len(k), m))
    for a in range(len(k)):
        copies[a, : k[a]] = np.bincount(src[a], minlength=m)[: k[a]]
    share = 1.0 / np.maximum(copies[np.arange(len(k))[:, None], src], 1.0)  # (N, m)
    r = g.n_binary
    t = binary.reshape(r, m, m, m)
    sa, sb, sc = src[g.binary[:, 0]], src[g.binary[:, 1]], src[g.binary[:, 2]]
    t = t[
        np.arange(r)[:, None, None, None],
        sa[:, :, None, None],
        sb[:, None, :, None],
        sc[:, None, None, :],
    ]
    t = t * share[g.binary[:, 1]][:, None, :, None] * share[g.binary[:, 2]][:, None, None, :]
    lexical = lexical[np.arange(g.n_lexical)[:, None], src[g.lexical[:, 0]]]
    root = root[np.arange(len(k))[:, None], src] * share
    return t, lexical, root
