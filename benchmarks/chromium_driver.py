"""The app served for real, for the browser test, the load benchmark and the screenshot script.

``running_app`` starts ``streamlit run app.py`` on 127.0.0.1 at a free port and yields its URL once
``/_stcore/health`` answers; Debian's Chromium is driven with the flags below (never ``playwright
install``). The selectors are the ones Streamlit's own end-to-end suite waits on.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository root, where app.py is
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = ("[data-testid='stApp'][data-test-connection-state='CONNECTED']"
        "[data-test-script-state='notRunning']")
CHART = "[data-testid='stPlotlyChart'] .main-svg"
START_TIMEOUT_S = 60


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    """True when the Streamlit server at ``url`` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except OSError:
        return False


@contextlib.contextmanager
def running_app(log_path: Path, env: dict | None = None):
    """``streamlit run app.py`` (headless, no file watcher) with its output in ``log_path``.

    Parameters
    ----------
    log_path : Path
        Where the server's stdout and stderr go (quoted when it fails to start).
    env : dict, optional
        Extra environment variables for the server (e.g. a ledger path).

    Yields
    ------
    str
        The base URL, once healthy; the server is stopped on exit.
    """
    port = free_port()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=os.environ | (env or {}))
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not start: " + Path(log_path).read_text()[-2000:])
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
