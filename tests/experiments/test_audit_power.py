"""Power of the worst-case audit through the CLI: ``dphawkes audit --worst-case`` at ε = 1,
δ = 1e-5 with 2000 trials catches a noise std cut 2× for every formal method and does not refute the
correct mechanism (fixed seeds: deterministic). Measured over 10 seeds each in docs/privacy.md
("Empirical audit", ``benchmarks/bench_audit.py``); these runs guard the pair, the state, the family's
worst-case settings and the test."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.estimators import binned_stats, get_family, privacy_report
from dphawkes_experiments.audit import AuditConfig, prepare_worst_case, worst_case_fit, worst_case_pair

FORMAL = ("ssp", "pgd", "cg", "pgd-clip")
BASE = ["audit", "--scenario", "paper-2d", "--bin-size", "1", "--worst-case", "--epsilon", "1", "--dp-delta", "1e-5",
        "--trials", "2000", "--seed", "1"]


def _cli_audit(tmp_path, method, *extra) -> dict:
    out = tmp_path / f"{method}.json"
    assert main([*BASE, "--method", method, "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("method", FORMAL)
def test_the_cli_worst_case_audit_catches_a_2x_noise_cut_and_passes_the_correct_mechanism(tmp_path, method):
    correct = _cli_audit(tmp_path, method)
    assert not correct["violated"], (correct["mu_lower_bound"], correct["mu_claimed"])
    broken = _cli_audit(tmp_path, method, "--broken", "--broken-factor", "2")
    assert broken["violated"] and broken["mu_lower_bound"] > 1.1 * broken["mu_claimed"], \
        (broken["mu_lower_bound"], broken["mu_claimed"])
    assert correct["confidence"] == 0.999 and correct["trials"] == 2000 and correct["sigma2_used"] == \
        pytest.approx(4 * broken["sigma2_used"])


def test_the_cli_uses_the_familys_worst_case_settings_unless_given(tmp_path, capsys):
    payload = _cli_audit(tmp_path, "pgd-clip", "--trials", "200")
    family = get_family("pgd-clip")
    assert {key: payload[key] for key in family.audit_hints.worst_case_options} == family.audit_hints.worst_case_options
    assert payload["lags"] == family.audit_hints.worst_case_lags and payload["released_at_state"] is not None
    assert "lags" in payload["worst_case_settings_from_family"]
    assert "from the family's worst case" in capsys.readouterr().err
    given = _cli_audit(tmp_path, "pgd", "--trials", "200", "--iters", "3", "--support", "2")
    assert given["iters"] == 3 and given["lags"] == 2 and given["bound"] == 1e-3 and given["worst_case_dim"] == 1
    assert "iters" not in given["worst_case_settings_from_family"]


@pytest.mark.parametrize("method", FORMAL)
def test_the_worst_case_pair_moves_the_release_by_most_of_the_claimed_sensitivity(method):
    """Deterministic: the release's change under common noise on the audit's pair (at the family's state
    when it has one), against the claimed sensitivity — what makes a 2× cut detectable."""
    fit = worst_case_fit(method, lags=3, count_cap=5, epsilon=1.0)
    session = prepare_worst_case(AuditConfig(fit, trials=20, neighbours="worst-case"),
                                 fit.family.audit_hints.worst_case_dim or 2, 60)
    shift = np.linalg.norm(session.direction) / np.sqrt(session.report_d.sigma2)
    claimed = session.claimed.sensitivity / np.sqrt(session.claimed.sigma2)
    assert shift <= claimed * (1 + 1e-9)
    assert shift >= 0.94 * claimed, (method, shift / claimed)


def test_clipped_pgd_state_flips_every_changed_term():
    """At the state every one of the p + 1 changed per-bin terms goes from +G to −G along almost one
    direction: the change reaches the bound 2(p+1)G/N (from U = 0 at most about 0.43 of it)."""
    from dphawkes_core.estimators.clipped import clipped_gradient, per_bin_design

    family = get_family("pgd-clip")
    for dim, lags, cap in ((1, 1, 1), (2, 1, 5), (1, 3, 3), (3, 2, 2)):
        fit = replace(worst_case_fit("pgd-clip", count_cap=cap, epsilon=1.0), lags=lags)
        d, d_prime, _ = worst_case_pair(dim, 40, 1.0, cap)
        s_d, s_n = binned_stats(d, fit.lags), binned_stats(d_prime, fit.lags)
        state = family.worst_case_state(dim, fit.lags, cap, fit)
        moved = np.linalg.norm(clipped_gradient(state, per_bin_design(s_n), fit.clip)
                               - clipped_gradient(state, per_bin_design(s_d), fit.clip))
        bound = privacy_report(s_d, fit).sensitivity
        assert 0.94 * bound <= moved <= bound * (1 + 1e-12), (dim, fit.lags, cap, moved / bound)
