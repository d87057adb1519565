"""Model files of every kind: one ``.npz`` archive of numeric arrays and one JSON header.

Every model lpcfg writes (parsing models, language models, topology models) is an archive
(``files.archive``: stored entries, fixed timestamps, read with ``allow_pickle=False``, so a
file from an untrusted source cannot execute code) holding its arrays and ``meta_json``,
the UTF-8 JSON header: ``format`` (the kind, a key of ``KINDS``), ``format_version`` and
whatever the kind records. This module is the one reader and writer of that frame, and the
one place that checks a file's kind and version; each kind's module turns the arrays and the
header into its model (``model.lpcfg``, ``lm.lm_file``, ``topology_models.topology_file``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.archive import read_npz, write_npz
from lpcfg_cli.files.streams import atomic_output, display_name

META_ENTRY = "meta_json"
PARSING, LANGUAGE, TOPOLOGY = "lpcfg-model", "lpcfg-lm", "lpcfg-topology-model"
# Each kind: what it is, and the command that uses it (said when a file of one kind is
# given where another is expected).
KINDS = {
    PARSING: ("a parsing model (made by `lpcfg train`)", "use it with `lpcfg parse`"),
    LANGUAGE: (
        "a language model (made by `lpcfg lm train`)",
        "use it with `lpcfg lm perplexity` or `lpcfg lm score`",
    ),
    TOPOLOGY: (
        "a topology model (made by `lpcfg unmix`)",
        "`lpcfg sample` draws sentences from it",
    ),
}
# The format version of each kind this lpcfg writes, and the versions it reads. Parsing
# models: version 2 stores parameters compactly (``files.packed_arrays``); version 1 files
# (float64 throughout) still load.
VERSIONS = {PARSING: 2, LANGUAGE: 1, TOPOLOGY: 1}
READS = {PARSING: (1, 2), LANGUAGE: (1,), TOPOLOGY: (1,)}


@dataclass(frozen=True)
class ModelFile:
    """A model file's kind, header and arrays (the header entry taken out)."""

    name: str  # for messages: the path, or <stdin>
    kind: str
    header: dict[str, Any]
    arrays: dict[str, np.ndarray]


def header_of(arrays: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """The JSON header of an archive's arrays, or None if it has none readable."""
    raw = arrays.get(META_ENTRY)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        return None
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return header if isinstance(header, dict) else None


def read_model_file(path: str | os.PathLike[str], kinds: Collection[str]) -> ModelFile:
    """The model file at ``path`` (``-``: stdin), which must be of one of ``kinds`` and of
    the version this lpcfg reads; anything else is one ``LpcfgError`` saying what it is."""
    name = display_name(path)
    arrays = read_npz(path, name)
    header = header_of(arrays)
    if header is None:
        if META_ENTRY in arrays:
            raise LpcfgError("corrupt model metadata (not a JSON object)", source=name)
        raise LpcfgError("not an lpcfg model file (no metadata)", source=name)
    kind = header.get("format")
    if kind not in kinds:
        wanted = " or ".join(KINDS[k][0].split(" (", 1)[0] for k in kinds)
        if kind in KINDS:
            what, use = KINDS[kind]
            raise LpcfgError(f"{what}, not {wanted}: {use}", source=name)
        raise LpcfgError(f"not an lpcfg model file ({wanted} expected)", source=name)
    check_version(kind, header.get("format_version"), name)
    arrays = {k: v for k, v in arrays.items() if k != META_ENTRY}
    return ModelFile(name, kind, header, arrays)


def check_version(kind: str, version: Any, name: str) -> None:
    """Refuse a format version this lpcfg cannot read, saying which the file has."""
    supported = VERSIONS[kind]
    if type(version) is int and version in READS[kind]:
        return
    versions = " and ".join(map(str, READS[kind]))
    reads = f"this lpcfg reads format version{'s' if len(READS[kind]) > 1 else ''} {versions}"
    reads += "" if len(READS[kind]) > 1 else " only"
    if version is None:
        message = f"model file has no format version ({reads})"
    elif type(version) is not int:
        message = f"model file has a malformed format version {version!r} ({reads})"
    elif version > supported:
        message = (
            f"model file has format version {version}, written by a newer lpcfg "
            f"({reads}: upgrade lpcfg)"
        )
    else:
        message = f"model file has format version {version} ({reads})"
    raise LpcfgError(message, source=name)


def write_model_file(
    path: str | os.PathLike[str], kind: str, header: dict[str, Any], arrays: dict[str, Any]
) -> None:
    """Write a model file of ``kind`` atomically (``-``: stdout): ``header`` (JSON values)
    with its ``format`` and ``format_version``, and ``arrays`` (numeric, named by
    identifiers)."""
    for key, value in arrays.items():
        if not key.isidentifier() or key == META_ENTRY:
            raise ValueError(f"array name {key!r} is not an identifier, or is reserved")
        if np.asarray(value).dtype.kind not in "biuf":
            raise ValueError(f"array {key!r} is not numeric ({np.asarray(value).dtype})")
    full = {"format": kind, "format_version": VERSIONS[kind], **header}
    text = json.dumps(full, ensure_ascii=False)
    entries = {META_ENTRY: np.frombuffer(text.encode("utf-8"), dtype=np.uint8)}
    entries.update({k: np.asarray(v) for k, v in arrays.items()})
    with atomic_output(path, "wb") as fh:
        write_npz(fh, entries)


def read_any(path: str | os.PathLike[str]) -> ModelFile:
    """A model file of any kind (what ``lpcfg_cli.load_model`` dispatches on)."""
    return read_model_file(path, KINDS)
