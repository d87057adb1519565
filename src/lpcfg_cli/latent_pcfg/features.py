"""Inside and outside feature vectors of treebank nodes (spectral and pivot learners).

Every node of the compiled treebank gets a sparse one-hot vector per template; templates are
those of the spectral parser of Cohen et al. (2013), computed on integer arrays:

inside (the subtree under the node)
    ``word`` (lower-cased, pre-terminals), ``left`` (a -> b), ``right`` (a -> c), ``rule``
    (a -> b c), ``rule+left`` / ``rule+right`` (the rule with one child expanded one more
    level), ``head`` (head part-of-speech tag), ``length`` (words spanned);
outside (the tree around it)
    ``parent`` (the parent rule with the node's side marked), ``parent2`` / ``parent3`` (the
    tree two and three levels up), ``up1`` (node, parent), ``up2`` (node, parent,
    grandparent), ``ancestor_head`` (head tag of the first ancestor whose head tag differs),
    ``left_words`` / ``right_words`` (label and words to the left / right).
    ``ancestor_head`` depends on the node's own head tag too: it is not a function of the
    outside tree, so inside and outside features are not independent given the latent
    state, and the estimators using it are biased however many trees they see
    (``bench_consistency.py`` from exact moments).

Every feature is conjoined with the node's own label, so a column belongs to one nonterminal.
With ``scale`` an active feature has value ``sqrt(M / (count(f) + offset))``, ``M`` the number
of trees + 1 (Cohen et al. 2013 report several F1 points from it): rare features weigh more.
With per-tree ``weights`` (tree ``t`` counted ``weights[t]`` times, ``node_weights``) the
counts and ``M`` are weighted sums, so integer weights equal repeating the trees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from lpcfg_cli.errors import LpcfgError
from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar
from lpcfg_cli.treebank.heads import constituent_heads
from lpcfg_cli.treebank.tree import Tree, tagged_words

INSIDE = ("word", "left", "right", "rule", "rule+left", "rule+right", "head", "length")
# Used by the pivot learner: the lexical rule itself (tau(a -> x) = a -> x, its section 6.1)
# and the rule at the node whatever its kind.
EXTRA_INSIDE = ("lexrule", "node_rule")
OUTSIDE = (
    "parent",
    "parent2",
    "parent3",
    "up1",
    "up2",
    "ancestor_head",
    "left_words",
    "right_words",
)


@dataclass(frozen=True)
class FeatureOptions:
    """Which templates to use and how to weigh active features."""

    inside: tuple[str, ...] = INSIDE
    outside: tuple[str, ...] = OUTSIDE
    scale: bool = True
    offset: float = 5.0

    def __post_init__(self) -> None:
        check_templates("inside", self.inside)
        check_templates("outside", self.outside)


def check_templates(side: str, chosen: Sequence[str]) -> None:
    """Raise ``LpcfgError`` unless ``chosen`` names at least one known ``side`` template."""
    known = INSIDE + EXTRA_INSIDE if side == "inside" else OUTSIDE
    bad = [t for t in chosen if t not in known]
    if bad:
        raise LpcfgError(f"unknown {side} feature template {bad[0]!r} (known: {', '.join(known)})")
    if not chosen:
        raise LpcfgError(f"at least one {side} feature template is needed")


@dataclass
class NodeFeatures:
    """Sparse ``(nodes, d)`` inside and ``(nodes, d')`` outside feature matrices (CSR)."""

    inside: sp.csr_matrix
    outside: sp.csr_matrix


def _pair(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Injective int64 code of the pairs (x, y) with x, y >= -1."""
    return (x + 1) * (int(y.max(initial=0)) + 2) + (y + 1)


def _tree_of(bank: CompiledTreebank) -> np.ndarray:
    return np.searchsorted(bank.tree_start, np.arange(bank.n_nodes), side="right") - 1


def node_weights(bank: CompiledTreebank, weights: np.ndarray | None) -> np.ndarray | None:
    """Every node's weight: that of its tree (``weights[t] >= 0``, one per tree; None: None)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (bank.n_trees,) or not np.isfinite(w).all() or (w < 0).any():
        raise LpcfgError("tree weights must be one finite non-negative number per tree")
    return np.repeat(w, np.diff(bank.tree_start))


class TreeSample(NamedTuple):
    """The training trees the moment estimators read (``node_features``, the spectral and
    pivot estimators): a grammar, its compiled treebank ``bank``, the unbinarized tree
    behind each compiled tree (its words and part-of-speech tags give the word and head
    features), and how many times each tree counts (None: once)."""

    grammar: Grammar
    bank: CompiledTreebank
    originals: Sequence[Tree]
    weights: np.ndarray | None = None


def node_features(sample: TreeSample, options: FeatureOptions | None = None) -> NodeFeatures:
    """Inside and outside features of every node of ``sample.bank`` (its ``weights`` count
    in the feature counts of ``scale``)."""
    grammar, bank, originals, weights = sample
    opts = options or FeatureOptions()
    inside, outside = template_keys(grammar, bank, originals)
    m = bank.n_trees + 1 if weights is None else float(np.sum(weights)) + 1
    node_w = node_weights(bank, weights)
    sym = bank.symbol
    return NodeFeatures(
        _one_hot(sym, [inside[t] for t in opts.inside], opts, m, node_w),
        _one_hot(sym, [outside[t] for t in opts.outside], opts, m, node_w),
    )


def template_keys(
    grammar: Grammar, bank: CompiledTreebank, originals: Sequence[Tree]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per template, an int64 value for every node (``-1``: the template does not apply).

    Values are codes within a template; conjoin them with the node label to get features.
    """
    if len(originals) != bank.n_trees:
        raise LpcfgError("feature extraction needs the original tree of every compiled tree")
    tree = _tree_of(bank)
    pos_lists = [tagged_words(t) for t in originals]
    word_offset = np.zeros(bank.n_trees + 1, dtype=np.int64)
    np.cumsum([len(p) for p in pos_lists], out=word_offset[1:])
    words = [w.lower() for p in pos_lists for w, _ in p]
    tags = [t for p in pos_lists for _, t in p]
    word_ids = _codes(words)
    tag_ids = _codes(tags)

    sym, rule, n_rules = bank.symbol, bank.rule, grammar.n_binary
    left, right, parent = bank.left, bank.right, bank.parent
    binary = rule >= 0
    lch = np.where(binary, left, 0)
    rch = np.where(binary, right, 0)

    head = binarized_heads(bank, originals)
    head_tag = tag_ids[word_offset[tree] + head]
    pre = bank.lex >= 0
    word = np.where(pre, word_ids[word_offset[tree] + bank.start], -1)

    inside = {
        "word": word,
        "left": np.where(binary, sym[lch], -1),
        "right": np.where(binary, sym[rch], -1),
        "rule": rule,
        "rule+left": np.where(binary, _pair(rule, np.where(binary, rule[lch], -1)), -1),
        "rule+right": np.where(binary, _pair(rule, np.where(binary, rule[rch], -1)), -1),
        "head": head_tag,
        "length": bank.end - bank.start,
        "lexrule": bank.lex,
        "node_rule": np.where(binary, rule, n_rules + bank.lex),
    }

    # Outside: (rule, side) of the parent, grandparent and great-grandparent.
    root_code = 2 * n_rules  # the node is a root
    up_codes, up_syms, node, alive = [], [], np.arange(bank.n_nodes), np.ones(bank.n_nodes, bool)
    for _ in range(3):
        p = np.where(alive, parent[node], -1)
        has = p >= 0
        pc = np.where(has, p, 0)
        side = (right[pc] == node).astype(np.int64)
        code = np.where(has, rule[pc] * 2 + side, np.where(alive, root_code, root_code + 1))
        up_codes.append(code)
        up_syms.append(np.where(has, sym[pc], np.where(alive, -1, -2)))
        node, alive = pc, has
    width = 2 * n_rules + 2
    sentence_len = word_offset[tree + 1] - word_offset[tree]
    outside = {
        "parent": up_codes[0],
        "parent2": up_codes[0] * width + up_codes[1],
        "parent3": (up_codes[0] * width + up_codes[1]) * width + up_codes[2],
        "up1": up_syms[0],
        "up2": _pair(up_syms[0] + 1, up_syms[1] + 1),
        "ancestor_head": _ancestor_head(parent, head_tag),
        "left_words": bank.start,
        "right_words": sentence_len - bank.end,
    }
    return inside, outside


def _codes(values: list[str]) -> np.ndarray:
    index: dict[str, int] = {}
    return np.fromiter((index.setdefault(v, len(index)) for v in values), np.int64, len(values))


def _ancestor_head(parent: np.ndarray, head_tag: np.ndarray) -> np.ndarray:
    """Head tag of each node's nearest ancestor with a different head tag (-1: none)."""
    cur = parent.copy()
    while True:
        same = (cur >= 0) & (head_tag[np.maximum(cur, 0)] == head_tag)
        if not same.any():
            break
        cur[same] = parent[cur[same]]
    return np.where(cur >= 0, head_tag[np.maximum(cur, 0)], -1)


def _one_hot(
    sym: np.ndarray,
    templates: list[np.ndarray],
    opts: FeatureOptions,
    m: float,
    node_w: np.ndarray | None = None,
) -> sp.csr_matrix:
    """CSR matrix with one column per (template, node label, value) seen; a feature's
    count weighs node ``n`` by ``node_w[n]`` (default 1)."""
    n = len(sym)
    rows, cols, width = [], [], 0
    for key in templates:
        active = np.flatnonzero(key >= 0)
        code = _pair(sym[active], key[active])
        uniq, inv = np.unique(code, return_inverse=True)
        rows.append(active)
        cols.append(inv + width)
        width += len(uniq)
    row, col = np.concatenate(rows), np.concatenate(cols)
    weights = None if node_w is None else node_w[row]
    counts = np.bincount(col, weights, minlength=width).astype(float)
    if opts.scale:
        values = np.sqrt(m / (counts + opts.offset))[col]
    else:
        values = np.ones(len(col))
    return sp.csr_matrix((values, (row, col)), shape=(n, width))


def binarized_heads(bank: CompiledTreebank, originals: Sequence[Tree]) -> np.ndarray:
    """Head word position (within its sentence) of every node of ``bank``.

    ``originals[t]`` is the unbinarized tree that ``bank``'s tree ``t`` was made from. A
    binarized node with the span of an original constituent gets that constituent's head;
    an intermediate node (part of an n-ary constituent) gets its parent's head if that lies
    inside its span, otherwise the head of its child nearest to it.
    """
    head = np.full(bank.n_nodes, -1, dtype=np.int64)
    start, end, left, right = bank.start, bank.end, bank.left, bank.right
    for t, tree in enumerate(originals):
        spans = constituent_heads(tree)
        lo, hi = int(bank.tree_start[t]), int(bank.tree_start[t + 1])
        for n in range(hi - 1, lo - 1, -1):  # parents before children
            h = spans.get((int(start[n]), int(end[n])))
            if h is None:
                p = int(bank.parent[n])
                ph = int(head[p]) if p >= 0 else -1
                if start[n] <= ph < end[n]:
                    h = ph
                else:
                    child = int(left[n]) if ph < start[n] else int(right[n])
                    h = spans.get((int(start[child]), int(end[child])), int(start[child]))
            head[n] = h
    return head
