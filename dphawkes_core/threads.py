"""BLAS threading policy: every call site runs its linear algebra on one BLAS thread.

The estimators iterate small dense products (``U A`` with ``U`` of shape ``d × (dp+1)``) thousands
of times; there OpenBLAS' second thread buys little and can cost several times the run time as soon
as anything else wants the cores (its threads spin and wait for each other). Measured on the shared 2-core machine
(``benchmarks/bench_contended.py``; figures and the load they were taken under in ``docs/load.md``), 1 thread against 2:

* DP-PGD, paper-4d, p = 500, K = 1000 (structured gradient products): 1.23 s with 1
  thread against 1.26 s with 2 beside a CPU burner — the dense A² product it ran before measured from
  0.5× to 2.6× the speed of 2 threads at different loads, and the unstructured products were the bad case: 17-26 s with
  2 threads against 4-5 s with 1 when other work ran;
* clipped-gradient DP-PGD, 10⁵ events: 0.84-4.3× the speed of 2 threads, 1.7-4.3× when contended
  (16.9 against 67.4 ms per iteration in the latest contended run).

One thread bounds the worst case (no oversubscription whatever else runs) at the price of up to
about 2× in some quiet moments.

So a CLI fit, a sweep worker (one worker per core already), an app page run (the server shares its
cores between sessions) and a benchmark all use :data:`BLAS_THREADS` = 1. Limits are set with
threadpoolctl on every BLAS library loaded at the time of the call; the process-wide setting also sets
the thread variables of the environment, which a BLAS loaded later (scipy brings its own) starts from.
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_info, threadpool_limits

BLAS_THREADS = 1
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")  # read by a BLAS when it loads


def blas_threads(threads: int = BLAS_THREADS) -> threadpool_limits:
    """Context manager: BLAS libraries loaded so far use ``threads`` threads inside the block.

    For library callers (sweep workers, benchmarks): the previous limits come back on exit.
    """
    return threadpool_limits(limits=threads, user_api="blas")


def set_blas_threads(threads: int = BLAS_THREADS) -> None:
    """Process-wide: BLAS libraries loaded so far use ``threads`` threads from now on (about 1 ms).

    For whole processes that serve one purpose (a CLI command, the app's server, whose sessions run
    in threads of one process so a per-session context manager would race): call it before the work.
    A BLAS loaded later starts with ``threads`` too (from :data:`THREAD_VARIABLES` in the environment,
    which child processes inherit as well).
    """
    os.environ.update({name: str(threads) for name in THREAD_VARIABLES})
    threadpool_limits(limits=threads, user_api="blas")


def start_blas_on_one_thread(threads: int = BLAS_THREADS) -> None:
    """Before any BLAS is loaded: the thread variables of the environment (:data:`THREAD_VARIABLES`) set to
    ``threads``, so that numpy's OpenBLAS starts with that many rather than one per core — for a process whose every
    BLAS call runs on one thread anyway (a CLI command: :func:`set_blas_threads`), the pool it would start and never
    use costs ~40–50 ms of CPU per process on the shared machine (``docs/load.md``), a fifth of a small fit's
    command."""
    os.environ.update({name: str(threads) for name in THREAD_VARIABLES})


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
