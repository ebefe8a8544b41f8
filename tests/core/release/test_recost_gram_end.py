"""Releases recorded under version 2 of exp's bounds in the differences basis (issue 42, round 5), read from a ledger
main's CLI wrote at e43bb88 (``main_differences_ledger/README.md``): version 2 took a swap's change of each released
Gram entry from its profiles' variation, which the window's end can exceed; a release with its Gram released is
charged at the true ε of the noise it drew — σ (what it stored) over version 3's S — where version 3's S is the
larger, and every other release (the same basis where version 3's S is smaller, a derived Gram, the decays basis) is
left as main charged it. Planted bugs (re-costing at the old S, skipping the re-cost, the ceiling charged everywhere)
fail the check; the ceiling charged where an entry does not say its basis bounds every correction."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import dphawkes_core.estimators.exp.recost as exp_recost
from dphawkes_core.estimators.exp import Exp
from dphawkes_core.estimators.exp.basis import basis_sensitivity
from dphawkes_core.estimators.exp.recost import DIFFERENCE_CEILING, variation_era_sensitivity
from dphawkes_core.privacy.accounting import compose_epsilon
from dphawkes_core.release.ledger import DataLedger, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook, entries_from
from dphawkes_core.release.recost import RECOSTED_LABEL

HERE = Path(__file__).with_name("main_differences_ledger")
DELTA, OBSERVED = 1e-5, 200.0  # N = Σ T: one window [0, 200]


def stored_entries() -> list[dict]:
    (item,) = json.loads((HERE / "ledger.json").read_text())["ledgers"]
    return item["entries"]


def settings(result: dict) -> tuple:
    """(d, decays, w, C, ρ) as main stored them."""
    return (len(result["H"]), tuple(result["info"]["decays"]), result["bin_size"], result["data_info"]["count_cap"],
            result["info"]["gram_scale"])


def kind(result: dict) -> str:
    info = result["info"]
    if info["basis"] == "decays":
        return "decays"
    return "derived" if info["gram_scale"] is None else "released"


def version_3_sensitivity(result: dict) -> float:
    """Version 3's S of a stored release where version 2's proof had the gap (a released Gram in the differences
    basis), computed here from its settings in N's units; 0 elsewhere (a derived Gram releases no Gram; the decays
    basis' bound is unchanged: both were proved as charged)."""
    if kind(result) != "released":
        return 0.0
    return basis_sensitivity(*settings(result), "differences").total / OBSERVED


def charged_right(path=HERE / "ledger.json") -> bool:
    """Every release read through the ledger is charged at σ over the larger of the S main charged and version 3's."""
    (ledger,) = LedgerBook(path).ledgers()
    for entry, stored in zip(ledger.entries, stored_entries(), strict=True):
        result = stored["result"]
        sigma, charged = math.sqrt(result["privacy"]["sigma2"]), result["privacy"]["sensitivity"]
        expected = sigma / max(charged, version_3_sensitivity(result))
        if not math.isclose(entry.mechanisms[0].parameter, expected, rel_tol=1e-9):
            return False
    return True


def test_main_charged_its_differences_releases_at_version_2_kept_here():
    """The independent fact the re-cost rests on: main stored, for its release with the Gram released, σ over
    :func:`variation_era_sensitivity` of its settings (main's own number); version 3's S is above it at the first
    release's settings and below it at the defaults'."""
    entries = stored_entries()
    assert [kind(e["result"]) for e in entries] == ["released", "released", "derived", "decays"]
    assert all(m["bound"] == "exp/2" for e in entries for m in e["mechanisms"])
    for entry in entries[:2]:
        result = entry["result"]
        assert result["privacy"]["sensitivity"] == pytest.approx(variation_era_sensitivity(*settings(result))
                                                                 / OBSERVED, rel=1e-12)
    first, defaults = (basis_sensitivity(*settings(e["result"]), "differences").total
                       / variation_era_sensitivity(*settings(e["result"])) for e in entries[:2])
    assert first == pytest.approx(1.0637, abs=1e-4) and defaults < 1.0


def test_a_release_whose_version_3_bound_is_larger_is_charged_at_it_and_the_others_are_not():
    assert charged_right()
    (ledger,) = LedgerBook(HERE / "ledger.json").ledgers()
    recosted, *others = ledger.entries
    stored = stored_entries()
    assert recosted.label == stored[0]["label"] + RECOSTED_LABEL
    assert "1.0637× the one it was charged at" in recosted.reasons[-1] and "window's end" in recosted.reasons[-1]
    assert recosted.epsilon(DELTA) > 1.05  # ε = 1 recorded
    for entry, old in zip(others, stored[1:], strict=True):
        assert entry.recost is None and entry.label == old["label"]
        assert entry.mechanisms[0].parameter == old["mechanisms"][0]["parameter"]
        assert entry.mechanisms[0].bound == "exp/3"  # checked, and the bound held
    assert ledger.spent() == pytest.approx(compose_epsilon(
        [m for e in ledger.entries for m in e.mechanisms], DELTA), rel=1e-12)


@pytest.mark.parametrize("plant", ["re-costed at the old S", "no re-cost", "the ceiling everywhere"])
def test_a_planted_bug_fails_the_check(plant, monkeypatch):
    if plant == "re-costed at the old S":
        monkeypatch.setattr(exp_recost, "basis_sensitivity",
                            lambda *args: SimpleNamespace(total=variation_era_sensitivity(*args[:5])))
    elif plant == "no re-cost":
        monkeypatch.setattr(Exp, "bound_version", 2)
    else:
        monkeypatch.setattr(exp_recost, "stored_settings", lambda result: None)
    assert not charged_right()


def test_an_entry_that_does_not_say_its_basis_is_charged_at_the_ceiling():
    """A version-2 entry charged and never released holds no result: its basis is unknown, so it is charged at √2
    (a swap moves the release by at most √2 × the insertion bound, which version 2's S is at least)."""
    stored = stored_entries()[3]
    charged = {**stored, "result": {}, "state": "charged"}
    ledger = DataLedger(LedgerKey("rows-x"), entries=entries_from([charged], None))
    assert ledger.entries[0].mechanisms[0].parameter == pytest.approx(stored["mechanisms"][0]["parameter"]
                                                                      / math.sqrt(2), rel=1e-12)
    assert "√2" in ledger.entries[0].reasons[-1]


def test_the_ceiling_bounds_every_correction():
    """S₃/S₂ <= √2 on random settings of the differences basis with its Gram released (docs/privacy.md)."""
    rng = np.random.default_rng(425)
    largest = 0.0
    for _ in range(12):
        decays = tuple(np.sort(np.exp(rng.uniform(-2, 2, rng.integers(2, 4)))))
        args = (int(rng.integers(1, 30)), decays, float(np.exp(rng.uniform(-1.5, 1))), int(rng.integers(1, 6)),
                float(np.exp(rng.uniform(-2, 2))))
        ratio = basis_sensitivity(*args, "differences").total / variation_era_sensitivity(*args)
        largest = max(largest, ratio)
    assert largest <= DIFFERENCE_CEILING
