"""UNMIX (Hsu, Kakade & Liang 2012, section 5): the mixing matrix, the sentence sampler and
its moments, the PCFG-IE and DEP-IES learners, topology-model files and `lpcfg unmix` /
`lpcfg sample` on them."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.learners.registry import learner
from lpcfg_cli.model.protocol import Progress
from lpcfg_cli.model.sampling import random_lpcfg
from lpcfg_cli.topology_models import families as fam
from lpcfg_cli.topology_models import mixing as mx
from lpcfg_cli.topology_models import samples as se
from lpcfg_cli.topology_models import topology_file as modelfile
from lpcfg_cli.topology_models import unmix as um
from lpcfg_cli.topology_models.moments import catalan, moment, tables
from lpcfg_cli.topology_models.unmix_learners import PCFGIEOptions, TopologyData, UnmixLearner
from tests.support import invoke

# --- the mixing matrix ------------------------------------------------------------------


def _bracketings(i: int, j: int):
    if j - i == 1:
        yield i
        return
    for m in range(i + 1, j):
        for left in _bracketings(i, m):
            for right in _bracketings(m, j):
                yield (left, right)


def _path(tree, leaf: int) -> str:
    """Moves (L/R) from the root to ``leaf``."""
    out = ""
    while not isinstance(tree, int):
        left = tree[0]
        first = left
        while not isinstance(first, int):
            first = first[-1]
        # the left subtree's leaves end at ``first``
        if leaf <= first:
            out, tree = out + "L", tree[0]
        else:
            out, tree = out + "R", tree[1]
    return out


def _brute_signature(tree, row: mx.Row) -> mx.Key:
    """The induced-subtree key of three leaves, from their root paths alone."""
    paths = [_path(tree, q) for q in row.positions]
    roles = row.roles()

    def lcp(a: str, b: str) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    pairs = {(i, j): lcp(paths[i], paths[j]) for i, j in combinations(range(3), 2)}
    (a, b), deep = max(pairs.items(), key=lambda kv: kv[1])
    (lone,) = {0, 1, 2} - {a, b}
    delta0 = min(pairs.values())
    cherry = tuple(sorted([(roles[a], len(paths[a]) - deep), (roles[b], len(paths[b]) - deep)]))
    return mx.Key(roles[lone], delta0, deep - delta0, len(paths[lone]) - delta0, cherry)


@pytest.mark.parametrize("length", [3, 4, 5, 6])
def test_signature_counts_match_brute_force(length):
    """The span dynamic program counts every bracketing's induced key exactly."""
    trees = list(_bracketings(0, length))
    assert len(trees) == catalan(length - 1)
    for row in (r for r in mx.rows(length) if r.length == length):
        brute = Counter(_brute_signature(t, row) for t in trees)
        assert mx.row_signatures(row) == brute, row


def test_mixing_matrix_times_compound_parameters_is_the_exact_moments():
    """mu = M Psi (eq. 4) for L_max = 6, any eta: M from the DP, Psi from the closed form,
    mu from moments.moment."""
    rng = np.random.default_rng(0)
    p = fam.random_params("pcfg-ie", 5, 3, rng)
    rows, keys, m = mx.mixing_matrix(6)
    exact = se.exact_triple_moments(p, 6)
    for eta in (np.ones(5), rng.uniform(size=5), rng.standard_normal(5)):
        psi = mx.compound_parameters(p, keys, eta)
        mu = exact.sliced(eta)
        assert np.abs(np.einsum("rk,kab->rab", m, psi) - mu).max() < 1e-12
    # section 5.2's L = 3 block: rows mu123, mu132, mu231 over Psi1, Psi2, Psi3
    r3, k3, m3 = mx.mixing_matrix(3)
    order = [k3.index(k) for k in (mx.PSI1, mx.PSI2, mx.PSI3)]
    assert [(r.positions, r.sliced) for r in r3] == [((0, 1, 2), 0), ((0, 1, 2), 1), ((0, 1, 2), 2)]
    # rows: slice x1 (mu231), slice x2 (mu132), slice x3 (mu123)
    expected = 0.5 * np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])
    assert np.allclose(m3[:, order], expected)


def test_mixing_matrix_size_for_length_10():
    """990 = 3 sum_{L=3..10} C(L, 3) rows; our key gives the paper's 2376 columns; e_Psi2 is
    in the row space and pinv(M)'s Psi2 row weighs only the L = 3 rows."""
    rows, keys, m = mx.mixing_matrix(10)
    assert m.shape == (990, 2376) == (len(rows), mx.N_COLUMNS_10)
    assert np.allclose(m.sum(axis=1), 1)
    check = um.check_row_space(10, tuple(range(3, 11)))
    assert check["rank"] == 974 and check["residual"] < 1e-12 and check["uses"] == (3,)
    assert um.check_row_space(10, (4, 5, 6))["residual"] > 0.1  # no length 3: not in it


# --- the sampler and its moments --------------------------------------------------------


@pytest.mark.parametrize(
    "family,d,k", [("pcfg-ie", 3, 2), ("pcfg", 3, 2), ("pcfg-i", 3, 2), ("dep-ies", 3, None)]
)
def test_sampled_moments_converge_to_the_exact_ones(family, d, k):
    """Every 1-, 2- and 3-word moment of 4-word sentences, within 5 standard errors at
    n = 10^5 (fixed seeds), and the error shrinks from 10^4 to 10^5 sentences."""
    rng = np.random.default_rng(11)
    p = fam.random_params(family, d, k, rng)
    dp = tables(p)
    words = se.sample(p, 4, 100_000, np.random.default_rng(12))
    worst, gap = {}, {}
    for n in (10_000, 100_000):
        w, z, g = words[:n], 0.0, 0.0
        for r in (1, 2, 3):
            for pos in combinations(range(4), r):
                exact = np.real(moment(p, 4, pos, dp)).ravel()
                code = np.zeros(n, dtype=np.int64)
                for q in pos:
                    code = code * d + w[:, q]
                emp = np.bincount(code, minlength=d**r) / n
                sd = np.sqrt(exact * (1 - exact) / n) + 1e-300
                z = max(z, float(np.max(np.abs(emp - exact) / sd)))
                g = max(g, float(np.max(np.abs(emp - exact))))
        worst[n], gap[n] = z, g
    assert worst[100_000] < 5 and gap[100_000] < 0.6 * gap[10_000], (worst, gap)


def test_sentence_paths_agree():
    """TripleMoments.sliced and sliced_sum (any d) give the same combinations."""
    rng = np.random.default_rng(3)
    p = fam.random_params("pcfg-ie", 4, 2, rng)
    data = se.sample_by_length(p, {3: 500, 4: 400, 5: 300}, rng)
    tm = se.triple_moments(data, 4, 5)
    coef = rng.standard_normal(len(mx.rows(5)))
    etas = rng.uniform(size=(2, 4))
    direct = se.sliced_sum(data, 4, 5, etas, coef)
    for e in range(2):
        assert np.allclose(direct[e], np.einsum("r,rab->ab", coef, tm.sliced(etas[e])))


def test_from_lines_vocabulary_and_skips():
    corpus = se.from_lines(["b a a", "", "  ", "x y z w", "a", "c b"], 3)
    assert corpus.vocab == ["a", "b", "c"]  # by frequency, then spelling
    assert (corpus.empty, corpus.too_long) == (2, 1)
    assert corpus.length_counts.tolist() == [0, 1, 1, 1]
    assert corpus.data[3].tolist() == [[1, 0, 0]] and corpus.data[2].tolist() == [[2, 1]]


# --- learning from exact moments ----------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 3])
def test_pcfg_ie_from_exact_moments(seed):
    """pi, T, O to 1e-8 up to a permutation, from L_max = 3 and L_max = 6 (the same
    estimate: pinv(M) weighs only the L = 3 rows)."""
    rng = np.random.default_rng(seed)
    p = fam.random_params("pcfg-ie", 5, 3, rng)
    tau = rng.uniform(size=5)
    three = um.unmix_pcfg_ie(se.exact_triple_moments(p, 3), 5, 3, 3, tau)
    six = um.unmix_pcfg_ie(se.exact_triple_moments(p, 6), 5, 3, 6, tau)
    assert um.pcfg_ie_errors(three, p)["max"] < 1e-8
    assert um.pcfg_ie_errors(six, p)["max"] < 1e-8
    assert np.abs(three.o - six.o).max() < 1e-9


@pytest.mark.parametrize("seed", [1, 3])
def test_the_unmix_learner_recovers_a_model_from_its_exact_moments(seed):
    """The learner of `lpcfg unmix` (pcfg-ie from the registry, dep-ies built directly) on
    a model's exact moments gives the model back, as unmix_pcfg_ie and unmix_dep_ies do;
    it reports what it checked and records how the model was learned."""
    rng = np.random.default_rng(seed)
    p = fam.random_params("pcfg-ie", 5, 3, rng)
    truth = modelfile.TopologyModel("pcfg-ie", p, list("abcde"), np.array([0, 1, 1, 1]))
    lines: list[str] = []
    pcfg_ie = learner("pcfg-ie", family="topology", length_max=4, seed=seed)
    assert isinstance(pcfg_ie, UnmixLearner) and pcfg_ie.options.states is None
    model = pcfg_ie.fit(TopologyData.exact(truth, "pcfg-ie", 4), progress=Progress(lines.append))
    assert model.family == "pcfg-ie" and model.vocab == list("abcde")
    assert um.pcfg_ie_errors(model.params, p)["max"] < 1e-8
    assert model.meta == {
        "learner": "unmix",
        "length_max": 4,
        "seed": seed,
        "exact_moments": None,
        "states": 3,
        "taus": 16,
    }
    assert lines[0] == "d = 5 word types, k = 3 states" and "residual" in lines[1]
    q = fam.random_params("dep-ies", 4, None, rng)
    truth = modelfile.TopologyModel("dep-ies", q, list("wxyz"), np.array([0, 1, 1, 1]))
    dep_ies = UnmixLearner(None, "dep-ies")
    model = dep_ies.fit(TopologyData.exact(truth, "dep-ies", 10))
    assert um.dep_ies_errors(model.params, q)["max"] < 1e-8


def test_the_unmix_learner_on_sentences_is_the_command_line_recipe():
    """Sentences through TopologyData.from_sentences (empty and long ones skipped and
    counted) and the learner: the same model as unmix_pcfg_ie with tau drawn from the seed."""
    p = um.separated_pcfg_ie(5, 3, np.random.default_rng(31), 0.9)
    data = se.sample_by_length(p, {3: 3000, 4: 1000}, np.random.default_rng(4))
    words = [f"w{i}" for i in range(5)]
    sentences = [[words[i] for i in row] for n in (3, 4) for row in data[n]]
    sentences += [[], ["w0"] * 9]
    got = TopologyData.from_sentences(sentences, 4)
    assert got.summary == {
        "sentences": 4000,
        "empty": 1,
        "too_long": 1,
        "per_length": {3: 3000, 4: 1000},
    }
    model = UnmixLearner(PCFGIEOptions(length_max=4, states=3, seed=7), "pcfg-ie").fit(got)
    ids = {w: i for i, w in enumerate(got.vocab)}
    recoded = {n: np.vectorize(lambda i: ids[words[i]])(data[n]) for n in (3, 4)}
    tau = np.random.default_rng(7).uniform(size=(16, 5))
    direct = um.unmix_pcfg_ie(recoded, 5, 3, 4, tau)
    assert np.allclose(model.params.o, direct.o) and np.allclose(model.params.t1, direct.t1)
    assert model.meta["sentences"] == {"3": 3000, "4": 1000}
    assert model.length_counts.tolist() == [0, 0, 0, 3000, 1000]


def test_unmix_errors_name_parameters_and_the_command_line_names_flags(tmp_path):
    """The learner's errors name its parameters (no flag in str()); `lpcfg unmix` writes
    them as its flags, and refuses options dep-ies cannot use."""
    (tmp_path / "s.txt").write_text("a b c\nb c a\n")
    text, out = tmp_path / "s.txt", tmp_path / "o.npz"
    sentences = TopologyData.from_sentences([["a", "b", "c"], ["b", "c", "a"]], 10)
    pcfg_ie = learner("pcfg-ie", family="topology", states=4)
    with pytest.raises(ParameterError) as caught:
        pcfg_ie.fit(sentences)
    assert str(caught.value) == (
        "pcfg-ie needs at least as many word types as states: d = 3 < k = 4 (lower states)"
    )
    with pytest.raises(ParameterError) as caught:
        learner("pcfg-ie", family="topology").check_data(exact=False)
    assert "--" not in str(caught.value) and "needs states" in str(caught.value)
    with pytest.raises(ParameterError, match="not length_max 3"):
        learner("dep-ies", family="topology", length_max=3).fit(sentences)
    res = invoke("unmix", "--model", "pcfg-ie", "--states", "4", text, "-o", out)
    _one_error(res, "d = 3 < k = 4 (lower --states)")
    res = invoke("unmix", "--model", "pcfg-ie", text, "-o", out)
    _one_error(res, "pcfg-ie needs --states to learn from sentences")
    for option in ("--states", "--taus"):
        res = invoke("unmix", "--model", "dep-ies", option, "2", text, "-o", out)
        _one_error(res, f"{option} has no effect with --model dep-ies")
    assert not out.exists()


def test_pcfg_ie_needs_length_3_and_enough_words():
    rng = np.random.default_rng(0)
    p = fam.random_params("pcfg-ie", 3, 2, rng)
    data = se.sample_by_length(p, {4: 100, 5: 100}, rng)
    with pytest.raises(LpcfgError, match="not determined"):
        um.unmix_pcfg_ie(data, 3, 2, 5, np.ones(3))
    with pytest.raises(LpcfgError, match="d=3 < k=4"):
        um.unmix_pcfg_ie(data, 3, 4, 5, np.ones(3))


def test_dep_ies_closed_forms_match_moments():
    rng = np.random.default_rng(5)
    q = fam.random_params("dep-ies", 4, None, rng)
    mu12, mu13 = um.predicted_pairs(q.left)
    assert np.abs(mu12 - np.real(moment(q, 3, (0, 1)))).max() < 1e-15
    assert np.abs(mu13 - np.real(moment(q, 3, (0, 2)))).max() < 1e-15


def test_dep_ies_from_exact_moments():
    """A to 1e-8 (no permutation: states are words), including models whose eigenvalue
    equations have two admissible roots (a negative real or complex eigenvalue)."""
    ambiguous = 0
    for seed in range(8):
        q = fam.random_params("dep-ies", 4, None, np.random.default_rng(seed))
        lam = np.linalg.eigvals(q.left)
        ambiguous += sum(1 for x in lam if abs(x) < 1 - 1e-9 and abs(-1 - x) <= 1)
        est = um.unmix_dep_ies(se.exact_pair_moments(q), 4)
        assert um.dep_ies_errors(est, q)["max"] < 1e-8, seed
    assert ambiguous >= 5


# --- learning from sentences --------------------------------------------------------------


def test_errors_fall_with_the_sample_size():
    """10^4 -> 10^5 sentences: the mean (3 sample seeds) largest parameter error at least
    halves for a separated PCFG-IE (d = 5, k = 3, L_max = 3) and a uniform DEP-IES (d = 4)."""
    p = um.separated_pcfg_ie(5, 3, np.random.default_rng(21), 0.9)
    q = fam.random_params("dep-ies", 4, None, np.random.default_rng(22))
    tau = np.random.default_rng(23).uniform(size=(16, 5))
    err = {}
    for n in (10_000, 100_000):
        pe, qe = [], []
        for s in range(3):
            data = se.sample_by_length(p, {3: n}, np.random.default_rng(100 + s))
            pe.append(um.pcfg_ie_errors(um.unmix_pcfg_ie(data, 5, 3, 3, tau), p)["max"])
            data = se.sample_by_length(q, {2: n // 2, 3: n // 2}, np.random.default_rng(200 + s))
            qe.append(um.dep_ies_errors(um.unmix_dep_ies(data, 4), q)["max"])
        err[n] = (np.mean(pe), np.mean(qe))
    assert err[100_000][0] < 0.6 * err[10_000][0], err
    assert err[100_000][1] < 0.6 * err[10_000][1], err
    assert err[100_000][0] < 0.05 and err[100_000][1] < 0.1, err


# --- model files --------------------------------------------------------------------------


def _model(family: str, d: int = 4, k: int | None = 2, seed: int = 0) -> modelfile.TopologyModel:
    p = fam.random_params(family, d, k, np.random.default_rng(seed))
    counts = np.array([0, 1, 2, 3, 2])
    return modelfile.TopologyModel(family, p, [f"w{i}" for i in range(d)], counts, {"x": 1})


@pytest.mark.parametrize("family", fam.FAMILIES)
def test_model_file_round_trip(family, tmp_path):
    model = _model(family)
    path = tmp_path / "m.npz"
    modelfile.save(path, model)
    back = modelfile.load(path)
    assert (back.family, back.vocab, back.meta) == (family, model.vocab, {"x": 1})
    assert back.length_counts.tolist() == [0, 1, 2, 3, 2]
    for name in ("pi", "b", "o", "t1", "t2", "left", "right"):
        if hasattr(model.params, name) and getattr(model.params, name) is not None:
            assert np.allclose(getattr(back.params, name), getattr(model.params, name)), name
    modelfile.save(tmp_path / "again.npz", back)
    assert (tmp_path / "again.npz").read_bytes() == path.read_bytes()


def test_malformed_model_files_are_one_error(tmp_path):
    import json

    from lpcfg_cli.files.archive import write_npz

    good = tmp_path / "good.npz"
    modelfile.save(good, _model("pcfg-ie"))
    with np.load(good, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta_json"].tobytes())

    def variant(name: str, **changes) -> str:
        out = dict(arrays)
        header = dict(meta)
        for key, value in changes.items():
            if key.startswith("meta_"):
                header[key[5:]] = value
            elif value is None:
                del out[key]
            else:
                out[key] = value
        out["meta_json"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        with open(tmp_path / name, "wb") as fh:
            write_npz(fh, out)
        return str(tmp_path / name)

    cases = {
        variant("v.npz", meta_format_version=2): "format version 2, written by a newer",
        variant("f.npz", meta_family="pcfg-x"): "unknown family",
        variant("t.npz", t=None): "no array 't'",
        variant("o.npz", o=arrays["o"] * 2): "o's columns are not probability",
        variant("s.npz", meta_vocabulary=["a", "b", "c"]): "3 vocabulary words for d = 4",
        variant("w.npz", meta_vocabulary=["a", "a", "b", "c"]): "repeated vocabulary",
        variant("c.npz", length_counts=np.array([1, 2])): "length_counts",
        variant("k.npz", meta_k=5): "metadata says",
    }
    for path, message in cases.items():
        with pytest.raises(LpcfgError, match=message):
            modelfile.load(path)
    with pytest.raises(LpcfgError, match="no such model file"):
        modelfile.load(tmp_path / "missing.npz")


# --- the command line ---------------------------------------------------------------------


def _one_error(res, fragment: str) -> None:
    """Exit 2 and one error line, the last on stderr (after any report of the input)."""
    lines = res.stderr.splitlines()
    errors = [x for x in lines if x.startswith("lpcfg: error: ")]
    assert res.exit_code == 2 and errors == lines[-1:], res.stderr
    assert fragment in errors[0], errors[0]


def test_cli_pcfg_ie_round_trip(tmp_path):
    """modelfile.save -> `lpcfg sample` -> `lpcfg unmix` -> load: the words' distributions
    come back (matched through the vocabulary, then up to a permutation of states)."""
    truth = um.separated_pcfg_ie(5, 3, np.random.default_rng(31), 0.9)
    words = ["the", "a", "cat", "dog", "sat"]
    model = modelfile.TopologyModel("pcfg-ie", truth, words, np.array([0, 0, 0, 5, 3, 2]))
    modelfile.save(tmp_path / "truth.npz", model)
    res = invoke("sample", tmp_path / "truth.npz", "-n", "60000", "--seed", "4")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 60000 and {len(x.split()) for x in lines} == {3, 4, 5}
    assert (
        res.stdout == invoke("sample", tmp_path / "truth.npz", "-n", "60000", "--seed", "4").stdout
    )
    (tmp_path / "s.txt").write_text(res.stdout + "\n\n" + "a " * 9 + "\n")
    out = tmp_path / "learned.npz"
    res = invoke(
        "unmix",
        "--model",
        "pcfg-ie",
        "--states",
        "3",
        "--length-max",
        "5",
        tmp_path / "s.txt",
        "-o",
        out,
    )
    assert res.exit_code == 0, res.stderr
    assert "skipped 2 empty, 1 longer than 5 words" in res.stderr
    assert "residual" in res.stderr and "lengths 3" in res.stderr
    learned = modelfile.load(out)
    assert learned.family == "pcfg-ie" and sorted(learned.vocab) == sorted(words)
    assert learned.length_counts.tolist()[:3] == [0, 0, 0]
    order = [learned.vocab.index(w) for w in words]
    learned.params.o = learned.params.o[order]
    assert um.pcfg_ie_errors(learned.params, truth)["max"] < 0.1
    fixed = invoke("sample", out, "-n", "5", "--length", "7", "--seed", "1")
    assert [len(x.split()) for x in fixed.stdout.splitlines()] == [7] * 5
    quiet = invoke(
        "unmix",
        "--model",
        "pcfg-ie",
        "--states",
        "3",
        tmp_path / "s.txt",
        "-o",
        tmp_path / "q.npz",
        "-q",
    )
    assert (quiet.exit_code, quiet.stderr) == (0, "")


def test_cli_exact_moments(tmp_path):
    """--exact-moments: infinite data recovers the model to 1e-8 (pcfg-ie) and 1e-12
    (dep-ies); the vocabulary and length counts are the model's."""
    rng = np.random.default_rng(3)
    p = fam.random_params("pcfg-ie", 5, 3, rng)
    q = fam.random_params("dep-ies", 4, None, rng)
    counts = np.array([0, 1, 1, 1])
    modelfile.save(tmp_path / "p.npz", modelfile.TopologyModel("pcfg-ie", p, list("abcde"), counts))
    modelfile.save(tmp_path / "q.npz", modelfile.TopologyModel("dep-ies", q, list("wxyz"), counts))
    res = invoke(
        "unmix",
        "--model",
        "pcfg-ie",
        "--exact-moments",
        tmp_path / "p.npz",
        "--length-max",
        "4",
        "-o",
        tmp_path / "pl.npz",
    )
    assert res.exit_code == 0, res.stderr
    learned = modelfile.load(tmp_path / "pl.npz")
    assert learned.vocab == list("abcde") and learned.length_counts.tolist() == [0, 1, 1, 1]
    assert um.pcfg_ie_errors(learned.params, p)["max"] < 1e-8
    res = invoke(
        "unmix",
        "--model",
        "dep-ies",
        "--exact-moments",
        tmp_path / "q.npz",
        "-o",
        tmp_path / "ql.npz",
    )
    assert res.exit_code == 0, res.stderr
    assert um.dep_ies_errors(modelfile.load(tmp_path / "ql.npz").params, q)["max"] < 1e-12


def test_cli_dep_ies_from_sentences(tmp_path):
    q = fam.random_params("dep-ies", 4, None, np.random.default_rng(8))
    modelfile.save(
        tmp_path / "q.npz",
        modelfile.TopologyModel("dep-ies", q, list("wxyz"), np.array([0, 1, 2, 4])),
    )
    sample = invoke("sample", tmp_path / "q.npz", "-n", "100000", "--seed", "2")
    (tmp_path / "s.txt").write_text(sample.stdout)
    res = invoke("unmix", "--model", "dep-ies", tmp_path / "s.txt", "-o", tmp_path / "l.npz")
    assert res.exit_code == 0, res.stderr
    learned = modelfile.load(tmp_path / "l.npz")
    order = [learned.vocab.index(w) for w in "wxyz"]
    a = learned.params.left[np.ix_(order, order)]
    assert np.abs(a - q.left).max() < 0.1


def test_cli_errors_are_one_line(tmp_path):
    (tmp_path / "s.txt").write_text("a b c\nb c a\n")
    parsing = tmp_path / "g.npz"
    random_lpcfg(inter=2, pre=2, words=5, states=1, seed=1).save(parsing)
    modelfile.save(tmp_path / "p.npz", _model("pcfg-ie", d=4, k=2))
    s, o = tmp_path / "s.txt", tmp_path / "o.npz"
    cases = [
        (("--model", "pcfg-ie", "--states", "2", tmp_path / "missing.txt"), "no such file"),
        (("--model", "pcfg-ie", "--states", "4", s), "d = 3 < k = 4"),
        (("--model", "pcfg-ie", "--states", "2"), "give SENTENCES or --exact-moments"),
        (("--model", "pcfg-ie", s, "--exact-moments", tmp_path / "p.npz"), "not both"),
        (
            ("--model", "pcfg-ie", "--exact-moments", parsing),
            "a parsing model (made by `lpcfg train`), not a topology model",
        ),
        (("--model", "dep-ies", "--exact-moments", tmp_path / "p.npz"), "a pcfg-ie model"),
        (("--model", "pcfg-ie", s), "needs --states"),
        (("--model", "dep-ies", "--states", "2", s), "--states has no effect"),
        (("--model", "dep-ies", s), "length 2"),
    ]
    for args, fragment in cases:
        _one_error(invoke("unmix", *args, "-o", o), fragment)
    assert not o.exists()
    _one_error(invoke("sample", tmp_path / "p.npz", "--latent"), "--latent has no effect")
    _one_error(invoke("sample", parsing, "--length", "3"), "--length has no effect")


def test_sample_reads_a_topology_model_from_stdin(tmp_path):
    modelfile.save(tmp_path / "p.npz", _model("dep-ie"))
    raw = (tmp_path / "p.npz").read_bytes()
    piped = invoke("sample", "-", "-n", "4", "--seed", "3", stdin=raw)
    assert piped.exit_code == 0, piped.stderr
    assert piped.stdout == invoke("sample", tmp_path / "p.npz", "-n", "4", "--seed", "3").stdout
    assert len(piped.stdout.splitlines()) == 4
