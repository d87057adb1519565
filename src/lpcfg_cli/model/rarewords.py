"""Rare training words given back their identity when a model parses.

Words seen at most ``rare`` times in training are trained as their unknown-word signature
(``lexicon``): every learner sees ``UNK-LC-ing`` where the treebank has ``fertilizing``, so
that the signatures' rules are estimated from many tokens and hold what the grammar knows of
unseen words of each shape. The word itself is not lost: ``build_grammar`` records, for each
rare word, how often it stood under each pre-terminal with each signature (``RareWords``),
and the parser (``restore``) adds it back to the vocabulary with the lexical rules

    q(a, h -> w) = sum_s q(a, h -> s) n(G(a), w, s) / n(G(a), s)

for every pre-terminal ``a`` of an emission group ``G`` (the pre-terminals that end in the
same part-of-speech tag, as ``grammar.compiled._tie_emissions``) in which ``w`` was seen:
each of its signatures' rules, split among the signature's words by their share of its
tokens in that group. The word keeps its signature's distribution over latent states (what
the grammar learned of such words in context) and gets back which tags it takes. At parse
time the lexicon smooths it towards its signature over every pre-terminal, not only the
ones it was seen with (``Lexicon``: a word seen once as VBD must still be able to be a VBN).

This separates the two jobs that one threshold did: how many rare tokens the signatures
learn from, and which words the parser knows. It is the Berkeley parser's lexicon in this
respect (its ``SophisticatedLexicon`` gathers signature statistics from rare words while
every training word stays known). Split-merge parses dev better with a larger ``rare``
(``configs/splitmerge.toml`` uses 6); the other learners, and the six-model bundle of
``configs/best.toml``, prefer 1 (docs/treebanks.md, Rare words;
docs/learners/splitmerge.md, Rare words and smoothing). Restricting a restored word to the
tags it was seen with lost dev F1 although tagging improved, and restoring it with its own
posterior latent states instead of its signature's gave no clear gain (docs/tried.md,
Lexicon and rare words).

Only parsing restores: tree and string scores (``lpcfg score``, EM's dev likelihood) keep
the training vocabulary, where a rare word is its signature, so that they are the trained
model's probabilities.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lpcfg_cli.grammar.lexicon import is_signature
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams, ragged_ranges


def restore(model: LPCFG) -> LPCFG:
    """``model`` with its grammar's rare words added back as known words (see the module);
    the model itself when there are none. Every member of an ensemble gets the same new
    rules, each with its own parameters."""
    g = model.grammar
    rare = g.rare_words
    if not len(rare):
        return model
    table = rare.table
    # A rare word spelt like a vocabulary entry (a signature) stays a signature.
    taken = set(g.words)
    keep = np.array([not (w in taken or is_signature(w)) for w in rare.words])
    if not keep.any():  # restored already (or every rare word is spelt like an entry)
        return model
    table = table[keep[table[:, 0]]]
    new_id = np.cumsum(keep) - 1 + len(g.words)
    words = [w for w, k in zip(rare.words, keep, strict=True) if k]
    group = g.emission_groups()
    v = len(g.words)
    # n(G, s) over every rare word's rows and n(G, w, s) over each word's: the rows keyed by
    # (group, signature), then by (group, signature, word).
    gs_row = group[table[:, 1]] * v + table[:, 2]
    gs, gs_inv = np.unique(gs_row, return_inverse=True)
    n_gs = np.bincount(gs_inv, weights=table[:, 3])
    gws, inv = np.unique(gs_row * len(rare) + table[:, 0], return_inverse=True)
    gs_of = gws // len(rare)
    share = np.bincount(inv, weights=table[:, 3]) / n_gs[np.searchsorted(gs, gs_of)]
    word_of = new_id[gws % len(rare)]
    sig_of = gs_of % v
    group_of = gs_of // v
    # Every lexical rule (a, s) of the signature with a in the word's group.
    by_word = np.argsort(g.lexical[:, 1], kind="stable")
    first = np.searchsorted(g.lexical[by_word, 1], np.arange(v + 1))
    starts, sizes = first[sig_of], first[sig_of + 1] - first[sig_of]
    rules = by_word[ragged_ranges(starts, sizes)]
    owner = np.repeat(np.arange(len(share)), sizes)
    fits = group[g.lexical[rules, 0]] == group_of[owner]
    rules, owner = rules[fits], owner[fits]
    parent = g.lexical[rules, 0]
    pair, pair_of = np.unique(parent * (v + len(rare)) + word_of[owner], return_inverse=True)
    new_rules = np.stack([pair // (v + len(rare)), pair % (v + len(rare))], axis=1)
    weight = share[owner]

    def extend(lexical_padded: np.ndarray) -> np.ndarray:
        """(new rules, M) parameters from the signatures' padded rows (summed by column with
        ``bincount``, in the order ``np.add.at`` sums, at a fraction of its cost)."""
        columns = np.ascontiguousarray((lexical_padded[rules] * weight[:, None]).T)
        out = np.empty((len(pair), lexical_padded.shape[1]))
        for h in range(out.shape[1]):
            out[:, h] = np.bincount(pair_of, weights=columns[h], minlength=len(pair))
        return out

    counts = np.bincount(table[:, 0], table[:, 3], minlength=len(rare))[keep]
    grammar = replace(
        g,
        words=[*g.words, *words],
        known_words=[*g.known_words, *words],
        lexical=np.concatenate([g.lexical, new_rules]),
        word_counts=[*(g.word_counts or [1] * v), *(int(c) for c in counts)],
    )
    coarse = PCFGParams(
        model.coarse.binary,
        np.concatenate([model.coarse.lexical, extend(model.coarse.lexical[:, None])[:, 0]]),
        model.coarse.root,
    )

    def member(m: LPCFG) -> LPCFG:
        padded = extend(m.padded_lexical())
        live = np.arange(padded.shape[1]) < m.states[new_rules[:, 0], None]
        return LPCFG(
            grammar,
            m.states,
            m.binary_parameters(),
            np.concatenate([m.lexical, padded[live]]),
            m.root,
            coarse,
            m.form,
            m.meta,
        )

    head = member(model)
    head.members = tuple(member(m) for m in model.members)
    return head
