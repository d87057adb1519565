"""Language model files: one ``.npz`` archive, the same safety rules as parsing models.

A file holds numeric arrays (whatever the model needs) and one JSON metadata entry
(``meta_json``, UTF-8 bytes): ``format`` ``"lpcfg-lm"``, ``format_version``, ``method``,
``vocabulary`` (its words in id order and ``min_count``) and the model's own ``meta``
(options, training summary). It is read and written by ``files.model_file`` (no pickle,
atomic, fixed zip timestamps: the same model gives the same bytes). Anything else (a parsing
model, a truncated archive, a wrong array) is one ``LpcfgError``.

``MODEL_CLASSES`` maps each method name to the class that reads its arrays back: a class
with ``from_arrays(vocab, arrays, meta)`` whose models have ``method``, ``vocab`` and
``to_arrays() -> (arrays, meta)`` (``SavedModel``).
"""

from __future__ import annotations

import os
from typing import Any, Protocol

import numpy as np

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.files.model_file import LANGUAGE, ModelFile, read_model_file, write_model_file
from lpcfg_cli.lm.aggregate import METHODS as AGGREGATE_METHODS
from lpcfg_cli.lm.aggregate import AggregateLM
from lpcfg_cli.lm.corpus import Vocabulary
from lpcfg_cli.lm.kneserney import KneserNey
from lpcfg_cli.lm.perplexity import LanguageModel


class SavedModel(LanguageModel, Protocol):
    """A language model that a model file can hold (see the module docstring)."""

    method: str
    meta: dict[str, Any]  # options and training summary; saved in the file

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]: ...


# method -> class with from_arrays(vocab, arrays, meta).
MODEL_CLASSES: dict[str, Any] = {
    "kn2": KneserNey,
    "kn3": KneserNey,
    **dict.fromkeys(AGGREGATE_METHODS, AggregateLM),
}


def save_lm(
    path: str | os.PathLike[str],
    method: str,
    vocab: Vocabulary,
    arrays: dict[str, np.ndarray],
    meta: dict[str, Any],
) -> None:
    """Write a language model file atomically (``-``: stdout). ``arrays`` are numeric
    (bool, int, float) arrays named by identifiers; ``meta`` any JSON value mapping."""
    header = {
        "method": method,
        "vocabulary": {"words": vocab.words, "min_count": vocab.min_count},
        "meta": meta,
    }
    write_model_file(path, LANGUAGE, header, arrays)


def load_lm(
    path: str | os.PathLike[str],
) -> tuple[str, Vocabulary, dict[str, np.ndarray], dict[str, Any]]:
    """``(method, vocab, arrays, meta)`` of a language model file (``-``: stdin), checked
    as far as the format goes; the method's class checks its own arrays."""
    return _parts(read_model_file(path, {LANGUAGE}))


def _parts(file: ModelFile) -> tuple[str, Vocabulary, dict[str, np.ndarray], dict[str, Any]]:
    header, name = file.header, file.name
    method, vocabulary, meta = header.get("method"), header.get("vocabulary"), header.get("meta")
    if (
        not isinstance(method, str)
        or not isinstance(meta, dict)
        or not isinstance(vocabulary, dict)
    ):
        raise LpcfgError("corrupt language model metadata (method, vocabulary, meta)", source=name)
    words, min_count = vocabulary.get("words"), vocabulary.get("min_count")
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise LpcfgError("corrupt language model: vocabulary words are not strings", source=name)
    if type(min_count) is not int or min_count < 1:
        raise LpcfgError(f"corrupt language model: min_count {min_count!r}", source=name)
    try:
        vocab = Vocabulary(words, min_count)
    except LpcfgError as exc:
        raise LpcfgError(f"corrupt language model: {exc.message}", source=name) from None
    return method, vocab, file.arrays, meta


def save_model(path: str | os.PathLike[str], model: SavedModel) -> None:
    """Write ``model`` (any class of ``MODEL_CLASSES``) to ``path``."""
    arrays, meta = model.to_arrays()
    save_lm(path, model.method, model.vocab, arrays, meta)


def load_model(path: str | os.PathLike[str]) -> SavedModel:
    """The model in the file at ``path``, built by its method's class."""
    return from_file(read_model_file(path, {LANGUAGE}))


def from_file(file: ModelFile) -> SavedModel:
    """The language model a model file holds (``files.model_file``)."""
    name = file.name
    method, vocab, arrays, meta = _parts(file)
    cls = MODEL_CLASSES.get(method)
    if cls is None:
        known = ", ".join(MODEL_CLASSES)
        raise LpcfgError(
            f"language model of unknown method {method!r} (this lpcfg reads {known})", source=name
        )
    try:
        model = cls.from_arrays(vocab, arrays, meta)
    except LpcfgError as exc:
        raise LpcfgError(f"corrupt language model: {exc.message}", source=name) from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise LpcfgError(
            f"corrupt language model ({type(exc).__name__}: {exc})", source=name
        ) from None
    if model.method != method:
        raise LpcfgError(
            f"corrupt language model: a {model.method} model filed as {method}", source=name
        )
    return model
