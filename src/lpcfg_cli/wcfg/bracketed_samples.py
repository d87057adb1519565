"""Bracketed sentences drawn from a probabilistic WCFG (a PCFG in algebraic form): the
training samples of the supervised learners in Bailly et al. 2013's experiments (section 5;
the target grammars are ``targets``').

A WCFG is probabilistic when ``alpha_star`` is a distribution over states and, for every
state ``i``, its rules ``A[i, :, :]`` and terminals ``beta_sigma[i]`` form one (eq. 13-15
map it to the classic PCFG). ``sample_bracketed`` draws trees top-down, all sentences of a
batch at once, one tree level per step (no recursion).
"""

from __future__ import annotations

import numpy as np

from lpcfg_cli.wcfg.algebraic import WCFG
from lpcfg_cli.wcfg.hankel import Bracketed

BATCH = 100_000  # trees drawn together (bounds the memory of the node arrays)


def check_probabilistic(wcfg: WCFG, tol: float = 1e-9) -> None:
    """``ValueError`` unless ``wcfg`` is a PCFG: non-negative, the start vector and every
    state's rule weights (binary and terminal) summing to one."""
    n = wcfg.n
    rules = np.concatenate([wcfg.terminals.T, wcfg.binary.reshape(n, n * n)], axis=1)
    if (wcfg.start < -tol).any() or (rules < -tol).any():
        raise ValueError("a probabilistic WCFG has no negative weights")
    if abs(wcfg.start.sum() - 1) > tol:
        raise ValueError(f"the start weights sum to {wcfg.start.sum()}, not 1")
    sums = rules.sum(axis=1)
    if np.abs(sums - 1).max() > tol:
        raise ValueError(f"the rules of each state must sum to 1, got {sums}")


def sample_bracketed(
    wcfg: WCFG,
    count: int,
    rng: np.random.Generator,
    max_length: int = 100,
    max_draws: int | None = None,
) -> list[Bracketed]:
    """``count`` bracketed sentences drawn from the PCFG ``wcfg`` (trees of its derivations,
    states dropped), in the order drawn.

    Top-down and breadth-first over a whole batch: each step expands every open node of
    every sentence at once. A sentence whose words plus open nodes exceed ``max_length`` is
    abandoned and drawn again, so the sample follows the distribution conditioned on at
    most ``max_length`` words (the guard against huge or infinite trees of near-critical
    grammars). ``ValueError`` if ``max_draws`` (default ``100 * count + 10_000``) trees are
    drawn before ``count`` fit.
    """
    check_probabilistic(wcfg)
    if count < 0 or max_length < 1:
        raise ValueError("need count >= 0 and max_length >= 1")
    limit = 100 * count + 10_000 if max_draws is None else max_draws
    n, d = wcfg.n, wcfg.d
    # Outcome r of a state: r < d emits symbol r, else the binary rule (j, k) = divmod(r - d, n).
    cdf = np.cumsum(np.concatenate([wcfg.terminals.T, wcfg.binary.reshape(n, n * n)], 1), 1)
    cdf /= cdf[:, -1:]
    start_cdf = np.cumsum(wcfg.start) / wcfg.start.sum()
    out: list[Bracketed] = []
    drawn = 0
    while len(out) < count:
        if drawn >= limit:
            raise ValueError(
                f"{drawn} trees drawn, only {len(out)} of at most {max_length} words: "
                "the grammar's trees are too large (raise max_length)"
            )
        accept = len(out) / drawn if drawn else 1.0
        want = int((count - len(out)) / max(accept, 0.05) * 1.1) + 16
        batch = min(limit - drawn, want, BATCH)
        out.extend(_draw_batch(cdf, start_cdf, d, n, batch, rng, max_length)[: count - len(out)])
        drawn += batch
    return out


def _draw_batch(
    cdf: np.ndarray,
    start_cdf: np.ndarray,
    d: int,
    n: int,
    batch: int,
    rng: np.random.Generator,
    max_length: int,
) -> list[Bracketed]:
    """One batch of trees, those within ``max_length`` words as ``Bracketed`` samples."""
    # Per node (global ids in creation order, level by level): sentence, symbol (-1 for a
    # binary node, -2 for a node of an abandoned sentence) and, for binary nodes, the id of
    # the left child (the right one is the next id).
    sent_parts = [np.arange(batch)]
    state = np.searchsorted(start_cdf, rng.uniform(size=batch), side="right").clip(0, n - 1)
    kind_parts: list[np.ndarray] = []
    child_parts: list[np.ndarray] = []
    alive = np.ones(batch, dtype=bool)
    width = np.ones(batch, dtype=np.int64)  # words + open nodes of each sentence
    base, level_sent = 0, sent_parts[0]
    while len(level_sent):
        size = len(level_sent)
        u = rng.uniform(size=size)
        outcome = (u[:, None] >= cdf[state]).sum(1).clip(0, cdf.shape[1] - 1)
        is_binary = outcome >= d
        kind = np.where(is_binary, -1, outcome)
        width += np.bincount(level_sent[is_binary], minlength=batch)
        over = width > max_length
        alive &= ~over
        width[over] = 0  # stop counting (and re-flagging) an abandoned sentence
        dead = ~alive[level_sent]
        kind[dead] = -2
        expand = is_binary & ~dead
        rank = np.cumsum(expand) - 1
        child = np.where(expand, base + size + 2 * rank, -1)
        kind_parts.append(kind)
        child_parts.append(child)
        rule = outcome[expand] - d
        state = np.stack([rule // n, rule % n], 1).reshape(-1)
        level_sent = np.repeat(level_sent[expand], 2)
        sent_parts.append(level_sent)
        base += size
    sent = np.concatenate(sent_parts[:-1])
    kind = np.concatenate(kind_parts)
    child = np.concatenate(child_parts)
    sizes = np.ones(len(kind), dtype=np.int64)
    starts = np.zeros(len(kind), dtype=np.int64)
    bounds = np.cumsum([0] + [len(k) for k in kind_parts])
    for lo, hi in zip(bounds[-2::-1], bounds[:0:-1], strict=True):  # deepest level first
        b = lo + np.flatnonzero(child[lo:hi] >= 0)
        sizes[b] = sizes[child[b]] + sizes[child[b] + 1]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):  # root level first
        b = lo + np.flatnonzero(child[lo:hi] >= 0)
        starts[child[b]] = starts[b]
        starts[child[b] + 1] = starts[b] + sizes[child[b]]
    keep = alive[sent]
    leaf = keep & (kind >= 0)
    order = np.lexsort((starts[leaf], sent[leaf]))
    leaf_sent, leaf_word = sent[leaf][order], kind[leaf][order]
    node = keep & (child >= 0)
    nsent, nstart = sent[node], starts[node]
    nsplit, nend = nstart + sizes[child[node]], nstart + sizes[node]
    order = np.lexsort((-nend, nstart, nsent))  # pre-order within each sentence
    nodes = np.stack([nstart, nsplit, nend], 1)[order]
    nsent = nsent[order]
    kept = np.flatnonzero(alive)
    if not len(kept):
        return []
    word_cut = np.searchsorted(leaf_sent, kept, side="right").tolist()
    node_cut = np.searchsorted(nsent, kept, side="right").tolist()
    words, trees = leaf_word.tolist(), list(map(tuple, nodes.tolist()))
    return [
        Bracketed(tuple(words[w0:w1]), tuple(trees[t0:t1]))
        for w0, w1, t0, t1 in zip(
            [0, *word_cut[:-1]], word_cut, [0, *node_cut[:-1]], node_cut, strict=True
        )
    ]
