"""The coarse pass against a plain numpy inside-outside over a dense rule tensor.

The kernel keeps its inside chart twice (start-major and end-major) and sums each split range
as one dot product; the reference below indexes spans by ``(start, end)`` directly and sums
over every split, so a split read from the wrong cell of either layout, a split weight applied
to the wrong split or an extent that cuts a range short shows as a wrong posterior.
"""

from __future__ import annotations

import numpy as np
import pytest

from lpcfg_cli.engine.chart_grammars import CoarseGrammar, right_child_bits, symbol_prior
from lpcfg_cli.engine.coarse import (
    CoarseRules,
    _bit_index,
    _popcount,
    chart_size,
    clear_charts,
    coarse_posteriors,
    inside_chart,
    item_posteriors,
    outside_chart,
    root_inside,
    sentence_posteriors,
)
from lpcfg_cli.engine.layout import SpanLayout

N_SYM = 7
PRE = (0, 1)  # pre-terminals: only over one word (no rule has them as parent)
NEVER = 6  # a child of some rules that no rule and no word produces: its pairs never apply


def random_grammar(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rules (R, 3) parent-left-right, probabilities, root weights)``: asymmetric (rule
    ``a -> b c`` without ``a -> c b``), with pairs that apply only over one-word children
    and pairs that never apply."""
    rng = np.random.default_rng(seed)
    rules = [
        (a, b, c)
        for a in range(2, NEVER)
        for b in range(N_SYM)
        for c in range(N_SYM)
        if rng.random() < 0.3
    ]
    rules += [(2, 0, NEVER), (3, NEVER, 1), (4, 0, 1)]
    rules = np.array(sorted(set(rules)), dtype=np.int64)
    prob = rng.uniform(0.05, 0.6, len(rules))
    root = np.zeros(N_SYM)
    root[2:NEVER] = rng.uniform(0.1, 1.0, NEVER - 2)
    return rules, prob, root


def random_lexical(n: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, N)`` word scores: the pre-terminals and, on some words, symbol 5 too."""
    lex = np.zeros((n, N_SYM))
    lex[:, PRE] = rng.uniform(0.1, 1.0, (n, len(PRE))) * (rng.random((n, len(PRE))) < 0.7)
    lex[:, 5] = rng.uniform(0.1, 1.0, n) * (rng.random(n) < 0.3)
    lex[lex.sum(1) == 0, 0] = 0.5
    return lex


def dense_tensor(rules: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``t[a, b, c]``: the probability of rule ``a -> b c``."""
    t = np.zeros((N_SYM, N_SYM, N_SYM))
    np.add.at(t, (rules[:, 0], rules[:, 1], rules[:, 2]), prob)
    return t


def dense_inside(
    lex: np.ndarray, t: np.ndarray, prior: np.ndarray | None = None, beam: float = 0.0
) -> np.ndarray:
    """``alpha[i, j, a]``, the inside values over a dense tensor, without scaling; with a
    ``beam``, each span but the whole sentence keeps the items whose ``alpha * prior`` is at
    least ``beam`` times the span's largest (the coarse beam, as its docstring states it)."""
    n = len(lex)
    alpha = np.zeros((n + 1, n + 1, N_SYM))
    for i in range(n):
        alpha[i, i + 1] = lex[i]
    for length in range(1, n + 1):
        for i in range(n - length + 1):
            j = i + length
            for k in range(i + 1, j):
                alpha[i, j] += np.einsum("abc,b,c->a", t, alpha[i, k], alpha[k, j])
            if beam > 0 and length < n:
                fom = alpha[i, j] * prior
                alpha[i, j, fom < beam * fom.max()] = 0.0
    return alpha


def reference(
    lex: np.ndarray,
    rules: np.ndarray,
    prob: np.ndarray,
    root: np.ndarray,
    prior: np.ndarray | None = None,
    beam: float = 0.0,
    cut: float = 0.0,
):
    """``(Z, mu[i, j, a])`` by inside-outside over a dense tensor, without scaling (over the
    chart the coarse beam leaves, with a ``beam``; with a ``cut``, an item whose posterior
    is below it passes nothing down and is left out, as ``outside_chart`` states it)."""
    n = len(lex)
    t = dense_tensor(rules, prob)
    alpha = dense_inside(lex, t, prior, beam)
    z = float(root @ alpha[0, n])
    beta = np.zeros_like(alpha)
    beta[0, n] = root
    for length in range(n, 1, -1):
        for i in range(n - length + 1):
            j = i + length
            kept = (alpha[i, j] != 0) & (alpha[i, j] * beta[i, j] >= cut * z)
            live = beta[i, j] * kept  # a pruned or cut parent passes nothing down
            for k in range(i + 1, j):
                beta[i, k] += np.einsum("abc,a,c->b", t, live, alpha[k, j])
                beta[k, j] += np.einsum("abc,a,b->c", t, live, alpha[i, k])
    if z <= 0:
        return z, np.zeros_like(alpha)
    mu = alpha * beta / z
    mu[mu < cut] = 0.0
    return z, mu


def run(
    lexes: list[np.ndarray],
    rules,
    prob,
    root,
    beam: float = 0.0,
    n_sym: int = N_SYM,
    cut: float = 0.0,
):
    """The pass over one batch: ``(mu[s][i, j, a] per sentence, log Z)``."""
    layout = SpanLayout([len(x) for x in lexes])
    g = CoarseGrammar.build(n_sym, rules, prob, root)
    lex = np.concatenate(lexes)
    order = np.argsort(
        np.concatenate([layout.base[1, s] + np.arange(len(x)) for s, x in enumerate(lexes)])
    )
    keys, values, log_z = coarse_posteriors(g, layout, lex[order], root, beam, cut)
    span, sym = np.divmod(keys, n_sym)
    out = [np.zeros((len(x) + 1, len(x) + 1, n_sym)) for x in lexes]
    for sp, a, v in zip(span, sym, values, strict=True):
        s, i = int(layout.span_sent[sp]), int(layout.span_start[sp])
        out[s][i, i + int(layout.span_len[sp]), a] = v
    return out, log_z


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("lengths", [(1, 2, 3, 4, 5, 8, 13, 30), (30, 13, 8, 13, 5, 4, 3, 2)])
def test_coarse_pass_matches_dense_inside_outside(seed, lengths):
    """Every sentence of a batch against the reference; the batch's sentences share one set
    of charts, so the longest first (and a length twice) checks that each leaves none of its
    entries behind for the next."""
    rules, prob, root = random_grammar(seed)
    rng = np.random.default_rng(100 + seed)
    lexes = [random_lexical(n, rng) for n in lengths]
    mus, log_z = run(lexes, rules, prob, root)
    parsed = 0
    for lex, mu, lz in zip(lexes, mus, log_z, strict=True):
        z, expected = reference(lex, rules, prob, root)
        if z == 0:
            assert lz == -np.inf and not mu.any()
            continue
        parsed += 1
        assert lz == pytest.approx(np.log(z), rel=1e-12, abs=1e-12)
        np.testing.assert_array_equal(mu != 0, expected != 0)
        np.testing.assert_allclose(mu, expected, rtol=1e-10, atol=0)
    assert parsed >= 6


@pytest.mark.parametrize("seed", [0, 1])
def test_kernel_leaves_its_charts_zero(seed):
    """The contract that lets a batch reuse one set of charts: whatever a sentence wrote is
    zero again on return, parsed or not (a word no symbol covers)."""
    rules, prob, root = random_grammar(seed)
    g = CoarseGrammar.build(N_SYM, rules, prob)
    rng = np.random.default_rng(seed)
    no_parse = random_lexical(9, rng)
    no_parse[4] = 0.0
    lex_cut = random_lexical(12, rng)  # with a cut: what cut items hold is zeroed too
    for lex, cut in ((random_lexical(12, rng), 0.0), (no_parse, 0.0), (lex_cut, 0.05)):
        charts = np.zeros((4, chart_size(len(lex), N_SYM)))
        out = sentence_posteriors(lex, root, CoarseRules.of(g), charts, g.prior, 0.0, cut)
        assert len(out[0]) > 0 or out[4] == -np.inf
        assert not charts.any()


def test_pairs_that_never_apply_and_no_parse():
    """Rules whose children never meet add nothing; a sentence without a parse gives -inf and
    no items, and does not disturb the other sentences of its batch."""
    rules, prob, root = random_grammar(0)
    only_never = np.array([(2, NEVER, NEVER), (3, 0, NEVER), (4, NEVER, 0)])
    no_parse = random_lexical(5, np.random.default_rng(6))
    no_parse[2] = 0.0  # a word no symbol covers
    lex = random_lexical(6, np.random.default_rng(5))
    mus, log_z = run(
        [lex, no_parse],
        np.concatenate([rules, only_never]),
        np.concatenate([prob, [0.9, 0.9, 0.9]]),
        root,
    )
    z, expected = reference(lex, rules, prob, root)
    assert log_z[0] == pytest.approx(np.log(z), rel=1e-12)
    np.testing.assert_allclose(mus[0], expected, rtol=1e-10, atol=0)
    assert log_z[1] == -np.inf and not mus[1].any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_phase_matches_the_dense_reference(seed):
    """The phases one by one, as ``sentence_posteriors`` runs them: the inside phase's
    scaled values times their span's scale are the dense inside values, and the root's
    value gives log Z; the outside and posteriors phases give the reference posteriors; the
    clean-up leaves the charts zero."""
    rules, prob, root = random_grammar(seed)
    g = CoarseGrammar.build(N_SYM, rules, prob)
    lex = random_lexical(11, np.random.default_rng(200 + seed))
    n = len(lex)
    rules_of_g = CoarseRules.of(g)
    charts = np.zeros((4, chart_size(n, N_SYM)))
    ix = inside_chart(lex, rules_of_g, charts, g.prior, 0.0)
    alpha = dense_inside(lex, dense_tensor(rules, prob))
    got = np.zeros_like(alpha)
    for i in range(n):
        for j in range(i + 1, n + 1):
            for a in ix.items[ix.first[i, j] : ix.first[i, j] + ix.count[i, j]]:
                start_major = charts[0, ix.sbase[i] + a * (n - i) + j - i - 1]
                assert charts[1, ix.ebase[j] + a * j + i] == start_major
                got[i, j, a] = start_major * np.exp(ix.sc[i, j])
    np.testing.assert_allclose(got, alpha, rtol=1e-12, atol=0)
    z = root_inside(charts, root, ix)
    z_ref, mu_ref = reference(lex, rules, prob, root)
    assert z > 0
    assert ix.sc[0, n] + np.log(z) == pytest.approx(np.log(z_ref), rel=1e-12)
    outside_chart(root, z, rules_of_g, charts, ix, 0.0)
    start, end, sym, post = item_posteriors(charts, ix, 0.0)
    mu = np.zeros_like(mu_ref)
    mu[start, end, sym] = post
    np.testing.assert_allclose(mu, mu_ref, rtol=1e-10, atol=0)
    clear_charts(charts, ix)
    assert not charts.any()


def proper_grammar(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``random_grammar`` with each parent's rules scaled to sum to 0.4: derivations are
    finite (the pre-terminals' words end the rest), so the symbols' prior is defined."""
    rules, prob, root = random_grammar(seed)
    total = np.bincount(rules[:, 0], weights=prob, minlength=N_SYM)
    return rules, 0.4 * prob / total[rules[:, 0]], root


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_symbol_prior_is_the_expected_number_of_nodes(seed):
    """``e = root + e M`` solved exactly for a grammar with finite derivations; a grammar
    whose derivations need not end (``random_grammar``'s parents' rules sum above 1) and a
    grammar without root weights give ones; S -> S S (p) has ``1 / (1 - 2p)`` S nodes."""
    rules, prob, root = proper_grammar(seed)
    m = np.zeros((N_SYM, N_SYM))
    np.add.at(m, (rules[:, 0], rules[:, 1]), prob)
    np.add.at(m, (rules[:, 0], rules[:, 2]), prob)
    exact = np.linalg.solve((np.eye(N_SYM) - m).T, root)
    np.testing.assert_allclose(symbol_prior(N_SYM, rules, prob, root), exact, rtol=1e-8)
    divergent, dprob, droot = random_grammar(seed)
    assert dprob.sum() > N_SYM
    np.testing.assert_array_equal(symbol_prior(N_SYM, divergent, dprob, droot), 1.0)
    np.testing.assert_array_equal(symbol_prior(N_SYM, rules, prob, None), 1.0)
    s_ss = np.array([(0, 0, 0)])
    assert symbol_prior(1, s_ss, np.array([0.3]), np.array([1.0]))[0] == pytest.approx(2.5)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("beam", [1e-3, 0.1, 0.5])
def test_coarse_beam_matches_the_pruned_reference(seed, beam):
    """With a beam, every sentence's posteriors and log Z are those of inside-outside over
    the chart the beam leaves (the reference prunes each span as the beam's docstring says);
    the larger beams do prune (posteriors differ from the exact ones)."""
    rules, prob, root = proper_grammar(seed)
    prior = symbol_prior(N_SYM, rules, prob, root)
    rng = np.random.default_rng(300 + seed)
    lexes = [random_lexical(n, rng) for n in (9, 4, 13, 2, 7)]
    mus, log_z = run(lexes, rules, prob, root, beam)
    pruned = 0
    for lex, mu, lz in zip(lexes, mus, log_z, strict=True):
        z, expected = reference(lex, rules, prob, root, prior, beam)
        if z == 0:  # the beam left no parse: the sentence is parsed again without it
            z, expected = reference(lex, rules, prob, root)
        if z == 0:
            assert lz == -np.inf and not mu.any()
            continue
        assert lz == pytest.approx(np.log(z), rel=1e-12, abs=1e-12)
        np.testing.assert_array_equal(mu != 0, expected != 0)
        np.testing.assert_allclose(mu, expected, rtol=1e-10, atol=0)
        pruned += int((mu != 0).sum() < (reference(lex, rules, prob, root)[1] != 0).sum())
    assert pruned >= (2 if beam >= 0.1 else 0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("beam", [0.0, 0.1])
@pytest.mark.parametrize("cut", [1e-3, 0.02, 0.2])
def test_outside_cut_matches_the_top_down_pruned_reference(seed, beam, cut):
    """With a cut, the posteriors are those of an outside pass in which an item below the
    cut passes nothing down (the reference applies it span by span, longest first), and the
    items below it are left out; log Z is unchanged. The larger cuts do cut, and lower some
    kept item's posterior below its exact value."""
    rules, prob, root = proper_grammar(seed)
    prior = symbol_prior(N_SYM, rules, prob, root)
    rng = np.random.default_rng(400 + seed)
    lexes = [random_lexical(n, rng) for n in (10, 3, 12, 6)]
    mus, log_z = run(lexes, rules, prob, root, beam, cut=cut)
    exact_mus, exact_log_z = run(lexes, rules, prob, root, beam)
    np.testing.assert_array_equal(log_z, exact_log_z)
    lowered = 0
    for lex, mu, exact in zip(lexes, mus, exact_mus, strict=True):
        z, expected = reference(lex, rules, prob, root, prior, beam, cut)
        if z == 0:
            z, expected = reference(lex, rules, prob, root, cut=cut)
        np.testing.assert_array_equal(mu != 0, expected != 0)
        np.testing.assert_allclose(mu, expected, rtol=1e-10, atol=0)
        assert np.all(mu <= exact * (1 + 1e-12))
        lowered += int(np.any((mu > 0) & (mu < exact * (1 - 1e-9))))
    if cut >= 0.02:
        assert lowered >= 1


def test_a_sentence_the_beam_leaves_unparsed_is_parsed_without_it():
    """A -> B P needs B over the first two words, where the beam prefers C (the larger prior,
    for A -> C C): with beam 0.6 the three-word sentence has no parse over the pruned chart,
    and gets the exact posteriors of the unpruned one."""
    p_sym, a, b, c = range(4)
    rules = np.array([(a, b, p_sym), (a, c, c), (b, p_sym, p_sym), (c, p_sym, p_sym)])
    prob = np.array([0.5, 0.5, 1.0, 1.0])
    root = np.array([0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(symbol_prior(4, rules, prob, root), [3.5, 1.0, 0.5, 1.0])
    lex = np.zeros((3, 4))
    lex[:, p_sym] = 1.0
    g = CoarseGrammar.build(4, rules, prob, root)
    charts = np.zeros((4, chart_size(3, 4)))
    pcfg = (CoarseRules.of(g), charts, g.prior)
    assert sentence_posteriors(lex, root, *pcfg, 0.6, 0.0)[4] == -np.inf
    exact = sentence_posteriors(lex, root, *pcfg, 0.0, 0.0)
    assert exact[4] == pytest.approx(np.log(0.5))
    mus, log_z = run([lex], rules, prob, root, beam=0.6, n_sym=4)
    assert log_z[0] == exact[4]
    assert mus[0][exact[0], exact[1], exact[2]] == pytest.approx(exact[3], rel=1e-12)
    assert (mus[0] != 0).sum() == len(exact[3])


def test_children_pairs_as_bit_sets_name_every_pair():
    """``right_child_bits``: the bit of each pair is set, no other, and the rank of a right
    child among its left child's pairs gives the pair's number; with the kernels' bit
    helpers (de Bruijn index of the lowest bit, SWAR popcount) against Python's."""
    rng = np.random.default_rng(3)
    n = 150  # three words, the last partly used
    pairs = sorted({(int(b), int(c)) for b, c in rng.integers(0, n, size=(900, 2))})
    left = np.array([b for b, _ in pairs])
    right = np.array([c for _, c in pairs])
    left_ptr = np.searchsorted(left, np.arange(n + 1))
    bits, rank = right_child_bits(n, left, right)
    assert bits.shape == rank.shape == (n, 3)
    assert sum(bin(int(w)).count("1") for w in bits.ravel()) == len(pairs)
    for q, (b, c) in enumerate(pairs):
        word, bit = bits[b, c // 64], np.uint64(1) << np.uint64(c % 64)
        assert word & bit
        assert _bit_index(bit) == c % 64
        below = _popcount(word & (bit - np.uint64(1)))
        assert below == bin(int(word) & ((1 << (c % 64)) - 1)).count("1")
        assert left_ptr[b] + rank[b, c // 64] + below == q
    for x in rng.integers(0, 2**63, size=50, dtype=np.uint64):
        assert _popcount(x) == bin(int(x)).count("1")


@pytest.mark.parametrize("seed", [0, 1])
def test_symbols_in_several_words_of_the_bit_sets(seed):
    """The grammar's symbols renumbered across three 64-symbol words of the bit sets, at
    both sides of the words' boundaries: the posteriors are the reference's, renumbered."""
    rules, prob, root = random_grammar(seed)
    new = np.array([63, 64, 0, 127, 128, 199, 65])  # symbol s is now new[s]
    n_sym = 200
    rng = np.random.default_rng(40 + seed)
    lexes = [random_lexical(n, rng) for n in (3, 7, 12)]
    wide = []
    for lex in lexes:
        w = np.zeros((len(lex), n_sym))
        w[:, new] = lex
        wide.append(w)
    wide_root = np.zeros(n_sym)
    wide_root[new] = root
    mus, log_z = run(wide, new[rules], prob, wide_root, n_sym=n_sym)
    for lex, mu, lz in zip(lexes, mus, log_z, strict=True):
        z, expected = reference(lex, rules, prob, root)
        assert lz == pytest.approx(np.log(z), rel=1e-12)
        np.testing.assert_allclose(mu[:, :, new], expected, rtol=1e-10, atol=0)
        assert not np.delete(mu, new, axis=2).any()
