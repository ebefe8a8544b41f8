"""Only a privacy session's release can be labelled formal: with settings that are formal in every other
respect (formal calibration, public C, fresh noise, declared window and domain), every public entry point of
the core and every CLI command outside the session says ``formal_guarantee: false`` — and ``fit --ledger``,
the session, says true (the positive control that keeps this test honest)."""

from __future__ import annotations

import json
from functools import partial

import pandas as pd
import pytest

from dphawkes_cli.main import main
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, save_csv
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import fit, release_status
from dphawkes_core.release.export import fit_payload, to_csv
from dphawkes_experiments.compare import compare_methods
from tests.configs import fit_config

END = 400.0


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formal")
    events = simulate(get_scenario("paper-2d"), end_time=END, seed=3)
    path = folder / "events.csv"
    save_csv(events, path)
    return path


_config = partial(fit_config, method="ssp", epsilon=1.0)


def _cli(argv, out):
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_core_entry_points_never_label_a_fit_formal(data):
    events = load_csv(data, end_time=END, domain=Domain(dimensions=("0", "1")))
    assert events.domain_declared
    config = _config()
    result, info = fit(events, config)
    status = release_status(config, info)
    assert not status.formal and status.settings_formal
    assert result.privacy.formal  # the formal calibration …
    assert "formal_guarantee" not in result.privacy.to_dict()  # … yet the report alone claims nothing
    payload = fit_payload(result, config, info, events.names)
    assert payload["formal_guarantee"] is False and payload["formal_settings"] is True
    assert payload["privacy"]["formal_guarantee"] is False
    assert "formal_guarantee=false" in to_csv(result, config, events.names, data_info=info)
    from dphawkes_core.estimators import prepare_stats
    stats, info = prepare_stats(events, config)
    rows = compare_methods(stats, info, config, 1.0, result.H, public={"bound": 1.0, "radius": 0.5, "clip": 1.0,
                                                                         "iters": 5})
    assert rows and not any(row.status and row.status.formal for row in rows)


def test_cli_commands_outside_the_session_never_label_formal(data, tmp_path):
    common = ["--bin-size", "1", "--lags", "3", "--calibration", "formal", "--count-cap", "3",
              "--end-time", str(END), "--dimensions", "2"]
    fitted = _cli(["fit", str(data), "--method", "ssp", "--epsilon", "1", *common, "--json", str(tmp_path / "f.json")],
                  tmp_path / "f.json")
    assert fitted["formal_guarantee"] is False and fitted["formal_settings"] is True
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "--data", str(data), "--end-time", str(END), "--dimensions", "2", "--bin-size", "1",
                 "--epsilon", "1", "--method", "ssp", "--runs", "1", "--calibration", "formal", "--count-cap", "3",
                 "--support", "3", "--bound", "1", "--radius", "1", "--workers", "1", "--out", str(out)]) == 0
    table = pd.read_csv(out, comment="#")
    assert not table["formal_guarantee"].astype(bool).any()
    audited = _cli(["audit", "--scenario", "paper-2d", "--events", "300", "--bin-size", "1", "--support", "2",
                    "--method", "ssp", "--count-cap", "3", "--trials", "40", "--json", str(tmp_path / "a.json")],
                   tmp_path / "a.json")
    assert audited["formal_guarantee"] is False


def test_the_session_is_the_one_that_does(data, tmp_path):
    released = _cli(["fit", str(data), "--method", "ssp", "--epsilon", "1", "--bin-size", "1", "--lags", "3",
                     "--calibration", "formal", "--count-cap", "3", "--end-time", str(END), "--dimensions", "2",
                     "--ledger", str(tmp_path / "l.json"), "--json", str(tmp_path / "r.json")], tmp_path / "r.json")
    assert released["formal_guarantee"] is True and released["ledger"]["metered"]
    assert released["privacy"]["formal_guarantee"] is True  # the session's status, in the report's block too
