"""ctls's option ``ctls_width_choice="share"`` (share then direct): the choice made from the two blocks' release at a
share of the budget, the chosen (w, s) released directly with the rest. Tested against independent facts: without
noise the choice is the validation mode's and the estimate the least squares at the chosen (w, s) written out by
loops; the multipliers compose to exactly (ε, δ) and the noise drawn has them; every candidate's direct release moves
by at most its bound under adversarial and random neighbours; the caps of every width come from one release of
sensitivity √K; a session plans, spends and replays the three releases as one entry; the audit of the two releases
together catches a halved noise; the contract suite holds; refusals."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from dphawkes_core.data.io import from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, fit, get_family, prepare_stats, privacy_report
from dphawkes_core.estimators.checks import CHECKS
from dphawkes_core.estimators.grid_free.release import worst_case_events
from dphawkes_core.estimators.grid_free.width_choice import (
    candidate_grid,
    direct_query,
    release_blocks,
    select_width,
    share_multipliers,
    share_queries,
    solve_candidate,
    stated_caps,
)
from dphawkes_core.privacy.accounting import compose_epsilon, gaussian_multiplier
from dphawkes_core.privacy.count_cap import cap_noise_sigma
from dphawkes_core.statistics.binning import bin_sparse, tail_counts

CTLS = get_family("ctls")


def share_config(width=0.25, lags=16, **shared):
    values = dict(method="ctls", bin_size=width, lags=lags, calibration="formal", ctls_width_choice="share",
                  count_cap=3, epsilon=1.0)
    return FitConfig(**{**values, **shared})


def random_events(seed, d=2, n=300, end=120.0):
    rng = np.random.default_rng(seed)
    parents = [np.sort(rng.uniform(0, end, rng.integers(n // 3, n // 2))) for _ in range(d)]
    children = [np.concatenate([p + rng.exponential(0.4, p.size), p + rng.uniform(0.5, 1.5, p.size)]) for p in parents]
    return from_arrays([np.sort(np.concatenate([p, c[c < end]])) for p, c in zip(parents, children, strict=True)],
                       end_time=end)


# --- without noise ------------------------------------------------------------------------------------------------

def least_squares_with_head(times, end, width, lags, head):
    """Step kernels of width w on ``(bw, (b+1)w]``, b < B', by the contrast over ``[head, T]`` (the history before
    ``head`` only as features), from its definition: G exactly on the pieces between breakpoints, c by loops;
    ``U = w·θ``."""
    d = len(times)
    events = [(float(t), j) for j in range(d) for t in times[j]]

    def phi(t):
        v = np.zeros(d * lags + 1)
        v[-1] = 1.0
        for u, j in events:
            for b in range(lags):
                if b * width < t - u <= (b + 1) * width:
                    v[b * d + j] += 1
        return v

    points = sorted({head, end} | {u + b * width for u, _ in events for b in range(lags + 1)
                                   if head < u + b * width < end})
    G = sum((t1 - t0) * np.outer(phi((t0 + t1) / 2), phi((t0 + t1) / 2)) for t0, t1 in zip(points, points[1:]))
    c = np.zeros((d, d * lags + 1))
    for t, i in events:
        if t >= head:
            c[i] += phi(t)
    return width * np.linalg.solve(G, c.T).T


def test_without_noise_the_choice_is_scored_both_ways_and_the_estimate_the_least_squares_at_it():
    """The validation mode's one-way contrasts (training fit on the validation block) plus the same contrasts the other
    way (the validation block's fit on the training block), each per unit of its block's time: the share's score; its
    best is the choice, and the estimate the least squares at it (computed independently)."""
    events = random_events(4, n=90, end=40.0)
    exact = dict(sigma2=0.0, epsilon=None, count_cap=None, ctls_ridge=0.0, ctls_smoothing=0.0,
                 ctls_nonnegative=False)
    config = share_config(0.5, 8, **exact)
    chosen, _ = fit(events, config)
    validated, _ = fit(events, share_config(0.5, 8, **exact, ctls_width_choice="validation"))
    stats, _ = prepare_stats(events, config)
    release = release_blocks(stats.train_pieces, stats.validation_pieces, 0.5, 0.0, 1.0, 1.0, None)
    other_way = select_width(stats.validation_pieces, stats.train_pieces, 0.5,
                             lambda pieces, width: solve_candidate(release, config, pieces, width)[0])
    back = {(c["width"], c["support"]): c["score"] for c in validated.info["candidates"]}
    both = {(c.width, c.support): back[(c.width, c.support)] / stats.validation_pieces.duration
            + c.score / stats.train_pieces.duration for c in other_way}
    scores = {(c["width"], c["support"]): c["score"] for c in chosen.info["candidates"]}
    assert scores.keys() == both.keys()
    for key, score in scores.items():
        assert score == pytest.approx(both[key], rel=1e-9, abs=1e-12 * max(abs(v) for v in both.values()))
    assert (chosen.info["chosen_width"], chosen.info["chosen_support"]) == min(both, key=both.get)
    width, support = chosen.info["chosen_width"], chosen.info["chosen_support"]
    lags, factor = int(round(support / width)), int(round(width / 0.5))
    times = list(events.sequences[0].times)
    expected = least_squares_with_head(times, 40.0, width, lags, head=4.0)  # the head is s_max = 8 × 0.5
    theta = chosen.H  # on the fine grid: each coarse height repeated k times, zero beyond the support
    d = 2
    fine = theta[:, :-1].reshape(d, 8, d)
    coarse = expected[:, :-1].reshape(d, lags, d) / width
    np.testing.assert_allclose(fine[:, : lags * factor : factor], coarse, rtol=1e-8, atol=1e-10)
    assert np.all(fine[:, lags * factor:] == 0)
    np.testing.assert_allclose(theta[:, -1], expected[:, -1] / width, rtol=1e-8)


# --- the budget and the noise -----------------------------------------------------------------------------------

@pytest.mark.parametrize("cap", [3, "auto"])
def test_the_releases_compose_to_exactly_epsilon_and_the_noise_has_their_multipliers(cap):
    events = random_events(5)
    config = share_config(count_cap=cap, ctls_choice_share=30.0)
    stats, info = prepare_stats(events, config)
    report = privacy_report(stats, config)
    mechanisms = report.mechanisms()
    labels = [m.label for m in mechanisms]
    assert labels[-2:] == ["noisy statistics", "noisy statistics at the chosen width and support"]
    assert len(mechanisms) == (3 if cap == "auto" else 2)
    assert compose_epsilon(mechanisms, config.dp_delta) == pytest.approx(1.0, rel=1e-9)
    mu2 = 1 / gaussian_multiplier(1.0, config.dp_delta) ** 2
    if cap == "auto":
        assert mechanisms[0].parameter == pytest.approx(cap_noise_sigma(1.0, config.dp_delta, 0.05), rel=1e-12)
        mu2 -= 1 / mechanisms[0].parameter ** 2
    assert 1 / mechanisms[-2].parameter ** 2 == pytest.approx(0.3 * mu2, rel=1e-9)
    assert 1 / mechanisms[-1].parameter ** 2 == pytest.approx(0.7 * mu2, rel=1e-9)
    # the choice's release: std z_choice·S/N on every number; the direct one at each candidate: z_direct·S_k/N_k
    rng = np.random.default_rng(0)
    clean = CTLS.query_vector(stats, config)
    residual = CTLS.noisy_output(stats, config, report, rng) - clean
    assert residual.std() == pytest.approx(math.sqrt(report.sigma2), rel=6 / math.sqrt(2 * residual.size))
    for k, lags in candidate_grid(16)[::4]:
        vector, sensitivity = direct_query(stats, config, k, lags)
        both = CTLS.noisy_output(stats, config, report, rng, state=(k, lags))
        direct = both[clean.size:] - vector
        assert direct.size == vector.size > 20
        assert direct.std() == pytest.approx(mechanisms[-1].parameter * sensitivity, rel=8 / math.sqrt(direct.size))


def test_one_release_gives_the_cap_of_every_candidate_width_at_sensitivity_root_k():
    """The tail counts of every width, stacked: one added event moves each width's by one in one entry, so by √K
    (measured on random neighbours); the stated cap scales as k·C."""
    rng = np.random.default_rng(7)
    factors = (1, 2, 4, 8)
    for _ in range(20):
        events = random_events(int(rng.integers(1000)), n=120, end=40.0)
        times = list(events.sequences[0].times)
        j = int(rng.integers(2))
        times[j] = np.sort(np.append(times[j], rng.uniform(0, 40.0)))
        neighbour = from_arrays(times, end_time=40.0)
        stacked = [np.concatenate([tail_counts(bin_sparse(e, k * 0.25), 64) for k in factors])
                   for e in (events, neighbour)]
        assert np.linalg.norm(stacked[1] - stacked[0]) == pytest.approx(2.0)
    assert stated_caps(3, factors) == {1: 3, 2: 6, 4: 12, 8: 24}
    stats, info = prepare_stats(random_events(8), share_config(count_cap="auto", seed=1))
    by_width = info["auto_count_cap"]["count_caps_by_width"]
    assert set(by_width) == {"1", "2", "4", "8"} and info["count_cap"] == by_width["1"]
    assert {(k, cap) for k, _, cap, _ in stats.direct_pieces} == {(int(k), c) for k, c in by_width.items()}


# --- the direct release's bound ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("d", "cap"), [(1, 2), (2, 1), (2, 3)])
def test_every_candidates_direct_release_stays_within_its_bound_and_reaches_most_of_it(d, cap):
    """ctls's own adversarial neighbours at the candidate's width, support and cap (k·C per w-bin), placed in a
    window that holds them, moved through the share mode's statistics and :func:`direct_query`: at most the bound,
    at least 0.8 of it for the widest supports (the family's fraction at B' >= 20)."""
    w0 = 0.125
    config = share_config(w0, 40, count_cap=cap, sigma2=None)
    for k, lags in [(1, 40), (2, 20), (8, 5)]:
        fractions = []
        for kind in ("insert", "swap"):
            pair = worst_case_events(d, lags, k * cap, k * w0, kind)
            stats = [prepare_stats(e, config)[0] for e in pair]
            vectors = [direct_query(s, config, k, lags) for s in stats]
            assert vectors[0][1] == pytest.approx(vectors[1][1], rel=1e-12)  # a public bound
            fractions.append(float(np.linalg.norm(vectors[1][0] - vectors[0][0]) / vectors[0][1]))
        assert max(fractions) <= 1.0 + 1e-9
        if lags >= 20:
            assert max(fractions) >= 0.8


def test_random_neighbours_never_move_a_direct_release_beyond_its_bound():
    """Insertions, removals, swaps (a full bin), bursts over the cap, events on a w-bin edge and one ulp below it."""
    rng = np.random.default_rng(31)
    worst = 0.0
    for _ in range(25):
        d, cap = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        config = share_config(0.25, 8, count_cap=cap, sigma2=None)
        end = 40.0
        times = [np.sort(rng.uniform(0, end, rng.integers(20, 90))) for _ in range(d)]
        if rng.random() < 0.4:
            start = 0.25 * rng.integers(4, 100)
            times = [np.sort(np.concatenate([t, start + 0.5 * rng.random(6 * cap)])) for t in times]
        edge = 0.5 * rng.integers(4, 70)
        z = float(rng.choice([rng.uniform(0, end), edge, np.nextafter(edge, 0)]))
        base = from_arrays(times, end_time=end)
        j = int(rng.integers(d))
        times[j] = np.sort(np.append(times[j], z))
        pair = (base, from_arrays(times, end_time=end))
        stats = [prepare_stats(e, config)[0] for e in pair]
        for k, lags in candidate_grid(8):
            vectors = [direct_query(s, config, k, lags) for s in stats]
            worst = max(worst, float(np.linalg.norm(vectors[1][0] - vectors[0][0]) / vectors[0][1]))
    assert 0.05 < worst <= 1.0


def test_every_noised_vector_is_listed_with_its_bound():
    """:func:`share_queries`: the choice's release (as the family's query) and one direct release per candidate of the
    grid, each with the sensitivity its noise is calibrated to."""
    config = share_config(0.25, 8, sigma2=None)
    stats, _ = prepare_stats(random_events(3), config)
    report = privacy_report(stats, config)
    queries = share_queries(stats, config, CTLS.query_vector(stats, config), report.sensitivity)
    assert [name for name, _, _ in queries][0] == "choice" and len(queries) == 1 + len(candidate_grid(8))
    for (name, vector, sensitivity), (k, lags) in zip(queries[1:], candidate_grid(8), strict=True):
        expected = direct_query(stats, config, k, lags)
        assert name == f"direct (k = {k}, B' = {lags})"
        np.testing.assert_array_equal(vector, expected[0])
        assert sensitivity == expected[1]


# --- the session, the audit, the contract, refusals ----------------------------------------------------------------

def test_a_session_plans_spends_and_replays_the_three_releases_as_one_entry(tmp_path, monkeypatch):
    """The plan (public numbers only) is what the release spends — the caps, the choice and the direct release, one
    entry of three mechanisms composing to ε — and a replay draws nothing and returns the same choice and estimate."""
    import dphawkes_core.estimators.grid_free.width_choice as width_choice
    from dphawkes_core.data.domain import Domain
    from dphawkes_core.data.io import load_csv, save_csv
    from dphawkes_core.release.ledger_file import LedgerBook
    from dphawkes_core.release.session import PrivacySession

    save_csv(random_events(9), tmp_path / "events.csv")
    events = load_csv(tmp_path / "events.csv", end_time=120.0, domain=Domain(dimensions=("0", "1")))
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "ledger.json"), "data")
    config = share_config(count_cap="auto")
    assert session.request(config) != session.request(config.with_changes(ctls_width_choice="validation"))
    assert session.request(config) != session.request(config.with_changes(ctls_choice_share=30.0))
    _, planned = session.plan(config)
    first = session.release(config)
    assert not first.replayed and first.status.formal
    assert tuple(first.entry.mechanisms) == planned and len(planned) == 3
    assert first.ledger.spent() == pytest.approx(1.0, rel=1e-6)

    def no_draws(*args, **kwargs):
        raise AssertionError("drawn again")

    monkeypatch.setattr(width_choice, "release_blocks", no_draws)
    monkeypatch.setattr(width_choice, "direct_release", no_draws)
    monkeypatch.setattr(width_choice, "private_caps", no_draws)
    again = session.release(config)
    assert again.replayed and np.array_equal(again.result.H, first.result.H)
    assert again.ledger.spent() == first.ledger.spent()
    assert again.result.info["chosen_width"] == first.result.info["chosen_width"]


def test_an_audit_of_both_releases_at_a_chosen_candidate_catches_a_halved_noise():
    from dphawkes_experiments.audit import AuditConfig, AuditSession, Neighbour, common_noise_shift

    fit_config = share_config(0.5, 8, count_cap=2, epsilon=4.0, ctls_choice_share=50.0)
    pair = worst_case_events(1, 8, 2, 0.5, "insert")
    stats = [prepare_stats(e, fit_config)[0] for e in pair]
    state = np.array([1, 8])
    results = {}
    for broken in (None, 2.0):
        claimed = privacy_report(stats[0], fit_config)
        reports = [privacy_report(s, fit_config) for s in stats]
        if broken:
            reports = [dataclasses.replace(r, sigma2=r.sigma2 / broken**2,
                                           further=tuple((z / broken, label) for z, label in r.further))
                       for r in reports]
        audit = AuditConfig(fit_config.with_changes(seed=1), trials=1500, neighbours="worst-case", seed=1,
                            broken_factor=broken)
        shift = common_noise_shift(stats[0], reports[0], stats[1], reports[1], audit.fit, 8, state)
        session = AuditSession(config=audit, stats_d=stats[0], stats_d_prime=stats[1], report_d=reports[0],
                               report_d_prime=reports[1], neighbour=Neighbour(0, 0, 0, float(np.linalg.norm(shift)),
                                                                              1),
                               claimed=claimed, direction=shift, state=state)
        session.run_chunk(audit.trials)
        results[broken] = session.result()
    assert not results[None].violated
    assert results[2.0].violated and results[2.0].mu_lower_bound > results[2.0].mu_claimed


@pytest.mark.parametrize("check", ["sensitivity", "only a session release is formal", "foreign options refused",
                                   "options round trip"])
def test_the_family_contract_holds_with_the_width_chosen_by_share(check, monkeypatch):
    """The contract suite's checks that apply to a config, with the share choice among the family's worst-case
    options and ε = 1 (the share mode splits ε: it has no σ² of its own)."""
    import dphawkes_core.estimators.checks as checks

    real = checks.config_for
    hints = dataclasses.replace(CTLS.audit_hints, worst_case_options={"ctls_width_choice": "share"})
    monkeypatch.setattr(type(CTLS), "audit_hints", hints)
    monkeypatch.setattr(checks, "config_for",
                        lambda family, lags, **shared: real(family, lags, **{"sigma2": None, "epsilon": 1.0, **shared}))
    CHECKS[check](CTLS)


def test_the_refusals_each_say_why_in_one_line():
    with pytest.raises(ConfigError, match="give ε, not σ²") as sigma:
        share_config(epsilon=None, sigma2=1.0)
    with pytest.raises(ConfigError, match="below 100") as share:
        share_config(ctls_choice_share=100.0)
    with pytest.raises(ConfigError, match="event unit") as unit:
        share_config(privacy_unit="sequence", max_events=20, count_cap=None)
    for refusal in (sigma, share, unit):
        assert "\n" not in str(refusal.value)
    assert share_multipliers(1.0, 1e-5, 0.4).choice > share_multipliers(1.0, 1e-5, 0.6).choice


def test_the_cli_says_the_choice_in_one_line(tmp_path, capsys):
    from dphawkes_cli.main import main

    csv = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "3000", "--seed", "2", "--out", str(csv)]) == 0
    out = tmp_path / "fit.json"
    assert main(["fit", str(csv), "--method", "ctls", "--ctls-width-choice", "share", "--ctls-choice-share", "40",
                 "--bin-size", "0.25", "--support", "4", "--epsilon", "1", "--calibration", "formal", "--count-cap",
                 "auto", "--end-time", "4100", "--dimensions", "2", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    payload = json.loads(out.read_text())
    info = payload["solver_info"]
    assert [line for line in err.splitlines() if "chosen with 40% of the budget" in line] == [
        f"note: width w = {info['chosen_width']:g} and support s = {info['chosen_support']:g} chosen with 40% of the "
        "budget by the validation contrast (each block fitted and scored on the other), then released directly with "
        "the rest"]
    assert payload["privacy"]["further_releases"][0]["label"] == "noisy statistics at the chosen width and support"
    assert np.asarray(payload["kernels"]).shape == (2, 2, 16)


def test_the_options_help_quotes_what_docs_accuracy_measured():
    """The help the CLI and the app show for the share choice, its risk score and the differences basis states what
    docs/accuracy.md measured, in its numbers — not a claim the measurement does not make."""
    from pathlib import Path

    docs = (Path(__file__).parents[3] / "docs" / "accuracy.md").read_text()
    (width,) = [s for s in CTLS.settings if s.name == "ctls_width_choice"]
    section = docs.split("## Where each formal method wins")[1].split("\n## ")[0]
    assert "1.22 and 1.41 × the best of three fixed widths at 10⁴ events and 1.36 and 1.14 × at 10⁵" in width.help
    assert "1.22 / 1.41; 1.36 / 1.14 × the best fixed width" in section and "1.75 / 1.89; 1.64 / 1.44 ×" in section
    rows = {"### Round 2: measured on the declared test processes": (
                "| mixed-3d | 10⁵ | 1.36 / 1.34 | 1.34 / 1.39 (1.24 / 1.36) | **1.36** | 1.64 |",
                "| paper-4d | 10⁵ | 1.24 / 1.10 | 1.11 / 1.12 (1.15 / 1.49) | **1.14** | 1.44 |",
                "| mixed-3d | 10⁴ | 1.23 / 1.25 | 1.20 / 1.21 (1.12 / 1.15) | 1.22 | 1.75 |",
                "| paper-4d | 10⁴ | 1.44 / 1.31 | 1.41 / 1.49 (1.41 / 1.55) | 1.41 | 1.89 |"),
            "### Round 3: the risk score measured on the declared test processes": (
                "| mixed-3d | 10⁵ | 1.26 / 1.21 / 1.22 / 1.20 | **1.22** |",
                "| paper-4d | 10⁵ | 1.17 / 1.14 / 1.16 / 1.16 | **1.16** |",
                "| mixed-3d | 10⁴ | 1.12 / 1.06 / 1.13 / 1.10 | 1.10 |",
                "| paper-4d | 10⁴ | 1.07 / 1.02 / 1.04 / 1.04 | 1.04 |")}
    for heading, table in rows.items():
        measured = docs.split(heading)[1].split("\n## ")[0]
        assert all(row in measured for row in table), heading
    (score,) = [s for s in CTLS.settings if s.name == "ctls_choice_score"]
    assert "1.22 and 1.16 × the best of three fixed widths at 10⁵ events, 1.10 and 1.04 × at 10⁴" in score.help
    (basis,) = [s for s in get_family("exp").settings if s.name == "exp_basis"]
    assert "0.70 of the decays basis' error at 10⁵ events (0.165 against 0.235), 0.86 at 10⁴, 0.84 at 10⁶" in basis.help
    for row in ("| 10⁵ | 1 | 0.033 (0.020–0.051) | 0.029 (0.016–0.044) | 0.235 (0.205–0.276) | **0.165**",
                "| 0.650 (0.612–0.691) | **0.558** (0.499–0.626) | 0.86",
                "| 0.085 (0.056–0.121) | **0.071** (0.040–0.110) | 0.84"):
        assert row in docs
