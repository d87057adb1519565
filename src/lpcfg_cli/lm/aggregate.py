"""The aggregate bigram model of Saul & Pereira (1997), learned by EM, by the pivot method and
by pivot+EM (Cohen & Collins 2014, section 8).

``p(w2 | w1) = sum_h r(h | w1) s(w2 | h)`` with ``m`` latent states: an L-PCFG whose trees
are chains. Parameters: ``r`` ``(V, m)`` (rows sum to one) and ``s`` stored transposed,
``s_t[w2, h] = s(w2 | h)`` ``(V, m)`` (columns sum to one over every id but ``<s>``).

- EM: every iteration is three sparse-dense products over the ``nnz`` distinct training
  bigrams (``C``: counts): ``P = (r s)`` on the non-zeros of ``C`` (computed in blocks of
  non-zeros), ``W = C / P``, then ``r <- r * (W s_t)`` and ``s_t <- s_t * (W^T r)``,
  normalised (with ``prior``, a Dirichlet pseudo-count added to ``r``'s counts: MAP EM, not
  the paper's; ``em_step``). No Python loop over bigrams.
- Pivot: ``Q = C / N`` is ``sum_h p(h) p(w1 | h) s(w2 | h)``; the section 5.2 algorithm
  (``numerics.anchors``: CCA vectors of the next words, FastAnchorWords, Frank-Wolfe) on
  ``Q^T`` gives ``q(h | w2)`` and ``s(w2 | h) ∝ p(w2) q(h | w2)`` (anchor words of ``s``:
  words that follow words of one state only); then ``r`` by the EM of ``r`` alone with ``s``
  fixed, which is concave (its objective ``sum C log (r s)`` is concave in ``r``), so it
  finds the best ``r`` for that ``s``.
- Pivot+EM: EM started from the pivot estimate.

The CCA of the pivot step is ridge-regularised (``cca_ridge`` occurrences added to every
word's count where the CCA scales by it; ``numerics.anchors.cca_vectors``), a deviation
from the paper, which does not say how it regularised its CCA. Plain CCA of Brown's bigrams
has its top canonical correlations all near one, rare collocations, so the randomized
SVD's seed picked the directions and the frequent next words the anchors come from had no
weight on them. The default, 3,000, was chosen by pivot+EM's perplexity on dev's first half
over several ``m`` (docs/learners/language-models.md, Where lpcfg departs from the
paper).

The number of EM iterations is chosen on the first half of the dev text (its perplexity
after every iteration; EM stops after ``patience`` iterations without improvement). Zeros
are avoided by construction: the pivot estimate is smoothed, ``s`` with the unigram
distribution and ``r`` with the uniform one, by a weight chosen on dev (``smoothing``):
Frank-Wolfe gives exact zeros, and a bigram whose next word has ``s(w2 | h) = 0`` for
every state its context uses would get probability zero on dev text and stay zero under
EM's multiplicative updates. EM from a random start has no zeros.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper
from lpcfg_cli.lm.corpus import Events, Vocabulary
from lpcfg_cli.lm.perplexity import perplexity
from lpcfg_cli.numerics.anchors import anchor_posteriors, cca_vectors
from lpcfg_cli.numerics.patience import Patience

METHODS = ("em", "pivot", "pivot+em")
BLOCK = 1 << 16  # bigrams per block of the P = (r s) products: bounds the working memory
TINY = 1e-300


@dataclass(frozen=True)
class AggregateOptions(Checked):
    """Hyper-parameters every learner of the aggregate bigram model has
    (``AggregateEMOptions``, ``AggregatePivotOptions`` and ``AggregatePivotEMOptions`` add
    their own, so that the command line refuses an option the chosen method cannot use)."""

    states: int = hyper(16, "Latent states m of the aggregate bigram model.", min=1, max=4096)
    patience: int = hyper(
        2,
        "EM, and pivot's EM of r: stop after this many iterations without a better dev perplexity.",
        min=1,
    )
    seed: int = hyper(0, SEED_HELP, min=0)
    rare: int = hyper(
        1, "Training words seen at most this often are <unk> (1: words seen once).", min=0
    )
    prior: float = hyper(
        0.0,
        "EM: pseudo-count of a Dirichlet prior on each context's r(h|w1), spread evenly over "
        "the states (MAP estimation; 0: maximum likelihood, as in the paper).",
        min=0.0,
    )


@dataclass(frozen=True)
class AggregateEMOptions(AggregateOptions):
    """EM from a random start."""

    iterations: int = hyper(
        100, "EM: most iterations (the first half of --dev picks the best).", min=0
    )


@dataclass(frozen=True)
class AggregatePivotOptions(AggregateOptions):
    """The pivot estimate (section 5.2 on Q^T, then the EM of r)."""

    anchor_pool: float = hyper(
        6.0,
        "Pivot: anchors are picked among the anchor-pool x m most frequent next words "
        "(rarer words make noisy vertices).",
        min=1.0,
    )
    smoothing: tuple[float, ...] = hyper(
        (0.3, 0.1, 0.5),
        "Pivot: weights of the unigram distribution mixed into the pivot estimate of "
        "s(w2|h) (and of the uniform one into r), comma-separated; the best on the first "
        "half of --dev is kept (without --dev: the first).",
        min=0.0,
        max=1.0,
    )
    cca_ridge: float = hyper(
        3000.0,
        "Pivot: occurrences added to every word's count in the scaling of the CCA (ridge-"
        "regularised CCA), so that rare collocations do not take its top directions "
        "(0: plain CCA).",
        min=0.0,
    )
    frank_wolfe_iterations: int = 200
    r_iterations: int = 200  # the concave EM of r, at most
    r_tol: float = 1e-6  # ... stops when the log-likelihood gains less than this, relatively
    min_singular: float = 1e-4


@dataclass(frozen=True)
class AggregatePivotEMOptions(AggregatePivotOptions):
    """EM started from the pivot estimate."""

    iterations: int = hyper(
        100, "EM: most iterations (the first half of --dev picks the best).", min=0
    )


OPTIONS: dict[str, type[AggregateOptions]] = {
    "em": AggregateEMOptions,
    "pivot": AggregatePivotOptions,
    "pivot+em": AggregatePivotEMOptions,
}


@dataclass
class AggregateLM:
    """``p(w2 | w1) = sum_h r[w1, h] s_t[w2, h]`` (see the module docstring)."""

    vocab: Vocabulary
    r: np.ndarray  # (V, m): r(h | w1)
    s_t: np.ndarray  # (V, m): s(w2 | h)
    method: str = "em"  # how it was learned: em, pivot or pivot+em
    meta: dict[str, Any] = field(default_factory=dict)
    order: ClassVar[int] = 2

    def __post_init__(self) -> None:
        v = len(self.vocab)
        if self.r.shape != self.s_t.shape or self.r.shape[0] != v:
            raise LpcfgError(
                f"aggregate model arrays {self.r.shape} and {self.s_t.shape} do not fit a "
                f"vocabulary of {v} ids"
            )

    @property
    def states(self) -> int:
        return self.r.shape[1]

    def log_probs(self, context: np.ndarray, next_ids: np.ndarray) -> np.ndarray:
        """Natural log ``p(next | context[:, 0])`` (``-inf`` where it is zero)."""
        p = pair_probs(self.r, self.s_t, context[:, 0], next_ids)
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(p, 0.0))

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Arrays and metadata of the model file (``lm.lm_file``)."""
        return {"r": self.r, "s_t": self.s_t}, {**self.meta, "method": self.method}

    @classmethod
    def from_arrays(
        cls, vocab: Vocabulary, arrays: dict[str, np.ndarray], meta: dict[str, Any]
    ) -> AggregateLM:
        """The model of a file's arrays; ``LpcfgError`` if they are not probability tables
        of the vocabulary's size."""
        for key in ("r", "s_t"):
            if key not in arrays:
                raise LpcfgError(f"aggregate model file without its {key!r} array")
            a = arrays[key]
            if a.ndim != 2 or not np.issubdtype(a.dtype, np.floating):
                raise LpcfgError(f"aggregate model array {key!r} is not a float matrix")
            if not np.all(np.isfinite(a)) or (a < 0).any():
                raise LpcfgError(f"aggregate model array {key!r} is not a probability table")
        method = meta.get("method")
        if method not in METHODS:
            raise LpcfgError(f"aggregate model of unknown method {method!r}")
        rest = {k: v for k, v in meta.items() if k != "method"}
        return cls(
            vocab, np.asarray(arrays["r"], float), np.asarray(arrays["s_t"], float), method, rest
        )


def pair_probs(r: np.ndarray, s_t: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``sum_h r[rows[i], h] s_t[cols[i], h]`` for every ``i``, ``BLOCK`` pairs at a time."""
    out = np.empty(len(rows))
    for lo in range(0, len(rows), BLOCK):
        hi = lo + BLOCK
        out[lo:hi] = np.einsum("nh,nh->n", r[rows[lo:hi]], s_t[cols[lo:hi]])
    return out


@dataclass
class Bigrams:
    """Training counts as COO arrays, and ``C`` and ``C^T`` as CSR for the products."""

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    csr: sp.csr_matrix
    csr_t: sp.csr_matrix

    @classmethod
    def of(cls, counts: sp.spmatrix) -> Bigrams:
        coo = sp.coo_matrix(counts)
        coo.sum_duplicates()
        coo.eliminate_zeros()
        return cls(
            coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data, coo.tocsr(), coo.T.tocsr()
        )

    def weights(self, r: np.ndarray, s_t: np.ndarray) -> tuple[sp.csr_matrix, float]:
        """``W = C / (r s)`` on the non-zeros of ``C`` (same sparsity as ``C``) and the
        log-likelihood ``sum C log (r s)``."""
        p = np.maximum(pair_probs(r, s_t, self.rows, self.cols), TINY)
        w = sp.csr_matrix((self.counts / p, (self.rows, self.cols)), shape=self.csr.shape)
        return w, float(self.counts @ np.log(p))


def _normalise_rows(a: np.ndarray, old: np.ndarray) -> np.ndarray:
    """Rows of ``a`` normalised; a row with no mass keeps ``old``'s (a context never seen)."""
    total = a.sum(axis=1, keepdims=True)
    return np.where(total > 0, a / np.maximum(total, TINY), old)


def em_step(
    bigrams: Bigrams,
    r: np.ndarray,
    s_t: np.ndarray,
    update_s: bool = True,
    prior: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, float]:
    """One EM iteration: new ``(r, s_t)`` and the log-likelihood of the old ones. With
    ``update_s`` False only ``r`` moves (the concave step of the pivot method).

    ``prior`` > 0 adds ``prior / m`` to every expected count of ``(w1, h)`` before ``r`` is
    normalised: the M-step of MAP estimation under a Dirichlet prior on each ``r(. | w1)``
    (parameter ``1 + prior / m``), so that ``loglik + (prior / m) sum log r`` never
    decreases. On Brown it lowers dev and test perplexity, test below the bigram
    Kneser-Ney baseline's (a context seen a few times otherwise gets the states of its few
    next words only), and more than a prior on ``s`` does (docs/learners/language-models.md,
    Where lpcfg departs from the paper; docs/experiments/brown.md, MAP EM).
    """
    w, loglik = bigrams.weights(r, s_t)
    m = r.shape[1]
    r_new = _normalise_rows(r * (w @ s_t) + prior / m, r)
    if not update_s:
        return r_new, s_t, loglik
    s_counts = s_t * (w.T @ r)  # (V, m): expected count of (h, w2)
    total = s_counts.sum(axis=0, keepdims=True)
    s_new = np.where(total > 0, s_counts / np.maximum(total, TINY), s_t)
    return r_new, s_new, loglik


Report = Callable[[dict[str, Any]], None]


def run_em(
    bigrams: Bigrams,
    r: np.ndarray,
    s_t: np.ndarray,
    vocab: Vocabulary,
    dev: Events | None,
    options: AggregateEMOptions | AggregatePivotEMOptions,
    report: Report | None = None,
) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """EM from ``(r, s_t)`` for at most ``options.iterations`` iterations; with ``dev`` (the
    first half of the dev text) the iterate with the best dev perplexity (iteration 0, the
    start, included), stopping after ``options.patience`` iterations without improvement.
    Returns the chosen ``(r, s_t)`` and one record per iteration (with ``dev``, the first
    is iteration 0: the start's dev perplexity)."""
    history: list[dict[str, Any]] = []
    best = Patience[tuple[np.ndarray, np.ndarray]](options.patience)
    if dev is not None:
        start = _dev_perplexity(r, s_t, vocab, dev)
        history.append({"iteration": 0, "dev_perplexity": start})
        best.offer(-start, (r, s_t))
    for it in range(1, options.iterations + 1):
        t0 = time.perf_counter()
        r, s_t, loglik = em_step(bigrams, r, s_t, prior=options.prior)
        record: dict[str, Any] = {"iteration": it, "train_loglik_before": loglik}
        if dev is not None:
            ppl = _dev_perplexity(r, s_t, vocab, dev)
            record["dev_perplexity"] = ppl
            best.offer(-ppl, (r, s_t))
        record["seconds"] = time.perf_counter() - t0
        history.append(record)
        if report:
            report(record)
        if dev is not None and best.stop:
            break
    if dev is None or best.best is None:
        return r, s_t, history
    r, s_t = best.best
    for record in history:
        record["selected"] = record["iteration"] == best.best_index - 1
    return r, s_t, history


def _dev_perplexity(r: np.ndarray, s_t: np.ndarray, vocab: Vocabulary, dev: Events) -> float:
    """The perplexity of ``(r, s_t)`` on ``dev``, counted as every model's is."""
    return perplexity(AggregateLM(vocab, r, s_t), dev).perplexity


def random_start(v: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(r, s_t)`` drawn near uniform (``U(0.5, 1.5)`` then normalised), ``<s>`` never
    predicted."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.5, 1.5, size=(v, m))
    r /= r.sum(axis=1, keepdims=True)
    s_t = rng.uniform(0.5, 1.5, size=(v, m))
    s_t[Vocabulary.BOS_ID] = 0.0
    s_t /= s_t.sum(axis=0, keepdims=True)
    return r, s_t


def pivot_s(counts: sp.spmatrix, options: AggregatePivotOptions) -> tuple[np.ndarray, np.ndarray]:
    """``s_t[w2, h] = s(w2 | h)`` by the section 5.2 algorithm on ``Q^T`` (see the module
    docstring), and the unigram distribution of next words ``(V,)``."""
    q = sp.csr_matrix(counts, dtype=float)
    n = q.sum()
    if n <= 0:
        raise LpcfgError("no bigrams to learn from")
    q = q / n
    p_prev = np.asarray(q.sum(axis=1)).ravel()
    p_next = np.asarray(q.sum(axis=0)).ravel()
    rows, cols = np.flatnonzero(p_prev > 0), np.flatnonzero(p_next > 0)
    sub = q[rows][:, cols]
    _, v_next = cca_vectors(
        sub,
        p_prev[rows],
        p_next[cols],
        options.states,
        options.min_singular,
        options.seed,
        ridge=options.cca_ridge / n,
    )
    k = v_next.shape[1]
    next_counts = p_next[cols] * n
    pool = min(len(cols), max(k, int(options.anchor_pool * options.states)))
    min_count = np.sort(next_counts)[::-1][pool - 1]  # the pool's rarest count
    post = anchor_posteriors(
        v_next, next_counts, k, min_count, options.frank_wolfe_iterations
    )  # q(h | w2), (len(cols), k)
    joint = p_next[cols, None] * post
    s_sub = joint / np.maximum(joint.sum(axis=0, keepdims=True), TINY)
    m = options.states
    s_t = np.zeros((q.shape[1], m))
    s_t[cols, :k] = s_sub
    if k < m:  # fewer directions than states: the extra states copy existing ones
        s_t[:, k:] = s_t[:, np.arange(k, m) % k]
    unigram = np.zeros(q.shape[1])
    unigram[cols] = p_next[cols]
    return s_t, unigram


def fit_r(
    bigrams: Bigrams,
    s_t: np.ndarray,
    vocab: Vocabulary,
    dev: Events | None,
    options: AggregatePivotOptions,
) -> tuple[np.ndarray, int]:
    """``r`` for a fixed ``s`` by EM on ``r`` alone, from uniform; returns ``r`` and its
    iterations. The objective ``sum C log (r s)`` (plus ``(prior / m) sum log r`` with a
    prior) is concave in ``r``, so without ``dev`` EM runs to its maximum (until it gains
    less than ``r_tol`` relatively). With ``dev`` the
    iterate with the best dev perplexity is kept (``patience`` as for EM): the maximum fits
    a context seen twice to its two next words, and on Brown EM started from that maximum
    got worse on dev from its first iteration, where EM from a random start improved for
    several (docs/learners/language-models.md, Where lpcfg departs from the paper)."""
    v, m = s_t.shape
    r = np.full((v, m), 1.0 / m)
    best = Patience[np.ndarray](options.patience)
    if dev is not None:
        best.offer(-_dev_perplexity(r, s_t, vocab, dev), r)
    previous, done = -np.inf, 0
    while done < options.r_iterations:
        old = r
        r, _, loglik = em_step(bigrams, r, s_t, update_s=False, prior=options.prior)
        if options.prior:  # the objective MAP EM increases, at the iterate it scored
            loglik += options.prior / m * float(np.log(np.maximum(old, TINY)).sum())
        done += 1
        if dev is not None:
            best.offer(-_dev_perplexity(r, s_t, vocab, dev), r)
            if best.stop:
                break
        elif loglik - previous <= options.r_tol * abs(loglik):
            break
        previous = loglik
    if dev is not None and best.best is not None:
        return best.best, best.best_index - 1
    return r, done


def _chosen_iterations(history: list[dict[str, Any]]) -> int:
    """The EM iteration ``run_em`` kept (0: its start; all of them without dev)."""
    picked = [h["iteration"] for h in history if h.get("selected")]
    return picked[0] if picked else len(history)


def fit_aggregate(
    method: str,
    vocab: Vocabulary,
    counts: sp.spmatrix,
    dev: Events | None,
    options: AggregateOptions,
    report: Report | None = None,
) -> AggregateLM:
    """Learn an aggregate bigram model by ``method`` (``em``, ``pivot``, ``pivot+em``) from
    bigram ``counts`` (``Vocabulary.bigram_counts``); ``dev``: the events of the first half
    of the dev text, which picks the number of EM iterations."""
    if method not in METHODS:
        raise LpcfgError(f"unknown aggregate method {method!r} (one of {', '.join(METHODS)})")
    if not isinstance(options, OPTIONS[method]):
        raise LpcfgError(f"{method} takes {OPTIONS[method].__name__}, not {type(options).__name__}")
    bigrams = Bigrams.of(counts)
    v, m = len(vocab), options.states
    meta: dict[str, Any] = {"states": m, "prior": options.prior}
    t0 = time.perf_counter()
    if method == "em":
        r, s_t = random_start(v, m, options.seed)
        r, s_t, meta["history"] = run_em(bigrams, r, s_t, vocab, dev, options, report)
    else:
        r, s_t = _fit_pivot(method, bigrams, counts, vocab, dev, options, meta, report)
    if method == "em":
        meta["em_iterations"] = _chosen_iterations(meta["history"])
    meta["train_loglik"] = bigrams.weights(r, s_t)[1]
    meta["seconds"] = time.perf_counter() - t0
    return AggregateLM(vocab, r, s_t, method, meta)


def _fit_pivot(
    method: str,
    bigrams: Bigrams,
    counts: sp.spmatrix,
    vocab: Vocabulary,
    dev: Events | None,
    options: AggregatePivotOptions,
    meta: dict[str, Any],
    report: Report | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The pivot estimate smoothed by each weight of ``options.smoothing`` (only the first
    without ``dev``), its ``r``, and for pivot+EM the EM from there; keeps the run with the
    best dev perplexity (the first on ties) and records every run in ``meta``."""
    t0 = time.perf_counter()
    s_pivot, unigram = pivot_s(counts, options)
    meta["pivot_seconds"] = time.perf_counter() - t0
    meta["cca_ridge"], meta["anchor_pool"] = options.cca_ridge, options.anchor_pool
    grid = options.smoothing if dev is not None else options.smoothing[:1]
    m = options.states
    meta["smoothing_runs"] = runs = []
    best: tuple[float, np.ndarray, np.ndarray, dict[str, Any]] | None = None
    for weight in grid:
        t1 = time.perf_counter()
        s_t = (1 - weight) * s_pivot + weight * unigram[:, None]
        r, r_iterations = fit_r(bigrams, s_t, vocab, dev, options)
        r = (1 - weight) * r + weight / m
        run: dict[str, Any] = {"smoothing": weight, "r_iterations": r_iterations}
        run["r_seconds"] = time.perf_counter() - t1
        chosen = dict(run)
        if method == "pivot+em":
            assert isinstance(options, AggregatePivotEMOptions)
            r, s_t, chosen["history"] = run_em(bigrams, r, s_t, vocab, dev, options, report)
            run["em_iterations"] = chosen["em_iterations"] = _chosen_iterations(chosen["history"])
        run["seconds"] = time.perf_counter() - t1
        score = _dev_perplexity(r, s_t, vocab, dev) if dev is not None else 0.0
        if dev is not None:
            run["dev_perplexity"] = chosen["dev_perplexity"] = score
        runs.append(run)
        if report:
            report(run)
        if best is None or score < best[0]:
            best = (score, r, s_t, chosen)
    assert best is not None
    _, r, s_t, chosen = best
    meta.update(chosen)
    return r, s_t
