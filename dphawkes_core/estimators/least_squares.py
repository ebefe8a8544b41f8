"""Non-private conditional least squares (Kirchner 2017): the family. The solver and the paper's loss it
shares with the other families are in :mod:`~dphawkes_core.estimators.solvers`."""

from __future__ import annotations

from dphawkes_core.estimators.family import Family, PrivacyTags
from dphawkes_core.estimators.settings import options_class
from dphawkes_core.estimators.solvers import paper_loss, solve_cls

CLSOptions = options_class("CLSOptions", (), "CLS", __name__)


class CLS(Family):
    """Non-private conditional least squares: the reference every private family is measured against."""

    name = "cls"
    label = "CLS"
    summary = ("non-private: the baselines and kernels that best predict each bin's count from the counts before it "
               "(Kirchner 2017), solved exactly")
    options_type = CLSOptions
    privacy = PrivacyTags(private=False, units=("event", "sequence"))

    def run(self, stats, config, report, rng, transcript=None):
        theta, info = solve_cls(stats)
        return theta, [paper_loss(theta, stats)], info
