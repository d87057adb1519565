"""process_map: the experiment scripts' --jobs."""

from __future__ import annotations

import os

from threadpoolctl import threadpool_info

from lpcfg_cli.parsing.workers import process_map


def _work(x: int) -> tuple[int, int, list[int]]:
    threads = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return x * x, os.getpid(), threads


def test_results_in_input_order_whatever_the_jobs() -> None:
    serial = process_map(_work, range(6), 1)
    parallel = process_map(_work, range(6), 2)
    assert [r[0] for r in parallel] == [r[0] for r in serial] == [x * x for x in range(6)]
    assert {r[1] for r in serial} == {os.getpid()}  # one job: no worker processes
    assert os.getpid() not in {r[1] for r in parallel}


def test_workers_use_one_blas_thread() -> None:
    import numpy as np  # noqa: F401  (BLAS loaded before the workers fork)

    for _, _, threads in process_map(_work, range(4), 2):
        assert all(n == 1 for n in threads)
