"""The download of a fit on private data holds the release only: what the settings and public bounds fix, never
what was computed from the raw data."""

from dphawkes_app.estimate.downloads import PUBLIC_INFO, released_only
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.release.export import fit_payload


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
    assert out["privacy"]["epsilon_by_calibration"] == {
        "formal": payload["privacy"]["epsilon_by_calibration"]["formal"]
    }
    assert "loss_history" in payload and "loss_history" not in out and "left_out" in out


def test_a_private_download_keeps_the_kernel_functions_and_never_a_heldout_score():
    """The kernels as functions are post-processing of the release; a held-out score reads the private test events
    (``fit --holdout-start`` adds it to the payload) and never leaves in a download."""
    from dphawkes_core.evaluation.lag_average import fit_steps
    from dphawkes_experiments.prediction import heldout_split, score_heldout

    events = simulate(get_scenario("paper-2d"), n_events=2000, seed=4)
    split = heldout_split(events, 0.7 * events.end_time)
    config = FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=5, epsilon=1.0, calibration="formal", seed=2)
    result, info = fit(split.train, config)
    payload = fit_payload(result, config, info, ["a", "b"])
    payload["heldout"] = score_heldout(fit_steps(result), result.baseline, split).to_dict()
    out = released_only(payload)
    assert out["kernel_functions"] == payload["kernel_functions"]
    assert "heldout" not in out
