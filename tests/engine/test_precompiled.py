"""The kernels' extension module (``precompiled``) and how a call chooses it (``dispatch``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lpcfg_cli.engine import dispatch, precompiled
from lpcfg_cli.engine.jit import numba_notation
from lpcfg_cli.engine.precompiled import argument_key, signature_key
from lpcfg_cli.engine.precompiled_signatures import SIGNATURES
from lpcfg_cli.grammar.compiled import build_grammar
from tests.support import fit_em, synthetic_treebank

C_ARRAYS = [
    np.zeros(3),
    np.zeros((2, 3), np.float32),
    np.zeros((2, 2, 2), np.int64),
    np.zeros(4, np.int32),
    np.zeros(2, bool),
    np.zeros((3, 1), np.uint8),
    np.zeros((0, 3)),
    np.zeros((1, 4)).T,  # both C- and F-contiguous: numba calls it C
    np.frombuffer(bytearray(13), np.float32, 3, offset=1),  # unaligned, as a mapped entry
]
OTHER_ARRAYS = [
    np.zeros((3, 4))[:, ::2],
    np.zeros((3, 4), order="F"),
    np.zeros(4, dtype=">f8"),
    np.frombuffer(bytearray(32), dtype=np.float64),  # writable; read-only below
    np.zeros(6, np.int64)[::2],
]
SCALARS = [1, -(2**40), 2.5, True, np.float32(1), np.float64(2), np.int64(3), np.int32(4)]


def test_a_call_matches_a_signature_exactly_when_numba_gives_it_that_type():
    """The extension module checks no type: ``argument_key`` must equal the key of the
    signature numba would compile for the arguments, and of no other."""
    ro = np.zeros(3)
    ro.flags.writeable = False
    values = [*C_ARRAYS, *OTHER_ARRAYS, ro, *SCALARS]
    values += [tuple(C_ARRAYS[:3]), (np.zeros(2, bool),) * 3, (1, 2.0)]
    keys: dict = {}
    refused = []
    for v in values:
        try:
            spec = numba_notation(v)
        except ValueError:  # no signature takes it
            refused.append(argument_key((v,)))
            continue
        assert argument_key((v,)) == signature_key((spec,)), spec
        keys.setdefault(argument_key((v,)), set()).add(spec)
    assert all(len(specs) == 1 for specs in keys.values()), keys
    assert len(refused) == 5 and not set(refused) & set(keys), refused


def test_every_listed_signature_is_understood():
    for name, signatures in SIGNATURES.items():
        assert signatures, name
        for signature in signatures:
            assert None not in signature_key(signature), (name, signature)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("aot")
    grammar, bank = build_grammar(synthetic_treebank(d, 300, 40))
    em = fit_em(grammar, bank, states=2, iterations=2, seed=1)
    em.save(d / "em.npz")
    others = [fit_em(grammar, bank, states=2, iterations=2, seed=s) for s in (2, 3)]
    em.bundle(*others).save(d / "trio.npz")  # the later two share plans (refresh_plan)
    return d


PARSE = """
import os, sys
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions
from lpcfg_cli.treebank.ptb import format_tree
model = LPCFG.load(sys.argv[1])
text = [line.split() for line in open(sys.argv[2])]
for decode in sys.argv[3:]:
    for r in BlockParser(model, ParserOptions(decode=decode)).parse(text):
        print(format_tree(r.tree) if r.tree is not None else "-")
print(sorted(m for m in ("numba", "llvmlite", "scipy.linalg") if m in sys.modules))
"""

DECODERS = ["max-marginal", "max-bracket", "max-rule-product", "variational"]


def _parse(model, text, env=None):
    out = subprocess.run(
        [sys.executable, "-c", PARSE, str(model), str(text), *DECODERS],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stderr
    *trees, modules = out.stdout.splitlines()
    return trees, modules


@pytest.mark.skipif(precompiled.module_path() is None, reason="no /proc/cpuinfo or cache folder")
@pytest.mark.parametrize("name", ["em.npz", "trio.npz"])
def test_a_parse_runs_the_extension_module_alone_and_parses_as_numba_does(models, name):
    """Every kernel call of a parse, with every decoder, of a latent model and of a product
    of three, is one of the module's signatures: numba is never imported; the trees are
    numba's."""
    trees, modules = _parse(models / name, models / "test.txt")
    assert modules == "[]"
    jit_trees, jit_modules = _parse(models / name, models / "test.txt", {"LPCFG_PRECOMPILED": "0"})
    assert "numba" in jit_modules
    assert trees == jit_trees and trees.count("-") < len(trees)


WRONG_TYPES = """
import numpy as np, sys
from lpcfg_cli.engine.kernels import flush_and_cut
from lpcfg_cli.engine import precompiled
assert precompiled.load() is not None
alpha = np.ones((4, 3))
chart = np.full((4, 3), 1e-30, dtype=np.float64)  # the module's signature is float32
flush_and_cut(alpha, chart, 0, 4, 1e-20, 0.0)
print(float(chart.sum()), "numba" in sys.modules)
"""


@pytest.mark.skipif(precompiled.module_path() is None, reason="no /proc/cpuinfo or cache folder")
def test_a_call_no_signature_takes_goes_to_numba():
    """The module would read a float64 array as float32 (or crash): numba runs it."""
    out = subprocess.run(
        [sys.executable, "-c", WRONG_TYPES], capture_output=True, text=True, check=True
    )
    total, numba_loaded = out.stdout.split()
    assert float(total) == 0.0 and numba_loaded == "True"


def test_a_failed_build_leaves_numba_in_charge(tmp_path, monkeypatch, capfd):
    """No C compiler: one warning, a ``.failed`` file with the compiler's output, nothing
    on stdout, no module; a later process does not try again."""
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    target = str(tmp_path / ("m" + ".so"))
    assert precompiled.build(target) is False
    out, err = capfd.readouterr()
    assert out == ""
    assert err.startswith("lpcfg: warning: could not compile the kernels ahead of time")
    assert len(err.splitlines()) == 1
    assert not os.path.exists(target)
    assert "compiler" in open(target + ".failed").read()
    assert os.listdir(tmp_path) == ["m.so.failed"]  # its work folder is gone
    monkeypatch.setattr(precompiled, "module_path", lambda: target)
    monkeypatch.setattr(precompiled, "_module", precompiled._UNTRIED)
    monkeypatch.setattr(precompiled, "build", lambda path: pytest.fail("built again"))
    assert precompiled.load() is None
    assert precompiled.functions("lpcfg_cli.engine.kernels.flush_and_cut") == {}


def test_the_digest_names_the_processor_and_the_sources(monkeypatch):
    if precompiled.processor() is None:
        pytest.skip("no /proc/cpuinfo")
    key = precompiled.digest()
    monkeypatch.setattr(precompiled, "processor", lambda: "model name: another")
    assert precompiled.digest() != key
    monkeypatch.setattr(precompiled, "SOURCES", precompiled.SOURCES[:-1])
    assert len({key, precompiled.digest()}) == 2


def test_lpcfg_precompiled_0_turns_it_off(monkeypatch):
    monkeypatch.setenv("LPCFG_PRECOMPILED", "0")
    assert precompiled.module_path() is None


def test_kernels_stay_kernels_in_their_modules():
    """numba's dispatchers go into a copy of a kernel's globals, not its module: a call
    from Python keeps choosing between the module and numba."""
    from lpcfg_cli.engine import kernels

    kernels.inside_chunk.dispatcher  # noqa: B018 - makes the dispatchers of what it calls
    assert isinstance(kernels.inside_chunk, dispatch.Kernel)
    assert isinstance(kernels.normalise_span, dispatch.Kernel)


@pytest.mark.skipif(precompiled.module_path() is None, reason="no /proc/cpuinfo or cache folder")
def test_lpcfg_parse_imports_no_numba(models, tmp_path):
    """The command, not only the library: nothing on its import path pulls numba in, nor,
    without a progress bar, tqdm or importlib.metadata (a tenth of a short parse's
    start-up)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lpcfg_cli", "parse", "--jobs", "2"]
        + [str(models / "trio.npz"), str(models / "test.txt"), "-o", str(tmp_path / "p")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert "lpcfg_cli.engine.kernels" in imported
    assert not {"numba", "llvmlite", "scipy.linalg"} & imported
    assert not {"tqdm", "importlib.metadata"} & imported


def test_installed_versions_are_the_installers_records():
    """The versions the module's digest reads off the dist-info folders are those
    importlib.metadata gives; a package that is not installed is a LookupError."""
    from importlib import metadata

    for package in ("numba", "llvmlite", "numpy", "click"):
        assert precompiled.installed_version(package) == metadata.version(package)
    with pytest.raises(LookupError):
        precompiled.installed_version("no_such_package_lpcfg")


@pytest.mark.skipif(precompiled.module_path() is None, reason="no /proc/cpuinfo or cache folder")
def test_the_module_can_be_built_before_any_parse():
    out = subprocess.run(
        [sys.executable, "-m", "lpcfg_cli.engine.precompiled"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == precompiled.module_path()
    assert os.path.exists(out.stdout.strip())
    off = subprocess.run(
        [sys.executable, "-m", "lpcfg_cli.engine.precompiled"],
        capture_output=True,
        text=True,
        env={**os.environ, "LPCFG_PRECOMPILED": "0"},
    )
    assert off.returncode == 1 and off.stdout == ""
    assert off.stderr.startswith("lpcfg: error: no kernels' module here")


def test_the_recorded_signatures_are_the_committed_ones(models, tmp_path):
    """``scripts/kernel_signatures.py`` on a latent model and a product of three records
    only signatures the committed table has (a kernel whose arguments changed shows here,
    by name, before it shows as a slow start-up)."""
    table = tmp_path / "signatures.py"
    script = Path(__file__).resolve().parents[2] / "scripts" / "kernel_signatures.py"
    out = subprocess.run(
        [sys.executable, str(script), "--data", str(models), "--sentences", "15"]
        + ["--models", f"{models / 'em.npz'},{models / 'trio.npz'}", "-o", str(table)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    namespace: dict = {}
    exec(table.read_text(), namespace)
    recorded = namespace["SIGNATURES"]
    assert "lpcfg_cli.engine.kernels.inside_chunk" in recorded
    missing = {
        name: [s for s in signatures if s not in SIGNATURES.get(name, [])]
        for name, signatures in recorded.items()
    }
    assert {k: v for k, v in missing.items() if v} == {}


def test_a_build_with_nowhere_to_work_is_a_warning(tmp_path, capfd):
    """A folder that vanished or filled up under the build: one warning, numba's path."""
    target = tmp_path / "gone" / "m.so"
    assert precompiled.build(str(target)) is False
    out, err = capfd.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith("lpcfg: warning: could not compile the kernels ahead of time")
    assert not target.parent.exists()
