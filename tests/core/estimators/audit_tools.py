"""What the exponential and grid-free families' tests run the same way: the worst-case audit on a family's own
neighbouring statistics (as claimed, and with the noise halved: the planted bug the audit must catch), the noise's
std against its calibration, how far a neighbouring pair moves a release against its stated bound, and a CLI release
through a ledger replayed without a draw."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dphawkes_core.estimators import prepare_stats, privacy_report
from dphawkes_core.privacy.accounting import gaussian_multiplier
from dphawkes_core.privacy.noise import noise_source


def audits_as_claimed_and_halved(fit_config, stats) -> dict:
    """The audit's result on the neighbouring statistics ``stats`` (D, D′) at the claimed noise (key ``None``) and
    with its standard deviation halved (key ``2.0``): 1,500 trials each, seed 1, along the noise-free shift between
    the two releases."""
    from dphawkes_experiments.audit import AuditConfig, AuditSession, Neighbour, _as_run, common_noise_shift

    results = {}
    for broken in (None, 2.0):
        audit = AuditConfig(fit_config, trials=1500, neighbours="worst-case", seed=1, broken_factor=broken)
        claimed = privacy_report(stats[0], fit_config)
        reports = [_as_run(privacy_report(s, fit_config), broken) for s in stats]
        shift = common_noise_shift(stats[0], reports[0], stats[1], reports[1], fit_config, 8)
        session = AuditSession(config=audit, stats_d=stats[0], stats_d_prime=stats[1], report_d=reports[0],
                               report_d_prime=reports[1], neighbour=Neighbour(0, 0, 0, float(np.linalg.norm(shift)), 1),
                               claimed=claimed, direction=shift)
        session.run_chunk(audit.trials)
        results[broken] = session.result()
    return results


def moved_fraction(family, config, pair) -> float:
    """How far the neighbours ``pair`` (D, D′) move ``family``'s release vector, as a share of its stated bound."""
    s_d, s_n = (prepare_stats(events, config)[0] for events in pair)
    moved = np.linalg.norm(family.query_vector(s_n, config) - family.query_vector(s_d, config))
    return float(moved / privacy_report(s_d, config).sensitivity)


def released_and_replayed(family, options: list[str], tmp_path, capsys, monkeypatch) -> tuple[dict, dict, list]:
    """``dphawkes fit --method exp OPTIONS`` on 2,000 simulated paper-2d events through a ledger (formal, ε = 1,
    C = 2, w = 0.5, s = 5), then the same command again with ``family``'s draw made unreachable: the two JSON
    payloads (the second asserted a replay of the first) and the command's argv without ``--json``."""
    from dphawkes_cli.main import main

    csv = tmp_path / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "2000", "--seed", "1", "--out", str(csv)]) == 0
    argv = ["fit", str(csv), "--method", "exp", *options, "--bin-size", "0.5", "--support", "5", "--epsilon", "1",
            "--calibration", "formal", "--count-cap", "2", "--end-time", "2900", "--dimensions", "2",
            "--ledger", str(tmp_path / "ledger.json")]
    assert main(argv + ["--json", str(tmp_path / "first.json")]) == 0, capsys.readouterr().err
    first = json.loads((tmp_path / "first.json").read_text())
    assert first["formal_guarantee"] and not first["ledger"]["replayed"]

    def no_draws(*args, **kwargs):
        raise AssertionError("the release was drawn again")

    monkeypatch.setattr(type(family), "_noisy", no_draws)
    assert main(argv + ["--json", str(tmp_path / "again.json")]) == 0, capsys.readouterr().err
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["ledger"]["replayed"] and again["kernels"] == first["kernels"]
    return first, again, argv


def audit_catches_a_halved_noise(fit_config, family) -> None:
    """The worst-case audit on ``family``'s own worst-case neighbours (d = 1) at ``fit_config``: the calibrated noise
    not refuted, a halved one caught."""
    stats = [prepare_stats(e, fit_config)[0] for e in family.worst_case_events(fit_config, 1)]
    results = audits_as_claimed_and_halved(fit_config, stats)
    assert not results[None].violated
    assert results[2.0].violated and results[2.0].mu_lower_bound > results[2.0].mu_claimed


def noise_is_calibrated(family, stats, config, bound: float) -> None:
    """The stated sensitivity is ``bound`` (in the units of A), σ the Gaussian multiplier of (ε, δ) times it, 300
    seeded draws have that std, and two unseeded draws differ."""
    report = privacy_report(stats, config)
    assert report.sensitivity == pytest.approx(bound, rel=1e-12)
    assert np.sqrt(report.sigma2) == pytest.approx(gaussian_multiplier(config.epsilon, config.dp_delta) * bound,
                                                   rel=1e-9)
    clean = family.query_vector(stats, config)
    draws = np.array([family.noisy_output(stats, config, report, np.random.default_rng(k)) for k in range(300)])
    assert np.std(draws - clean) == pytest.approx(np.sqrt(report.sigma2), rel=0.03)
    unseeded = [family.noisy_output(stats, config, report, noise_source(None)) for _ in range(2)]
    assert not np.allclose(*unseeded)
