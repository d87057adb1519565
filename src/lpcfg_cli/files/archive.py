"""Model files' container: a ``.npz`` archive of stored (uncompressed) numpy arrays, written
with fixed timestamps (equal models are equal files) and read without pickle, large entries
memory-mapped. Shared by parsing models (``model``) and language models (``lm.lm_file``).
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.streams import open_input

_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def write_npz(fh: Any, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez``'s archive (the same entries, layouts and dtypes), but with a fixed
    timestamp on every entry, so that equal models are equal files.

    Entries are stored, not compressed: a latent model's parameters (random-looking
    doubles) deflate little, and inflating them slowed every ``parse`` start-up several
    times over reading the stored file (docs/design-notes.md, Model files)."""
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, value in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, np.asanyarray(value), allow_pickle=False)


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def read_npz(path: str | os.PathLike[str], name: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` archive at ``path`` (``-``: stdin); anything else (a
    ``.npy`` array, a truncated archive, text) is one ``LpcfgError`` saying what it is.
    A stream that cannot seek (stdin from a pipe, ``<(...)``) is read into memory first,
    as a zip archive is read from its end."""
    with open_input(path, "model file") as raw:
        fh = raw if raw.seekable() else io.BytesIO(raw.read())
        magic = fh.read(len(_NPY_MAGIC))
        fh.seek(0)
        if not magic:
            raise LpcfgError("empty file, not an lpcfg model file", source=name)
        if magic.startswith(_NPY_MAGIC):
            raise LpcfgError(
                "a single numpy array (.npy), not an lpcfg model file (.npz)", source=name
            )
        if not magic.startswith(_ZIP_MAGIC):
            raise LpcfgError("not an lpcfg model file (not an .npz archive)", source=name)
        try:
            with np.load(fh, allow_pickle=False) as data:
                mappable = fh is raw and _is_regular(raw)
                return {k: _mapped(fh, data.zip, k) if mappable else data[k] for k in data.files}
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise LpcfgError(
                f"not an lpcfg model file (a truncated or corrupt .npz archive: {exc})", source=name
            ) from None
        except (OSError, ValueError) as exc:
            raise LpcfgError(f"not an lpcfg model file ({exc})", source=name) from None


def _is_regular(fh: Any) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def _mapped(fh: Any, zf: zipfile.ZipFile, key: str) -> np.ndarray:
    """Entry ``key`` of a stored (uncompressed) ``.npz`` archive, memory-mapped
    copy-on-write instead of read: pages come from the page cache as they are used, and
    processes parsing with the same model share them, and a ``parse`` start-up no longer
    waits for the whole file to be read (docs/design-notes.md, Model files). Small or
    compressed entries are read as usual."""
    info = zf.getinfo(f"{key}.npy")
    if info.compress_type != zipfile.ZIP_STORED or info.file_size < 1 << 16:
        with zf.open(info) as entry:
            return np.lib.format.read_array(entry, allow_pickle=False)
    fh.seek(info.header_offset)
    local = fh.read(30)
    if len(local) != 30 or not local.startswith(_ZIP_MAGIC):
        raise ValueError(f"bad zip entry header for {key}")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + name_len + extra_len
    fh.seek(start)
    version = np.lib.format.read_magic(fh)
    read_header = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }.get(version)
    if read_header is None:
        raise ValueError(f"unsupported .npy version {version} in {key}")
    shape, fortran, dtype = read_header(fh)
    if dtype.hasobject:
        raise ValueError(f"{key} holds Python objects (not allowed)")
    offset = fh.tell()
    count = int(np.prod(shape, dtype=np.int64))
    if offset + count * dtype.itemsize > start + info.file_size:
        raise ValueError(f"entry {key} is shorter than its header says")
    if count == 0:
        return np.zeros(shape, dtype=dtype)
    order = "F" if fortran else "C"
    mapped = np.memmap(fh, dtype=dtype, mode="c", offset=offset, shape=shape, order=order)
    return mapped.view(np.ndarray)
