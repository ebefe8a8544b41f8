"""The BLAS policy reaches every BLAS of the process, including one loaded after it was set."""

import subprocess
import sys

SCRIPT = """
import numpy  # numpy's BLAS is loaded before the policy is set
from dphawkes_core.threads import blas_settings, set_blas_threads
set_blas_threads()
import scipy.linalg  # scipy brings its own BLAS, loaded after the call
from threadpoolctl import threadpool_info
pools = [info for info in threadpool_info() if info["user_api"] == "blas"]
print(len(pools), sorted({info["num_threads"] for info in pools}), blas_settings())
"""


def test_a_blas_loaded_after_the_policy_also_runs_one_thread():
    env = {"PATH": "/usr/bin:/bin"}  # no thread variables inherited from the test run
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True).stdout
    count, threads, settings = out.split(" ", 2)
    assert int(count) >= 2, settings  # numpy's and scipy's copies (else this test checks nothing)
    assert threads == "[1]", settings
