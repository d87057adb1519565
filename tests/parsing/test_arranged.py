"""Arranged models (``parsing.arranged``) and their cache between runs
(``parsing.arranged_cache``): the same parses as from the model, and a cache that never
serves a stale, torn or foreign arrangement and never stops a parse."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from lpcfg_cli.engine.tokens import RulesByWord
from lpcfg_cli.grammar.compiled import build_grammar
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.sampling import random_lpcfg, sample_trees
from lpcfg_cli.model.treebank_pcfg import train_pcfg
from lpcfg_cli.parsing import arranged_cache
from lpcfg_cli.parsing.arranged import ATTRIBUTES, MAGIC, ArrangedModel, _data_start
from lpcfg_cli.parsing.tiers import BlockParser, ParserOptions
from lpcfg_cli.treebank.ptb import format_tree
from lpcfg_cli.treebank.tree import leaves
from tests.support import fit_em, invoke, lpcfg


def _models():
    truth = random_lpcfg(
        inter=4, pre=4, words=400, states=2, rules_per_symbol=4, words_per_tag=100, seed=9
    )
    trees = sample_trees(truth, 300, seed=10)
    grammar, bank = build_grammar(trees[:250], rare=2)
    em = fit_em(grammar, bank, states=2, iterations=2, seed=3)
    em2 = fit_em(grammar, bank, states=3, iterations=2, seed=4)
    sentences = [leaves(t) for t in trees[250:290]] + [["never-seen", "words", "here"]]
    return em, em2, train_pcfg(grammar, bank, {}), sentences


@pytest.fixture(scope="module")
def models():
    return _models()


def _parses(model, sentences, options=None):
    return [
        format_tree(r.tree) if r.tree is not None else "()"
        for r in BlockParser(model, options).parse(sentences)
    ]


def _round_trip(model, path):
    with open(path, "wb") as fh:
        ArrangedModel.of(model).save(fh, {"note": "kept"})
    loaded, header = ArrangedModel.load(path)
    assert header["note"] == "kept"
    return loaded


def test_a_saved_arrangement_parses_as_its_model(models, tmp_path):
    em, em2, pcfg, sentences = models
    assert len(em.grammar.rare_words) > 0  # the restored words are part of what is kept
    cases = [
        (em, None),
        (em, ParserOptions(decode="max-rule-product")),
        (em.bundle(em2), None),  # a product of two grammars
        (em.bundle(em2), ParserOptions(combine="mean")),
        (pcfg, None),  # the bare treebank PCFG: no latent pass
        (pcfg, ParserOptions(decode="variational")),
        # Parameters beyond float32's range: the latent pass runs in float64.
        (replace(em, lexical=em.lexical * 1e25, form="tensor"), None),
    ]
    for i, (model, options) in enumerate(cases):
        loaded = _round_trip(model, tmp_path / f"{i}.arranged")
        assert _parses(loaded, sentences, options) == _parses(model, sentences, options), i
    assert loaded.latent[0].dtype == np.float64
    assert _round_trip(em, tmp_path / "e.arranged").latent[0].dtype == np.float32


def test_loaded_arrays_are_what_the_kernels_take(models, tmp_path):
    """Aligned, C-contiguous and writable (mapped copy-on-write: the file is unchanged)."""
    em = models[0]
    path = tmp_path / "em.arranged"
    loaded = _round_trip(em, path)
    before = path.read_bytes()
    lg = loaded.latent[0]
    for a in (lg.packed, lg.a_idx, lg.t_ptr, loaded.coarse.right_bits, loaded.rules_by_word.ptr):
        assert a.flags.aligned and a.flags.c_contiguous and a.flags.writeable
    lg.packed[:] = 0
    assert path.read_bytes() == before


def test_rules_by_word_is_kept_whole(models):
    """``ATTRIBUTES`` names every attribute of ``RulesByWord``: one added later must be
    written too, or loading would leave it out."""
    em = models[0]
    assert set(vars(RulesByWord(em.grammar, pooled=True))) == set(ATTRIBUTES[RulesByWord])


def test_a_bad_arrangement_file_is_refused(models, tmp_path):
    em = models[0]
    path = tmp_path / "em.arranged"
    _round_trip(em, path)
    data = path.read_bytes()
    length = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    header = json.loads(data[len(MAGIC) + 8 : len(MAGIC) + 8 + length])

    def write(meta):
        """The same arrays under the header ``meta``."""
        text = json.dumps(meta).encode()
        head = MAGIC + len(text).to_bytes(8, "little") + text
        head += b"\0" * (_data_start(len(text)) - len(head))
        path.write_bytes(head + data[_data_start(length) :])

    write(header)
    assert _parses(ArrangedModel.load(path)[0], models[3]) == _parses(em, models[3])
    text = b"[1, 2]"  # JSON, not an object
    path.write_bytes(MAGIC + len(text).to_bytes(8, "little") + text)
    with pytest.raises(ValueError):
        ArrangedModel.load(path)

    bad = tmp_path / "bad"
    for content in (b"", b"PK\x03\x04 an npz", data[:5], data[: len(data) // 2]):
        bad.write_bytes(content)
        with pytest.raises(ValueError):
            ArrangedModel.load(bad)
    name = next(iter(header["arrays"]))
    for change in (
        {"format_version": 99},
        {"arrays": {**header["arrays"], name: ["|O", [3], 0]}},  # Python objects
        {"arrays": {**header["arrays"], name: ["<f8", [10**9], 0]}},  # beyond the end
        {"arrays": {**header["arrays"], name: ["<f8", [1], 8]}},  # not aligned
        {"numbers": {}},
        {"arrays": None},
        {"arrays": {**header["arrays"], name: ["not a dtype", [1], 0]}},
        {"arrays": {**header["arrays"], name: ["<f8", 7, 0]}},
        {"latent": "two"},
    ):
        write({**header, **change})
        with pytest.raises(ValueError):
            ArrangedModel.load(path)


# --- the cache -----------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(arranged_cache.ENV, str(folder))
    return folder


def _entries(folder):
    return sorted(folder.glob("*" + arranged_cache.SUFFIX)) if folder.exists() else []


def test_the_cache_serves_a_model_file_without_loading_it(models, cache, tmp_path, monkeypatch):
    em, _, _, sentences = models
    path = tmp_path / "em.npz"
    em.save(path)
    expected = _parses(em, sentences)
    assert _parses(arranged_cache.arrange(str(path)), sentences) == expected
    assert len(_entries(cache)) == 1

    def no_load(*args, **kwargs):
        raise AssertionError("the model file was loaded")

    monkeypatch.setattr(LPCFG, "load", no_load)
    assert _parses(arranged_cache.arrange(str(path)), sentences) == expected


def test_a_changed_model_file_is_arranged_anew(models, cache, tmp_path):
    em, em2, _, sentences = models
    path = tmp_path / "model.npz"
    em.save(path)
    arranged_cache.arrange(str(path))
    em2.save(path)  # same path, another model
    assert _parses(arranged_cache.arrange(str(path)), sentences) == _parses(em2, sentences)
    os.utime(path, ns=(0, 0))  # same content, another time: a miss, not a wrong answer
    assert _parses(arranged_cache.arrange(str(path)), sentences) == _parses(em2, sentences)
    assert len(_entries(cache)) == 3


def test_a_torn_or_foreign_entry_is_rebuilt(models, cache, tmp_path):
    em, _, _, sentences = models
    path = tmp_path / "em.npz"
    em.save(path)
    arranged_cache.arrange(str(path))
    (entry,) = _entries(cache)
    whole = entry.read_bytes()
    for damage in (whole[: len(whole) // 3], b"garbage", b""):
        entry.write_bytes(damage)
        assert _parses(arranged_cache.arrange(str(path)), sentences) == _parses(em, sentences)
        assert entry.read_bytes() == whole  # written again, whole
    # Another file's arrangement under this file's key (a collision) is not used.
    other = tmp_path / "other.npz"
    em.bundle(em).save(other)
    arranged_cache.arrange(str(other))
    theirs = arranged_cache.entry_path(str(cache), arranged_cache.source_of(str(other)))
    entry.write_bytes(open(theirs, "rb").read())
    loaded = arranged_cache.arrange(str(path))
    assert not loaded.ensemble and _parses(loaded, sentences) == _parses(em, sentences)


def test_no_cache_when_off_unwritable_or_stdin(models, tmp_path, monkeypatch):
    em, _, _, sentences = models
    path = tmp_path / "em.npz"
    em.save(path)
    expected = _parses(em, sentences)
    monkeypatch.setenv(arranged_cache.ENV, "off")
    assert arranged_cache.cache_folder() is None
    assert _parses(arranged_cache.arrange(str(path)), sentences) == expected
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(arranged_cache.ENV, str(blocker / "cache"))  # cannot be made
    assert _parses(arranged_cache.arrange(str(path)), sentences) == expected
    assert blocker.read_text() == ""
    monkeypatch.setenv(arranged_cache.ENV, str(tmp_path / "cache"))
    assert arranged_cache.source_of("-") is None
    assert arranged_cache.source_of(str(tmp_path)) is None  # a folder is not a model file
    assert arranged_cache.source_of(str(tmp_path / "missing.npz")) is None


def test_prune_drops_the_least_recently_used(tmp_path):
    suffix = arranged_cache.SUFFIX
    for i, name in enumerate("abcd"):
        (tmp_path / f"{name}{suffix}").write_bytes(b"x" * 100)
        os.utime(tmp_path / f"{name}{suffix}", ns=(10**18 + i, 10**18 + i))
    stale, fresh = tmp_path / f".writing-1{suffix}", tmp_path / f".writing-2{suffix}"
    stale.write_bytes(b"x")
    os.utime(stale, ns=(0, 0))
    fresh.write_bytes(b"x")
    (tmp_path / "unrelated.txt").write_bytes(b"x" * 1000)
    arranged_cache.prune(str(tmp_path), 250, keep=str(tmp_path / f"a{suffix}"))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [f".writing-2{suffix}", f"a{suffix}", f"d{suffix}", "unrelated.txt"]


def test_the_code_stamp_follows_every_source(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__").mkdir()
    source = tmp_path / "pkg" / "sub" / "m.py"
    source.write_text("x = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "m.py").write_text("")

    def stamp():
        out: list[str] = []
        arranged_cache._stamps(str(tmp_path / "pkg"), len(str(tmp_path / "pkg")), out)
        return out

    first = stamp()
    assert len(first) == 1 and first[0].startswith(os.sep + os.path.join("sub", "m.py"))
    source.write_text("x = 22\n")
    assert stamp() != first


def test_the_parse_command_uses_the_cache(models, cache, tmp_path):
    em, _, _, sentences = models
    path = tmp_path / "em.npz"
    em.save(path)
    text = tmp_path / "in.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in sentences))
    first = invoke("parse", path, text)
    assert first.exit_code == 0, first.output
    assert len(_entries(cache)) == 1
    second = invoke("parse", path, text)
    assert second.exit_code == 0 and second.stdout == first.stdout
    expected = [
        format_tree(r.tree, root="TOP") if r.tree is not None else "()"
        for r in BlockParser(em).parse(sentences)
    ]
    assert first.stdout.splitlines() == expected


def test_parses_started_at_once_both_arrange_and_keep_one(models, cache, tmp_path):
    """Two processes that find no arrangement both write one (each renamed into place
    whole): both parse, and one file is left."""
    em, _, _, sentences = models
    path = tmp_path / "em.npz"
    em.save(path)
    text = tmp_path / "in.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in sentences))
    procs = [
        subprocess.Popen(lpcfg("parse", path, text), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0] and len(outs[0][0].splitlines()) == len(sentences)
    assert len(_entries(cache)) == 1
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]
