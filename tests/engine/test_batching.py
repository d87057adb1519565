"""Batches of sentences: blocks within a span budget, and one rule for a batch whose charts
do not fit in memory."""

from __future__ import annotations

from lpcfg_cli.engine.batching import SPAN_BUDGET, blocks, spans, split_on_memory_error
from lpcfg_cli.files.streams import PAUSE


def test_blocks_close_on_count_budget_and_pause():
    assert list(blocks([["a"]] * 5, size=2)) == [[["a"]] * 2, [["a"]] * 2, [["a"]]]
    three = ["w"] * 3  # 6 spans
    assert list(blocks([three] * 3, span_budget=12)) == [[three, three], [three]]
    assert list(blocks([["x"] * 200], span_budget=SPAN_BUDGET)) == [[["x"] * 200]]  # alone
    assert list(blocks([["a"], PAUSE, ["b"]])) == [[["a"]], [["b"]]]
    assert list(blocks([PAUSE])) == [[]]  # an empty block says: nothing ready
    assert spans(3) == 6


def test_a_batch_that_does_not_fit_runs_its_items_alone():
    calls = []

    def run(items):
        calls.append(list(items))
        if len(items) > 1 or items[0] == "huge":
            raise MemoryError
        return [item.upper() for item in items]

    out = split_on_memory_error(run, ["a", "huge", "b"], lambda item: f"no room for {item}")
    assert out == ["A", "no room for huge", "B"]
    assert calls == [["a", "huge", "b"], ["a"], ["huge"], ["b"]]
    assert split_on_memory_error(lambda items: list(items), ["x", "y"], str) == ["x", "y"]
