"""Tokens to lexical rules: the (span, lexical rule, weight) triples that score the words of
a batch of sentences, as the parser scores them (``Lexicon.lookup_weighted``: an unknown
word by its signature, backed off to every signature). The parser and the string charts
(``engine.string_charts``) both start from them.

``smoothed_token_rules`` scores them for the parser's smoothed grammar (the second tier of
``parsing.tiers``, for a sentence the grammar cannot derive): every token but punctuation
also backs off to every signature, so that a known word may take an open-class tag it was
never seen with. The model's own scores (``token_rules``, which ``lpcfg score`` also reads
through ``token_words``) are not changed by it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lpcfg_cli.engine.dispatch import check_ids, float64s, int64s, kernel
from lpcfg_cli.engine.layout import SpanLayout
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.grammar.lexicon import Signatures, known_spelling, spellings

Triples = tuple[np.ndarray, np.ndarray, np.ndarray]

# The smoothed lexicon's back-off to every signature (``smoothed_token_rules``): its entry
# weighs this share of the token's own lexical mass. Small, so that a word keeps its own tags
# wherever they give a parse and takes an unseen one only where nothing else does; the
# smoothed grammar parses only sentences the grammar cannot derive, where the back-off
# decides whether there is a parse at all more than which one (docs/parsing.md, Sentences
# the grammar cannot derive).
BACKOFF_SHARE = 1e-3

# The shape classes alone (no affix inventory): a token's signature names ``PUNCT`` or
# ``SYM`` when it has no letter and no numeral (``grammar.lexicon``).
_SHAPES = Signatures()
_NO_WORD_SHAPES = frozenset({"PUNCT", "SYM"})


def token_words(
    grammar: Grammar,
    layout: SpanLayout,
    sentences: Sequence[Sequence[str]],
    pooled: bool = False,
) -> tuple[np.ndarray, ...]:
    """(span, word id, weight) of every token of ``sentences``, as ``Lexicon.lookup_weighted``
    scores it (the parser's look-up; ``pooled``: an unknown word's back-off to every
    signature as one entry), plus each entry's restriction (a word id whose pre-terminals
    the entry's rules are limited to, or -1)."""
    lexicon = grammar.lexicon
    spans, ids, weights, only = [], [], [], []
    for s, tokens in enumerate(sentences):
        first = int(layout.base[1, s]) if len(tokens) else 0
        for t, token in enumerate(tokens):
            for w, weight, restrict in lexicon.lookup_weighted(token, t, pooled):
                spans.append(first + t)
                ids.append(w)
                weights.append(weight)
                only.append(restrict)
    if not ids:
        return (*empty_triples(), np.zeros(0, dtype=np.int64))
    return (
        np.asarray(spans, dtype=np.int64),
        np.asarray(ids, dtype=np.int64),
        np.asarray(weights, dtype=np.float64),
        np.asarray(only, dtype=np.int64),
    )


def empty_triples() -> Triples:
    """No (span, rule or word, weight) triples."""
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)


class RulesByWord:
    """A grammar's lexical rules by word (CSR), to score tokens with.

    With ``pooled``, the back-off of an unknown word to every signature (``Lexicon``'s
    ``pooled_id``) has rules of its own, numbered after the grammar's: one per pre-terminal
    of some signature's rule, whose parameters are the sums of those signatures' rules
    (``pool``). An unknown word then brings one entry per pre-terminal instead of one per
    rule of every signature (about 150 signatures of a PTB grammar: nine tenths of the lexical
    entries of a test-split batch, each summed again into every chart), with the same
    scores: ``sum_s w q(a -> s) = w sum_s q(a -> s)`` (up to rounding).
    """

    def __init__(self, grammar: Grammar, pooled: bool = False):
        lexical = grammar.lexical
        self.n_rules = len(lexical)
        self.order = np.argsort(lexical[:, 1], kind="stable")
        self.ptr = np.searchsorted(lexical[self.order, 1], np.arange(len(grammar.words) + 1))
        self.parent = int64s(lexical[:, 0])
        self.n_words = len(grammar.words)
        # "Has word w a rule under pre-terminal a?": bit a * V + w of a packed bit set (a
        # look-up per entry; a binary search of the sorted keys was 2 % of a parse).
        keys = lexical[:, 0] * self.n_words + lexical[:, 1]
        self.has_rule = np.zeros((grammar.n_symbols * self.n_words + 7) // 8, dtype=np.uint8)
        np.bitwise_or.at(self.has_rule, keys >> 3, (128 >> (keys & 7)).astype(np.uint8))
        self.pooled = pooled and len(grammar.lexicon.signature_ids) > 0
        # The signatures' rules and the pooled rule each adds into (``pool``).
        self.pooled_from = np.zeros(0, dtype=np.int64)
        self.pooled_into = np.zeros(0, dtype=np.int64)
        if self.pooled:
            signature = np.zeros(self.n_words, dtype=bool)
            signature[grammar.lexicon.signature_ids] = True
            self.pooled_from = np.flatnonzero(signature[lexical[:, 1]])
            parents, into = np.unique(lexical[self.pooled_from, 0], return_inverse=True)
            self.pooled_into = self.n_rules + into.astype(np.int64)
            pooled_rules = self.n_rules + np.arange(len(parents))
            self.order = np.concatenate([self.order, pooled_rules])
            self.ptr = np.append(self.ptr, self.ptr[-1] + len(parents))
            self.parent = np.concatenate([self.parent, parents])

    def pool(self, values: np.ndarray) -> np.ndarray:
        """Per-rule ``values`` (first axis: the grammar's lexical rules) with the pooled
        rules' rows appended, each the sum of its signatures' rows (float64 sums)."""
        extra = len(self.parent) - self.n_rules
        if extra == 0:
            return values
        out = np.zeros((extra, *values.shape[1:]))
        np.add.at(out, self.pooled_into - self.n_rules, values[self.pooled_from])
        return np.concatenate([values, out.astype(values.dtype)])

    def expand(
        self,
        span: np.ndarray,
        word: np.ndarray,
        weight: np.ndarray,
        only: np.ndarray | None = None,
    ) -> Triples:
        """(span, word, weight[, restriction]) -> (span, lexical rule, weight) for every rule
        of the word (with a restriction ``r``: only those whose pre-terminal has a rule for
        word ``r``)."""
        if (
            len(span) != len(word)
            or len(weight) != len(word)
            or (only is not None and len(only) != len(word))
        ):
            raise ValueError("span, word, weight, only: one entry each per token entry")
        check_ids("word", word, len(self.ptr) - 1)
        if only is None:
            only = np.full(len(word), -1, dtype=np.int64)
        else:  # -1: no restriction
            check_ids("only", np.asarray(only) + 1, self.n_words + 1)
        return _expand(
            int64s(span),
            int64s(word),
            float64s(weight),
            int64s(only),
            self.ptr,
            self.order,
            self.parent,
            self.n_words,
            self.has_rule,
        )


@kernel(nogil=True)
def _expand(span, word, weight, only, ptr, order, parent, n_words, has_rule):
    """``RulesByWord.expand`` in one pass: entry ``t`` gives ``(span[t], rule, weight[t])``
    for every rule of ``word[t]`` (``order[ptr[w]:ptr[w + 1]]``) whose pre-terminal has a
    rule for word ``only[t]`` (bit ``parent * n_words + only`` of ``has_rule``), or for
    every rule where ``only[t] < 0``."""
    total = 0
    for t in range(len(word)):
        total += ptr[word[t] + 1] - ptr[word[t]]
    out_span = np.empty(total, dtype=np.int64)
    out_rule = np.empty(total, dtype=np.int64)
    out_weight = np.empty(total)
    n = 0
    for t in range(len(word)):
        for u in range(ptr[word[t]], ptr[word[t] + 1]):
            rule = order[u]
            if only[t] >= 0:
                want = parent[rule] * n_words + only[t]
                if (has_rule[want >> 3] >> (7 - (want & 7))) & 1 == 0:
                    continue
            out_span[n], out_rule[n], out_weight[n] = span[t], rule, weight[t]
            n += 1
    return out_span[:n], out_rule[:n], out_weight[:n]


def token_rules(
    grammar: Grammar, rules: RulesByWord, layout: SpanLayout, sentences: Sequence[Sequence[str]]
) -> Triples:
    """(span, lexical rule, weight) scoring every token of ``sentences`` (``token_words``;
    with ``rules`` built ``pooled``, an unknown word's back-off by the pooled rules)."""
    lex = rules.expand(*token_words(grammar, layout, sentences, rules.pooled))
    return character_weighted(grammar, rules, layout, sentences, lex)


def character_weighted(
    grammar: Grammar,
    rules: RulesByWord,
    layout: SpanLayout,
    sentences: Sequence[Sequence[str]],
    lex: Triples,
) -> Triples:
    """``lex`` with the entries of every unknown word in a script without case weighted by
    what its first and last characters say about its pre-terminal's emission group
    (``Grammar.characters``, ``lexicon.CharacterEvidence``); ``lex`` itself for a grammar
    without that evidence (every cased treebank) or a batch without such a word."""
    evidence = grammar.characters
    if evidence is None or not layout.max_length:
        return lex
    lexicon = grammar.lexicon
    words = layout.block(1)
    row = np.full(words.stop - words.start, -1, dtype=np.int64)
    factors = []
    for s, tokens in enumerate(sentences):
        first = int(layout.base[1, s]) if len(tokens) else 0
        for t, token in enumerate(tokens):
            if known_spelling(token, lexicon.known) is not None:
                continue
            f = evidence.factors(token, t == 0, lexicon.signature)
            if f is not None:
                row[first + t - words.start] = len(factors)
                factors.append(f)
    if not factors:
        return lex
    span, rule, weight = lex
    at = row[span - words.start]
    hit = at >= 0
    weight = weight.copy()
    weight[hit] *= np.asarray(factors)[at[hit], evidence.group[rules.parent[rule[hit]]]]
    return span, rule, weight


def is_punctuation(token: str) -> bool:
    """Whether ``token`` is punctuation or a symbol: no letter, no numeral (the ``PUNCT`` and
    ``SYM`` shape classes of ``grammar.lexicon``; a bracket's PTB name, ``-LRB-``, counts as
    its bracket). A currency sign (``CUR``) is not: it is a word of its own (``$``, tagged
    like a noun)."""
    return any(
        _NO_WORD_SHAPES.intersection(_SHAPES(spelling).split("-")) for spelling in spellings(token)
    )


def smoothed_token_rules(
    grammar: Grammar,
    rules: RulesByWord,
    layout: SpanLayout,
    sentences: Sequence[Sequence[str]],
    coarse_lexical: np.ndarray,
    share: float = BACKOFF_SHARE,
) -> Triples:
    """``token_rules`` of the smoothed grammar: each token's own entries and, for a token
    that is not punctuation (``is_punctuation``) and does not already back off (an unknown
    word does), the back-off to every signature (the pooled rules of ``rules``, built
    ``pooled``) weighted so that its lexical mass under the treebank PCFG
    (``coarse_lexical``: per lexical rule, the pooled rules' rows appended) is ``share``
    times the token's own.

    A share of the token's own mass rather than a fixed weight: a frequent word's own scores
    are large and a rare word's small, and the back-off is to stay as small beside each.
    Punctuation keeps its own tags: EVALB deletes punctuation by its tag, and a mark tagged as
    a noun would leave the sentence a different length from its gold tree."""
    span, word, weight, only = token_words(grammar, layout, sentences, rules.pooled)
    lex = rules.expand(span, word, weight, only)
    lex = character_weighted(grammar, rules, layout, sentences, lex)
    if not rules.pooled or not layout.max_length:
        return lex
    pooled = grammar.lexicon.pooled_id
    pooled_rules = rules.order[rules.ptr[pooled] : rules.ptr[pooled + 1]]
    pooled_mass = float(coarse_lexical[pooled_rules].sum())
    if pooled_mass <= 0.0:
        return lex
    words = layout.block(1)
    backs_off = np.zeros(words.stop - words.start, dtype=bool)
    backs_off[span[word == pooled] - words.start] = True
    todo = [
        int(layout.base[1, s]) + t
        for s, tokens in enumerate(sentences)
        for t, token in enumerate(tokens)
        if not backs_off[int(layout.base[1, s]) + t - words.start] and not is_punctuation(token)
    ]
    if not todo:
        return lex
    lex_span, lex_rule, lex_weight = lex
    own = np.bincount(
        lex_span - words.start,
        weights=coarse_lexical[lex_rule] * lex_weight,
        minlength=len(backs_off),
    )
    at = np.asarray(todo, dtype=np.int64)
    mass = own[at - words.start]
    # A token whose own entries score nothing (none in practice) backs off with ``share``.
    scale = np.where(mass > 0.0, mass, pooled_mass) * share / pooled_mass
    extra = rules.expand(at, np.full(len(at), pooled, dtype=np.int64), scale)
    return tuple(np.concatenate([a, b]) for a, b in zip(lex, extra, strict=True))  # type: ignore[return-value]
