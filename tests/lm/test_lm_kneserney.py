"""Kneser-Ney baselines: exact agreement with nltk.lm.KneserNeyInterpolated (one discount),
with a plain-Python oracle of the modified (three-discount) model under SRILM's padding,
normalisation of every conditional distribution, discounts, options and the model arrays."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.lm.corpus import Vocabulary
from lpcfg_cli.lm.kneserney import KneserNey, KNOptions, estimate, estimate_discounts
from lpcfg_cli.lm.perplexity import perplexity

TINY = [
    ["the", "cat", "sat"],
    ["the", "dog", "sat", "down"],
    ["a", "cat", "ran"],
    ["the", "cat", "ran", "down"],
    ["a", "dog"],
]


def generated(n: int, seed: int) -> list[list[str]]:
    """Sentences of a random sparse Markov chain over 12 words (some rare ones)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(12)]
    trans = rng.dirichlet(np.full(13, 0.3), size=13)  # state 12: start; column 12: end
    out = []
    for _ in range(n):
        sent, state = [], 12
        while len(sent) < 10:
            state = int(rng.choice(13, p=trans[state]))
            if state == 12:
                break
            sent.append(words[state])
        out.append(sent or ["w0"])
    return out


# --- nltk --------------------------------------------------------------------------------


def nltk_model(order: int, sentences, discount: float):
    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    lm = KneserNeyInterpolated(order, discount=discount)
    lm.fit(*padded_everygram_pipeline(order, sentences))
    return lm


@pytest.mark.parametrize("discount", [0.1, 0.75])
def test_bigram_equals_nltk(discount):
    """nltk's bigram KN is ours with the same discount and an undiscounted unigram level."""
    vocab = Vocabulary.build(TINY, min_count=1)
    ev = vocab.events(TINY, 2)
    grams = np.column_stack([ev.context, ev.next])
    ours = KneserNey.from_events(vocab, grams, np.array([[0.0] * 3, [discount] * 3]))
    lm = nltk_model(2, TINY, discount)
    v = len(vocab)
    for u in range(v):
        got = ours.probs(np.full((v, 1), u), np.arange(v))
        want = [lm.score(w, [vocab.words[u]]) for w in vocab.words]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, err_msg=vocab.words[u])


@pytest.mark.parametrize("discount", [0.1, 0.75])
def test_trigram_equals_nltk_fitted_from_its_padding(discount):
    """nltk pads twice on both sides and gives <s> <s> a bigram: from those trigrams (and
    one extra trigram x <s> <s> that adds that bigram), with no <s> rules, ours equals
    nltk's for every context not ending in <s> (see the kneserney module docstring)."""
    vocab = Vocabulary.build(TINY, min_count=1)
    v = len(vocab)
    rows = []
    for s in TINY:
        ids = [vocab.index[w] for w in ["<s>", "<s>", *s, "</s>", "</s>"]]
        rows += [ids[i : i + 3] for i in range(len(ids) - 2)]
    rows.append([v, 0, 0])  # x <s> <s>, x a fresh id
    discounts = np.array([[0.0] * 3, [discount] * 3, [discount] * 3])
    ours = KneserNey.from_events(vocab, np.array(rows), discounts, start_id=None, radix=v + 1)
    lm = nltk_model(3, TINY, discount)
    for u, w1 in itertools.product(range(v), range(1, v)):
        got = ours.probs(np.tile([u, w1], (v, 1)), np.arange(v))
        want = [lm.score(w, [vocab.words[u], vocab.words[w1]]) for w in vocab.words]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


# --- a plain-Python oracle -----------------------------------------------------------------


def oracle_probs(train, test, order: int, modified: bool) -> list[float]:
    """p of every test token by the formulas of the kneserney docstring, from string
    n-grams of '<s> w1 .. wn </s>' (SRILM's padding), with dictionaries and loops."""
    counts = Counter(w for s in train for w in s)
    unk = lambda s: [w if counts[w] >= 2 else "<unk>" for w in s]  # noqa: E731
    seqs = [["<s>", *unk(s), "</s>"] for s in train]
    raw = {
        k: Counter(tuple(s[i : i + k]) for s in seqs for i in range(len(s) - k + 1))
        for k in range(1, order + 1)
    }
    level = {order: dict(raw[order])}
    for k in range(order - 1, 0, -1):
        level[k] = {
            g: c if g[0] == "<s>" else len({h[0] for h in raw[k + 1] if h[1:] == g})
            for g, c in raw[k].items()
            if g != ("<s>",)
        }
    discounts = {}
    for k in range(1, order + 1):
        n = Counter(level[k].values())
        assert all(n[r] > 0 for r in (1, 2, 3, 4)), "the corpus must give every n_r"
        y = n[1] / (n[1] + 2 * n[2])
        d = [1 - 2 * y * n[2] / n[1], 2 - 3 * y * n[3] / n[2], 3 - 4 * y * n[4] / n[3]]
        discounts[k] = d if modified else [y, y, y]
        assert all(0 < x <= r for x, r in zip(discounts[k], (1, 2, 3), strict=True))
    size = len({w for s in seqs for w in s} | {"<unk>"})  # every id, <s> included

    def p(k: int, ctx: tuple, w: str) -> float:
        if k == 0:
            return 0.0 if w == "<s>" else 1.0 / (size - 1)
        followers = {g[-1]: c for g, c in level[k].items() if g[:-1] == ctx}
        if not followers:
            return p(k - 1, ctx[1:], w)
        d = discounts[k]
        total = sum(followers.values())
        gamma = sum(d[min(c, 3) - 1] for c in followers.values())
        c = followers.get(w, 0)
        kept = max(c - d[min(c, 3) - 1], 0) if c else 0
        return (kept + gamma * p(k - 1, ctx[1:], w)) / total

    out = []
    for s in test:
        seq = ["<s>"] * (order - 1) + unk(s) + ["</s>"]
        for i in range(order - 1, len(seq)):
            out.append(p(order, tuple(seq[i - order + 1 : i]), seq[i]))
    return out


@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("modified", [True, False])
def test_fit_equals_the_plain_python_oracle(order, modified):
    # u{r}_{j} follows r distinct words: n_1 .. n_4 of the unigram level are 12, 4, 2, 1
    many = {1: 8, 2: 4, 3: 2, 4: 1}
    extra = [[f"x{i}", f"u{r}_{j}"] for r in many for j in range(many[r]) for i in range(1, r + 1)]
    extra *= 2
    train = generated(300, seed=1) + extra
    test = generated(40, seed=2) + [["w3", "zebra", "w3"], ["x1", "u3_0", "u4_0"]]
    model = estimate(train, KNOptions(order=order, modified=modified))
    ev = model.vocab.events(test, order)
    np.testing.assert_allclose(
        model.probs(ev.context, ev.next), oracle_probs(train, test, order, modified), rtol=1e-10
    )


# --- normalisation, discounts, options, arrays -------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        KNOptions(order=2),
        KNOptions(order=3),
        KNOptions(order=3, modified=False),
        KNOptions(order=3, discount=0.4),
        KNOptions(order=2, rare=0),
    ],
)
def test_every_distribution_sums_to_one_over_all_ids_but_bos(options):
    model = estimate(generated(200, seed=3), options)
    v = len(model.vocab)
    contexts = list(itertools.product(range(v), repeat=options.order - 1))
    ctx = np.repeat(np.array(contexts, dtype=np.int64), v, axis=0)
    nxt = np.tile(np.arange(v), len(contexts))
    p = model.probs(ctx, nxt).reshape(len(contexts), v)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(p[:, 0] == 0) and np.all(p[:, 1:] > 0)


def test_estimated_discounts_follow_chen_and_goodman():
    counts = [np.array([1] * 10 + [2] * 4 + [3] * 3 + [4] * 2 + [9])]
    y = 10 / (10 + 8)
    want = [1 - 2 * y * 4 / 10, 2 - 3 * y * 3 / 4, 3 - 4 * y * 2 / 3]  # n_r: counts of r
    np.testing.assert_allclose(estimate_discounts(counts)[0], want)
    np.testing.assert_allclose(estimate_discounts(counts, modified=False)[0], [y] * 3)
    # no counts of 2 or 3: Y = 1 is used where a ratio is undefined, all within [0, r]
    d = estimate_discounts([np.array([1, 1, 5])])[0]
    assert np.all((d >= 0) & (d <= [1, 2, 3]))


def test_options_are_checked():
    with pytest.raises(LpcfgError, match="order 2 or 3"):
        KNOptions(order=4)
    with pytest.raises(LpcfgError, match="greater than 0"):
        KNOptions(discount=0.0)
    with pytest.raises(LpcfgError, match="at most 1"):
        KNOptions(discount=1.5)


def test_arrays_round_trip_and_bad_arrays_are_refused():
    model = estimate(TINY, KNOptions(order=3))
    arrays, meta = model.to_arrays()
    again = KneserNey.from_arrays(model.vocab, arrays, meta)
    ev = model.vocab.events(TINY, 3)
    assert perplexity(again, ev) == perplexity(model, ev)
    assert again.meta["options"] == {"order": 3, "modified": True, "rare": 1, "discount": None}
    bad = [
        ({**arrays, "keys2": arrays["keys2"][::-1].copy()}, meta, "keys must increase"),
        ({**arrays, "discounts": arrays["discounts"] + 5}, meta, "discounts must lie"),
        ({k: a for k, a in arrays.items() if k != "counts3"}, meta, "missing arrays counts3"),
        (arrays, {**meta, "order": 5}, "order must be 2 or 3"),
        ({**arrays, "keys1": arrays["keys1"].astype(float)}, meta, "whole numbers"),
        ({**arrays, "counts1": arrays["counts1"][:-1]}, meta, "differ in shape"),
    ]
    for a, m, message in bad:
        with pytest.raises(LpcfgError, match=message):
            KneserNey.from_arrays(model.vocab, a, m)
