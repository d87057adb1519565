"""Parsing across worker processes, results kept in input order."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

from lpcfg_cli.model import LPCFG
from lpcfg_cli.parser import Parser, ParseResult, ParseStats

_WORKER: Parser | None = None

# Sentences a worker parses per task: large enough to batch, small enough to balance load.
CHUNK = 24


def _init_worker(path: str, prune: float, max_length: int | None) -> None:
    global _WORKER
    _WORKER = Parser(LPCFG.load(path), prune=prune, max_length=max_length)


def _work(sentences: list[list[str]]) -> tuple[list[ParseResult], ParseStats]:
    assert _WORKER is not None
    _WORKER.stats = ParseStats()
    results = _WORKER.parse(sentences)
    return results, _WORKER.stats


def parse_sentences(
    model_path: str,
    model: LPCFG,
    sentences: Sequence[Sequence[str]],
    *,
    prune: float = 1e-5,
    jobs: int = 1,
    max_length: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[ParseResult], ParseStats]:
    """Parse ``sentences`` with ``jobs`` processes; returns results in order and totals."""
    t0 = time.perf_counter()
    if jobs <= 1 or len(sentences) <= CHUNK:
        parser = Parser(model, prune=prune, max_length=max_length)
        results = []
        for lo in range(0, len(sentences), CHUNK):
            results += parser.parse(sentences[lo : lo + CHUNK], progress=progress)
        parser.stats.seconds = time.perf_counter() - t0
        return results, parser.stats
    # Longest first so that no worker is left with the 200-word sentence at the end.
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    chunks = [order[i : i + CHUNK] for i in range(0, len(order), CHUNK)]
    out: list[ParseResult | None] = [None] * len(sentences)
    total = ParseStats()
    with ProcessPoolExecutor(jobs, initializer=_init_worker,
                             initargs=(model_path, prune, max_length)) as pool:  # fmt: skip
        futures = [pool.submit(_work, [list(sentences[i]) for i in c]) for c in chunks]
        for chunk, fut in zip(chunks, futures, strict=True):
            results, stats = fut.result()
            for i, res in zip(chunk, results, strict=True):
                out[i] = res
            total.fallbacks += stats.fallbacks
            total.retries += stats.retries
            total.latent_flops += stats.latent_flops
            for k, v in stats.reasons.items():
                total.reasons[k] = total.reasons.get(k, 0) + v
            if progress:
                progress(len(chunk))
    total.sentences = len(sentences)
    total.seconds = time.perf_counter() - t0
    return [r for r in out if r is not None], total
