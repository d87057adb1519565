"""Language-model data: the Brown split rule, text files, the vocabulary (unknown words,
boundaries), n-gram events, bigram counts, and perplexity against a brute-force sum."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.lm.corpus import (
    Vocabulary,
    brown_split,
    read_corpus,
    split_by_tokens,
    write_sentences,
)
from lpcfg_cli.lm.perplexity import halves, perplexity, token_log_probs

TRAIN = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["the", "cat"]]


def test_split_by_tokens_puts_a_sentence_where_its_first_token_falls():
    sents = [["a"] * n for n in (3, 4, 0, 2, 5, 1)]  # first tokens at 0, 3, 7, 7, 9, 14
    parts = split_by_tokens(sents, [7, 2])
    assert [[len(s) for s in p] for p in parts] == [[3, 4], [0, 2], [5, 1]]
    parts = split_by_tokens(sents, [4, 100])
    assert [[len(s) for s in p] for p in parts] == [[3, 4], [0, 2, 5, 1], []]
    assert sum(parts, []) == sents
    with pytest.raises(ValueError):
        split_by_tokens(sents, [-1])


def test_halves_cut_the_tokens_in_two_at_a_sentence_boundary():
    sents = [["w"] * n for n in (4, 4, 1, 3)]  # 12 tokens: the third starts at 8 > 6
    first, second = halves(sents)
    assert (first, second) == (sents[:2], sents[2:])


def test_vocabulary_keeps_words_seen_twice_and_maps_the_rest_to_unk():
    vocab = Vocabulary.build(TRAIN)
    assert vocab.words == ["<s>", "</s>", "<unk>", "cat", "the", "sat"]  # 3, 3, 2: by count
    assert vocab.id("dog") == vocab.id("zebra") == Vocabulary.UNK_ID
    enc = vocab.encode([["the", "zebra", "<unk>", "cat"], [], ["<s>", "</s>"]])
    assert enc.ids.tolist() == [4, 2, 2, 3, 2, 2]
    assert enc.offsets.tolist() == [0, 4, 4, 6]
    # OOV: words not in the vocabulary; <unk> itself is in it, boundary spellings are not
    assert enc.oov == 3
    assert vocab.encode(TRAIN).oov == 3  # dog, a, ran: seen once
    assert vocab.unk_replaced([["a", "cat"]]) == [["<unk>", "cat"]]
    assert Vocabulary.build(TRAIN, min_count=1).words[3:] == [
        "cat",
        "the",
        "sat",
        "a",
        "dog",
        "ran",
    ]
    assert Vocabulary.build([["<s>", "<s>", "x", "x"]]).words == ["<s>", "</s>", "<unk>", "x"]
    with pytest.raises(LpcfgError):
        Vocabulary(["a", "<s>", "</s>", "<unk>"])


def test_events_pad_the_context_with_bos_and_predict_eos():
    vocab = Vocabulary.build(TRAIN)  # the=4 cat=3 sat=5
    ev = vocab.events([["the", "cat", "sat"], [], ["cat"]], 3)
    assert ev.next.tolist() == [4, 3, 5, 1, 1, 3, 1]
    assert ev.context.tolist() == [[0, 0], [0, 4], [4, 3], [3, 5], [0, 0], [0, 0], [0, 3]]
    ev2 = vocab.events([["the", "cat", "sat"], [], ["cat"]], 2)
    assert ev2.context[:, 0].tolist() == [0, 4, 3, 5, 0, 0, 3]
    assert vocab.events([["x"]], 1).context.shape == (2, 0)


def test_bigram_counts_equal_a_counter_over_padded_sentences():
    vocab = Vocabulary.build(TRAIN)
    text = TRAIN + [["the", "the", "unseen", "cat"]]
    expected: Counter = Counter()
    for s in text:
        ids = [0] + [vocab.id(w) for w in s] + [1]
        expected.update(zip(ids[:-1], ids[1:], strict=False))
    counts = vocab.bigram_counts(text)
    assert counts.shape == (len(vocab), len(vocab))
    assert counts.format == "csr"
    got = {(int(i), int(j)): v for i, j, v in zip(*counts.nonzero(), counts.data, strict=True)}
    assert got == dict(expected)
    assert counts[:, 0].nnz == 0 and counts[1].nnz == 0  # <s> never next, </s> never previous


def test_sentence_files_round_trip_and_refuse_bad_input(tmp_path):
    path = tmp_path / "s.txt"
    write_sentences(path, [["a", "b"], ["c"], ["d", "e", "f"]])
    assert path.read_text(encoding="utf-8") == "a b\nc\nd e f\n"
    path.write_bytes("\ufeffa  b\t c\n\n   \nd\n".encode())
    assert read_corpus(path) == [["a", "b", "c"], ["d"]]  # blank lines: no sentence
    path.write_bytes(b"ok\n\xff\n")
    with pytest.raises(LpcfgError, match=r"s\.txt:2: invalid UTF-8"):
        read_corpus(path)
    with pytest.raises(LpcfgError, match="holds whitespace"):
        write_sentences(tmp_path / "t.txt", [["a b"]])
    assert not (tmp_path / "t.txt").exists()


class TableModel:
    """A bigram model given as a full probability table (rows: previous id)."""

    order = 2

    def __init__(self, vocab: Vocabulary, table: np.ndarray) -> None:
        self.vocab, self.table = vocab, table

    def log_probs(self, context: np.ndarray, next_ids: np.ndarray) -> np.ndarray:
        return np.log(self.table[context[:, 0], next_ids])


def test_perplexity_equals_a_hand_computation():
    vocab = Vocabulary.build([["a", "a", "b", "b"]])  # <s> </s> <unk> a b
    table = np.array(
        [
            [0.0, 0.1, 0.2, 0.3, 0.4],  # after <s>
            [0.0, 0.2, 0.2, 0.2, 0.4],  # after </s> (never used)
            [0.0, 0.5, 0.1, 0.2, 0.2],  # after <unk>
            [0.0, 0.25, 0.25, 0.25, 0.25],  # after a
            [0.0, 0.6, 0.1, 0.1, 0.2],  # after b
        ]
    )
    model = TableModel(vocab, table)
    text = [["a", "x", "b"], ["y"], ["b", "b"]]
    # a|<s> x=unk|a b|unk </s>|b ; unk|<s> </s>|unk ; b|<s> b|b </s>|b
    probs = [0.3, 0.25, 0.2, 0.6, 0.2, 0.5, 0.4, 0.2, 0.6]
    result = perplexity(model, text)
    assert result.tokens == 9 and result.oov == 2
    assert result.perplexity == pytest.approx(math.exp(-sum(map(math.log, probs)) / 9))
    assert result.to_dict() == {"perplexity": result.perplexity, "tokens": 9, "oov": 2}
    np.testing.assert_allclose(token_log_probs(model, text, batch=2), np.log(probs))
    assert perplexity(model, text, batch=1) == result
    # Unknown words left out (skip_unknown: the paper's NYT convention): x and y are not
    # predicted, the <unk> they leave in the context stays.
    skipped = perplexity(model, vocab.events(text, 2, skip_unknown=True))
    kept = [0.3, 0.2, 0.6, 0.5, 0.4, 0.2, 0.6]
    assert skipped.tokens == 7 and skipped.oov == 2
    assert skipped.perplexity == pytest.approx(math.exp(-sum(map(math.log, kept)) / 7))
    same = vocab.events([["a", "b"], ["b"]], 2, skip_unknown=True)
    plain = vocab.events([["a", "b"], ["b"]], 2)
    np.testing.assert_array_equal(same.next, plain.next)
    np.testing.assert_array_equal(same.context, plain.context)
    trigrams = vocab.events(text, 3, skip_unknown=True)
    assert trigrams.next.tolist() == [3, 4, 1, 1, 4, 4, 1]
    assert trigrams.context.tolist() == [[0, 0], [3, 2], [2, 4], [0, 2], [0, 0], [0, 4], [4, 4]]


@pytest.mark.slow
def test_brown_split_sizes():
    """The real split (about 6 s to load): sizes within one sentence of 800K / 200K."""
    try:
        parts = brown_split()
    except LpcfgError as err:
        pytest.skip(str(err))
    sizes = {k: sum(map(len, v)) for k, v in parts.items()}
    assert sizes == {"train": 800_001, "dev": 200_021, "test": 161_170}
    assert [len(v) for v in parts.values()] == [35_523, 11_690, 10_127]
    assert len(Vocabulary.build(parts["train"])) == 24_540
