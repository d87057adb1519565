"""Learners of language models (the ``lm`` family; Cohen & Collins 2014, section 8), on the
protocol of every learner: options up front, ``fit(sentences, dev) -> model``.

- ``KneserNeyLearner``: interpolated Kneser-Ney n-grams, the baselines (``lm.kneserney``).
- ``AggregateLearner``: the aggregate bigram model ``p(w2|w1) = sum_h r(h|w1) s(w2|h)`` by
  EM, by the pivot estimate, or by EM from the pivot estimate (``lm.aggregate``); the first
  half of the dev sentences chooses EM's iterations and the pivot's smoothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lpcfg_cli.grammar.heldout import DevText
from lpcfg_cli.lm import aggregate, kneserney
from lpcfg_cli.lm.aggregate import AggregateLM, AggregateOptions
from lpcfg_cli.lm.corpus import Sentence, Vocabulary
from lpcfg_cli.lm.kneserney import KneserNey, KNOptions
from lpcfg_cli.lm.perplexity import halves
from lpcfg_cli.model.protocol import LM, Learner, Progress


def _sentences(dev: DevText | Sequence[Sentence] | None) -> list[Sentence] | None:
    """Dev sentences from ``DevText`` or a plain list (None without dev data)."""
    if dev is None:
        return None
    return list(dev.sentences if isinstance(dev, DevText) else dev)


class KneserNeyLearner(Learner):
    """Kneser-Ney of ``order`` (``kn2``: bigrams, ``kn3``: trigrams); nothing to select."""

    family = LM
    Options = KNOptions
    takes_dev = False

    def __init__(self, options: KNOptions | None = None, method: str | None = None) -> None:
        super().__init__(options)
        self.method = method or f"kn{self.options.order}"  # type: ignore[misc]

    def _fit(self, data: Sequence[Sentence], dev: Any, start: Any, progress: Progress) -> KneserNey:
        model = kneserney.estimate(data, self.options)
        levels = []
        for k in range(model.order):
            d = "/".join(f"{x:.3f}" for x in model.discounts[k])
            levels.append(f"{len(model.keys[k])} {k + 1}-grams (D {d})")
        took = model.meta.pop("seconds")
        progress.report(f"kn{self.options.order}: {', '.join(levels)} ({took:.1f} s)")
        return model


class AggregateLearner(Learner):
    """The aggregate bigram model by ``method`` (``em``, ``pivot``, ``pivot+em``): the
    vocabulary of the training sentences (words seen at most ``rare`` times are ``<unk>``),
    their bigram counts, and ``aggregate.fit_aggregate`` with the first half of the dev
    sentences (``perplexity.halves``) choosing the iterations."""

    family = LM
    Options = AggregateOptions

    def __init__(self, options: AggregateOptions, method: str) -> None:
        super().__init__(options)
        self.method = method  # type: ignore[misc]

    def _fit(
        self, data: Sequence[Sentence], dev: Any, start: Any, progress: Progress
    ) -> AggregateLM:
        options, method = self.options, self.method
        vocab = Vocabulary.build(data, options.rare + 1)
        counts = vocab.bigram_counts(data)
        sentences = _sentences(dev)
        dev_events = vocab.events(halves(sentences)[0], 2) if sentences else None

        def report(record: dict[str, Any]) -> None:
            progress.report(progress_line(record))

        model = aggregate.fit_aggregate(method, vocab, counts, dev_events, options, report)
        model.meta["train"] = {"sentences": len(data), "bigrams": int(counts.sum())}
        its = model.meta.get("em_iterations")
        progress.report(
            f"{method}: m = {options.states}, {len(vocab)} ids, {counts.nnz} distinct bigrams"
            + (f", {its} EM iterations" if its is not None else "")
            + f" ({model.meta['seconds']:.1f} s)"
        )
        return model


def progress_line(record: dict[str, Any]) -> str:
    """One progress line for an EM iteration or a pivot smoothing run, worded as ``lpcfg
    train`` words its EM iterations (``latent_pcfg.em``)."""
    if "smoothing" in record:
        weight, fitted = record["smoothing"], record["r_iterations"]
        parts = [f"smoothing {weight:g}: r fitted in {fitted} iterations"]
        if "em_iterations" in record:
            parts.append(f"{record['em_iterations']} EM iterations kept")
    else:
        parts = [
            f"iteration {record['iteration']:3d}",
            f"train loglik {record['train_loglik_before']:.1f}",
        ]
    if "dev_perplexity" in record:
        parts.append(f"dev perplexity {record['dev_perplexity']:.1f}")
    if "seconds" in record:
        parts.append(f"{record['seconds']:.1f} s")
    return ", ".join(parts)
