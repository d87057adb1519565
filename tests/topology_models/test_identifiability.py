"""CHECKIDENTIFIABILITY (Hsu, Kakade & Liang 2012, section 4): the complex-step Jacobian
against finite differences, the reduced observation rows against the paper's literal
definitions, the verdicts the paper states, the rank decision and ``lpcfg identifiability``.
"""

from __future__ import annotations

import itertools
import json
from math import comb

import numpy as np
import pytest

from lpcfg_cli.cli.options import flag_of
from lpcfg_cli.errors import ParameterError
from lpcfg_cli.topology_models import families, moments
from lpcfg_cli.topology_models.identifiability import CheckOptions, check, figure2
from lpcfg_cli.topology_models.jacobian import MomentMap, jacobian, moment_rows, numerical_rank
from lpcfg_cli.topology_models.observations import blocks, eta_vector
from tests.support import invoke

SIZES = {
    "pcfg": (3, 2),
    "pcfg-i": (3, 2),
    "pcfg-ie": (3, 3),
    "dep-i": (3, None),
    "dep-ie": (3, None),
    "dep-ies": (3, None),
}


def _point(family: str, seed: int = 0):
    d, k = SIZES[family]
    rng = np.random.default_rng(seed)
    return d, k, families.random_theta(family, d, k, rng), rng


@pytest.mark.parametrize("family", families.FAMILIES)
@pytest.mark.parametrize("obs,length", [("phi***eta", 3), ("phi**", 4), ("phiall", 3)])
def test_jacobian_matches_finite_differences(family, obs, length):
    d, k, theta, rng = _point(family)
    eta = eta_vector("random", d, rng)
    obs_blocks = blocks(obs, length)
    mm = MomentMap(family, d, k, length, obs_blocks, eta)
    jac = jacobian(mm, theta)
    h = 1e-6
    fd = np.empty_like(jac)
    for j in range(len(theta)):
        up, down = theta.copy(), theta.copy()
        up[j] += h
        down[j] -= h
        diff = moment_rows(mm, up)
        fd[:, j] = (diff - moment_rows(mm, down)) / (2 * h)
    assert np.abs(jac - fd).max() <= 1e-7 * max(1.0, np.abs(jac).max())
    assert np.abs(jac).max() > 1e-3  # not trivially zero


def _literal_rows(family, theta, d, k, length, order, eta):
    """The paper's definition of phi** / phi*** / phi***eta taken literally: every ordered
    tuple of positions, repeats included (a repeated position is a diagonal)."""
    params = families.unpack(family, theta, d, k)
    rows = []
    for tup in itertools.product(range(length), repeat=order):
        u = tuple(sorted(set(tup)))
        t = moments.moment(params, length, u)
        # expand to one axis per tuple entry (a repeated position: the diagonal)
        letters = "abc"
        src = "".join(letters[u.index(q)] for q in u)
        dst = "".join(letters[u.index(q)] for q in tup)
        full = np.einsum(f"...{src}->...{dst}", t) if len(set(tup)) == len(tup) else None
        if full is None:  # diagonal embedding
            shape = t.shape[: -len(u)] + (d,) * order
            full = np.zeros(shape, dtype=t.dtype)
            for words in itertools.product(range(d), repeat=len(u)):
                value = t[(...,) + words]
                full[(...,) + tuple(words[u.index(q)] for q in tup)] = value
        if eta is not None:
            full = np.tensordot(full, eta, axes=([full.ndim - 1], [0]))
        rows.append(full.reshape(*full.shape[: full.ndim - (order - (eta is not None))], -1))
    return np.concatenate(rows, axis=-1)


@pytest.mark.parametrize("family", ["pcfg-ie", "dep-ie"])
@pytest.mark.parametrize(
    "obs,order,sliced", [("phi**", 2, False), ("phi***", 3, False), ("phi***eta", 3, True)]
)
def test_reduced_rows_span_the_literal_definition(family, obs, order, sliced):
    """Dropping transposed, repeated and zero entries keeps the row space of J exactly."""
    d, k, theta, rng = _point(family, seed=3)
    eta = eta_vector("e1", d, rng)
    length = 3
    ours = jacobian(MomentMap(family, d, k, length, blocks(obs, length), eta), theta)
    step = 1e-30
    n = len(theta)
    points = np.tile(theta.astype(complex), (n, 1)) + 1j * step * np.eye(n)
    literal = _literal_rows(family, points, d, k, length, order, eta if sliced else None)
    literal = literal.imag.T / step
    r_ours = numerical_rank(ours).rank
    assert numerical_rank(literal).rank == r_ours
    assert numerical_rank(np.vstack([ours, literal])).rank == r_ours


@pytest.mark.parametrize("length", [3, 4, 5])
def test_pcfg_not_identifiable_even_from_phiall(length):
    for d, k in [(3, 2), (2, 2)]:
        v = check("pcfg", "phiall", length, d, k)
        assert not v.identifiable and v.rank < v.parameters and not v.uncertain


@pytest.mark.parametrize("family", ["pcfg-i", "pcfg-ie"])
def test_pcfg_i_and_ie_identifiable_from_length_three(family):
    for length in (3, 4, 5):
        assert check(family, "phi123", length, 4, 2).identifiable
        assert check(family, "phi***", length, 3, 3).identifiable
    # phi** needs L >= 4 (the paper's Figure 2)
    assert not check(family, "phi**", 3, 3, 2).identifiable
    assert check(family, "phi**", 4, 3, 2).identifiable


@pytest.mark.parametrize("family", ["pcfg-i", "pcfg-ie"])
def test_one_slice_of_the_third_moment_has_rank_dk(family):
    """mu123eta = A X A^T for a k x k X, so its Jacobian's rank is at most d * k, below the
    parameter count: one slice never identifies PCFG-I/IE (README: this differs from the
    paper's 'e.g. phi123eta')."""
    for d, k in [(3, 2), (4, 3), (5, 2)]:
        for eta in ("e1", "random"):
            v = check(family, "phi123eta", 3, d, k, eta=eta)
            assert v.rank == d * k < v.parameters


@pytest.mark.parametrize("family", ["dep-i", "dep-ie"])
def test_dependency_models_identifiable_from_pairs(family):
    for d in (2, 3, 4):
        for length in (3, 4, 5):
            assert check(family, "phi**", length, d).identifiable


@pytest.mark.parametrize("d", [2, 3, 4])
def test_dep_ie_length_two_example(d):
    """Section 4: with L = 2 and phi12 the equivalence class has dimension C(d, 2)."""
    v = check("dep-ie", "phi12", 2, d)
    assert not v.identifiable
    assert v.parameters - v.rank == comb(d, 2)
    assert v.gap > 1e8


def test_numerical_rank_and_gap():
    rng = np.random.default_rng(0)
    q1, _ = np.linalg.qr(rng.standard_normal((40, 6)))
    q2, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    m = q1 @ np.diag([1, 0.5, 0.1, 1e-3, 1e-14, 1e-15]) @ q2
    r = numerical_rank(m, tolerance=1e-11)
    assert r.rank == 4 and r.columns == 6
    assert r.gap > 1e9 and not r.uncertain
    r = numerical_rank(m, tolerance=1e-2)  # cuts inside the spectrum: a small gap
    assert r.rank == 3 and r.uncertain


def test_figure2_cells_summarise_lengths():
    cells = {
        (c.model, c.observation): c
        for c in figure2(
            words=[2, 3],
            lengths=[2, 3, 4],
            models=["pcfg-ie", "dep-ie"],
            observations=["phi12", "phi**"],
        )
    }
    assert cells["pcfg-ie", "phi**"].summary() == "Yes iff L >= 4"
    assert cells["pcfg-ie", "phi12"].summary() == "No"
    assert cells["dep-ie", "phi**"].summary() == "Yes iff L >= 3"


def test_cli_verdict_text_and_json(tmp_path):
    r = invoke(
        "identifiability", "--model", "dep-ie", "--obs", "phi12", "--length", "2", "--words", "3"
    )
    assert r.exit_code == 0
    assert r.stdout.splitlines()[0] == "dep-ie from phi12 (L = 2, d = 3 words): not identifiable"
    assert "Jacobian rank 5 of 8 parameters" in r.stdout
    out = tmp_path / "v.json"
    r = invoke(
        "identifiability",
        "--model",
        "pcfg-ie",
        "--obs",
        "phi123",
        "--length",
        "3",
        "--words",
        "4",
        "--states",
        "2",
        "--json",
        "-o",
        str(out),
    )
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert data["identifiable"] is True and data["rank"] == data["parameters"] == 9


def test_cli_table(tmp_path):
    out = tmp_path / "fig.md"
    r = invoke(
        "identifiability", "--table", "--words", "2", "--length", "2-3", "-q", "-o", str(out)
    )
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "| **pcfg-ie** | No <br> paper: No |" in text
    assert "d in {2}" in text


@pytest.mark.parametrize(
    "args,message",
    [
        (["--model", "pcfg", "--obs", "phi12", "--length", "3", "--words", "3"], "needs --states"),
        (
            [
                "--model",
                "dep-i",
                "--obs",
                "phi12",
                "--length",
                "3",
                "--words",
                "3",
                "--states",
                "2",
            ],
            "--states has no effect",
        ),
        (["--obs", "phi12", "--length", "3", "--words", "3"], "give --model"),
        (
            [
                "--model",
                "pcfg-ie",
                "--obs",
                "phi123",
                "--length",
                "2",
                "--words",
                "3",
                "--states",
                "2",
            ],
            "at least 3 words",
        ),
        (["--model", "dep-i", "--obs", "phiall", "--length", "9", "--words", "8"], "too large"),
        (
            ["--model", "dep-i", "--obs", "phi12", "--length", "3-4", "--words", "3"],
            "one value without --table",
        ),
        (["--table", "--words", "x"], "not a whole number"),
        (["--table", "--model", "pcfg"], "--model"),
    ],
)
def test_cli_errors(args, message):
    r = invoke("identifiability", *args)
    assert r.exit_code == 2
    assert r.stderr.startswith("lpcfg: error:") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("call", "library", "flagged"),
    [
        (
            lambda: check("pcfg", "phi12", 3, 3),
            "model pcfg needs states",
            "--model pcfg needs --states",
        ),
        (
            lambda: check("pcfg-ie", "phi12", 3, 3, 1),
            "states must be at least 2 for pcfg-ie, not 1",
            "--states must be at least 2",
        ),
        (lambda: check("dep-i", "phi12", 3, 1), "words must be at least 2, not 1", "--words must"),
        (
            lambda: check("dep-i", "phi12", 0, 3),
            "length must be at least 1, not 0",
            "--length must",
        ),
        (
            lambda: eta_vector("e2", 3, np.random.default_rng(0)),
            "eta must be e1 or random, not 'e2'",
            "--eta must",
        ),
        (
            lambda: CheckOptions(model="dep-i", words=3),
            "a check needs observation, length",
            "a check needs --obs, --length",
        ),
    ],
)
def test_library_errors_name_parameters_the_command_line_its_flags(call, library, flagged):
    """The library's errors name its parameters (no flag); the command line writes each
    as the flag that sets it (``cli.options.flag_of``)."""
    with pytest.raises(ParameterError) as caught:
        call()
    assert str(caught.value).startswith(library) and "--" not in str(caught.value)
    assert caught.value.render(flag_of).startswith(flagged)


def test_the_command_line_error_line_has_the_flag():
    r = invoke(
        "identifiability", "--model", "pcfg", "--obs", "phi12", "--length", "3", "--words", "3"
    )
    assert r.stderr == "lpcfg: error: --model pcfg needs --states\n"
