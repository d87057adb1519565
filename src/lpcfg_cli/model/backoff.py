"""The coarser PCFGs an annotated grammar backs off to.

A grammar binarized with ``--vertical 2`` or more splits every phrase label by its ancestors
(``NP^S``, ``NP^VP``), one with ``--horizontal 1`` or more splits intermediate symbols by
their siblings (``@NP/DT``), and a sentence can need a combination of symbols the training
trees never showed: with the PTB training split binarized ``--vertical 2 --horizontal 1``
(1,394 symbols) 9 of the 345 test sentences have no parse at all, with ``--vertical 2
--horizontal 2`` 10, and ``--vertical 1 --horizontal 1`` leaves one dev sentence without one.
Those sentences are parsed instead with the grammar's projection one level coarser
(``coarser_pcfg``): without the ancestors (``labels.unannotated``) if it has them, else
without the sibling context (``labels.without_context``); that grammar's parser backs off
in turn, down to ``--vertical 1 --horizontal 0``, the default binarization.

The projection of a PCFG ``p`` weights each annotated symbol ``a`` by its expected number
of occurrences in a tree, ``E = r + M^T E`` (``r`` the root probabilities, ``M[a, b]`` the
expected number of children ``b`` of an ``a``), and gives ``A -> B C`` the probability
``sum_{a in A} E[a] sum_{b in B, c in C} p(a -> b c) / sum_{a in A} E[a]`` (likewise the
lexical rules; roots add up). For a PCFG estimated by relative frequency from a treebank,
``E`` are the treebank's symbol counts per tree, so this is the relative-frequency PCFG of
the same trees without the annotation: the grammar ``--vertical 1`` (or ``--horizontal 0``)
would have learned.
"""

from __future__ import annotations

import numpy as np

from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.model.lpcfg import LPCFG, PCFGParams
from lpcfg_cli.treebank import labels


def expected_counts(g: Grammar, coarse: PCFGParams) -> np.ndarray:
    """``E[a]``: expected occurrences of each symbol in a tree of the PCFG ``coarse``
    (solves ``(I - M^T) E = r``; a sparse system of the symbols' size)."""
    # Imported here, where a back-off is needed: at module level scipy.sparse and its
    # linalg added to the imports of every `lpcfg parse` (python -X importtime), most of
    # which never back off.
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    n = g.n_symbols
    a, b, c = g.binary[:, 0], g.binary[:, 1], g.binary[:, 2]
    p = coarse.binary
    m = sp.csr_matrix(
        (np.concatenate([p, p]), (np.concatenate([a, a]), np.concatenate([b, c]))), shape=(n, n)
    )
    system = (sp.identity(n, format="csc") - m.T.tocsc()).tocsc()
    counts = spla.spsolve(system, np.asarray(coarse.root, dtype=np.float64))
    return np.maximum(np.asarray(counts, dtype=np.float64), 0.0)


def coarser_pcfg(model: LPCFG) -> LPCFG | None:
    """The projection of ``model``'s coarse PCFG one level coarser (without vertical
    annotation if it has some, else without horizontal context), as a PCFG model over the
    same vocabulary; None for a grammar with neither."""
    return project_pcfg(model.grammar, model.coarse)


def project_pcfg(g: Grammar, coarse: PCFGParams) -> LPCFG | None:
    """``coarser_pcfg`` of the treebank PCFG ``coarse`` of grammar ``g`` (all it reads of
    a model: a parser keeps no more than these)."""
    names = [labels.unannotated(s) for s in g.symbols]
    level = {"vertical": 1}
    if names == list(g.symbols):
        names = [labels.without_context(s) for s in g.symbols]
        level = {"horizontal": 0}
        if names == list(g.symbols):
            return None
    # A phrase and a pre-terminal projected onto one name stay two symbols, as in the grammar
    # binarized at that level (``labels.preterminal``; ``NP^S`` and ``NP`` -> ``NP`` and
    # ``NP%t``): a symbol of the normal form rewrites either to words or to two symbols, and
    # decoding reads a pre-terminal's brackets off that (``decode.Brackets``).
    phrases = {name for name, inter in zip(names, g.is_interterminal, strict=True) if inter}
    names = [
        labels.preterminal(name) if pre and name in phrases else name
        for name, pre in zip(names, g.is_preterminal, strict=True)
    ]
    symbols = list(dict.fromkeys(names))
    index = {s: i for i, s in enumerate(symbols)}
    proj = np.array([index[s] for s in names], dtype=np.int64)
    weight = expected_counts(g, coarse)
    total = np.bincount(proj, weight, len(symbols))
    scale = np.divide(weight, total[proj], out=np.zeros_like(weight), where=total[proj] > 0)

    rules, inverse = np.unique(proj[g.binary], axis=0, return_inverse=True)
    binary = np.bincount(inverse.ravel(), coarse.binary * scale[g.binary[:, 0]], len(rules))
    lex_rules = np.stack([proj[g.lexical[:, 0]], g.lexical[:, 1]], axis=1)
    lex, lex_inverse = np.unique(lex_rules, axis=0, return_inverse=True)
    lexical = np.bincount(lex_inverse.ravel(), coarse.lexical * scale[g.lexical[:, 0]], len(lex))
    root = np.bincount(proj, coarse.root, len(symbols))
    grammar = Grammar(
        symbols,
        list(g.words),
        list(g.known_words),
        rules,
        lex,
        {**g.binarization, **level},
        g.rare,
        g.word_counts,
    )
    params = PCFGParams(binary, lexical, root)
    return LPCFG(
        grammar,
        np.ones(len(symbols), dtype=np.int64),
        binary.copy(),
        lexical.copy(),
        root.copy(),
        params,
        "probabilistic",
        {"method": "pcfg", "projected_from": g.binarization},
    )
