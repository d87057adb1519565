"""Model files: round trip, and refusal of corrupt or foreign files."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import random_lpcfg


@pytest.fixture
def saved(tmp_path):
    model = random_lpcfg(inter=4, pre=4, words=12, states=3, seed=9)
    model.meta["history"] = [{"iteration": 1, "train_loglik": -1.5}]
    path = tmp_path / "m.npz"
    model.save(path)
    return model, path


def test_round_trip(saved):
    model, path = saved
    back = LPCFG.load(path)
    np.testing.assert_array_equal(back.binary, model.binary)
    np.testing.assert_array_equal(back.states, model.states)
    assert back.grammar.symbols == model.grammar.symbols
    assert back.meta["history"] == model.meta["history"]
    assert back.meta["format_version"] == 1
    assert back.check_probabilistic() < 1e-9


def rewrite(path, **changes):
    """Copy of the archive at ``path`` with some arrays replaced."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update(changes)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"binary": np.zeros(3)}, "binary parameters have 3 entries"),
        ({"states": np.zeros(8, dtype=np.int64)}, "latent state counts"),
        ({"root": np.full(8 * 3, np.nan)}, "not all finite"),
        ({"meta_json": np.frombuffer(b"{not json", dtype=np.uint8)}, "corrupt model metadata"),
        (
            {"meta_json": np.frombuffer(json.dumps({"format": "x"}).encode(), dtype=np.uint8)},
            "not an lpcfg model file",
        ),
        ({"rules_binary": np.full((2, 3), 99)}, "unknown symbol"),
    ],
)
def test_corrupt_models_are_refused(saved, change, message):
    _, path = saved
    rewrite(path, **change)
    with pytest.raises(LpcfgError, match=message):
        LPCFG.load(path)


def test_foreign_and_pickled_files_are_refused(tmp_path):
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.ones(3))
    with pytest.raises(LpcfgError, match="no metadata"):
        LPCFG.load(foreign)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, meta_json=np.array([{"a": 1}], dtype=object))
    with pytest.raises(LpcfgError, match="not an lpcfg model file"):
        LPCFG.load(pickled)
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(LpcfgError, match="not an lpcfg model file"):
        LPCFG.load(text)
    assert zipfile.is_zipfile(foreign)


def test_large_arrays_are_mapped_copy_on_write(tmp_path):
    """Entries of 64 KiB and more are memory-mapped, not read: the loaded arrays equal the
    saved ones, stay writable, and writing to them leaves the file as it was."""
    model = random_lpcfg(inter=4, pre=4, words=12, states=16, seed=3)
    path = tmp_path / "big.npz"
    model.save(path)
    assert model.binary.nbytes >= 1 << 16
    before = path.read_bytes()
    back = LPCFG.load(path)
    np.testing.assert_array_equal(back.binary, model.binary)
    assert back.check_probabilistic() < 1e-9
    back.binary[:] = 0.0
    assert path.read_bytes() == before
    np.testing.assert_array_equal(LPCFG.load(path).binary, model.binary)


def test_a_mapped_entry_shorter_than_its_header_is_refused(tmp_path):
    model = random_lpcfg(inter=4, pre=4, words=12, states=16, seed=3)
    path = tmp_path / "big.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    binary = arrays.pop("binary")
    short = io.BytesIO()  # a header claiming twice the entries the entry holds
    np.lib.format.write_array_header_1_0(
        short, {"descr": "<f8", "fortran_order": False, "shape": (2 * len(binary),)}
    )
    short.write(binary.astype("<f8").tobytes())
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, value in arrays.items():
            with zf.open(f"{key}.npy", "w") as entry:
                np.lib.format.write_array(entry, value, allow_pickle=False)
        zf.writestr("binary.npy", short.getvalue())
    with pytest.raises(LpcfgError, match="shorter than its header says"):
        LPCFG.load(path)
