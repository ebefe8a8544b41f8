"""Where sweeps (and partitioned statistics) run: a local process pool or a Dask cluster."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import importlib.machinery
import multiprocessing
import os
import sys

from dphawkes_core.errors import ConfigError


def default_executor(max_workers: int | None = None) -> cf.ProcessPoolExecutor:
    """A process pool with one worker per CPU, started with ``forkserver`` (safe in threaded apps)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dphawkes_experiments.sweep"])
    return cf.ProcessPoolExecutor(max_workers=max_workers or os.cpu_count() or 1, mp_context=ctx)


@contextlib.contextmanager
def dask_executor(address: str, n_workers: int = 2):
    """Executor of a Dask distributed cluster (optional extra ``dphawkes[dask]``).

    Parameters
    ----------
    address : str
        ``local`` starts a :class:`distributed.LocalCluster` on loopback; anything else
        (``tcp://HOST:PORT``) is the address of an existing scheduler.
    n_workers : int
        Worker processes of the local cluster (one thread each: the fits hold the GIL between BLAS calls).
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("Dask is not installed: pip install 'dphawkes[dask]'") from None
    with contextlib.ExitStack() as stack:
        if address == "local":
            cluster = stack.enter_context(LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=":0", scheduler_kwargs={"dashboard": False}))  # no dashboard; its HTTP
            # health routes on a free port (with no address they take 8787, and warn when it is taken)
            client = stack.enter_context(Client(cluster))
        else:
            try:
                client = stack.enter_context(Client(address, timeout="10s"))
            except (OSError, TimeoutError) as exc:
                raise ConfigError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        yield client.get_executor(pure=False)


@contextlib.contextmanager
def _main_script_kept_from_workers():
    """Keep new worker processes from re-running the parent's ``__main__`` file.

    ``multiprocessing`` runs the parent's main script (as ``__mp_main__``) in every spawned or
    forkserver worker. Under Streamlit ``__main__`` is the page being drawn, so each worker would run
    the whole page in bare mode (hundreds of "missing ScriptRunContext" warnings) before its first
    task. The workers only need :mod:`dphawkes_core`: naming the main module ``__main__`` meanwhile
    makes ``multiprocessing`` skip it.
    """
    main = sys.modules["__main__"]
    saved = main.__dict__.get("__spec__")
    main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)
    try:
        yield
    finally:
        main.__spec__ = saved
