"""A model arranged for parsing: everything a ``Parser`` reads of a model, built once.

Setting a parser up is a pure function of the model: the rare training words given back
(``model.rarewords``), the treebank PCFG indexed for the coarse pass
(``engine.chart_grammars.CoarseGrammar``), each latent model's rule tensors packed on their
live states (``LatentGrammar``), and the lexical rules by word with the unknown-word back-off
pooled (``engine.tokens.RulesByWord``). Built from a model file, that is most of a parse's
start-up beside the imports (docs/design-notes.md, Start-up). ``ArrangedModel`` holds the
result; ``save`` writes it as one file that ``load`` reads back memory-mapped in a few
milliseconds, and ``parsing.arranged_cache`` keeps one per model file between runs.

The file: ``MAGIC``, the header's length (8 bytes, little-endian), the JSON header, then
the arrays, each at an offset that is a multiple of ``ALIGN`` (the kernels need aligned,
C-contiguous, writable arrays: the file is mapped copy-on-write). The header holds the
grammar (``Grammar.to_json``), each object's numbers and, for every array, its dtype
(numeric only), shape and offset. Nothing in it is executed: loading it is as safe as
loading a model file.
"""

from __future__ import annotations

import json
import mmap
import os
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, BinaryIO

import numpy as np

from lpcfg_cli.engine.chart_grammars import CoarseGrammar, LatentGrammar
from lpcfg_cli.engine.tokens import RulesByWord
from lpcfg_cli.errors import ParameterError
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.model import rarewords
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.treebank.conventions import PTB, Conventions

FORMAT, VERSION = "lpcfg-arranged", 3  # 2: the conventions recorded; 3: the rare words kept
MAGIC = b"LPCFGARR"
ALIGN = 64
# Parameters beyond float32's comfortable range run in float64 (``ArrangedModel.of``).
FLOAT32_LIMIT = 1e20
# The attributes of the plain (not dataclass) objects kept: exactly these are written and
# must be read back.
ATTRIBUTES = {
    RulesByWord: (
        "n_rules",
        "order",
        "ptr",
        "parent",
        "n_words",
        "has_rule",
        "pooled",
        "pooled_from",
        "pooled_into",
    ),
}


@dataclass
class ArrangedModel:
    """What parsing reads of a model (``of``): its grammar with the rare training words known
    again, its treebank PCFG, the coarse grammar, one latent grammar per model of the
    ensemble (lexical parameters with the pooled back-off rows appended), the lexical rules
    by word and the coarse lexical parameters likewise pooled; ``decoders``: the decoder each
    model of the ensemble records (``LPCFG.decoder``); ``bare_pcfg``: the model is the
    treebank PCFG itself (one state per symbol, its parameters the coarse grammar's), whose
    coarse pass already gives the posteriors."""

    grammar: Grammar
    treebank_pcfg: PCFGParams
    coarse: CoarseGrammar
    latent: list[LatentGrammar]
    rules_by_word: RulesByWord
    coarse_lexical: np.ndarray
    decoders: tuple[str, ...]
    bare_pcfg: bool
    conventions: Conventions = PTB  # the training treebank's: parse reads sentences so

    @property
    def ensemble(self) -> bool:
        """Whether the model combines several models (an ensemble or product)."""
        return len(self.decoders) > 1

    @classmethod
    def of(cls, model: LPCFG) -> ArrangedModel:
        """Arrange ``model`` for parsing."""
        model = rarewords.restore(model)  # the rare training words, known again
        g = model.grammar
        coarse = CoarseGrammar.build(g.n_symbols, g.binary, model.coarse.binary, model.coarse.root)
        # The latent pass runs in float32 with tiny values flushed to zero (see
        # engine.scaling.FLUSH): faster than float64, and than float32 with subnormals, at
        # the same F1 (docs/design-notes.md, The latent pass). Parameters beyond float32's
        # comfortable range (a tensor-form model from a learner without singular-value
        # guards can hold 1e30 and more) would overflow to inf and poison every chart: such
        # models run in float64.
        models = (model, *model.members)
        largest = max(
            max(
                m.binary_absmax(), *(float(np.abs(a).max(initial=0.0)) for a in (m.lexical, m.root))
            )
            for m in models
        )
        dtype = np.float32 if largest < FLOAT32_LIMIT else np.float64
        latent = [LatentGrammar.from_model(m, dtype=dtype) for m in models]
        # An unknown word's back-off to every signature scores by pooled lexical rules, one
        # per pre-terminal (``RulesByWord``), appended to each grammar's lexical parameters.
        by_word = RulesByWord(g, pooled=True)
        for lg in latent:
            lg.lexical = by_word.pool(lg.lexical)
            lg.lexical_parent = by_word.parent
        bare = (
            not model.members
            and int(model.states.max()) == 1
            and model.form == "probabilistic"
            and np.allclose(model.binary, model.coarse.binary)
        )
        return cls(
            g,
            model.coarse,
            coarse,
            latent,
            by_word,
            by_word.pool(model.coarse.lexical),
            model.decoders(),
            bool(bare),
            model.conventions,
        )

    # ------------------------------------------------------------------ files

    def save(self, fh: BinaryIO, header: dict[str, Any] | None = None) -> None:
        """Write the arranged model to the binary file ``fh`` (see the module), with
        ``header`` (JSON values) recorded beside it."""
        arrays: dict[str, np.ndarray] = {}
        numbers: dict[str, dict[str, Any]] = {}
        parts = {
            "treebank_pcfg": self.treebank_pcfg,
            "coarse": self.coarse,
            "rules_by_word": self.rules_by_word,
            **{f"latent{i}": lg for i, lg in enumerate(self.latent)},
        }
        for prefix, obj in parts.items():
            numbers[prefix] = _flatten(prefix, obj, arrays)
        g = self.grammar
        arrays.update(
            {
                "grammar.binary": g.binary,
                "grammar.lexical": g.lexical,
                "grammar.rare_table": g.rare_words.table,
                "coarse_lexical": self.coarse_lexical,
            }
        )
        arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
        index, offset = {}, 0
        for name, a in arrays.items():
            if a.dtype.kind not in "biuf":
                raise TypeError(f"array {name} is not numeric ({a.dtype})")
            index[name] = [a.dtype.str, list(a.shape), offset]
            offset += -(-a.nbytes // ALIGN) * ALIGN
        meta = {
            **(header or {}),
            "format": FORMAT,
            "format_version": VERSION,
            "grammar": g.to_json(),
            "numbers": numbers,
            "latent": len(self.latent),
            "decoders": list(self.decoders),
            "bare_pcfg": self.bare_pcfg,
            "conventions": self.conventions.to_dict(),
            "arrays": index,
        }
        text = json.dumps(meta, ensure_ascii=False).encode("utf-8")
        start = _data_start(len(text))
        fh.write(MAGIC + len(text).to_bytes(8, "little") + text)
        fh.write(b"\0" * (start - len(MAGIC) - 8 - len(text)))
        for a in arrays.values():
            fh.write(a.data)
            fh.write(b"\0" * (-a.nbytes % ALIGN))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> tuple[ArrangedModel, dict[str, Any]]:
        """The arranged model in the file at ``path`` and its header, its arrays mapped
        copy-on-write; ``ValueError`` (or ``OSError``) if the file is not one this lpcfg
        wrote whole."""
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC) + 8)
            if len(head) != len(MAGIC) + 8 or not head.startswith(MAGIC):
                raise ValueError("not an arranged model")
            length = int.from_bytes(head[len(MAGIC) :], "little")
            meta = json.loads(fh.read(length).decode("utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("an arranged model with a malformed header")
            if meta.get("format") != FORMAT or meta.get("format_version") != VERSION:
                raise ValueError("an arranged model of another format version")
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
        start = _data_start(length)
        try:
            arrays = {
                name: _array(mapped, np.dtype(dtype), tuple(shape), start + int(offset))
                for name, (dtype, shape, offset) in meta["arrays"].items()
            }
            numbers = meta["numbers"]
            latent = [
                _restore(LatentGrammar, f"latent{i}", numbers, arrays)
                for i in range(int(meta["latent"]))
            ]
            grammar = Grammar.from_json(
                meta["grammar"],
                arrays["grammar.binary"],
                arrays["grammar.lexical"],
                arrays["grammar.rare_table"],
            )
            arranged = cls(
                grammar,
                _restore(PCFGParams, "treebank_pcfg", numbers, arrays),
                _restore(CoarseGrammar, "coarse", numbers, arrays),
                latent,
                _restore(RulesByWord, "rules_by_word", numbers, arrays),
                arrays["coarse_lexical"],
                tuple(map(str, meta["decoders"])),
                bool(meta["bare_pcfg"]),
                Conventions.from_dict(meta["conventions"]),
            )
        except (KeyError, TypeError, AttributeError, IndexError, ParameterError) as exc:
            raise ValueError(f"an arranged model with missing or malformed parts ({exc})") from None
        return arranged, meta


def _data_start(header_length: int) -> int:
    """Where the arrays begin after a header of ``header_length`` bytes."""
    return -(-(len(MAGIC) + 8 + header_length) // ALIGN) * ALIGN


def _array(mapped: mmap.mmap, dtype: np.dtype, shape: tuple[int, ...], offset: int) -> np.ndarray:
    """The array of ``dtype`` and ``shape`` at ``offset`` of the mapped file."""
    if dtype.kind not in "biuf" or dtype.hasobject:
        raise ValueError(f"an arranged model with a non-numeric array ({dtype})")
    count = int(np.prod(shape, dtype=np.int64))
    if offset % ALIGN or min(shape, default=0) < 0 or offset + count * dtype.itemsize > len(mapped):
        raise ValueError("an arranged model whose arrays lie beyond its end")
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)


def _attributes(obj: Any) -> dict[str, Any]:
    if is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in fields(obj)}
    return {name: getattr(obj, name) for name in ATTRIBUTES[type(obj)]}


def _flatten(prefix: str, obj: Any, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """``obj``'s arrays into ``arrays`` as ``prefix.name``; its numbers returned."""
    numbers = {}
    for name, value in _attributes(obj).items():
        if isinstance(value, np.ndarray):
            arrays[f"{prefix}.{name}"] = value
        elif isinstance(value, (bool, np.bool_)):
            numbers[name] = bool(value)
        elif isinstance(value, (int, np.integer)):
            numbers[name] = int(value)
        elif isinstance(value, (float, np.floating)):
            numbers[name] = float(value)
        else:
            raise TypeError(f"{prefix}.{name} is neither an array nor a number")
    return numbers


def _restore(cls: type, prefix: str, numbers: dict[str, Any], arrays: dict[str, np.ndarray]):
    """The ``cls`` that ``_flatten`` wrote as ``prefix``."""
    values = dict(numbers[prefix])
    head = prefix + "."
    values.update({k[len(head) :]: v for k, v in arrays.items() if k.startswith(head)})
    if is_dataclass(cls):
        return cls(**values)
    if set(values) != set(ATTRIBUTES[cls]):
        raise KeyError(f"{prefix}: {sorted(set(values) ^ set(ATTRIBUTES[cls]))}")
    obj = cls.__new__(cls)
    obj.__dict__.update(values)
    return obj
