"""The same fit with the other methods at the same ε: one row per method, for the app's comparison table.

The chosen fit stays as it is; every other method is run on the same statistics (same Δ, p, count cap
C and data) at the same target ε and δ, with the same calibration when the method has it (DP-SSP and
clipped DP-PGD only have the formal one) and its public settings (B, r, G, K) from a reference config —
the preset's. With an automatic count cap (DP-SSP only), the others are clipped at the C it chose: that C
was itself released privately (its share of the DP-SSP fit's ε), so using it is post-processing and each
other fit still spends only its own ε — the row says where its C came from. Each row says whether the
release is a formal guarantee and, if not, why
(:func:`~dphawkes_core.estimators.release_status`), or why the method was not run (a missing public
setting, or a predicted cost over the budget unless slow methods are asked for).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from dphawkes_core.count_cap import AUTO, AUTO_CAP_MAX, AUTO_CAP_SHARE
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, FitResult, fit_stats, get_family, iterations, method_names, release_status
from dphawkes_core.metrics import compare
from dphawkes_core.privacy import FormalStatus
from dphawkes_core.resources import estimate_fit_cost

COMPARISON_BUDGET_S = 1.0  # predicted seconds above which a method is skipped unless slow methods are asked for


@dataclass(frozen=True)
class MethodRow:
    """One method's fit in the comparison.

    Attributes
    ----------
    method : str
        Estimator name.
    relative_error : float
        ``||Ĥ − H_ref||_F / ||H_ref||_F`` against the reference (the truth, or the non-private fit when
        there is no truth); NaN when the method was not run.
    epsilon : float
        ε of the fit under its own calibration (``inf`` for the non-private fit, NaN when not run).
    status : FormalStatus or None
        Whether the estimate is a formal (ε, δ)-DP release, with the reasons when not; ``None`` when not run.
    note : str
        Why the method was not run; for a row that ran, where a setting it did not choose came from
        (e.g. a count cap reused from DP-SSP's private choice), else empty.
    """

    method: str
    relative_error: float
    epsilon: float
    status: FormalStatus | None
    note: str = ""

    @property
    def ran(self) -> bool:
        """True when the method was fitted."""
        return self.status is not None

    @property
    def guarantee(self) -> str:
        """``yes`` or ``no: <reasons>`` for a fitted row (with its note), else why it was not run."""
        if not self.ran:
            return self.note
        verdict = "yes" if self.status.formal else "no: " + "; ".join(self.status.reasons)
        return f"{verdict} ({self.note})" if self.note else verdict


def comparison_epsilon(config: FitConfig, result: FitResult, fallback: float | None = None) -> float | None:
    """The ε the other methods are run at: the chosen fit's target ε, else the ε its σ² bought, else
    ``fallback`` (e.g. when the chosen method is the non-private one); ``None`` when none is finite."""
    for value in (config.epsilon, result.privacy.epsilon if result.privacy is not None else None, fallback):
        if value is not None and math.isfinite(value) and value > 0:
            return float(value)
    return None


def method_config(config: FitConfig, method: str, epsilon: float, public: Mapping) -> FitConfig:
    """``config`` with another method at target ``epsilon``: the shared settings (Δ, p, C, δ, unit, seed) of
    ``config``; each option the other family reads from ``config`` when its family reads it too, else from
    ``public`` (the public settings stated for every family: B, r, G, K); a formal-only family gets the formal
    calibration."""
    family = get_family(method)
    options = family.own_options({**dict(public), **dataclasses.asdict(config.options)})
    calibration = "formal" if family.formal_only else config.calibration
    shared = {k: v for k, v in config.to_dict().items() if not config.family.reads(k)}
    return FitConfig(**{**shared, "method": method, "epsilon": epsilon, "sigma2": None, "calibration": calibration,
                        **options})


def method_row(result: FitResult, config: FitConfig, reference: np.ndarray, data_info: dict,
               data_derived=(), released: bool = False) -> MethodRow:
    """The comparison row of a finished fit (``released``: it was released through a privacy session)."""
    epsilon = math.inf if result.privacy is None else float(result.privacy.epsilon)
    return MethodRow(result.method, compare(result.H, reference).relative_error, epsilon,
                     release_status(config, data_info, data_derived, released=released))


def compare_methods(stats, data_info: dict, config: FitConfig, epsilon: float, reference: np.ndarray,
                    public: Mapping, methods=None, include_slow: bool = False,
                    data_derived=(), fitter=fit_stats, released: bool = False) -> tuple[MethodRow, ...]:
    """Fit each of ``methods`` on ``stats`` at target ``epsilon`` and compare with ``reference``.

    Parameters
    ----------
    stats : SufficientStats
        The chosen fit's statistics (from :func:`~dphawkes_core.estimators.prepare_stats`).
    data_info : dict
        Their binning diagnostics (``n_bins``, ``window_stated``, …).
    config : FitConfig
        The chosen fit; Δ, p, C, δ, calibration and seed are kept.
    epsilon : float
        Target ε of every private fit.
    reference : numpy.ndarray
        ``(d, dp+1)`` truth, or the non-private estimate when there is no truth.
    public : mapping
        Public option values for every family (B, r, G, K), used where ``config``'s family does not read them.
    methods : iterable of str, optional
        Methods to run (default: every registered one; the chosen one is normally left out: its row is
        :func:`method_row`).
    include_slow : bool
        Run methods whose predicted cost exceeds :data:`COMPARISON_BUDGET_S` too.
    data_derived : iterable of str
        Settings taken from the data (see :func:`~dphawkes_core.privacy.formal_status`). A count cap that
        ``config`` chose automatically is not one of them: it was released privately, and each row notes it.
    fitter : callable
        ``fitter(stats, config) -> FitResult``; on private data, a release through the privacy ledger
        (:func:`~dphawkes_core.session.ledger_fitter`: each formal method spends budget, a refusal is a row's note).
    released : bool
        ``fitter`` releases through a privacy session, so a row with formal settings is a formal release.

    Returns
    -------
    tuple of MethodRow
        In the order of ``methods``.
    """
    cap_note = ""
    if config.count_cap == AUTO:  # the others are clipped at the C DP-SSP chose (and released) privately
        config = replace(config, count_cap=stats.count_cap, count_cap_share=AUTO_CAP_SHARE, count_cap_max=AUTO_CAP_MAX)
        cap_note = f"C = {stats.count_cap} from DP-SSP's private choice, whose ε share that fit spent"
    pieces = getattr(stats, "pieces", None)  # the gradient's structured product needs them (its cost: S sequences)
    sequences = None if pieces is None else int(pieces.n_bins.size)
    rows = []
    for method in method_names() if methods is None else methods:
        try:
            other = method_config(config, method, epsilon, public)
        except DPHawkesError as exc:
            rows.append(_not_run(method, f"not run: {exc}"))
            continue
        cost = estimate_fit_cost(data_info["n_bins"], stats.dim, stats.lags, other.family.cost_kind,
                                 iterations(other), n_events=data_info["n_events"], sequences=sequences)
        if not include_slow and cost.seconds > COMPARISON_BUDGET_S:
            rows.append(_not_run(method, f"skipped: predicted to take {cost.seconds:.2g} s"))
            continue
        try:
            result = fitter(stats, other)
        except DPHawkesError as exc:
            rows.append(_not_run(method, f"not run: {exc}"))
            continue
        note = cap_note if result.privacy is not None else ""  # a non-private fit has no ε for C to add to
        rows.append(replace(method_row(result, other, reference, data_info, data_derived, released), note=note))
    return tuple(rows)


def _not_run(method: str, note: str) -> MethodRow:
    return MethodRow(method, math.nan, math.nan, None, note)
