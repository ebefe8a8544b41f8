"""The worst-case audit a family's tests run on its own neighbouring statistics: as claimed, and with the noise
halved (the planted bug the audit must catch)."""

from __future__ import annotations

import numpy as np

from dphawkes_core.estimators import privacy_report


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
