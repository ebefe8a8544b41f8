"""AppTests of the Estimate page's lag averaging: off by default, a step line beside the estimate and its
grid-free error beside the plain one when on (from the URL too), and m > p said, not a traceback."""

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.kernels import get_scenario

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "2_Estimate.py")


def open_estimate(**query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.query_params.update(query)
    return at.run()


def decode(values):
    """Plotly >= 6 encodes arrays as base64 ``{"dtype", "bdata"}``."""
    if isinstance(values, dict) and "bdata" in values:
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values, dtype=float)


def kernel_traces(at: AppTest) -> list[dict]:
    figure = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Kernels" in c.proto.spec)
    return figure["data"]


ERROR = "kernel L2 error over [0, s]"


def function_errors(at: AppTest):
    """The grid-free error table, or ``None`` when the page shows none."""
    return next((df.value for df in at.dataframe if ERROR in df.value.columns), None)


def test_averaging_is_off_by_default():
    at = open_estimate(preset="small")
    no_problems(at)
    assert at.checkbox(key="avg").value is False
    assert not any(str(t.get("name", "")).startswith("averaged") for t in kernel_traces(at))
    assert function_errors(at) is None


def test_averaging_draws_block_means_as_steps_and_reports_both_grid_free_errors():
    at = open_estimate(preset="small", avg="true", avgm="2")  # Δ = 0.5, s = 4: p = 8 lags, w = 1
    no_problems(at)
    traces = kernel_traces(at)
    estimate = [decode(t["y"]) for t in traces if t.get("name") == "estimate"]  # cells (0,0), (0,1), (1,0), (1,1)
    steps = [t for t in traces if t.get("name") == "averaged (w = 1)"]
    assert len(estimate) == len(steps) == 4
    for fine, step in zip(estimate, steps):
        assert step["line"]["shape"] == "hv"
        np.testing.assert_allclose(decode(step["x"]), np.arange(5.0))
        means = fine.reshape(4, 2).mean(axis=1)
        np.testing.assert_allclose(decode(step["y"]), np.append(means, means[-1]), rtol=1e-12)
    table = function_errors(at)
    assert table[ERROR].iloc[2] == 1.0 and "all-zero" in table["estimate"].iloc[2]
    # independent grid-free errors: the per-lag and the averaged kernels as steps, against the truth on [0, 4]
    t = (np.arange(4000) + 0.5) * 1e-3
    truth = get_scenario("paper-2d").kernel_values(t)
    per_lag = np.array(estimate).reshape(2, 2, 8)[:, :, np.ceil(t / 0.5).astype(int) - 1]
    averaged = np.array(estimate).reshape(2, 2, 4, 2).mean(axis=3)[:, :, np.ceil(t).astype(int) - 1]
    for row, values in enumerate((per_lag, averaged)):
        expected = np.sqrt(np.sum((values - truth) ** 2) / np.sum(truth**2))
        assert table[ERROR].iloc[row] == pytest.approx(expected, rel=1e-6)
    assert at.query_params["avg"] in ("true", ["true"])


def test_more_lags_per_bin_than_the_fit_has_is_said_and_the_page_stays():
    at = open_estimate(preset="small", method="CLS", avg="true", avgm="20")
    no_problems(at)
    assert any("Lag averaging skipped" in w.value and "p = 8" in w.value for w in at.warning)
    assert kernel_traces(at) and function_errors(at) is None
