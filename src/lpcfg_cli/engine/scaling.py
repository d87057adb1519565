"""The one scaling scheme of every chart pass.

Every span ``s`` has a log scale ``sc[s]``; the inside vectors of its items are stored divided
by ``exp(sc[s])`` so that their largest absolute entry is 1, and 271-word sentences neither
underflow nor overflow (negative tensor-form values keep their sign). Outside vectors use the
scale ``log Z - sc[s]``: with that choice the factor applied to a (parent, left, right) triple,
``exp(sc[left] + sc[right] - sc[parent])``, is the same in both passes, and the posterior of an
item is simply ``alpha_scaled . beta_scaled``. A span without mass has scale ``-inf``; a split
involving it is skipped.

In single precision, values below ``FLUSH`` (relative to 1, or to the largest outside value) are
flushed to zero: products of such values are subnormal numbers, which the processor handles
dozens of times more slowly; with the flush the parser is faster at the same F1
(docs/design-notes.md, The latent pass).
"""

from __future__ import annotations

import numpy as np

from lpcfg_cli.engine.dispatch import kernel

FLUSH = 1e-10


@kernel(nogil=True)
def split_weight(pair: float, base: float) -> float:
    """``exp(pair - base)``, 0 where either is -inf (an empty child or parent)."""
    if pair == -np.inf or base == -np.inf:
        return 0.0
    return np.exp(pair - base)


@kernel(nogil=True)
def normalise_span(values: np.ndarray, lo: int, hi: int, flush: float) -> float:
    """Divide rows ``lo:hi`` by their largest absolute entry; returns its log (-inf if 0).

    Entries below ``flush`` afterwards are set to zero (``flush`` 0 keeps them).
    """
    mx = 0.0
    for i in range(lo, hi):
        for h in range(values.shape[1]):
            v = abs(values[i, h])
            if v > mx:
                mx = v
    if mx == 0.0:
        return -np.inf
    inv = 1.0 / mx
    for i in range(lo, hi):
        for h in range(values.shape[1]):
            v = values[i, h] * inv
            values[i, h] = 0.0 if abs(v) < flush else v
    return np.log(mx)


def log_value(z: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``scale + log |z|``, -inf where ``z`` is 0 or not finite."""
    z = np.asarray(z, dtype=np.float64)
    ok = np.isfinite(z) & (z != 0) & np.isfinite(scale)
    out = np.full(z.shape, -np.inf)
    out[ok] = scale[ok] + np.log(np.abs(z[ok]))
    return out
