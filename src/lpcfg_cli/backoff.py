"""The unannotated PCFG a parent-annotated grammar backs off to.

A grammar binarized with ``--vertical 2`` or more splits every phrase label by its ancestors
(``NP^S``, ``NP^VP``), and a sentence can need a combination of annotated symbols the
training trees never showed: with the PTB training split binarized ``--vertical 2
--horizontal 1`` (1,394 symbols) 9 of the 345 test sentences have no parse at all, with
``--vertical 2 --horizontal 2`` 10. Those sentences are parsed instead with the grammar's
projection onto unannotated labels (``labels.unannotated``), which covers whatever the
annotated one does and more.

The projection of a PCFG ``p`` weights each annotated symbol ``a`` by its expected number
of occurrences in a tree, ``E = r + M^T E`` (``r`` the root probabilities, ``M[a, b]`` the
expected number of children ``b`` of an ``a``), and gives ``A -> B C`` the probability
``sum_{a in A} E[a] sum_{b in B, c in C} p(a -> b c) / sum_{a in A} E[a]`` (likewise the
lexical rules; roots add up). For a PCFG estimated by relative frequency from a treebank,
``E`` are the treebank's symbol counts per tree, so this is the relative-frequency PCFG of
the same trees without the annotation: the grammar ``--vertical 1`` would have learned.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from lpcfg_cli import labels
from lpcfg_cli.grammar import Grammar
from lpcfg_cli.model import LPCFG, PCFGParams


def expected_counts(g: Grammar, coarse: PCFGParams) -> np.ndarray:
    """``E[a]``: expected occurrences of each symbol in a tree of the PCFG ``coarse``
    (solves ``(I - M^T) E = r``; a sparse system of the symbols' size)."""
    n = g.n_symbols
    a, b, c = g.binary[:, 0], g.binary[:, 1], g.binary[:, 2]
    p = coarse.binary
    m = sp.csr_matrix(
        (np.concatenate([p, p]), (np.concatenate([a, a]), np.concatenate([b, c]))), shape=(n, n)
    )
    system = (sp.identity(n, format="csc") - m.T.tocsc()).tocsc()
    counts = spla.spsolve(system, np.asarray(coarse.root, dtype=np.float64))
    return np.maximum(np.asarray(counts, dtype=np.float64), 0.0)


def unannotated_pcfg(model: LPCFG) -> LPCFG | None:
    """The projection of ``model``'s coarse PCFG onto unannotated symbols, as a PCFG model
    over the same vocabulary; None when the grammar has no vertical annotation."""
    g = model.grammar
    names = [labels.unannotated(s) for s in g.symbols]
    if names == list(g.symbols):
        return None
    symbols = list(dict.fromkeys(names))
    index = {s: i for i, s in enumerate(symbols)}
    proj = np.array([index[s] for s in names], dtype=np.int64)
    coarse = model.coarse
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
        {**g.binarization, "vertical": 1},
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
