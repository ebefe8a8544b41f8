"""The download of a fit on private data holds the release only: what the settings and public bounds fix, never
what was computed from the raw data."""

from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.release.export import fit_payload
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_app.downloads import PUBLIC_INFO, released_only


def test_a_private_download_keeps_the_release_and_leaves_out_what_the_raw_data_computed():
    events = simulate(get_scenario("paper-2d"), n_events=2000, seed=3)
    config = FitConfig(method="ctls", bin_size=0.5, lags=8, count_cap="auto", epsilon=1.0, calibration="formal",
                       seed=1)
    result, info = fit(events, config)
    payload = fit_payload(result, config, info, ["a", "b"])
    out = released_only(payload)
    assert out["kernels"] == payload["kernels"] and out["baseline"] == payload["baseline"]
    assert out["config"] == payload["config"]
    # the data info: only what the declared domain, the settings or a private choice fix
    assert set(out["data_info"]) <= set(PUBLIC_INFO) and out["data_info"]["count_cap"] == info["count_cap"]
    assert "n_events" in payload["data_info"] and "n_events" not in out["data_info"]
    assert "clipped_events" not in out["data_info"] and "binned_events" not in out["data_info"]
    # the privacy report: the formal ε only, never R or the paper's data-dependent ε
    assert out["privacy"]["epsilon_by_calibration"] == {"formal": payload["privacy"]["epsilon_by_calibration"]["formal"]}
    assert "loss_history" in payload and "loss_history" not in out and "left_out" in out
