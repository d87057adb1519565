"""Spectral WCFG learners (Bailly, Carreras, Luque & Quattoni 2013).

Both learn the single-symbol model ``X -> X X | terminal`` whose ``n`` latent states are the
WCFG's states (``wcfg.algebraic``), in tensor form (its weights may be negative):

- ``wcfg`` (section 3.2), from trees: the trees' brackets only (labels dropped), over their
  part-of-speech tags (``terminals = tags``, the alphabet of the paper's WSJ10 experiment)
  or their words. The basis is the most frequent observed inside strings and outside
  contexts (``hankel.select_basis``), the Hankel blocks are estimated from the brackets and
  the grammar is read off the rank-``n`` factorisation (Lemma 1).
- ``wcfg-unsupervised`` (section 4), from strings (``--input text``, or the yields of
  trees): the low-rank completion of a Hankel matrix constrained by the inside-outside
  recursions and the observed string probabilities (``wcfg.completion``), then Lemma 1.

With words as terminals the Hankel blocks grow with the vocabulary (``H_A`` has
``contexts x insides^2`` entries): the sizes are checked before any work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lpcfg_cli.errors import LpcfgError, ParameterError
from lpcfg_cli.grammar.compiled import CompiledTreebank
from lpcfg_cli.grammar.indexed import Grammar, single_symbol_grammar
from lpcfg_cli.grammar.training_data import Sentences, TrainingData
from lpcfg_cli.hyperparams import SEED_HELP, Checked, hyper, to_dict
from lpcfg_cli.model.lpcfg import LPCFG
from lpcfg_cli.model.protocol import MAX_STATES, STATES_HELP, Learner, Progress
from lpcfg_cli.model.treebank_pcfg import string_pcfg
from lpcfg_cli.treebank import labels
from lpcfg_cli.wcfg.algebraic import WCFG, to_model
from lpcfg_cli.wcfg.completion import learn_unsupervised
from lpcfg_cli.wcfg.factorisation import learn_supervised
from lpcfg_cli.wcfg.hankel import Bracketed, bracketed

INSIDES_HELP = (
    "WCFG basis: inside strings, most frequent first (wcfg adds every terminal not among "
    "them; for wcfg-unsupervised they count, as in the paper's Table 1 sizes)."
)
OUTSIDES_HELP = (
    "WCFG basis: outside contexts, most frequent first (wcfg adds <eps;eps> if not among "
    "them; for wcfg-unsupervised it counts)."
)


@dataclass(frozen=True)
class WCFGOptions(Checked):
    """Hyper-parameters of the supervised spectral WCFG (section 3.2)."""

    states: int = hyper(8, STATES_HELP, min=1, max=MAX_STATES)
    terminals: str = hyper(
        "tags",
        "wcfg: the grammar's terminal symbols are the trees' part-of-speech tags or their words.",
        choices=("tags", "words"),
    )
    insides: int = hyper(100, INSIDES_HELP, min=0)
    outsides: int = hyper(100, OUTSIDES_HELP, min=0)
    max_length: int = hyper(
        10,
        "wcfg: learn from the sentences of at most this many terminals (0: all), as the "
        "paper's WSJ10; in longer ones no whole sentence recurs, so the start vector vanishes.",
        min=0,
    )
    basis_factor: float = hyper(
        0.0,
        "wcfg: keep this proportion of the distinct observed insides and contexts instead "
        "(the paper's basis factor; 0: use --insides and --outsides).",
        min=0.0,
        max=1.0,
    )


@dataclass(frozen=True)
class WCFGUnsupervisedOptions(Checked):
    """Hyper-parameters of the unsupervised spectral WCFG (sections 4 and 5)."""

    states: int = hyper(2, STATES_HELP, min=1, max=MAX_STATES)
    basis: str = hyper(
        "closed",
        "wcfg-unsupervised: 'closed' (section 4.1: the most frequent substrings and contexts, "
        "closed under the operations) or 'simplified' (section 5.1: strings up to length 3).",
        choices=("closed", "simplified"),
    )
    insides: int = hyper(14, INSIDES_HELP, min=1)
    outsides: int = hyper(6, OUTSIDES_HELP, min=1)
    steps: int = hyper(50, "wcfg-unsupervised: optimisation steps (FISTA).", min=0)
    seed: int = hyper(0, SEED_HELP, min=0)


def tree_samples(
    grammar: Grammar, bank: CompiledTreebank, terminals: str
) -> tuple[list[Bracketed], list[str]]:
    """The brackets of a compiled treebank over its tags or words, and the alphabet."""
    pre = bank.lex >= 0
    if terminals == "tags":
        names = [labels.bottom_label(s) for s in grammar.symbols]
        spell = np.array(names, dtype=object)[bank.symbol[pre]]
    else:
        spell = np.array(grammar.words, dtype=object)[grammar.lexical[bank.lex[pre], 1]]
    alphabet = sorted(set(spell))
    index = {a: i for i, a in enumerate(alphabet)}
    symbol = np.full(bank.n_nodes, -1, dtype=np.int64)
    symbol[pre] = [index[a] for a in spell]
    samples = []
    for t in range(bank.n_trees):
        lo, hi = bank.tree_start[t], bank.tree_start[t + 1]
        nodes = np.arange(lo, hi)
        leaves = nodes[pre[lo:hi]]
        words = symbol[leaves[np.argsort(bank.start[leaves])]]
        inner = nodes[bank.rule[lo:hi] >= 0]
        triples = zip(bank.start[inner], bank.end[bank.left[inner]], bank.end[inner], strict=True)
        samples.append(bracketed(words, triples))
    return samples, alphabet


def _model(w: WCFG, grammar: Grammar, coarse: Any, meta: dict[str, Any]) -> LPCFG:
    model = to_model(w, grammar, coarse, "tensor", meta)
    model.validate()
    return model


class WCFGLearner(Learner):
    """Supervised spectral WCFG from the brackets of trees (see the module docstring)."""

    method = "wcfg"
    decode = "max-marginal"
    Options = WCFGOptions
    takes_dev = False

    def _fit(self, data: TrainingData, dev: None, start: LPCFG | None, progress: Progress) -> LPCFG:
        opts = self.options
        assert data.bank is not None
        samples, alphabet = tree_samples(data.grammar, data.bank, opts.terminals)
        if opts.max_length:
            samples = [s for s in samples if len(s.words) <= opts.max_length]
            if not samples:
                raise ParameterError(
                    "wcfg: no training sentence has at most {max_length} = {n} words",
                    n=opts.max_length,
                )
        progress.report(
            f"{len(samples)} bracketed sentences over {len(alphabet)} {opts.terminals}"
            + (f" (at most {opts.max_length} each)" if opts.max_length else "")
        )
        sizes: dict[str, Any] = (
            {"factor": opts.basis_factor}
            if opts.basis_factor > 0
            else {"n_insides": opts.insides, "n_outsides": opts.outsides}
        )
        try:
            w = learn_supervised(samples, opts.states, d=len(alphabet), **sizes)
        except ValueError as exc:
            raise LpcfgError(f"wcfg: {exc}") from None
        if not np.any(w.start):
            raise ParameterError(
                "wcfg: no training sentence is an inside string of the basis, so the start "
                "vector is zero: use shorter sentences ({max_length}) or more {insides}"
            )
        # Tags are all known (a tag spelt UNK is no signature); words keep the grammar's own.
        tags = alphabet if opts.terminals == "tags" else None
        grammar = single_symbol_grammar(alphabet, known=tags)
        coarse = string_pcfg(grammar, _sentences(samples)).coarse
        meta = {**data.meta(), "method": "wcfg", "wcfg": to_dict(opts)}
        return _model(w, grammar, coarse, meta)


class WCFGUnsupervisedLearner(Learner):
    """Unsupervised spectral WCFG from strings (see the module docstring)."""

    method = "wcfg-unsupervised"
    decode = "max-marginal"
    Options = WCFGUnsupervisedOptions
    takes_dev = False
    takes_text = True

    def _fit(self, data: TrainingData, dev: None, start: LPCFG | None, progress: Progress) -> LPCFG:
        opts = self.options
        if data.text is not None:
            text, grammar = data.text, data.grammar
        else:  # the yields of trees: strings over the tree's words
            assert data.bank is not None
            samples, alphabet = tree_samples(data.grammar, data.bank, "words")
            grammar = single_symbol_grammar(alphabet)
            text = _sentences(samples)
        strings = [tuple(int(v) for v in s) for s in text.ids]
        progress.report(f"{len(strings)} distinct sentences over {len(grammar.words)} words")
        try:
            w = learn_unsupervised(
                strings,
                text.counts,
                opts.states,
                basis=opts.basis,
                n_outsides=opts.outsides,
                n_insides=opts.insides,
                d=len(grammar.words),
                steps=opts.steps,
                seed=opts.seed,
            )
        except ValueError as exc:
            raise LpcfgError(f"wcfg-unsupervised: {exc}") from None
        coarse = string_pcfg(grammar, text).coarse
        meta = {**data.meta(), "method": "wcfg-unsupervised", "wcfg": to_dict(opts)}
        return _model(w, grammar, coarse, meta)


def _sentences(samples: list[Bracketed]) -> Sentences:
    """The distinct yields of bracketed samples with their counts."""
    counts: dict[tuple[int, ...], int] = {}
    for s in samples:
        counts[s.words] = counts.get(s.words, 0) + 1
    ids = [np.array(k, dtype=np.int64) for k in counts]
    return Sentences(ids, np.array(list(counts.values()), dtype=np.float64))
