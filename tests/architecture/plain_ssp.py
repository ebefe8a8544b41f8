"""A family in one module, reusing a release another family first made: DP-SSP's full release of the least-squares
statistics (from the neutral :mod:`~dphawkes_core.estimators.releases`, not from DP-SSP), then a fixed public
ridge and plain least squares. The second file is one registry line (``register(PlainSSP())``, in the test)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dphawkes_core.estimators import AuditHints, PrivacyTags, Setting, SingleRelease
from dphawkes_core.estimators.releases import noisy_statistics, ssp_sensitivity
from dphawkes_core.estimators.settings import options_class
from dphawkes_core.estimators.solvers import paper_loss, solve_cls, stabilise

SETTINGS = (Setting("plain_ridge", "public ridge λ", "float", 0.5, "λ added to the noisy A before the solve",
                    minimum=0.0, step=0.1, primary=True),)
PlainSSPOptions = options_class("PlainSSPOptions", SETTINGS, "plain SSP", __name__)


class PlainSSP(SingleRelease):
    """DP-SSP's full release of A and b, a fixed public ridge, least squares (no constraint)."""

    name = "plain-ssp"
    label = "plain SSP"
    summary = "a test family: the noisy least-squares statistics and a fixed public ridge"
    note = "formal (public C, d, p, n; one Gaussian release of A and b)"
    settings = SETTINGS
    options_type = PlainSSPOptions
    privacy = PrivacyTags(calibrations=("formal",))
    audit_hints = AuditHints(noiseless_options={"plain_ridge": 0.0}, sensitivity_fraction=0.5)

    def release_sensitivity(self, stats, config) -> float:
        return ssp_sensitivity(stats.dim, stats.lags, stats.n_rows, stats.count_cap)

    def query_vector(self, stats, config) -> np.ndarray:
        return np.concatenate([stats.A[np.triu_indices_from(stats.A)][:-1], stats.b.ravel()])

    def run(self, stats, config, report, rng, transcript=None):
        A_hat, b_hat = noisy_statistics(stats, math.sqrt(report.sigma2), rng)
        U, info = solve_cls(replace(stats, A=stabilise(A_hat, config.plain_ridge, "ridge"), b=b_hat))
        return U, [paper_loss(U, stats)], {**info, "ridge": config.plain_ridge}
