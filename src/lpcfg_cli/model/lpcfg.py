"""Latent-variable PCFG parameters and the model file format.

An L-PCFG gives each nonterminal ``a`` its own number of latent states ``m_a`` and holds, for
every binary rule ``r = a -> b c`` a tensor of shape ``(m_a, m_b, m_c)``, for every lexical
rule ``a -> x`` a vector of length ``m_a`` and for every symbol a root vector of length
``m_a``. Two forms share these arrays and one inside-outside code path:

- ``probabilistic``: ``t(a -> b c, h2, h3 | a, h1)``, ``q(a -> x | a, h)``, ``pi(a, h)``
  (PCFG, EM, pivot); for each ``(a, h1)`` the binary and lexical entries sum to one.
- ``tensor``: ``C^{a -> b c}``, ``c_inf^{a -> x}``, ``c_1^a`` of the spectral method (Cohen et
  al. 2014, section 6), defined up to invertible linear maps per symbol; entries may be
  negative. ``C[h1, h2, h3]`` maps the children's inside vectors to the parent's, exactly as
  ``t`` does, so the inside recursion is the same.

Each model also carries the treebank PCFG (``m_a = 1``) as its coarse grammar, used by the
parser for coarse-to-fine pruning.

Files are a single ``.npz`` archive (loaded with ``allow_pickle=False``): numeric arrays plus
the JSON metadata (format version, method, options, binarization, symbol tables, training
summary) stored as UTF-8 bytes, so a model from an untrusted source cannot execute code.
The archive's entries carry a fixed timestamp, so the same model gives the same bytes:
training twice with the same options and seed gives files that differ only in the
metadata's wall-clock timings, the values of keys named ``seconds`` or ending in
``_seconds`` (see ``without_timings``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.files.model_file import PARSING, ModelFile, read_model_file, write_model_file
from lpcfg_cli.files.packed_arrays import (
    DROP_BELOW,
    StoredEntries,
    pack,
    single_precision,
    unpack,
)
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.treebank.conventions import PTB, Conventions

FORMS = ("probabilistic", "tensor")
# The decoder of a model whose metadata names its method but not its decoder: files written
# before learners recorded ``decode`` (the rule of those versions; never extended: learners
# record their decoder), and models made in memory with only a method.
LEGACY_DECODE = {"em": "max-bracket", "splitmerge": "max-bracket"}
# Zip entries get this timestamp (the earliest a zip file can hold), not the time of saving.


def available_memory() -> int | None:
    """Bytes this process may hold: the smallest of the machine's memory, the address-space
    limit (``ulimit -v``) and a cgroup's limit (containers, Slurm); None where none is
    known."""
    limits: list[int] = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            limits.append(soft)
    except (ImportError, OSError, ValueError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                value = fh.read().strip()
        except OSError:
            continue
        if value.isdigit() and int(value) < 1 << 60:
            limits.append(int(value))
    return min(limits) if limits else None


def check_size(grammar: Grammar, states: int, copies: int = 6) -> None:
    """Refuse (``ParameterError`` naming ``states``) a model of ``grammar`` with ``states``
    latent states per symbol whose parameters (``m^3`` per binary rule) would not fit in
    this machine's memory ``copies`` times: training holds about six arrays of their size
    (the parameters, their expected counts, the engine's arranged copies)."""
    floats = grammar.n_binary * states**3 + (grammar.n_lexical + grammar.n_symbols) * states
    needed = copies * 8 * floats
    limit = available_memory()
    if limit is not None and needed > limit:
        rules = f"{grammar.n_binary} binary rule{'s' if grammar.n_binary != 1 else ''}"
        raise ParameterError(
            "{states} " + str(states) + " needs about {needed} GB for the parameters of this "
            "grammar ({rules}, m^3 = {cube} floats each), more than the {limit} GB this machine "
            "allows: choose fewer {states}",
            needed=f"{needed / 1e9:.3g}",
            rules=rules,
            cube=str(states**3),
            limit=f"{limit / 1e9:.3g}",
        )


def without_timings(meta: Any) -> Any:
    """``meta`` without its wall-clock timings (keys ``seconds`` or ``*_seconds``, at any
    depth): what two trainings with the same options and seed have in common."""
    if isinstance(meta, dict):
        return {
            k: without_timings(v)
            for k, v in meta.items()
            if not (k == "seconds" or k.endswith("_seconds"))
        }
    if isinstance(meta, list):
        return [without_timings(v) for v in meta]
    return meta


def ragged_offsets(sizes: np.ndarray) -> np.ndarray:
    """Start offsets (length n + 1) of blocks of the given sizes in one flat array."""
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    return out


def ragged_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenated ranges ``[starts[i], starts[i] + counts[i])``."""
    counts = np.asarray(counts, dtype=np.int64)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + offsets


@dataclass
class PCFGParams:
    """Plain PCFG probabilities: ``binary[r]``, ``lexical[l]``, ``root[a]``."""

    binary: np.ndarray
    lexical: np.ndarray
    root: np.ndarray


@dataclass
class LPCFG:
    """An L-PCFG over ``grammar`` with ``states[a]`` latent states per symbol.

    ``binary``, ``lexical`` and ``root`` are flat float64 arrays; use ``binary_tensor(r)``,
    ``lexical_vector(l)`` and ``root_vector(a)`` for the shaped views.

    A model read from a compact file keeps its binary parameters as the file stores them
    (``files.packed_arrays.StoredEntries``, ``stored_binary``) until ``binary`` is first read:
    the parser packs its tensors from the stored entries and never needs the dense array.
    """

    grammar: Grammar
    states: np.ndarray
    binary: np.ndarray
    lexical: np.ndarray
    root: np.ndarray
    coarse: PCFGParams
    form: str = "probabilistic"
    meta: dict[str, Any] = field(default_factory=dict)
    # Further models over the same grammar and coarse PCFG, combined with this one at parse
    # time (a product of grammars, Petrov 2010); empty for a single model.
    members: tuple[LPCFG, ...] = ()

    def __post_init__(self) -> None:
        self.states = np.asarray(self.states, dtype=np.int64)
        g = self.grammar
        self.binary_sizes = (
            self.states[g.binary[:, 0]] * self.states[g.binary[:, 1]] * self.states[g.binary[:, 2]]
        )
        self.binary_offsets = ragged_offsets(self.binary_sizes)
        self.lexical_offsets = ragged_offsets(self.states[g.lexical[:, 0]])
        self.root_offsets = ragged_offsets(self.states)
        if isinstance(self.binary, StoredEntries):  # expanded by __getattr__ when read
            self.__dict__["_stored_binary"] = self.__dict__.pop("binary")

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set: ``binary`` of a model whose binary parameters
        # are still as stored.
        stored = self.__dict__.get("_stored_binary") if name == "binary" else None
        if stored is None:
            raise AttributeError(name)
        self.binary = stored.dense()
        del self.__dict__["_stored_binary"]
        return self.binary

    @property
    def stored_binary(self) -> StoredEntries | None:
        """The binary parameters as a compact file stores them, while ``binary`` has not
        been read (else None)."""
        return self.__dict__.get("_stored_binary")

    def binary_parameters(self) -> np.ndarray | StoredEntries:
        """``binary``, or the stored entries it would expand from (for a new model sharing
        them without expanding them)."""
        return self.stored_binary or self.binary

    def binary_absmax(self) -> float:
        """The largest absolute binary parameter."""
        stored = self.stored_binary
        if stored is not None:
            return stored.absmax()
        return float(np.abs(self.binary).max(initial=0.0))

    @classmethod
    def zeros(
        cls,
        grammar: Grammar,
        states: np.ndarray,
        coarse: PCFGParams,
        form: str = "probabilistic",
        meta: dict[str, Any] | None = None,
    ) -> LPCFG:
        """A model with all parameters zero, to be filled by a learner."""
        states = np.asarray(states, dtype=np.int64)
        g = grammar
        nb = int((states[g.binary[:, 0]] * states[g.binary[:, 1]] * states[g.binary[:, 2]]).sum())
        nl = int(states[g.lexical[:, 0]].sum())
        return cls(
            grammar,
            states,
            np.zeros(nb),
            np.zeros(nl),
            np.zeros(int(states.sum())),
            coarse,
            form,
            dict(meta or {}),
        )

    @property
    def conventions(self) -> Conventions:
        """The treebank conventions the model was trained with (``treebank.conventions``;
        the Penn Treebank's for a model file that records none): what ``parse`` reads
        sentences with."""
        training = self.meta.get("training")
        record = training.get("conventions") if isinstance(training, dict) else None
        return Conventions.from_dict(record) if isinstance(record, dict) else PTB

    def decoders(self) -> tuple[str, ...]:
        """The decoder of this model and of each member of its ensemble (``decoder``)."""
        return tuple(m.decoder() for m in (self, *self.members))

    def decoder(self) -> str:
        """The decoder this model wants (``parsing.parser_options.resolve_decoder``): the
        one its learner recorded, or for a file written before that record the rule of its
        time by method (``LEGACY_DECODE``)."""
        recorded = self.meta.get("decode")
        if isinstance(recorded, str):
            return recorded
        return LEGACY_DECODE.get(str(self.meta.get("method")), "max-marginal")

    @property
    def max_states(self) -> int:
        return int(self.states.max()) if len(self.states) else 1

    def binary_tensor(self, r: int) -> np.ndarray:
        """View ``(m_a, m_b, m_c)`` of rule ``r``'s parameters."""
        a, b, c = self.grammar.binary[r]
        lo, hi = self.binary_offsets[r], self.binary_offsets[r + 1]
        return self.binary[lo:hi].reshape(self.states[a], self.states[b], self.states[c])

    def lexical_vector(self, lex: int) -> np.ndarray:
        """View ``(m_a,)`` of lexical rule ``lex``'s parameters."""
        return self.lexical[self.lexical_offsets[lex] : self.lexical_offsets[lex + 1]]

    def root_vector(self, a: int) -> np.ndarray:
        """View ``(m_a,)`` of symbol ``a``'s root parameters."""
        return self.root[self.root_offsets[a] : self.root_offsets[a + 1]]

    def bundle(self, *others: LPCFG) -> LPCFG:
        """This model and ``others`` as one model file (an ensemble parsed as a product of
        grammars); they must share the grammar and the coarse PCFG (same training trees and
        binarization)."""
        parts = [*((self,) + self.members), *(m for o in others for m in (o, *o.members))]
        for other in parts[1:]:
            same = (
                other.grammar.symbols == self.grammar.symbols
                and other.grammar.words == self.grammar.words
                and np.array_equal(other.grammar.binary, self.grammar.binary)
                and np.array_equal(other.grammar.lexical, self.grammar.lexical)
                and np.array_equal(other.coarse.binary, self.coarse.binary)
                and np.array_equal(other.coarse.lexical, self.coarse.lexical)
            )
            if not same:
                raise ParameterError(
                    "the models of an ensemble must be trained on the same trees "
                    f"with the same binarization (their grammars differ{_how(self, other)})"
                )
        first = parts[0]
        meta = {**first.meta, "ensemble": [m.meta.get("method") for m in parts]}
        return LPCFG(
            first.grammar,
            first.states,
            first.binary_parameters(),
            first.lexical,
            first.root,
            first.coarse,
            first.form,
            meta,
            tuple(
                LPCFG(
                    m.grammar,
                    m.states,
                    m.binary_parameters(),
                    m.lexical,
                    m.root,
                    m.coarse,
                    m.form,
                    m.meta,
                )
                for m in parts[1:]
            ),
        )

    def padded_binary(self) -> np.ndarray:
        """``(R, M, M * M)`` rule tensors, zero beyond each symbol's states."""
        r, m = self.grammar.n_binary, self.max_states
        if np.all(self.states == m):
            return self.binary.reshape(r, m, m * m)
        out = np.zeros((r, m, m, m))
        out[_binary_mask(self.grammar, self.states, m)] = self.binary
        return out.reshape(r, m, m * m)

    @classmethod
    def from_padded(
        cls,
        grammar: Grammar,
        states: np.ndarray,
        binary: np.ndarray,
        lexical: np.ndarray,
        root: np.ndarray,
        coarse: PCFGParams,
        form: str = "probabilistic",
        meta: dict[str, Any] | None = None,
    ) -> LPCFG:
        """A model from padded arrays (``padded_binary`` and friends; entries beyond each
        symbol's ``states`` are dropped)."""
        states = np.asarray(states, dtype=np.int64)
        g, m = grammar, binary.shape[1]
        keep = _binary_mask(g, states, m)
        sym_keep = np.arange(m)[None, :] < states[:, None]
        return cls(
            g,
            states,
            binary.reshape(g.n_binary, m, m, m)[keep],
            lexical[sym_keep[g.lexical[:, 0]]],
            root[sym_keep],
            coarse,
            form,
            dict(meta or {}),
        )

    def padded_lexical(self, dtype: type = np.float64) -> np.ndarray:
        """``(L, M)`` lexical parameters, zero beyond each symbol's states, in ``dtype``."""
        return _pad(self.lexical, self.lexical_offsets, self.max_states, dtype)

    def padded_root(self, dtype: type = np.float64) -> np.ndarray:
        """``(N, M)`` root parameters, zero beyond each symbol's states, in ``dtype``."""
        return _pad(self.root, self.root_offsets, self.max_states, dtype)

    def check_probabilistic(self, atol: float = 1e-6) -> float:
        """Largest deviation from one of the per-(a, h) sums of a probabilistic model."""
        g = self.grammar
        total = np.zeros((g.n_symbols, self.max_states))
        for r in range(g.n_binary):
            t = self.binary_tensor(r)
            total[g.binary[r, 0], : t.shape[0]] += t.sum(axis=(1, 2))
        np.add.at(total, g.lexical[:, 0], self.padded_lexical())
        mask = np.arange(self.max_states)[None, :] < self.states[:, None]
        has_rules = g.is_preterminal | g.is_interterminal
        dev = np.abs(total - 1.0)[mask & has_rules[:, None]]
        return float(dev.max()) if dev.size else 0.0

    # ------------------------------------------------------------------ files

    def save(self, path: str | os.PathLike[str], compact: bool = True) -> None:
        """Write the model atomically as one model file (``files.model_file``; ``-`` for
        stdout). ``compact``: parameters the parser runs in float32 are stored in float32
        with the entries it would flush dropped (``files.packed_arrays``: the parses are
        the same); else float64 throughout."""
        models = (self, *self.members)
        single = compact and single_precision(
            *(a for m in models for a in (m.binary, m.lexical, m.root))
        )
        header = {
            "form": self.form,
            "grammar": self.grammar.to_json(),
            **{
                k: v
                for k, v in self.meta.items()
                if k not in ("format", "format_version", "grammar", "form", "storage")
            },
            "storage": (
                {"dtype": "float32", "drop_below": DROP_BELOW} if single else {"dtype": "float64"}
            ),
        }
        if self.members:
            header["members"] = [{"form": m.form, **m.meta} for m in self.members]
        arrays = {
            "rules_binary": self.grammar.binary,
            "rules_lexical": self.grammar.lexical,
            "rare_table": self.grammar.rare_words.table,
            "coarse_binary": self.coarse.binary,
            "coarse_lexical": self.coarse.lexical,
            "coarse_root": self.coarse.root,
        }
        for prefix, m in [("", self)] + [(f"member{i}_", m) for i, m in enumerate(self.members)]:
            arrays[f"{prefix}states"] = m.states
            if single:
                arrays.update(pack(f"{prefix}binary", m.binary, sparse=True))
                arrays.update(pack(f"{prefix}lexical", m.lexical, sparse=False))
                arrays.update(pack(f"{prefix}root", m.root, sparse=False))
            else:
                arrays.update(
                    {f"{prefix}{k}": getattr(m, k) for k in ("binary", "lexical", "root")}
                )
        write_model_file(path, PARSING, header, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LPCFG:
        """Read and validate a model file; a corrupt or foreign file gives ``LpcfgError``."""
        return cls.from_file(read_model_file(path, {PARSING}))

    @classmethod
    def from_file(cls, file: ModelFile) -> LPCFG:
        """The model a parsing model file holds (``files.model_file.read_model_file``)."""
        arrays, meta, name = file.arrays, file.header, file.name
        try:
            gj = meta["grammar"]
            grammar = Grammar.from_json(
                gj,
                arrays["rules_binary"],
                arrays["rules_lexical"],
                arrays.get("rare_table", np.zeros((0, 4), dtype=np.int64)),
            )
            grammar.validate()
            coarse = PCFGParams(
                arrays["coarse_binary"], arrays["coarse_lexical"], arrays["coarse_root"]
            )
            extra = {k: v for k, v in meta.items() if k not in ("grammar", "form", "members")}
            members = tuple(
                cls(
                    grammar,
                    arrays[f"member{i}_states"],
                    *_parameters(grammar, arrays, f"member{i}_"),
                    coarse,
                    form=str(m.get("form")),
                    meta={k: v for k, v in m.items() if k != "form"},
                )
                for i, m in enumerate(meta.get("members", []))
            )
            for member in members:
                member.validate()
            model = cls(
                grammar,
                arrays["states"],
                *_parameters(grammar, arrays, ""),
                coarse,
                form=str(meta.get("form")),
                meta=extra,
                members=members,
            )
            model.validate()
        except LpcfgError as exc:
            raise LpcfgError(f"corrupt model: {exc.message}", source=name) from None
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise LpcfgError(f"corrupt model ({type(exc).__name__}: {exc})", source=name) from None
        return model

    def validate(self) -> None:
        """Raise LpcfgError unless every array has the shape the grammar implies."""
        g = self.grammar
        if self.form not in FORMS:
            raise LpcfgError(f"unknown model form {self.form!r}")
        if self.states.shape != (g.n_symbols,) or (self.states < 1).any():
            raise LpcfgError("latent state counts do not match the symbol table")
        stored = self.stored_binary
        if stored is not None and stored.size != self.binary_offsets[-1]:
            raise LpcfgError(
                f"binary parameters have {stored.size} entries, expected {self.binary_offsets[-1]}"
            )
        expected = {  # stored binary parameters: their size is checked, their entries here
            "binary": (self.binary, self.binary_offsets[-1])
            if stored is None
            else (stored.kept, len(stored.kept)),
            "lexical": (self.lexical, self.lexical_offsets[-1]),
            "root": (self.root, self.root_offsets[-1]),
            "coarse binary": (self.coarse.binary, g.n_binary),
            "coarse lexical": (self.coarse.lexical, g.n_lexical),
            "coarse root": (self.coarse.root, g.n_symbols),
        }
        for what, (arr, size) in expected.items():
            if arr.ndim != 1 or arr.shape[0] != size:
                raise LpcfgError(f"{what} parameters have {arr.size} entries, expected {size}")
            if not np.all(np.isfinite(arr)):
                raise LpcfgError(f"{what} parameters are not all finite")


def _parameters(
    g: Grammar, arrays: dict[str, np.ndarray], prefix: str
) -> tuple[np.ndarray | StoredEntries, np.ndarray, np.ndarray]:
    """Binary, lexical and root parameters (flat float64) stored under ``prefix``, in
    either storage (``files.packed_arrays``); compactly stored binary parameters stay
    ``StoredEntries`` (expanded when read)."""
    states = np.asarray(arrays[f"{prefix}states"], dtype=np.int64)
    if states.ndim != 1 or len(states) != g.n_symbols or (states < 1).any():
        raise LpcfgError("latent state counts do not match the symbol table")
    sizes = {
        "binary": int(
            (states[g.binary[:, 0]] * states[g.binary[:, 1]] * states[g.binary[:, 2]]).sum()
        ),
        "lexical": int(states[g.lexical[:, 0]].sum()),
        "root": int(states.sum()),
    }
    binary = unpack(f"{prefix}binary", arrays, sizes["binary"], lazy=True)
    lexical, root = (unpack(f"{prefix}{k}", arrays, sizes[k]) for k in ("lexical", "root"))
    return binary, lexical, root


def _how(first: LPCFG, other: LPCFG) -> str:
    """How two models' binarizations differ, if they do (``; factor left against right``):
    the methods factor differently by default (``learners.registry.FACTOR_LEFT``)."""
    a, b = first.grammar.binarization, other.grammar.binarization
    diff = [
        f"{k} {a.get(k)} against {b.get(k)}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    if not diff:
        return ""
    escaped = ", ".join(diff).replace("{", "{{").replace("}", "}}")
    return f"; {escaped}: train them with the same {{horizontal}}, {{vertical}}, {{factor}}"


def _binary_mask(g: Grammar, states: np.ndarray, m: int) -> np.ndarray:
    """``(R, m, m, m)``: which entries of padded rule tensors are real states."""
    valid = np.arange(m)[None, :] < states[:, None]  # (N, m)
    a, b, c = g.binary[:, 0], g.binary[:, 1], g.binary[:, 2]
    return valid[a][:, :, None, None] & valid[b][:, None, :, None] & valid[c][:, None, None, :]


def _pad(flat: np.ndarray, offsets: np.ndarray, width: int, dtype: type = np.float64) -> np.ndarray:
    """Rows of a ragged flat array as a zero-padded ``(n, width)`` matrix of ``dtype``."""
    sizes = np.diff(offsets)
    out = np.zeros((len(sizes), width), dtype=dtype)
    # A boolean mask assigns in row-major order: row r's first sizes[r] places, in turn.
    out[np.arange(width) < sizes[:, None]] = flat
    return out
