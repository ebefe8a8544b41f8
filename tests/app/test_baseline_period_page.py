"""A baseline that follows the clock on the Estimate page: its two controls come from the family's settings, and the
fitted baseline is drawn over the period — each dimension's parts, the fit's own (computed independently here)."""

from __future__ import annotations

import numpy as np
import pytest
from app_tools import decode, figures, open_estimate
from conftest import no_problems

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.io import from_arrays
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators import FitConfig, fit, get_family
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import default_ledger_path
from dphawkes_core.statistics.binning import lags_from_support


@pytest.fixture(scope="module")
def daily():
    """Two dimensions in hours whose rate follows the day (thinning): busier in the afternoon."""
    rng = np.random.default_rng(11)
    end = 24.0 * 60
    times = []
    for j in range(2):
        candidates = np.sort(rng.uniform(0, end, int(0.8 * end)))
        times.append(candidates[rng.uniform(0, 0.8, candidates.size) < 0.4 + 0.35 * np.sin(
            2 * np.pi * candidates / 24 - 2 + j)])
    events = from_arrays(times, end_time=end)
    return Dataset(events=events, label="daily.csv", source="upload", params={"file": "daily.csv", "end_time": end})


def test_the_period_and_parts_are_controls_and_the_fitted_parts_are_drawn(daily, clear_streamlit_caches):
    family = get_family("mle")
    LedgerBook(default_ledger_path()).open(LedgerKey(data_fingerprint(daily.events)), public=True)  # published data
    at = open_estimate(daily)
    at.selectbox(key="method").set_value(family.label).run()
    no_problems(at)
    assert not [f for f in figures(at) if "parts" in str(f.get("layout", {}).get("title", ""))]  # constant: no chart
    at.number_input(key="baseline_period").set_value(24.0).run()
    at.number_input(key="baseline_bins").set_value(6).run()
    no_problems(at)
    dt, support = at.number_input(key="dt").value, at.number_input(key="s").value
    expected = fit(daily.events, FitConfig(method="mle", bin_size=dt, lags=lags_from_support(support, dt),
                                           baseline_period=24.0, baseline_bins=6))[0]
    chart = next(f for f in figures(at) if "6 parts of a period of 24" in str(f["layout"]["title"]))
    profile = np.array(expected.info["baseline_profile"])
    for i, trace in enumerate(chart["data"]):
        np.testing.assert_allclose(decode(trace["y"])[::2], profile[i], rtol=1e-9)
    assert profile[:, 2:4].mean() > profile[:, [0, 5]].mean()  # the afternoon is busier
