"""AppTests of the held-out score on the Estimate page: on data without a known truth it is the
headline of every estimate and a column of the comparison; on private data it is "for your eyes only" (that a
download never holds it: ``tests/app/test_downloads.py``)."""

import pytest
from app_tools import (
    open_estimate,
    private_dataset,
    release_button,
    texts,
    use_formal_method,
    with_comparison,
)
from conftest import no_problems

from dphawkes_app.heldout import GAIN, VERDICT
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import default_ledger_path
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.prediction import heldout_split, score_heldout


@pytest.fixture(scope="module")
def data():
    return private_dataset(n_events=6000)


def _frame(at, column):
    return next(df.value for df in at.dataframe if column in df.value.columns)


@pytest.mark.slow
def test_public_data_without_truth_headline_is_the_heldout_gain(data):
    LedgerBook(default_ledger_path()).open(LedgerKey(data_fingerprint(data.events)), public=True)  # published data
    at = use_formal_method(open_estimate(data))
    no_problems(at)
    table = _frame(at, "± SE")
    start, _ = at.session_state["heldout"]
    assert start == pytest.approx(0.7 * data.events.sequences[0].end_time)
    # The non-private reference's row, computed independently: CLS with the page's Δ, p and C, fitted on the events
    # before the start and scored on the rest (the whole history counts).
    reference = table[table["estimate"].str.contains("non-private")].iloc[0]
    dt, support = at.number_input(key="dt").value, at.number_input(key="s").value
    config = FitConfig(method="cls", bin_size=dt, lags=lags_from_support(support, dt), count_cap=5)
    split = heldout_split(data.events, start)
    result, _ = fit(split.train, config)
    expected = score_heldout(fit_steps(result), result.baseline, split)
    assert reference[GAIN] == pytest.approx(expected.gain_over_poisson, rel=1e-9)
    assert reference["± SE"] == pytest.approx(expected.gain_standard_error, rel=1e-9, nan_ok=True)
    assert str(expected.n_test_events) in reference["note"].replace(",", "")
    # The verdict in words: its word in the table, its sentence (with any events the fit says could not happen)
    # under it; never a bare −∞.
    assert reference[VERDICT] == expected.verdict.word
    assert f"{reference['estimate']}**: {expected.verdict.sentence}." in texts(at.markdown)
    assert len(table) == 3 and table[GAIN].notna().all()  # the chosen estimate, the reference, σ² = 0
    assert set(table[VERDICT]) <= {"better", "worse", "cannot tell"}
    comparison = _frame(with_comparison(at), "formal guarantee")
    assert comparison.columns[1] == GAIN and comparison[GAIN].notna().sum() >= 2
    assert "for your eyes only" not in texts(at.caption)
    # Moving the start moves the score.
    at.number_input(key="holdout_start").set_value(0.5 * data.events.sequences[0].end_time).run()
    no_problems(at)
    assert _frame(at, "± SE").iloc[1]["note"] != reference["note"]


def test_private_data_heldout_is_for_your_eyes_only():
    private = private_dataset(n_events=6000, seed=8)
    at = use_formal_method(open_estimate(private))
    release_button(at).click().run()
    no_problems(at)
    assert GAIN in _frame(at, "± SE").columns
    assert "Not private — for your eyes only:** the score reads the private test events" in texts(at.caption)


def test_the_heldout_table_on_private_data_is_recorded_as_a_look_that_later_releases_name():
    """The table read the private test events: the ledger records the look once, and the next release on the rows
    names it in its reasons (the first, released before the table was shown, does not)."""
    private = private_dataset(n_events=3000, seed=9)
    at = use_formal_method(open_estimate(private))
    release_button(at).click().run()
    no_problems(at)
    ledger = LedgerBook(default_ledger_path()).get(LedgerKey(data_fingerprint(private.events)))
    assert [look.tool for look in ledger.looks] == ["app"] and ledger.metered[0].reasons == ()
    at.number_input(key="eps").set_value(0.7).run()
    release_button(at).click().run()
    ledger = LedgerBook(default_ledger_path()).get(LedgerKey(data_fingerprint(private.events)))
    assert len(ledger.looks) == 1 and "held-out table" in ledger.metered[-1].reasons[0]
