"""A toy estimator family, defined outside the package, to show that a family is one module plus one
registry line: a private mean rate. It releases each dimension's total count over the N design rows with
Gaussian noise (sensitivity 1/N: one event moves one total by at most one), reports no excitation and the
released rate, shrunk toward 0 by a public factor, as the baseline."""

from __future__ import annotations

import numpy as np

from dphawkes_core.estimators import AuditHints, Family, PrivacyTags, Setting
from dphawkes_core.estimators.settings import options_class
from dphawkes_core.privacy.calibration import calibrate_single_sensitivity, data_R

SETTINGS = (Setting("shrink", "shrink the rate by", "float", 1.0, "a public factor applied to the released rate",
                    minimum=0.0, maximum=1.0, step=0.1),)
ToyOptions = options_class("ToyOptions", SETTINGS, "toy mean rate", __name__)


class ToyMeanRate(Family):
    """Baseline-only private estimate: noisy mean counts per bin."""

    name = "toy-rate"
    label = "toy mean rate"
    summary = "a test family: the noisy mean rate per dimension, no excitation"
    settings = SETTINGS
    options_type = ToyOptions
    privacy = PrivacyTags(calibrations=("formal",))
    # "mean rate" is not among the contract suite's limits: test_toy_family checks it
    audit_hints = AuditHints(noiseless_limit="mean rate", sensitivity_fraction=1.0)

    def query_vector(self, stats, config) -> np.ndarray:
        return stats.pieces.totals / stats.n_rows

    def privacy_report(self, stats, config):
        return calibrate_single_sensitivity(
            "formal (public N; one Gaussian release of the mean counts)", 1.0 / stats.n_rows, 1,
            config.calibration, config.dp_delta, **config.privacy_target, R=data_R(stats))

    def run(self, stats, config, report, rng, transcript=None):
        released = self.query_vector(stats, config) + np.sqrt(report.sigma2) * rng.standard_normal(stats.dim)
        U = np.zeros_like(stats.b)
        U[:, -1] = config.shrink * released
        return U, [0.0], {"released_rate": released}
