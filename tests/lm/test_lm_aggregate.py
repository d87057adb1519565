"""The aggregate bigram model (Saul & Pereira 1997) and its learners: EM, pivot, pivot+EM."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from scipy.optimize import linear_sum_assignment

from lpcfg_cli.cli.group import main
from lpcfg_cli.lm.aggregate import (
    OPTIONS,
    AggregateLM,
    AggregatePivotOptions,
    Bigrams,
    em_step,
    fit_aggregate,
    random_start,
)
from lpcfg_cli.lm.corpus import SPECIALS, Events, Vocabulary
from lpcfg_cli.lm.lm_file import load_model
from lpcfg_cli.lm.perplexity import perplexity

N_WORDS, M = 30, 3
FIRST = len(SPECIALS)  # ids below are <s>, </s>, <unk>


def planted(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p(w1), r, s_t)`` over ids ``FIRST..`` with anchor next words: word ``FIRST + h``
    follows state ``h`` only (the pivot assumption for ``s``)."""
    rng = np.random.default_rng(seed)
    v = FIRST + N_WORDS
    p1 = np.zeros(v)
    p1[FIRST:] = rng.dirichlet(np.ones(N_WORDS))
    r = np.zeros((v, M))
    r[FIRST:] = rng.dirichlet(np.ones(M) * 0.5, size=N_WORDS)
    r[:FIRST] = 1.0 / M
    s_t = np.zeros((v, M))
    s_t[FIRST + M :] = rng.dirichlet(np.ones(N_WORDS - M), size=M).T
    s_t[FIRST + np.arange(M), np.arange(M)] = 0.15
    s_t /= s_t.sum(axis=0, keepdims=True)
    return p1, r, s_t


def sampled_counts(n: int, seed: int) -> sp.csr_matrix:
    p1, r, s_t = planted()
    rng = np.random.default_rng(seed)
    v = len(p1)
    joint = (p1[:, None] * r) @ s_t.T  # p(w1, w2)
    cells = rng.multinomial(n, joint.ravel())
    return sp.csr_matrix(cells.reshape(v, v).astype(float))


def vocabulary() -> Vocabulary:
    return Vocabulary([*SPECIALS, *(f"w{i}" for i in range(N_WORDS))])


def matched_errors(got: AggregateLM) -> tuple[float, float]:
    """After the best matching of learned states to planted ones: the largest L1 error of
    a state's ``s(. | h)``, and the ``p(w1)``-weighted L1 error of ``r(. | w1)``."""
    p1, r, s_t = planted()
    cost = np.abs(got.s_t[:, :, None] - s_t[:, None, :]).sum(axis=0)  # (learned, planted)
    learned, true = linear_sum_assignment(cost)
    perm = learned[np.argsort(true)]
    s_err = float(np.abs(got.s_t[:, perm] - s_t).sum(axis=0).max())
    r_err = float(p1 @ np.abs(got.r[:, perm] - r).sum(axis=1))
    return s_err, r_err


def test_pivot_recovers_a_planted_model_up_to_a_permutation_better_with_more_data():
    """Measured: s errors 0.124, 0.039, 0.017 and r errors 0.079, 0.026, 0.013 for 10^4,
    10^5, 10^6 bigrams (about 1 / sqrt(n))."""
    opts = AggregatePivotOptions(
        states=M, anchor_pool=100.0, smoothing=(0.0,), r_iterations=2000, r_tol=1e-12
    )
    errors = []
    for n in (10_000, 100_000, 1_000_000):
        model = fit_aggregate("pivot", vocabulary(), sampled_counts(n, seed=1), None, opts)
        errors.append(matched_errors(model))
    s_err, r_err = np.array(errors).T
    assert (np.diff(s_err) < 0).all() and (np.diff(r_err) < 0).all()
    assert s_err[-1] < 0.03 and r_err[-1] < 0.03


def test_the_cca_ridge_keeps_rare_collocations_from_taking_the_pivot_directions():
    """Rare word pairs that only occur together (count 3 each) have canonical correlation
    one, above every direction of the planted model: plain CCA keeps them and the anchors,
    picked among the frequent next words, come out wrong; the ridge recovers the model."""
    pairs, n_pair = 20, 3
    base = sampled_counts(1_000_000, seed=1)
    v = base.shape[0]
    counts = sp.lil_matrix((v + 2 * pairs, v + 2 * pairs))
    counts[:v, :v] = base
    for i in range(pairs):
        counts[v + 2 * i, v + 2 * i + 1] = n_pair
    vocab = Vocabulary([*vocabulary().words, *(f"c{i}" for i in range(2 * pairs))])
    errors = {}
    for ridge in (0.0, 100.0):
        opts = AggregatePivotOptions(
            states=M,
            anchor_pool=10.0,  # the 30 most frequent next words: the planted ones
            smoothing=(0.0,),
            r_iterations=2000,
            r_tol=1e-12,
            cca_ridge=ridge,
        )
        model = fit_aggregate("pivot", vocab, counts.tocsr(), None, opts)
        assert model.meta["cca_ridge"] == ridge  # the model file says how it was learned
        cut = AggregateLM(vocabulary(), model.r[:v], model.s_t[:v])
        errors[ridge] = matched_errors(cut)
    assert errors[100.0][0] < 0.03 and errors[100.0][1] < 0.03
    assert errors[0.0][0] > 0.3


def test_em_likelihood_never_decreases():
    counts = sampled_counts(5_000, seed=2)
    bigrams = Bigrams.of(counts)
    r, s_t = random_start(counts.shape[0], 4, seed=0)
    s_t[: len(SPECIALS)] = 0.0  # no mass on ids that never follow anything
    s_t /= s_t.sum(axis=0, keepdims=True)
    logliks = []
    for _ in range(30):
        r, s_t, loglik = em_step(bigrams, r, s_t)
        logliks.append(loglik)
    steps = np.diff(logliks)
    assert (steps >= -1e-9 * abs(logliks[0])).all()
    assert logliks[-1] > logliks[0]


def test_map_em_objective_never_decreases_and_the_prior_smooths_r():
    """With ``prior`` a, EM maximises loglik + (a / m) sum log r: that never decreases, and
    r stays further from zero than maximum likelihood's on contexts seen once."""
    counts = sampled_counts(100, seed=4)  # few bigrams: contexts seen a few times
    bigrams = Bigrams.of(counts)
    m, prior = 4, 5.0
    start = random_start(counts.shape[0], m, seed=0)
    objective, finals = [], {}
    for a in (0.0, prior):
        r, s_t = start
        for _ in range(40):
            r_new, s_new, loglik = em_step(bigrams, r, s_t, prior=a)
            if a:
                objective.append(loglik + a / m * np.log(r).sum())
            r, s_t = r_new, s_new
        finals[a] = r
    steps = np.diff(objective)
    assert (steps >= -1e-9 * abs(objective[0])).all() and objective[-1] > objective[0]
    seen = np.asarray(counts.sum(axis=1)).ravel()
    rows = seen > 0
    # Each r(h | w1) is at least its pseudo-count's share: (a / m) / (count(w1) + a).
    floor = prior / m / (seen[rows] + prior)
    assert (finals[prior][rows] >= floor[:, None] * (1 - 1e-9)).all()
    assert finals[0.0][rows].min() < 0.1 * floor.min()  # maximum likelihood goes to zero
    model = fit_aggregate("em", vocabulary(), counts, None, OPTIONS["em"](states=m, prior=prior))
    assert model.meta["prior"] == prior  # the model file says how it was learned


@pytest.mark.parametrize("method", ["em", "pivot", "pivot+em"])
def test_every_learner_gives_normalised_distributions(method):
    counts = sampled_counts(20_000, seed=3)
    extra = {"anchor_pool": 100.0} if method != "em" else {}
    if method != "pivot":
        extra["iterations"] = 5
    opts = OPTIONS[method](states=M, **extra)
    model = fit_aggregate(method, vocabulary(), counts, None, opts)
    probs = model.r @ model.s_t.T  # (context, next)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-9)
    assert (probs[:, Vocabulary.BOS_ID] == 0).all()  # <s> is never predicted
    assert (probs[:, FIRST:] > 0).all()  # no zero probability: dev text stays scorable


def test_perplexity_equals_a_brute_force_computation():
    vocab = Vocabulary([*SPECIALS, "a", "b"])
    rng = np.random.default_rng(0)
    r = rng.dirichlet(np.ones(2), size=len(vocab))
    s_t = rng.dirichlet(np.ones(len(vocab) - 1), size=2).T
    s_t = np.vstack([np.zeros((1, 2)), s_t])  # row 0: <s>
    model = AggregateLM(vocab, r, s_t)
    sentences = [["a", "b", "a"], ["b", "zzz"]]  # zzz: unknown, scored as <unk>
    ids = {"<s>": 0, "</s>": 1, "<unk>": 2, "a": 3, "b": 4, "zzz": 2}
    total, n = 0.0, 0
    for sentence in sentences:
        prev = "<s>"
        for word in [*sentence, "</s>"]:
            p = sum(r[ids[prev], h] * s_t[ids[word], h] for h in range(2))
            total += math.log(p)
            n += 1
            prev = word
    got = perplexity(model, sentences)
    assert got.tokens == n == 7 and got.oov == 1
    assert got.perplexity == pytest.approx(math.exp(-total / n), rel=1e-12)


def test_em_picks_its_iterations_on_dev_and_pivot_em_needs_fewer():
    """On planted data, pivot+EM reaches EM's dev perplexity (within 2 %) in fewer
    iterations than EM from a random start."""
    vocab = vocabulary()
    train = sampled_counts(200_000, seed=4)
    dev = sampled_counts(50_000, seed=5).tocoo()
    rows = np.repeat(dev.row, dev.data.astype(int))
    cols = np.repeat(dev.col, dev.data.astype(int))
    events = Events(rows[:, None], cols, 0)
    em = fit_aggregate(
        "em", vocab, train, events, OPTIONS["em"](states=M, iterations=200, patience=3)
    )
    hybrid_opts = OPTIONS["pivot+em"](states=M, iterations=200, patience=3, anchor_pool=100.0)
    hybrid = fit_aggregate("pivot+em", vocab, train, events, hybrid_opts)
    best_em = min(h["dev_perplexity"] for h in em.meta["history"])
    best_hybrid = min(h["dev_perplexity"] for h in hybrid.meta["history"])
    assert best_hybrid <= 1.02 * best_em
    assert hybrid.meta["em_iterations"] < em.meta["em_iterations"]


@pytest.mark.parametrize("method", ["em", "pivot", "pivot+em"])
def test_cli_round_trip_gives_the_library_perplexity(tmp_path, method):
    """`lpcfg lm train` then `lpcfg lm perplexity --json` equals the library's figure for
    the model file read back (same method, same arrays)."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(12)]
    lines = [" ".join(rng.choice(words, size=rng.integers(3, 9))) for _ in range(300)]
    (tmp_path / "train.txt").write_text("\n".join(lines[:240]) + "\n")
    (tmp_path / "dev.txt").write_text("\n".join(lines[240:]) + "\n")
    model = tmp_path / "lm.npz"
    runner = CliRunner()
    args = ["lm", "train", "--method", method, "--states", "3", "--dev", tmp_path / "dev.txt"]
    res = runner.invoke(main, [*map(str, args), str(tmp_path / "train.txt"), "-o", str(model)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["lm", "perplexity", "--json", str(model), str(tmp_path / "dev.txt")])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    back = load_model(model)
    assert isinstance(back, AggregateLM) and back.method == method and back.states == 3
    expected = perplexity(back, [line.split() for line in lines[240:]])
    assert got == expected.to_dict()
