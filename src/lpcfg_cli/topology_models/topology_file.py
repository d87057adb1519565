"""Topology-model files: a random-topology parsing model (``families``) with its vocabulary
and training length distribution, as one ``.npz`` archive (``files.model_file``).

Entries: ``meta_json`` (UTF-8 JSON: ``format`` ``"lpcfg-topology-model"``,
``format_version`` 1, ``family``, ``d``, ``k``, ``vocabulary`` (the token strings in id
order) and ``meta``, free JSON such as how the model was learned), ``length_counts`` (int
counts of sentences per length, index = length; sampling without a fixed length draws from
it) and the family's distributions as float arrays, column-stochastic as in ``families``:
``pi`` (not for dep-ies, whose ``pi`` is ``A``'s stationary distribution), ``b`` (pcfg),
``t1``/``t2`` (pcfg-i), ``t`` (pcfg-ie), ``o`` (constituency), ``left``/``right``
(dep-i), ``a`` (dep-ie, dep-ies).

Written atomically with fixed zip timestamps (equal models are equal files), read with
``allow_pickle=False``; anything malformed (another lpcfg format, a missing or misshapen
array, columns that are not distributions, a bad vocabulary) is one ``LpcfgError``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.model_file import TOPOLOGY, ModelFile, read_model_file, write_model_file
from lpcfg_cli.topology_models.families import (
    CONSTITUENCY,
    FAMILIES,
    Constituency,
    Dependency,
    Params,
    factor_product,
    stationary,
)
from lpcfg_cli.treebank.sentences import split_tokens

_TOLERANCE = 1e-6  # a distribution's entries must sum to 1 within this


@dataclass
class TopologyModel:
    """A model of ``family`` over the words ``vocab`` (id order) and the sentence lengths
    it was trained on (``length_counts[L]`` sentences of ``L`` words)."""

    family: str
    params: Params
    vocab: list[str]
    length_counts: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def d(self) -> int:
        return self.params.d

    @property
    def k(self) -> int:
        return self.params.k if isinstance(self.params, Constituency) else self.params.d


def _arrays(family: str, p: Params) -> dict[str, np.ndarray]:
    """The distributions a file of ``family`` stores (see the module docstring)."""
    if isinstance(p, Constituency):
        if family == "pcfg":
            return {"pi": p.pi, "b": p.b, "o": p.o}
        if family == "pcfg-i":
            return {"pi": p.pi, "t1": p.t1, "t2": p.t2, "o": p.o}
        return {"pi": p.pi, "t": p.t1, "o": p.o}
    if family == "dep-i":
        return {"pi": p.pi, "left": p.left, "right": p.right}
    if family == "dep-ie":
        return {"pi": p.pi, "a": p.left}
    return {"a": p.left}


def save(path: str | os.PathLike[str], model: TopologyModel) -> None:
    """Write ``model`` atomically to ``path`` (``-``: stdout). It is checked first (the
    same checks as ``load``), so a file this writes can be read back."""
    _check(model, "model")
    header = {
        "family": model.family,
        "d": model.d,
        "k": model.k,
        "vocabulary": list(model.vocab),
        "meta": model.meta,
    }
    arrays: dict[str, np.ndarray] = {
        "length_counts": np.asarray(model.length_counts, dtype=np.int64)
    }
    for name, value in _arrays(model.family, model.params).items():
        arrays[name] = np.asarray(np.real(value), dtype=np.float64)
    write_model_file(path, TOPOLOGY, header, arrays)


def load(path: str | os.PathLike[str]) -> TopologyModel:
    """Read and check the topology-model file at ``path`` (``-``: stdin)."""
    return from_file(read_model_file(path, {TOPOLOGY}))


def from_file(file: ModelFile) -> TopologyModel:
    """The ``TopologyModel`` a topology-model file holds (``files.model_file``)."""
    header, arrays, name = file.header, file.arrays, file.name
    family, vocab, meta = header.get("family"), header.get("vocabulary"), header.get("meta", {})
    if family not in FAMILIES:
        raise LpcfgError(f"corrupt topology model: unknown family {family!r}", source=name)
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        raise LpcfgError("corrupt topology model: vocabulary is not a list of strings", source=name)
    if not isinstance(meta, dict):
        raise LpcfgError("corrupt topology model: meta is not a mapping", source=name)
    try:
        params = _params(family, arrays)
    except KeyError as exc:
        raise LpcfgError(f"corrupt topology model: no array {exc}", source=name) from None
    except _Corrupt as exc:
        raise LpcfgError(f"corrupt topology model: {exc}", source=name) from None
    counts = arrays.get("length_counts")
    model = TopologyModel(family, params, vocab, counts, meta)  # type: ignore[arg-type]
    _check(model, name, header)
    model.length_counts = np.asarray(model.length_counts, dtype=np.int64)
    return model


class _Corrupt(Exception):
    """A malformed array, reported by ``from_arrays`` with the file's name."""


def _params(family: str, arrays: dict[str, np.ndarray]) -> Params:
    def get(key: str) -> np.ndarray:
        value = arrays[key]
        if value.dtype.kind not in "iuf":
            raise _Corrupt(f"{key} is not numeric ({value.dtype})")
        return np.array(value, dtype=np.float64)

    if family == "pcfg":
        return Constituency(get("pi"), get("b"), get("o"))
    if family in CONSTITUENCY:
        t1 = get("t1") if family == "pcfg-i" else get("t")
        t2 = get("t2") if family == "pcfg-i" else t1
        if t1.ndim != 2 or t1.shape != t2.shape or t1.shape[0] != t1.shape[1]:
            raise _Corrupt("the transition matrices are not k x k")
        return Constituency(get("pi"), factor_product(t1, t2), get("o"), t1, t2)
    if family == "dep-i":
        return Dependency(get("pi"), get("left"), get("right"))
    a = get("a")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise _Corrupt(f"a has shape {a.shape}, not d x d")
    if family == "dep-ie":
        return Dependency(get("pi"), a, a)
    if not _stochastic(a, 2):
        raise _Corrupt("a's columns are not probability distributions")
    try:
        return Dependency(stationary(a), a, a)
    except np.linalg.LinAlgError:
        raise _Corrupt("a has no unique stationary distribution") from None


def _stochastic(x: np.ndarray, ndim: int) -> bool:
    """Finite, nonnegative, and a distribution (``ndim`` 1) or columns of distributions
    (``ndim`` 2) summing to one within ``_TOLERANCE``."""
    x = np.asarray(x)
    if x.ndim != ndim or np.iscomplexobj(x) or not np.all(np.isfinite(x)) or np.any(x < 0):
        return False
    return bool(np.all(np.abs(x.sum(axis=0) - 1) <= _TOLERANCE))


def _check(model: TopologyModel, name: str, header: dict[str, Any] | None = None) -> None:
    """Shapes, distributions, vocabulary and length counts agree (``LpcfgError``)."""

    def bad(message: str) -> LpcfgError:
        return LpcfgError(f"corrupt topology model: {message}", source=name)

    p = model.params
    if model.family not in FAMILIES:
        raise bad(f"unknown family {model.family!r}")
    if isinstance(p, Constituency) != (model.family in CONSTITUENCY):
        raise bad(f"{model.family} parameters of the wrong kind")
    if model.family in ("pcfg-i", "pcfg-ie") and getattr(p, "t1", None) is None:
        raise bad(f"{model.family} needs its transition matrices (t1, t2)")
    try:
        if isinstance(p, Constituency):
            k, d = p.pi.shape[-1], p.o.shape[0]
            shapes = {"pi": (p.pi, (k,)), "b": (p.b, (k, k, k)), "o": (p.o, (d, k))}
            if p.t1 is not None:
                shapes.update({"t1": (p.t1, (k, k)), "t2": (p.t2, (k, k))})
            for key, (value, shape) in shapes.items():
                if np.shape(value) != shape:
                    raise bad(f"{key} has shape {np.shape(value)}, expected {shape}")
            checks = [("pi", p.pi, 1), ("o", p.o, 2)]
            if p.t1 is not None:
                checks += [("t1", p.t1, 2), ("t2", p.t2, 2)]
            else:
                checks += [("b", p.b.reshape(k * k, k), 2)]
        else:
            d = p.pi.shape[-1]
            for key, value in (("pi", p.pi), ("left", p.left), ("right", p.right)):
                shape = (d,) if key == "pi" else (d, d)
                if np.shape(value) != shape:
                    raise bad(f"{key} has shape {np.shape(value)}, expected {shape}")
            checks = [("pi", p.pi, 1), ("left", p.left, 2), ("right", p.right, 2)]
    except (AttributeError, IndexError, ValueError) as exc:
        raise bad(f"malformed parameters ({exc})") from None
    for key, value, ndim in checks:
        if not _stochastic(value, ndim):
            raise bad(f"{key}'s columns are not probability distributions")
    if len(model.vocab) != d:
        raise bad(f"{len(model.vocab)} vocabulary words for d = {d}")
    if len(set(model.vocab)) != len(model.vocab):
        raise bad("repeated vocabulary words")
    if any(split_tokens(w) != [w] for w in model.vocab):
        raise bad("a vocabulary word is empty or contains whitespace")
    same = {"pcfg-ie": (p, "t1", "t2"), "dep-ie": (p, "left", "right")}
    same["dep-ies"] = same["dep-ie"]
    if model.family in same:
        obj, x, y = same[model.family]
        if not np.array_equal(getattr(obj, x), getattr(obj, y)):
            raise bad(f"{model.family} needs {x} == {y}")
    if model.family == "dep-ies":
        try:
            ok = np.allclose(p.pi, stationary(p.left), atol=_TOLERANCE)
        except np.linalg.LinAlgError:
            ok = False
        if not ok:
            raise bad("dep-ies needs pi = the (unique) stationary distribution of a")
    counts = np.asarray(model.length_counts)
    if (
        counts.ndim != 1
        or counts.dtype.kind not in "iuf"
        or not np.all(np.isfinite(counts))
        or np.any(counts != np.round(counts))
        or len(counts) < 2
        or np.any(counts < 0)
        or counts[0] != 0
        or counts.sum() <= 0
    ):
        raise bad("length_counts must be whole counts per length 0, 1, ... (none of length 0)")
    if header is not None and (header.get("d") != d or header.get("k") != model.k):
        raise bad(f"metadata says d = {header.get('d')}, k = {header.get('k')}")
