"""How a parsing model file stores its parameters compactly (format version 2).

A latent model's binary rule tensors are mostly entries too small to matter: EM and the
pivot learner drive most of an ``m x m x m`` block towards zero, and the parser's
single-precision latent pass flushes every entry below ``DROP_BELOW`` (``engine.scaling.
FLUSH``, the same value) to zero before it multiplies anything. So a model whose parameters
the parser runs in single precision (all below ``SINGLE_LIMIT`` in absolute value, the
parser's own test) is stored as

- ``NAME_mask``: ``np.packbits`` of which entries of the flat array have
  ``|x| >= DROP_BELOW``, and ``NAME_kept``: those entries, in order, as float32, for the
  binary tensors;
- float32 for the lexical and root parameters (dense: few of them are small).

Parsing such a file gives the parses of the float64 file it came from, bit for bit: the
parser would have rounded each value to float32 and flushed each dropped one itself. The
file is what the Berkeley parser's rule filter does for its grammar files, with the
threshold the parser already applies. Reading expands the arrays back to float64 (every
learner and scorer works in float64); float32 rounding moves a log-probability by about
1e-7 relative. Models the parser runs in float64 (a tensor-form model with entries beyond
``SINGLE_LIMIT``) keep float64 arrays.
"""

from __future__ import annotations

import numpy as np

from lpcfg_cli.errors import LpcfgError

DROP_BELOW = 1e-10  # engine.scaling.FLUSH
SINGLE_LIMIT = 1e20  # the parser's largest parameter for its float32 latent pass


def single_precision(*arrays: np.ndarray) -> bool:
    """Whether the parser runs parameters ``arrays`` in float32 (every |value| below
    ``SINGLE_LIMIT``), so that they may be stored compactly."""
    return all(float(np.abs(a).max(initial=0.0)) < SINGLE_LIMIT for a in arrays)


def pack(name: str, values: np.ndarray, sparse: bool) -> dict[str, np.ndarray]:
    """The entries that store the flat float array ``values`` as ``name``: a bit mask and
    the float32 entries it keeps (``sparse``), else float32 dense."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if not sparse:
        return {name: values.astype(np.float32)}
    keep = np.abs(values) >= DROP_BELOW
    return {f"{name}_mask": np.packbits(keep), f"{name}_kept": values[keep].astype(np.float32)}


def as_stored(values: np.ndarray) -> np.ndarray:
    """What a compact file gives back for ``values`` (float64): each entry rounded to
    float32, those below ``DROP_BELOW`` in absolute value zero."""
    out = np.asarray(values, dtype=np.float32).astype(np.float64)
    out[np.abs(np.asarray(values)) < DROP_BELOW] = 0.0
    return out


class StoredEntries:
    """A flat array of ``size`` entries as a compact file stores it: ``mask`` (``np.packbits``
    of which entries are kept) and the ``kept`` entries in order; the others are zero.

    The parser packs its rule tensors straight from the entries
    (``engine.chart_grammars.LatentGrammar.from_model``), so that parsing never holds the
    dense float64 array (82 MB for an EM m = 16 model, against its 5 MB of entries);
    ``dense`` expands it for everything else.
    """

    def __init__(self, name: str, mask: np.ndarray, kept: np.ndarray, size: int) -> None:
        if mask.dtype != np.uint8 or mask.ndim != 1 or kept.ndim != 1 or kept.dtype.kind != "f":
            raise LpcfgError(f"{name} parameters: malformed mask or entries")
        if len(mask) != (size + 7) // 8:
            raise LpcfgError(
                f"{name} parameters: a mask of {len(mask) * 8} bits for {size} entries"
            )
        bits = int(np.unpackbits(mask, count=size).sum(dtype=np.int64))
        if bits != len(kept):
            raise LpcfgError(
                f"{name} parameters: the mask keeps {bits} entries, the file has {len(kept)}"
            )
        self.mask, self.kept, self.size = mask, kept, size

    def dense(self) -> np.ndarray:
        """The flat float64 array."""
        out = np.zeros(self.size, dtype=np.float64)
        out[np.unpackbits(self.mask, count=self.size).view(bool)] = self.kept
        return out

    def absmax(self) -> float:
        """The largest absolute value (0 for no entries)."""
        return float(np.abs(self.kept).max(initial=0.0))


def unpack(
    name: str, arrays: dict[str, np.ndarray], size: int, *, lazy: bool = False
) -> np.ndarray | StoredEntries:
    """The flat float64 array stored as ``name`` (dense, any float type, or mask and kept
    entries), of ``size`` entries; a mask that does not fit is ``LpcfgError``. With ``lazy``
    a mask and entries come back as ``StoredEntries``, not expanded."""
    if name in arrays:
        return np.asarray(arrays[name], dtype=np.float64)
    stored = StoredEntries(name, arrays[f"{name}_mask"], arrays[f"{name}_kept"], size)
    return stored if lazy else stored.dense()
