"""AppTest of the Privacy budget page on a release main recorded under exp's short bound (issue 40.5): the page lists
it with the label that says it was re-costed and its corrected ε alone, and its budget box counts the corrected
spend."""

import json
from pathlib import Path

import pytest
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators.exp.release import exp_sensitivity
from dphawkes_core.privacy.accounting import Mechanism, compose_epsilon
from dphawkes_core.release.ledger_file import document_checksum
from dphawkes_core.release.recost import RECOSTED_LABEL

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Privacy_budget.py")
MAIN = ROOT / "tests" / "core" / "release" / "main_exp_ledger" / "ledger.json"


def test_the_page_shows_a_recosted_release_with_its_corrected_epsilon(private_ledger_file):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    fingerprint = data_fingerprint(at.session_state["dataset"].events)
    stored = next(item for item in json.loads(MAIN.read_text())["ledgers"] if item["label"] == "events.csv")
    entry = stored["entries"][0]  # exp at d = 5, w = 4, C = 1, decays ×4, ρ = 12, ε = 1 as main charged it
    item = {**stored, "fingerprint": fingerprint, "entries": [entry]}  # that release, on the page's data set
    private_ledger_file.write_text(json.dumps({"format": "dphawkes-ledger", "version": 4,
                                               "checksum": document_checksum([item]), "ledgers": [item]}))
    at.run()
    no_problems(at)
    table = next(df.value for df in at.dataframe if "composed ε so far" in df.value.columns)
    assert list(table["release"]) == [entry["label"] + RECOSTED_LABEL]
    result = entry["result"]
    sensitivity = exp_sensitivity(5, result["info"]["decays"], 4.0, 1, 12.0).total / 200.0  # N = 200
    truth = compose_epsilon([Mechanism("gaussian", result["privacy"]["sigma2"] ** 0.5 / sensitivity)], 1e-5)
    assert table["ε alone"].iloc[0] == pytest.approx(truth, rel=1e-9) and truth > 1.1
    assert f"spent **{truth:.3g}**" in next(box.value for box in at.info if "Privacy budget of this data set" in
                                            box.value)
