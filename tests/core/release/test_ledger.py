"""The privacy ledger: exact composition, the budget's refusals, replays, persistence and corruption."""

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from dphawkes_core.data.io import from_arrays
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.row_key import data_fingerprint, events_fingerprint
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats
from dphawkes_core.privacy.report import SEEDED_NOISE
from dphawkes_core.release.ledger import (
    Budget,
    BudgetExceeded,
    DataLedger,
    LedgerKey,
    Mechanism,
    compose_epsilon,
    gaussian_mechanism,
)
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import LedgerError
from dphawkes_core.release.session import PrivacySession, metered_fit, request_identity
from tests.references import zcdp_epsilon_reference

DELTA = 1e-5


def gdp_epsilon(mu: float, delta: float) -> float:
    """ε of a μ-GDP mechanism at δ, from Balle & Wang's δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (scipy only)."""
    def excess(eps):
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta
    return brentq(excess, 0.0, 500.0, xtol=1e-12)


def pld_accountant_epsilon(events, delta: float) -> float:
    """dp-accounting's own PLD accountant, composing each event as it is (the reference)."""
    from dp_accounting import dp_event
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.ComposedDpEvent(list(events)))
    return accountant.get_epsilon(delta)


# --- composition ---------------------------------------------------------------------------------------------

HETEROGENEOUS = (Mechanism("gaussian", 40.0, 100), Mechanism("gaussian", 3.0, 1), Mechanism("gaussian", 8.0, 5))


def test_heterogeneous_gaussians_compose_to_gdp_mu():
    mu = math.sqrt(sum(m.releases / m.parameter**2 for m in HETEROGENEOUS))
    assert compose_epsilon(HETEROGENEOUS, DELTA) == pytest.approx(gdp_epsilon(mu, DELTA), rel=1e-6)


def test_heterogeneous_gaussians_match_dp_accountings_pld_accountant():
    from dp_accounting import dp_event

    reference = pld_accountant_epsilon(
        [dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(m.parameter), m.releases) for m in HETEROGENEOUS],
        DELTA)
    ours = compose_epsilon(HETEROGENEOUS, DELTA)
    assert ours <= reference  # the PLD is a pessimistic discretisation of the exact value
    assert ours == pytest.approx(reference, rel=0.01)


def test_mixed_gaussian_and_laplace_match_dp_accountings_pld_accountant():
    from dp_accounting import dp_event

    mixed = HETEROGENEOUS + (Mechanism("laplace", 10.0, 1), Mechanism("laplace", 25.0, 3))
    events = [dp_event.SelfComposedDpEvent(
        dp_event.GaussianDpEvent(m.parameter) if m.kind == "gaussian" else dp_event.LaplaceDpEvent(m.parameter),
        m.releases) for m in mixed]
    assert compose_epsilon(mixed, DELTA) == pytest.approx(pld_accountant_epsilon(events, DELTA), rel=0.01)


def test_pure_step_composes_between_the_larger_part_and_the_sum():
    gauss, pure = Mechanism("gaussian", 5.0), Mechanism("pure", 0.2)
    alone = compose_epsilon([gauss], DELTA)
    assert compose_epsilon([pure], DELTA) == pytest.approx(0.2, abs=2e-3)
    both = compose_epsilon([gauss, pure], DELTA)
    assert alone < both <= alone + 0.2 + 2e-3


def test_an_automatic_count_cap_is_metered_with_the_release(ssp_data):
    book, key, _, _ = ssp_data
    events = simulate(get_scenario("paper-2d"), n_events=1500, seed=3)
    config = ssp_config(count_cap="auto")
    stats, info = prepare_stats(events, config)  # the cap's tail counts are released here
    fit = metered_fit(book, key, stats, config, info)
    cap, release = fit.entry.mechanisms
    assert cap.parameter == fit.result.privacy.budget_split.cap_sigma and cap.releases == 1
    # an unseeded lagged DP-SSP and its cap draw the discrete Gaussian: composed in zCDP, ρ = Σ 1/(2z²)
    assert cap.kind == release.kind == "discrete-gaussian"
    rho = 1 / (2 * cap.parameter**2) + 1 / (2 * release.parameter**2)
    assert fit.ledger.spent() == pytest.approx(zcdp_epsilon_reference(rho, DELTA), rel=1e-5)
    assert fit.ledger.spent() == pytest.approx(1.0, rel=1e-6)  # the cap's share included, nothing more
    seeded = fit_stats(stats, ssp_config(count_cap="auto", seed=1)).privacy  # an experiment: numpy's Gaussian
    assert [m.kind for m in seeded.mechanisms()] == ["gaussian", "gaussian"]  # μ-GDP, composed exactly


def test_a_fit_calibrated_to_epsilon_spends_that_epsilon(ssp_data):
    book, key, stats, info = ssp_data
    fit = metered_fit(book, key, stats, ssp_config(epsilon=0.7), info)
    assert fit.entry.formal
    assert fit.ledger.spent() == pytest.approx(0.7, rel=1e-6)


# --- budget --------------------------------------------------------------------------------------------------


def test_the_51st_release_past_the_budget_is_refused(tmp_path):
    book, key = LedgerBook(tmp_path / "ledger.json"), LedgerKey("f" * 64)
    z = 30.0  # each release alone: ε ≈ 0.15; fifty compose to μ = √50/z
    book.open(key, Budget(gdp_epsilon(math.sqrt(50.5) / z, DELTA), DELTA))
    one = (Mechanism("gaussian", z),)
    for i in range(50):
        book.record_spend(key, f"request {i}", dict, label=f"release {i}", formal=True, mechanisms=one)
    before = (tmp_path / "ledger.json").read_text()
    with pytest.raises(BudgetExceeded) as refusal:
        book.record_spend(key, "request 50", dict, label="release 50", formal=True, mechanisms=one)
    message = str(refusal.value)
    assert "\n" not in message and "remaining" in message and "refused" in message
    ledger = book.get(key)
    assert len(ledger.entries) == 50 and (tmp_path / "ledger.json").read_text() == before
    assert ledger.spent() == pytest.approx(gdp_epsilon(math.sqrt(50) / z, DELTA), rel=1e-6)
    assert ledger.naive_sum() > 3 * ledger.spent()  # what summing would have claimed


def test_remaining_is_the_largest_release_that_still_fits(tmp_path):
    ledger = DataLedger(LedgerKey("a" * 64), Budget(2.0, DELTA),
                        entries=())
    book, key = LedgerBook(tmp_path / "l.json"), ledger.key
    book.open(key, ledger.budget)
    book.record_spend(key, "r0", dict, label="first", formal=True, mechanisms=(Mechanism("gaussian", 4.0, 3),))
    ledger = book.get(key)
    limit = ledger.remaining()
    assert limit > ledger.budget.epsilon - ledger.spent()  # composition is sub-additive
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    fits = Mechanism("gaussian", get_sigma_gaussian(limit * 0.999, DELTA))
    too_big = Mechanism("gaussian", get_sigma_gaussian(limit * 1.01, DELTA))
    ledger.check([fits])
    with pytest.raises(BudgetExceeded):
        ledger.check([too_big])


def _release_slowly(path, request, z, outcomes):
    import time

    def run():
        time.sleep(0.5)  # both processes are inside their release at the same time without the lock
        return {}

    try:
        LedgerBook(path).record_spend(LedgerKey("c" * 64), request, run, label=request, formal=True,
                                 mechanisms=(Mechanism("gaussian", z),))
        outcomes.put("released")
    except BudgetExceeded:
        outcomes.put("refused")


def test_concurrent_scripts_cannot_both_slip_under_the_budget(tmp_path):
    import multiprocessing

    path, z = tmp_path / "shared.json", 4.0
    compose_epsilon([Mechanism("gaussian", z)], DELTA)  # the accountant is imported once, before the fork
    LedgerBook(path).open(LedgerKey("c" * 64), Budget(gdp_epsilon(1.2 / z, DELTA), DELTA))  # room for one
    context = multiprocessing.get_context("fork")
    outcomes = context.Queue()
    workers = [context.Process(target=_release_slowly, args=(path, f"script {i}", z, outcomes)) for i in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert sorted(outcomes.get(timeout=5) for _ in workers) == ["refused", "released"]
    assert len(LedgerBook(path).get(LedgerKey("c" * 64)).entries) == 1


def test_a_budget_below_what_was_spent_is_refused(tmp_path):
    book, key = LedgerBook(tmp_path / "l.json"), LedgerKey("b" * 64)
    book.record_spend(key, "r", dict, label="x", formal=True, mechanisms=(gaussian_mechanism(2.0, 1.0),))
    with pytest.raises(BudgetExceeded, match="below the ε already spent"):
        book.open(key, Budget(0.5, DELTA))


# --- releases through the ledger -----------------------------------------------------------------------------


def ssp_config(**changes) -> FitConfig:
    settings = dict(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5)
    return FitConfig(**(settings | changes))


@pytest.fixture
def ssp_data(tmp_path):
    events = simulate(get_scenario("paper-2d"), n_events=1500, seed=3)
    stats, info = prepare_stats(events, ssp_config())
    return LedgerBook(tmp_path / "ledger.json"), LedgerKey(data_fingerprint(events)), stats, info


def test_a_repeated_identical_view_costs_nothing(ssp_data):
    book, key, stats, info = ssp_data
    first = metered_fit(book, key, stats, ssp_config(), info)
    again = metered_fit(book, key, stats, ssp_config(), info)
    assert not first.replayed and again.replayed
    np.testing.assert_array_equal(again.result.H, first.result.H)  # no new noise was drawn
    assert len(again.ledger.entries) == 1 and again.ledger.spent() == pytest.approx(first.ledger.spent())
    other = metered_fit(book, key, stats, ssp_config(epsilon=0.5), info)  # new settings: a new release
    assert not other.replayed and other.ledger.spent() > first.ledger.spent()
    assert not np.array_equal(other.result.H, first.result.H)


def test_a_seeded_fit_is_recorded_but_not_metered(ssp_data):
    book, key, stats, info = ssp_data
    seeded = metered_fit(book, key, stats, ssp_config(seed=1), info)
    assert not seeded.entry.formal and SEEDED_NOISE in seeded.entry.reasons
    assert seeded.ledger.spent() == 0 and len(seeded.ledger.unmetered) == 1


def test_the_ledger_survives_a_restart(ssp_data):
    book, key, stats, info = ssp_data
    first = metered_fit(book, key, stats, ssp_config(), info)
    reopened = LedgerBook(book.path)  # a new process reads the same file
    ledger = reopened.get(key)
    assert ledger.entries == first.ledger.entries and ledger.budget == first.ledger.budget
    again = metered_fit(reopened, key, stats, ssp_config(), info)
    assert again.replayed
    np.testing.assert_array_equal(again.result.H, first.result.H)
    assert again.result.privacy == first.result.privacy


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],  # truncated
    lambda text: text.replace('"formal": true', '"formal": false', 1),  # edited: checksum fails
    lambda text: json.dumps({"format": "something else"}),
])
def test_a_corrupted_ledger_is_reported_never_reset(ssp_data, damage):
    book, key, stats, info = ssp_data
    metered_fit(book, key, stats, ssp_config(), info)
    damaged = damage(book.path.read_text())
    book.path.write_text(damaged)
    with pytest.raises(LedgerError, match="corrupted") as report:
        book.get(key)
    assert "\n" not in str(report.value)
    with pytest.raises(LedgerError):
        metered_fit(book, key, stats, ssp_config(epsilon=0.3), info)
    assert book.path.read_text() == damaged  # nothing was written over it


def test_the_key_changes_with_one_event_but_not_with_names_or_the_window():
    """The ledger key is the rows'; the events' own fingerprint (a release's view) sees the window too."""
    times = [np.array([0.5, 1.5, 2.0]), np.array([0.7])]
    base = from_arrays(times, end_time=3.0, names=["a", "b"])
    renamed = from_arrays(times, end_time=3.0, names=["x", "y"])
    moved = from_arrays([np.array([0.5, 1.5, 2.1]), np.array([0.7])], end_time=3.0, names=["a", "b"])
    longer = from_arrays(times, end_time=4.0, names=["a", "b"])
    assert data_fingerprint(base) == data_fingerprint(renamed) == data_fingerprint(longer)
    assert data_fingerprint(moved) != data_fingerprint(base)
    assert events_fingerprint(longer) != events_fingerprint(base) == events_fingerprint(renamed)


# --- command line --------------------------------------------------------------------------------------------


@pytest.fixture
def events_csv(tmp_path):
    from dphawkes_core.data.io import save_csv

    path = tmp_path / "events.csv"
    save_csv(simulate(get_scenario("paper-2d"), n_events=1500, seed=4), path)
    return path


def run_cli(capsys, *argv):
    from dphawkes_cli.main import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def cli_fit(capsys, events_csv, ledger, *extra, epsilon=1.0):
    return run_cli(capsys, "fit", events_csv, "--bin-size", 0.5, "--support", 2, "--method", "ssp", "--epsilon",
                   epsilon, "--calibration", "formal", "--count-cap", 5, "--end-time", 700, "--dimensions", 2,
                   "--ledger", ledger, *extra)


def test_scripted_releases_share_one_budget(capsys, tmp_path, events_csv):
    ledger = tmp_path / "ledger.json"
    status, first, _ = cli_fit(capsys, events_csv, ledger, "--budget", 1.5)
    assert status == 0 and json.loads(first)["ledger"]["spent_epsilon"] == pytest.approx(1.0, rel=1e-6)
    status, again, err = cli_fit(capsys, events_csv, ledger)
    assert status == 0 and json.loads(again)["ledger"]["replayed"] and "no new privacy spent" in err
    assert json.loads(again)["kernels"] == json.loads(first)["kernels"]
    status, out, err = cli_fit(capsys, events_csv, ledger, epsilon=1.2)  # 1 and 1.2 compose to 1.6 > 1.5
    assert status == 2 and out == "" and err.count("\n") == 1 and "refused" in err and "remaining" in err
    status, shown, _ = run_cli(capsys, "ledger", "show", ledger)
    (data_set,) = json.loads(shown)["data_sets"]
    assert data_set["metered_releases"] == 1 and data_set["budget_epsilon"] == 1.5
    assert data_set["spent_epsilon"] == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("argv", [
    ("ledger", "show", "{missing}"),
    ("ledger", "show", "{corrupted}"),
    ("ledger",),
])
def test_ledger_show_bad_input_is_one_line_exit_2(capsys, tmp_path, argv):
    corrupted = tmp_path / "corrupted.json"
    corrupted.write_text('{"format": "dphawkes-ledger", "version": 1, "ledgers": [')
    paths = {"missing": tmp_path / "missing.json", "corrupted": corrupted}
    status, out, err = run_cli(capsys, *(a.format(**paths) for a in argv))
    assert status == 2 and out == "" and err.count("\n") == 1 and err.startswith("error:")


def test_budget_without_a_ledger_is_refused(capsys, events_csv):
    status, _, err = run_cli(capsys, "fit", events_csv, "--bin-size", 0.5, "--support", 2, "--budget", 3)
    assert status == 2 and "--ledger" in err and err.count("\n") == 1


def test_a_fit_is_recorded_only_in_the_ledger_of_its_privacy_unit(ssp_data):
    from dphawkes_core.errors import DPHawkesError

    book, key, stats, info = ssp_data
    with pytest.raises(DPHawkesError, match="event-level fit belongs in"):
        metered_fit(book, LedgerKey(key.fingerprint, "sequence"), stats, ssp_config(), info)
    assert book.get(LedgerKey(key.fingerprint, "sequence")) is None


# --- a release's identity is what the fit reads ---------------------------------------------------------------

REBUILT_CONFIGS = {
    "cls": dict(method="cls", count_cap=5),
    "pgd": dict(method="pgd", bound=0.8, iters=20, step="constant", step_size=0.05),
    "pgd paper": dict(method="pgd", bound=0.8, iters=20, calibration="paper", count_cap=None),
    "cg": dict(method="cg", radius=0.4, iters=20, fw_step="classic"),
    "ssp": dict(method="ssp", ridge=0.2, stabiliser="psd", ssp_release="full", ssp_nonnegative=False,
                ssp_smoothing=0.0),
    "ssp sigma2": dict(method="ssp", epsilon=None, sigma2=1e-4),
    "pgd-clip": dict(method="pgd-clip", bound=0.8, clip=2.0, iters=10),
    "seeded": dict(method="ssp", seed=3),
}


@pytest.mark.parametrize("name", sorted(REBUILT_CONFIGS))
def test_a_config_rebuilt_from_its_dict_is_the_same_release(ssp_data, name):
    """``FitConfig(**config.to_dict())`` is the same release: the same request, the same mechanisms, and fitting it
    after the original is a replay that spends nothing more."""
    book, key, stats, info = ssp_data
    config = ssp_config(**REBUILT_CONFIGS[name])
    if config.method == "cls":
        config = FitConfig(**{k: v for k, v in config.to_dict().items() if k not in ("epsilon", "calibration")})
    rebuilt = FitConfig(**config.to_dict())
    assert rebuilt == config and rebuilt.to_dict() == config.to_dict()
    assert request_identity(key, rebuilt) == request_identity(key, config)
    session = PrivacySession(lambda _: (stats, info), book, key, dict(info))
    assert session.plan(rebuilt) == session.plan(config)  # the same status and mechanisms: the same charge
    first = metered_fit(book, key, stats, config, info)
    again = metered_fit(book, key, stats, rebuilt, info)
    assert not first.replayed and again.replayed
    assert len(again.ledger.entries) == 1 and again.ledger.spent() == first.ledger.spent()
    np.testing.assert_array_equal(again.result.H, first.result.H)


def test_the_automatic_cap_and_the_sequence_unit_rebuild_to_the_same_release(tmp_path):
    events = simulate(get_scenario("paper-2d"), n_events=1500, seed=3)
    key = LedgerKey(data_fingerprint(events))
    auto = ssp_config(count_cap="auto", count_cap_share=0.1)
    sequence = ssp_config(privacy_unit="sequence", max_events=2000, sequence_clip="auto", sequence_clip_share=0.2)
    for config, unit in ((auto, "event"), (sequence, "sequence")):
        rebuilt = FitConfig(**config.to_dict())
        assert rebuilt == config
        unit_key = LedgerKey(key.fingerprint, unit)
        assert request_identity(unit_key, rebuilt) == request_identity(unit_key, config)
        stats, info = prepare_stats(events, config)
        book = LedgerBook(tmp_path / f"{unit}.json")
        first = metered_fit(book, unit_key, stats, config, info)
        again = metered_fit(book, unit_key, stats, rebuilt, info)
        assert first.entry.formal and again.replayed and again.ledger.spent() == first.ledger.spent()


def test_the_request_is_what_the_fit_reads():
    """Defaults stated or not, and a foreign option left unset, are one request; any option the fit reads is part
    of it."""
    key = LedgerKey("0" * 64)
    pgd = dict(method="pgd", bin_size=0.5, lags=4, epsilon=1.0, bound=1.0)
    assert request_identity(key, FitConfig(**pgd)) == request_identity(
        key, FitConfig(**pgd, iters=1000, step="theorem", step_size=None, radius=None, clip=None, ridge=None))
    assert request_identity(key, FitConfig(**pgd, iters=999)) != request_identity(key, FitConfig(**pgd))
    assert request_identity(key, ssp_config(ridge=0.5)) != request_identity(key, ssp_config())
    assert request_identity(key, ssp_config(bound=None)) == request_identity(key, ssp_config())


def test_a_ledger_of_the_previous_format_is_refused_with_a_clear_message(tmp_path):
    """Format 1 keyed releases by every FitConfig field: opening it with today's identities would charge old
    releases again, so it is refused in one line, never read as empty and never reset."""
    path = tmp_path / "old.json"
    items = []
    path.write_text(json.dumps({"format": "dphawkes-ledger", "version": 1, "checksum": "x", "ledgers": items}))
    with pytest.raises(LedgerError, match="earlier dphawkes .ledger format 1."):
        LedgerBook(path).ledgers()
    assert json.loads(path.read_text())["version"] == 1  # untouched
