"""The comparison of methods at the same ε against fits called one by one."""

import math
from dataclasses import replace

import pytest

from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.row_key import data_fingerprint
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit_stats, get_family, prepare_stats
from dphawkes_core.estimators.cost import estimate_fit_cost
from dphawkes_core.evaluation.metrics import compare
from dphawkes_core.privacy.report import NOT_RELEASED, SEEDED_NOISE
from dphawkes_core.release.ledger import LedgerKey
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import ledger_fitter
from dphawkes_experiments.compare import COMPARISON_BUDGET_S, compare_methods, comparison_epsilon

SCENARIO = get_scenario("paper-2d")
PUBLIC = {"bound": 1.0, "radius": 0.5, "clip": 1.0, "iters": 200}  # the public settings stated for every family


@pytest.fixture(scope="module")
def data():
    events = simulate(SCENARIO, n_events=2000, seed=4)
    stats, info = prepare_stats(events, FitConfig(bin_size=0.5, lags=8, count_cap=5))
    return stats, info, SCENARIO.true_H(0.5, 8)


def test_rows_equal_the_fits_called_one_by_one(data):
    stats, info, truth = data
    chosen = FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=5, epsilon=2.0, calibration="formal", seed=3)
    rows = compare_methods(stats, info, chosen, 2.0, truth, PUBLIC, methods=("cls", "pgd", "cg", "pgd-clip"),
                           include_slow=True)
    expected = {
        "cls": FitConfig(method="cls", bin_size=0.5, lags=8, count_cap=5),
        "pgd": FitConfig(method="pgd", bin_size=0.5, lags=8, count_cap=5, bound=1.0, iters=200, epsilon=2.0,
                         calibration="formal", seed=3),
        "cg": FitConfig(method="cg", bin_size=0.5, lags=8, count_cap=5, radius=0.5, iters=200, epsilon=2.0,
                        calibration="formal", seed=3),
        "pgd-clip": FitConfig(method="pgd-clip", bin_size=0.5, lags=8, count_cap=5, bound=1.0, clip=1.0, iters=200,
                              epsilon=2.0, calibration="formal", seed=3),
    }
    assert [row.method for row in rows] == list(expected)
    for row in rows:
        alone = fit_stats(stats, expected[row.method])
        assert row.relative_error == pytest.approx(compare(alone.H, truth).relative_error, rel=1e-12)
        if row.method == "cls":
            assert row.epsilon == math.inf and not row.status.formal
        else:
            assert row.epsilon == pytest.approx(2.0)  # the same ε for every private method


def test_paper_calibration_is_kept_but_formal_only_methods_are_formal(data):
    stats, info, truth = data
    chosen = FitConfig(method="pgd", bin_size=0.5, lags=8, bound=0.5, iters=100, sigma2=0.01, seed=1)
    rows = {r.method: r for r in compare_methods(stats, info, chosen, 5.0, truth, PUBLIC, methods=("cg", "ssp"))}
    assert any("paper calibration" in reason for reason in rows["cg"].status.reasons)
    # no count cap in the chosen fit: DP-SSP cannot run and says why instead of failing
    assert not rows["ssp"].ran and "count cap" in rows["ssp"].note
    assert math.isnan(rows["ssp"].relative_error)


def test_slow_methods_are_skipped_unless_asked_for(data):
    stats, info, truth = data
    chosen = FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=5, epsilon=1.0, calibration="formal", seed=0)
    public = {**PUBLIC, "iters": 10**5}
    cost = estimate_fit_cost(info["n_bins"], stats.dim, stats.lags, get_family("pgd-clip").cost.kind, public["iters"])
    assert cost.seconds > COMPARISON_BUDGET_S
    (row,) = compare_methods(stats, info, chosen, 1.0, truth, public, methods=("pgd-clip",))
    assert not row.ran and row.note.startswith("skipped")


def test_public_settings_fill_only_what_the_chosen_fit_lacks():
    chosen = FitConfig(method="pgd", bin_size=0.5, lags=8, bound=3.0, iters=50, epsilon=1.0)
    other = chosen.for_method("pgd-clip", 0.5, PUBLIC)
    assert (other.bound, other.iters, other.clip) == (3.0, 50, 1.0)  # B and K kept, G from the public config
    assert other.calibration == "formal" and other.epsilon == 0.5 and other.sigma2 is None
    assert chosen.for_method("cg", 0.5, PUBLIC).radius == 0.5


def test_comparison_epsilon(data):
    stats, _, _ = data
    target = FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=5, epsilon=0.7, calibration="formal", seed=0)
    assert comparison_epsilon(target, fit_stats(stats, target)) == 0.7
    given = FitConfig(method="pgd", bin_size=0.5, lags=8, bound=1.0, iters=10, sigma2=1.0, seed=0)
    result = fit_stats(stats, given)
    assert comparison_epsilon(given, result) == pytest.approx(result.privacy.epsilon)
    cls = FitConfig(bin_size=0.5, lags=8)
    assert comparison_epsilon(cls, fit_stats(stats, cls), fallback=1.0) == 1.0
    assert comparison_epsilon(cls, fit_stats(stats, cls)) is None


def test_an_automatic_cap_is_passed_on_as_a_private_release_and_said_so(tmp_path):
    events = simulate(SCENARIO, n_events=2000, seed=4)
    chosen = FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap="auto", epsilon=1.0, calibration="formal",
                       seed=2)
    stats, info = prepare_stats(events, chosen)
    (row,) = compare_methods(stats, info, chosen, 1.0, SCENARIO.true_H(0.5, 8), PUBLIC, methods=("pgd",))
    alone = fit_stats(stats, FitConfig(method="pgd", bin_size=0.5, lags=8, count_cap=stats.count_cap, bound=1.0,
                                       iters=200, epsilon=1.0, calibration="formal", seed=2))
    assert row.relative_error == pytest.approx(compare(alone.H, SCENARIO.true_H(0.5, 8)).relative_error, rel=1e-12)
    # C was released privately by the DP-SSP fit (its ε share spent there): reusing it is post-processing
    # (the seed is the only reason it is not formal here, beside not being released through a privacy session)
    assert row.status.reasons == (NOT_RELEASED, SEEDED_NOISE)
    assert row.guarantee.endswith(f"(C = {stats.count_cap} from DP-SSP's private choice, whose ε share that fit spent)")
    unseeded = replace(chosen, seed=None)
    (row,) = compare_methods(stats, info, unseeded, 1.0, SCENARIO.true_H(0.5, 8), PUBLIC, methods=("pgd",))
    assert row.status.reasons == (NOT_RELEASED,) and row.status.settings_formal  # formal settings, no session
    book, key = LedgerBook(tmp_path / "ledger.json"), LedgerKey(data_fingerprint(events))
    (row,) = compare_methods(stats, info, unseeded, 1.0, SCENARIO.true_H(0.5, 8), PUBLIC, methods=("pgd",),
                             fitter=ledger_fitter(book, key, info), released=True)
    assert row.status.formal and row.guarantee.startswith("yes (C = ")  # released through the ledger: formal
    assert len(book.get(key).metered) == 1


def test_the_exact_time_family_gets_its_own_statistics_and_every_row_a_grid_free_error():
    # ssp chosen on binned statistics: ctls is fitted on its own statistics of the same events, equal to the fit
    # called alone from the events; each row's grid-free error is the kernel functions' error of that fit, and
    # best_formal names the lower one.
    from dphawkes_core.estimators import fit
    from dphawkes_core.evaluation.lag_average import fit_steps
    from dphawkes_core.evaluation.metrics import kernel_function_error
    from dphawkes_experiments.compare import best_formal
    events = simulate(SCENARIO, n_events=2000, seed=4)
    chosen = FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=5, epsilon=2.0, calibration="formal", seed=3)
    stats, info = prepare_stats(events, chosen)
    truth = SCENARIO.true_H(0.5, 8)
    (row,) = compare_methods(stats, info, chosen, 2.0, truth, PUBLIC, methods=("ctls",), events=events,
                             scenario=SCENARIO)
    alone, _ = fit(events, FitConfig(method="ctls", bin_size=0.5, lags=8, count_cap=5, epsilon=2.0,
                                     calibration="formal", seed=3))
    assert row.ran and row.relative_error == pytest.approx(compare(alone.H, truth).relative_error, rel=1e-12)
    assert row.function_error == pytest.approx(kernel_function_error(fit_steps(alone), SCENARIO), rel=1e-12)
    ssp_row = compare_methods(stats, info, replace(chosen, method="cls", epsilon=None, calibration="paper",
                                                   count_cap=5), 2.0, truth, PUBLIC, methods=("ssp",),
                              scenario=SCENARIO)[0]
    assert best_formal([row, ssp_row]) is min((row, ssp_row), key=lambda r: r.function_error)
    # without the events, its row says why it was not run instead of fitting the binned statistics
    (missing,) = compare_methods(stats, info, chosen, 2.0, truth, PUBLIC, methods=("ctls",))
    assert not missing.ran and "its own statistics" in missing.note


def test_binned_rows_beside_an_automatic_cap_of_the_exact_time_fit_use_the_c_it_chose():
    events = simulate(SCENARIO, n_events=2000, seed=4)
    chosen = FitConfig(method="ctls", bin_size=0.5, lags=8, count_cap="auto", epsilon=1.0, calibration="formal",
                       seed=3)
    stats, info = prepare_stats(events, chosen)
    truth = SCENARIO.true_H(0.5, 8)
    (row,) = compare_methods(stats, info, chosen, 1.0, truth, PUBLIC, methods=("ssp",), events=events)
    cap = info["count_cap"]
    assert isinstance(cap, int) and cap >= 1
    assert row.ran and f"C = {cap} from exact event times" in row.note
    alone = fit_stats(prepare_stats(events, FitConfig(bin_size=0.5, lags=8, count_cap=cap))[0],
                      FitConfig(method="ssp", bin_size=0.5, lags=8, count_cap=cap, epsilon=1.0, calibration="formal",
                                seed=3))
    assert row.relative_error == pytest.approx(compare(alone.H, truth).relative_error, rel=1e-12)


def test_the_likelihood_reference_gets_its_own_statistics_beside_ctls_and_best_reference_names_it():
    # ctls chosen on its statistics of exact times: mle's row is fitted on its own (pairs) statistics of the same
    # events, with the chosen C, equal to the fit called alone; best_reference names the non-private row with the
    # lower grid-free error and never a private one.
    from dphawkes_core.estimators import fit
    from dphawkes_experiments.compare import best_reference
    events = simulate(SCENARIO, n_events=2000, seed=6)
    chosen = FitConfig(method="ctls", bin_size=0.5, lags=8, count_cap=5, epsilon=2.0, calibration="formal", seed=3)
    stats, info = prepare_stats(events, chosen)
    truth = SCENARIO.true_H(0.5, 8)
    rows = compare_methods(stats, info, chosen, 2.0, truth, PUBLIC, methods=("mle", "ssp"), events=events,
                           scenario=SCENARIO)
    mle = rows[0]
    alone, _ = fit(events, FitConfig(method="mle", bin_size=0.5, lags=8, count_cap=5))
    assert mle.ran and mle.epsilon == math.inf
    assert mle.relative_error == pytest.approx(compare(alone.H, truth).relative_error, rel=1e-12)
    cls_stats, cls_info = prepare_stats(events, FitConfig(method="cls", bin_size=0.5, lags=8, count_cap=5))
    (cls,) = compare_methods(cls_stats, cls_info, FitConfig(method="cls", bin_size=0.5, lags=8, count_cap=5), 2.0,
                             truth, PUBLIC, methods=("cls",), scenario=SCENARIO)
    assert best_reference([*rows, cls]) is min((mle, cls), key=lambda r: r.function_error)
    assert best_reference([rows[1]]) is None  # a private row is never the reference


def test_the_best_formal_estimator_is_never_one_no_better_than_zero():
    # the Figure 3 preset's case: DP-CG's formal fit at error 0.971 is the only formal row; it must not be named
    from dphawkes_core.privacy.report import NOT_RELEASED, FormalStatus
    from dphawkes_experiments.compare import ZERO_LIKE, MethodRow, best_formal
    settings_formal = FormalStatus(False, (NOT_RELEASED,))
    zero_like = MethodRow("cg", 0.971, 1.0, settings_formal, function_error=0.968)
    assert best_formal([zero_like]) is None
    useful = MethodRow("ssp", 0.30, 1.0, settings_formal, function_error=0.25)
    assert best_formal([zero_like, useful]) is useful
    plain_zero_like = MethodRow("ctls", ZERO_LIKE, 1.0, settings_formal, function_error=0.2)  # either error counts
    assert best_formal([plain_zero_like]) is None


def test_the_formal_column_on_public_data_says_what_the_settings_would_be_on_private_data():
    from dphawkes_core.privacy.formal_words import would_be_sentence
    from dphawkes_core.privacy.report import formal_status
    from dphawkes_experiments.compare import MethodRow
    formal_settings = formal_status("formal", seed=None, window_stated=True)
    row = MethodRow("ssp", 0.3, 1.0, formal_settings)
    public = row.formal_column(private_data=False)
    assert public == would_be_sentence(formal_settings, "app") and "would be a formal (ε, δ)-DP release" in public
    assert row.formal_column(private_data=True).startswith("no: not released through a privacy session")
    undeclared = MethodRow("ssp", 0.3, 1.0, formal_status("formal", seed=None, window_stated=True,
                                                          data_derived=("d",)), note="C = 5")
    for private_data in (False, True):
        cell = undeclared.formal_column(private_data)
        assert "declare it on the Data page" in cell and "--" not in cell and cell.endswith("(C = 5)")
    released = MethodRow("ssp", 0.3, 1.0, formal_status("formal", seed=None, window_stated=True, released=True))
    assert released.formal_column(private_data=True) == "yes"
    assert MethodRow("ssp", float("nan"), float("nan"), None, note="needs C").formal_column(True) == "needs C"
