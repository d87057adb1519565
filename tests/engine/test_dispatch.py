"""Kernels that run in a thread of their own so that signals are handled at once
(``dispatch.kernel(interruptible=True)``, ``dispatch.in_thread``)."""

from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

from lpcfg_cli.engine import dispatch
from lpcfg_cli.engine.coarse import batch_posteriors

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")


class Alarm(Exception):
    pass


def _raise_alarm(_signum, _frame):
    raise Alarm


def test_the_call_returns_its_value_and_raises_its_exception():
    assert dispatch.in_thread(lambda a, b=0: a + b, (2,), {"b": 3}, "add") == 5
    with pytest.raises(ZeroDivisionError):
        dispatch.in_thread(lambda: 1 / 0, (), {}, "divide")


def test_the_kernels_thread_leaves_the_signals_to_the_main_thread():
    def blocked() -> set[int]:
        return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))

    assert {signal.SIGTERM, signal.SIGINT, signal.SIGHUP} <= dispatch.in_thread(
        blocked, (), {}, "mask"
    )
    assert signal.SIGTERM not in blocked()  # the caller's mask is untouched


@needs_alarm
def test_a_signal_handler_ends_the_wait_while_the_call_runs_on():
    """The handler's exception leaves the wait at once; the call, left behind, ends when
    it does."""
    release = threading.Event()
    ended = threading.Event()

    def long_call() -> None:
        release.wait(30)
        ended.set()

    saved = signal.signal(signal.SIGALRM, _raise_alarm)
    start = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(Alarm):
            dispatch.in_thread(long_call, (), {}, "long")
        assert time.monotonic() - start < 5
        assert not ended.is_set()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, saved)
        release.set()
    assert ended.wait(5)


def test_an_interruptible_kernel_must_release_the_gil():
    with pytest.raises(ValueError, match="nogil"):
        dispatch.kernel(interruptible=True)(lambda x: x)
    assert dispatch.kernel(interruptible=True, nogil=True)(lambda x: x).interruptible


def test_the_long_kernels_run_in_a_thread_when_called_from_the_main_thread(monkeypatch):
    """The long kernels are declared interruptible, and their calls go through
    ``in_thread`` from the main thread only."""
    from lpcfg_cli.parsing import decoders

    for k in (batch_posteriors, decoders._span_best, decoders._bracket_gains,
              decoders._best_splits):  # fmt: skip
        assert k.interruptible and k.options.get("nogil"), k
    calls = []
    plain = dispatch.in_thread

    def counting(fn, args, kwargs, name):
        calls.append(name)
        return plain(fn, args, kwargs, name)

    monkeypatch.setattr(dispatch, "in_thread", counting)
    probe = dispatch.kernel(interruptible=True, nogil=True)(lambda x: x + 1)
    probe.__dict__["_dispatcher"] = lambda x: x + 1  # no compile needed for the routing
    assert probe(np.int64(1)) == 2 and calls == ["<lambda>"]
    other = []
    worker = threading.Thread(target=lambda: other.append(probe(np.int64(2))))
    worker.start()
    worker.join()
    assert other == [3] and calls == ["<lambda>"]  # not through a thread from another thread
