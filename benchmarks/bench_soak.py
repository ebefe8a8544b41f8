"""The app's memory over many sessions: no growth without Streamlit's full GC after every run.

``.streamlit/config.toml`` turns off the full garbage collection Streamlit runs after every script run
(``runner.postScriptGC = false``: it cost a classroom's sessions CPU, ``docs/load.md``). What that could cost is
memory: reference cycles freed only by Python's own generational collector. This benchmark opens the default
Estimate page in :data:`ROUNDS` rounds of :data:`SESSIONS` new sessions at once (websocket clients,
``benchmarks/st_client.py``, as :mod:`benchmarks.bench_load`; each session closes after its render) against one
fresh server, and reads the server's resident memory (``VmRSS``) after every round. Target: the last round's
memory at most :data:`GROWTH_TARGET` times the memory after :data:`WARM_ROUNDS` rounds, so memory does not grow
with the number of sessions served. The first rounds fill the app's bounded caches (each session's fresh-noise fit
and held-out score are entries of ``st.cache_data`` with at most 32 and 64 entries, ``dphawkes_app/caches.py`` and
``heldout.py``): measured on 2026-11-27, 428 MiB after 10 rounds, 478 MiB after 50 and 476 MiB after 100.
``python -m benchmarks.bench_soak`` prints the memory after each round.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from pathlib import Path

from benchmarks.bench_load import open_estimate
from benchmarks.chromium_driver import running_app

ROUNDS = 100
SESSIONS = 4
WARM_ROUNDS = 50
GROWTH_TARGET = 1.05
RUN_TIMEOUT_S = 1200


def server_rss_mib() -> float:
    """Resident memory (MiB) of this process's streamlit child."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and b"streamlit" in (stat.parent / "cmdline").read_bytes():
                status = (stat.parent / "status").read_text()
                line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
                return int(line.split()[1]) / 1024
    raise RuntimeError("no streamlit child process")


async def _soak(url: str) -> list[float]:
    memory = []
    for _ in range(ROUNDS):
        await asyncio.gather(*(open_estimate(url) for _ in range(SESSIONS)))
        memory.append(server_rss_mib())
    return memory


def measure() -> list[float]:
    """The server's resident memory (MiB) after each round."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_app(Path(tmp) / "streamlit.log", env={"DPHAWKES_LEDGER": str(Path(tmp) / "ledger.json")}) as url,
    ):
        return asyncio.run(asyncio.wait_for(_soak(url), RUN_TIMEOUT_S))


def rows() -> list[dict]:
    """Benchmark rows for ``benchmarks/run_all.py``."""
    memory = measure()
    warm, last = memory[WARM_ROUNDS - 1], memory[-1]
    return [{
        "benchmark": f"app soak: {ROUNDS * SESSIONS} sessions ({ROUNDS} rounds of {SESSIONS}) open Estimate, "
                     "Streamlit's post-run GC off",
        "measured": f"server memory {warm:.0f} MiB after {WARM_ROUNDS} rounds, {last:.0f} MiB after {ROUNDS} "
                    f"(× {last / warm:.3f}; peak {max(memory):.0f} MiB)",
        "target": f"last ≤ {GROWTH_TARGET:g} × after {WARM_ROUNDS} rounds",
        "met": last <= GROWTH_TARGET * warm,
    }]


if __name__ == "__main__":
    print(f"# load average before: {os.getloadavg()[0]:.2f}")
    for k, value in enumerate(measure(), 1):
        print(f"round {k}: {value:.1f} MiB")
