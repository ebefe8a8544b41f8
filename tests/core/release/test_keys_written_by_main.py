"""Ledger keys and release identities are those main wrote (31194c8, ``main_keys/README.md``): the rows' key of a
file, of a simulation and of a partitioned store, the declared events' fingerprint, the store's windowed fingerprint
and the request identities — recomputed now, bit for bit; and every release of a ledger main's CLI wrote is
answered from it again (replayed, nothing drawn)."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import from_arrays, load_csv, source_key
from dphawkes_core.data.row_key import data_fingerprint, events_fingerprint, partitioned_rows_key
from dphawkes_core.estimators import FitConfig
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.session import request_identity
from dphawkes_core.statistics.partitioned import partitioned_fingerprint, partitioned_window

HERE = Path(__file__).with_name("main_keys")
KEYS = json.loads((HERE / "keys.json").read_text())["keys"]
LOADS = {
    "events 2 dims end 40": dict(path="events.csv", end_time="40", dimensions=("0", "1")),
    "events 3 dims end 45.5": dict(path="events.csv", end_time="45.5", dimensions=("0", "1", "2")),
    "sequences a,b 3 keys end 20": dict(path="sequences.csv", end_time="20", dimensions=("a", "b"),
                                        sequences=("0", "1", "2")),
}
CONFIGS = {
    "ssp": dict(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5),
    "ssp auto cap": dict(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap="auto"),
    "exp": dict(method="exp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5),
    "cls": dict(method="cls", bin_size=0.25, lags=2),
}


def test_the_rows_keys_and_fingerprints_are_mains():
    for name in ("events.csv", "sequences.csv"):
        assert source_key(HERE / name) == KEYS[f"source_key {name}"]
    for name, spec in LOADS.items():
        events = load_csv(HERE / spec["path"], end_time=spec["end_time"],
                          domain=Domain(dimensions=spec["dimensions"], sequences=spec.get("sequences")))
        assert data_fingerprint(events) == KEYS[f"data_fingerprint {name}"], name
        assert events_fingerprint(events) == KEYS[f"events_fingerprint {name}"], name
    simulated = from_arrays([np.array([0.5, 1.25, 3.0]), np.array([0.75, 2.5])], end_time=4.0)
    assert data_fingerprint(simulated) == KEYS["data_fingerprint from_arrays"]
    assert events_fingerprint(simulated) == KEYS["events_fingerprint from_arrays"]


def test_a_partitioned_stores_keys_are_mains(tmp_path):
    rows = pd.read_csv(HERE / "sequences.csv")
    for part, cut in enumerate((slice(0, 40), slice(40, None))):  # as main's script wrote them
        pq.write_table(pa.Table.from_pandas(rows.iloc[cut], preserve_index=False), tmp_path / f"part{part}.parquet")
    paths = sorted(str(p) for p in tmp_path.glob("*.parquet"))
    assert partitioned_rows_key(paths) == KEYS["partitioned_rows_key store"]
    window = partitioned_window(paths, None, 0.0, 20.0, ("a", "b"), None)
    assert partitioned_fingerprint(paths, window) == KEYS["partitioned_fingerprint store end 20 dims a,b"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_request_identities_are_mains(name):
    for unit in ("event", "sequence"):
        assert request_identity(LedgerKey("rows-x", unit), FitConfig(**CONFIGS[name]), "view") == \
            KEYS[f"request {name} {unit} view"]


def test_every_release_of_a_ledger_main_wrote_is_answered_from_it(tmp_path, capsys, monkeypatch):
    """main's CLI wrote five releases (a fixed cap, an automatic cap, an automatic Δ and s, the sequence unit, a
    seeded fit); the same commands now replay every one: nothing drawn, nothing spent."""
    from dphawkes_cli.main import main
    from dphawkes_core.privacy import noise

    for name in ("events.csv", "sequences.csv", "ledger.json"):
        shutil.copy(HERE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    for method in ("standard_normal", "discrete_gaussian"):
        monkeypatch.setattr(noise.SecureNoise, method, lambda *a, **k: pytest.fail("drawn"))
    commands = json.loads((HERE / "commands.json").read_text())
    for command in commands:
        assert main(command + ["--ledger", "ledger.json", "--json", "out.json"]) == 0, command
        assert json.loads(Path("out.json").read_text())["ledger"]["replayed"], command
    capsys.readouterr()
    assert os.path.getsize("out.json") > 0
