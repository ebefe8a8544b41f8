"""Planning a release in the core (:meth:`PrivacySession.preview`, ``dphawkes fit --plan``, the app's button): what it
would leave in the view of the release's own unit, and that planning draws and records nothing."""

import numpy as np
import pytest

from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators import FitConfig
from dphawkes_core.release.ledger import Budget, LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession


@pytest.mark.parametrize("unit, extra", [("sequence", {"max_events": 10}), ("event", {})])
def test_the_remaining_budget_after_a_planned_release_is_what_the_release_leaves(tmp_path, unit, extra):
    """A sequence-level plan is composed in the sequence view as a sequence-level release (it used to count as an
    event-level one there, closing the view: remaining 0)."""
    rng = np.random.default_rng(3)
    rows = "".join(f"{t:.3f},{rng.integers(2)},{s}\n" for s in range(3) for t in np.sort(rng.uniform(0, 30, 25)))
    events = load_csv(("time,dimension,sequence\n" + rows).encode(), end_time=30.0,
                      domain=Domain(dimensions=("0", "1"), sequences=("0", "1", "2")))
    book = LedgerBook(tmp_path / "ledger.json")
    fingerprint = data_fingerprint(events)
    book.open(LedgerKey(fingerprint), Budget(20.0, 1e-5))
    session = PrivacySession.for_events(events, book, fingerprint, unit)
    config = FitConfig(method="ssp", bin_size=1.0, lags=2, epsilon=1.0, count_cap=2, calibration="formal",
                       privacy_unit=unit, **extra)
    plan = session.preview([config])
    assert plan.status.formal and not plan.refusal
    answer = session.release(config)
    assert plan.remaining_after == pytest.approx(answer.ledger.remaining(), rel=1e-6) and plan.remaining_after > 0
