"""Model files: round trip, and refusal of corrupt or foreign files."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from lpcfg_cli.engine.scaling import FLUSH
from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.packed_arrays import DROP_BELOW, as_stored
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
    for key in ("binary", "lexical", "root"):  # float32, entries below DROP_BELOW dropped
        np.testing.assert_array_equal(getattr(back, key), as_stored(getattr(model, key)))
    np.testing.assert_array_equal(back.states, model.states)
    assert back.grammar.symbols == model.grammar.symbols
    assert back.meta["history"] == model.meta["history"]
    assert back.meta["format_version"] == 2
    assert back.meta["storage"] == {"dtype": "float32", "drop_below": DROP_BELOW}
    assert back.check_probabilistic() < 1e-6  # float32's rounding


def test_exact_storage_round_trips_bit_for_bit(tmp_path):
    model = random_lpcfg(inter=4, pre=4, words=12, states=3, seed=9)
    model.binary[:5] = [1e-12, -1e-11, 1e-300, 0.1 + 1e-12, 0.0]
    model.save(tmp_path / "x.npz", compact=False)
    back = LPCFG.load(tmp_path / "x.npz")
    for key in ("binary", "lexical", "root"):
        np.testing.assert_array_equal(getattr(back, key), getattr(model, key))
    assert back.meta["storage"] == {"dtype": "float64"}


def test_compact_storage_drops_only_what_the_parser_flushes(tmp_path):
    """Entries below DROP_BELOW (the engine's FLUSH) are dropped, the rest rounded to
    float32; the mask holds one bit per entry, and a model too large for float32 parsing
    keeps float64."""
    assert DROP_BELOW == FLUSH
    model = random_lpcfg(inter=4, pre=4, words=12, states=3, seed=9)
    model.binary[:4] = [1e-12, -1e-11, 1e-10, -2e-10]
    model.save(tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as data:
        assert "binary" not in data.files and data["binary_kept"].dtype == np.float32
        assert len(data["binary_kept"]) == int((np.abs(model.binary) >= 1e-10).sum())
        assert len(data["binary_mask"]) == (len(model.binary) + 7) // 8
        assert data["lexical"].dtype == np.float32
    back = LPCFG.load(tmp_path / "c.npz")
    assert list(back.binary[:4]) == [0.0, 0.0, float(np.float32(1e-10)), float(np.float32(-2e-10))]
    model.binary[7] = 1e25  # beyond float32 parsing: stored exactly
    model.save(tmp_path / "big.npz")
    back = LPCFG.load(tmp_path / "big.npz")
    np.testing.assert_array_equal(back.binary, model.binary)
    assert back.meta["storage"] == {"dtype": "float64"}


def test_a_version_1_file_still_loads(tmp_path):
    """Format version 1 (float64 throughout, as written before compact storage)."""
    model = random_lpcfg(inter=4, pre=4, words=12, states=3, seed=9)
    model.save(tmp_path / "new.npz", compact=False)
    with np.load(tmp_path / "new.npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(arrays["meta_json"].tobytes())
    meta["format_version"] = 1
    del meta["storage"]
    arrays["meta_json"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(tmp_path / "v1.npz", **arrays)
    back = LPCFG.load(tmp_path / "v1.npz")
    np.testing.assert_array_equal(back.binary, model.binary)
    assert back.meta["format_version"] == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a.update(binary_mask=a["binary_mask"][:-1]), "a mask of"),
        (lambda a: a.update(binary_kept=a["binary_kept"][:-1]), "the mask keeps"),
        (lambda a: a.update(binary_mask=a["binary_mask"].astype(np.int16)), "malformed mask"),
    ],
)
def test_a_mask_that_does_not_fit_is_a_corrupt_model(saved, tmp_path, change, message):
    _, path = saved
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    change(arrays)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(LpcfgError, match=f"corrupt model: binary parameters: {message}"):
        LPCFG.load(tmp_path / "bad.npz")


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
    model.save(path, compact=False)
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
    model.save(path, compact=False)
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


def _ragged(seed: int) -> LPCFG:
    """A model whose symbols have 1-3 states, with entries to drop, zeros and signs."""
    base = random_lpcfg(inter=4, pre=4, words=12, states=3, seed=9)
    rng = np.random.default_rng(seed)
    states = rng.integers(1, 4, size=base.grammar.n_symbols)
    model = LPCFG.zeros(base.grammar, states, base.coarse)
    model.binary[:] = rng.uniform(-1, 1, size=len(model.binary))
    model.binary[rng.random(len(model.binary)) < 0.4] = 1e-12  # dropped when stored
    model.binary[rng.random(len(model.binary)) < 0.1] = 0.0
    model.lexical[:] = rng.uniform(0, 1, size=len(model.lexical))
    model.root[:] = rng.uniform(0, 1, size=len(model.root))
    return model


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_parser_packs_a_compact_file_from_its_stored_entries(tmp_path, dtype):
    """A compact file's binary parameters stay as stored until read; the parser's packed
    tensors from them are those of the dense array, for ragged state counts and the
    members of a bundle; reading ``binary`` expands them."""
    from lpcfg_cli.engine.chart_grammars import LatentGrammar

    for seed in (1, 2):
        _ragged(seed).save(tmp_path / f"r{seed}.npz")
    lazy = LPCFG.load(tmp_path / "r1.npz").bundle(LPCFG.load(tmp_path / "r2.npz"))
    for part in (lazy, *lazy.members):
        assert part.stored_binary is not None
        dense_part = LPCFG(
            part.grammar, part.states, part.stored_binary.dense(), part.lexical, part.root,
            part.coarse, part.form, part.meta,
        )  # fmt: skip
        got = LatentGrammar.from_model(part, dtype=dtype)
        want = LatentGrammar.from_model(dense_part, dtype=dtype)
        assert got.packed.dtype == want.packed.dtype == dtype
        for name in ("a_ptr", "a_idx", "b_ptr", "b_idx", "c_ptr", "c_idx", "t_ptr", "packed"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
        assert part.binary_absmax() == float(np.abs(dense_part.binary).max())
    np.testing.assert_array_equal(lazy.binary, as_stored(_ragged(1).binary))
    assert lazy.stored_binary is None and lazy.members[0].stored_binary is not None
