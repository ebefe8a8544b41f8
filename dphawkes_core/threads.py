"""BLAS threading policy: every call site runs its linear algebra on one BLAS thread.

The estimators iterate small dense products (``U A`` with ``U`` of shape ``d × (dp+1)``) thousands
of times; there OpenBLAS' second thread buys little and can cost several times the run time as soon
as anything else wants the cores (its threads spin and wait for each other). Measured on the shared 2-core machine (``benchmarks/bench_contended.py``; figures and the load
they were taken under in ``docs/load.md``), 1 thread against 2:

* DP-PGD, paper-4d, p = 500, K = 1000: from 0.5× to 2.6× the speed of 2 threads over six runs at
  different loads — noisy either way — but issue 14 measured the bad case: 17-26 s with 2 threads
  against 4-5 s with 1 when other work ran;
* clipped-gradient DP-PGD, 10⁵ events: 0.84-4.3× the speed of 2 threads, 1.7-4.3× when contended.

One thread bounds the worst case (no oversubscription whatever else runs) at the price of up to
about 2× in some quiet moments.

So a CLI fit, a sweep worker (one worker per core already), an app page run (the server shares its
cores between sessions) and a benchmark all use :data:`BLAS_THREADS` = 1. Limits are set with
threadpoolctl on every BLAS library loaded at the time of the call.
"""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits

BLAS_THREADS = 1


def blas_threads(threads: int = BLAS_THREADS) -> threadpool_limits:
    """Context manager: BLAS libraries loaded so far use ``threads`` threads inside the block.

    For library callers (sweep workers, benchmarks): the previous limits come back on exit.
    """
    return threadpool_limits(limits=threads, user_api="blas")


def set_blas_threads(threads: int = BLAS_THREADS) -> None:
    """Process-wide: BLAS libraries loaded so far use ``threads`` threads from now on (about 1 ms).

    For whole processes that serve one purpose (a CLI command, the app's server, whose sessions run
    in threads of one process so a per-session context manager would race): call it before the work,
    again after loading a library that brings its own BLAS.
    """
    threadpool_limits(limits=threads, user_api="blas")


def blas_settings() -> str:
    """The BLAS libraries loaded in this process, whose they are and their threads.

    E.g. ``numpy's openblas 1 thread, scipy's openblas 2 threads`` (scipy brings its own copy, loaded
    when a scipy module is first imported; the estimators' products run in numpy's).
    """
    pools = [info for info in threadpool_info() if info["user_api"] == "blas"]
    if not pools:
        return "no BLAS loaded"
    return ", ".join(f"{_owner(info['filepath'])}{info['internal_api']} {info['num_threads']} "
                     f"thread{'s' if info['num_threads'] != 1 else ''}" for info in pools)


def _owner(filepath: str) -> str:
    for package in ("numpy", "scipy"):
        if f"{package}.libs" in filepath or f"/{package}/" in filepath:
            return f"{package}'s "
    return ""
