"""The same fit with the other methods at the same ε: one row per method, for the app's comparison table.

The chosen fit stays as it is; every other method is run on the same statistics when it fits the same kind
(``Family.inputs.statistics``: the binned moments), else on its own statistics of the same events (the exact-time
family beside the binned ones) — same Δ, p, count cap C and data — at the same target ε and δ, with the same
calibration when the method has it (the formal-only families get the formal one) and its public settings (B,
r, G, K) from a reference config — the preset's. With an automatic count cap, the others are clipped at the C
the chosen fit chose: that C was itself released privately (its share of the chosen fit's ε), so using it is
post-processing and each other fit still spends only its own ε — the row says where its C came from. With a
known process, each row also has the grid-free kernel error (the estimate's steps against the kernel
functions: the metric on which binned and exact-time estimates compare) and :func:`best_formal` names the
formal method measured best on it. Each row says whether the
release is a formal guarantee and, if not, why
(:func:`~dphawkes_core.estimators.release_status`), or why the method was not run (a missing public
setting, or a predicted cost over the budget unless slow methods are asked for).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from dphawkes_core.data.io import Events
from dphawkes_core.data.kernels import Scenario
from dphawkes_core.errors import ConfigError, DPHawkesError
from dphawkes_core.estimators import (
    FitConfig,
    FitResult,
    fit_stats,
    get_family,
    iterations,
    method_names,
    prepare_stats,
    release_status,
)
from dphawkes_core.estimators.cost import estimate_fit_cost
from dphawkes_core.evaluation.lag_average import fit_steps
from dphawkes_core.evaluation.metrics import compare, kernel_function_error
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.formal_words import render_reasons, would_be_sentence
from dphawkes_core.privacy.report import NOT_RELEASED, SEEDED_NOISE, FormalStatus

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
    function_error : float
        Grid-free relative L2 error of the kernels against the process's kernel functions over [0, s]
        (:func:`~dphawkes_core.evaluation.metrics.kernel_function_error`); NaN without a known process or when not run.
    """

    method: str
    relative_error: float
    epsilon: float
    status: FormalStatus | None
    note: str = ""
    function_error: float = math.nan

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

    def formal_column(self, private_data: bool, surface: str = "app") -> str:
        """The comparison's formal column for ``surface``: on private data, whether the row is a formal release
        and why not (its reasons with that surface's advice); on public or simulated data, where nothing is
        released, what a release with the row's settings would be on private data
        (:func:`~dphawkes_core.privacy.formal_words.would_be_sentence`); else why the method was not run."""
        if not self.ran:
            return self.note
        if private_data:
            verdict = "yes" if self.status.formal else "no: " + "; ".join(render_reasons(self.status.reasons,
                                                                                         surface))
        else:
            verdict = would_be_sentence(self.status, surface)
        return f"{verdict} ({self.note})" if self.note else verdict


def comparison_epsilon(config: FitConfig, result: FitResult, fallback: float | None = None) -> float | None:
    """The ε the other methods are run at: the chosen fit's target ε, else the ε its σ² bought, else
    ``fallback`` (e.g. when the chosen method is the non-private one); ``None`` when none is finite."""
    for value in (config.epsilon, result.privacy.epsilon if result.privacy is not None else None, fallback):
        if value is not None and math.isfinite(value) and value > 0:
            return float(value)
    return None


def method_row(result: FitResult, config: FitConfig, reference: np.ndarray, data_info: dict,
               data_derived=(), released: bool = False, scenario: Scenario | None = None) -> MethodRow:
    """The comparison row of a finished fit (``released``: it was released through a privacy session; with
    ``scenario``, the grid-free kernel error against its kernel functions over [0, s], s = pΔ)."""
    epsilon = math.inf if result.privacy is None else float(result.privacy.epsilon)
    function_error = math.nan if scenario is None else kernel_function_error(fit_steps(result), scenario)
    return MethodRow(result.method, compare(result.H, reference).relative_error, epsilon,
                     release_status(config, data_info, data_derived, released=released), function_error=function_error)


ZERO_LIKE = 0.95  # an error at least this fraction of the all-zero estimate's (1) is no better than zero


def best_formal(rows) -> MethodRow | None:
    """The row of the formal method with the lowest grid-free kernel error among those that ran with formal
    settings — nothing missing but a release through a session with fresh noise — and do better than the
    all-zero estimate on both errors (below :data:`ZERO_LIKE`); ``None`` without such rows or errors: what the
    comparison says is measured best here, never an estimate no better than zero."""
    measured = [r for r in rows if r.ran and get_family(r.method).privacy.private and math.isfinite(r.function_error)
                and set(r.status.reasons) <= {NOT_RELEASED, SEEDED_NOISE}
                and r.function_error < ZERO_LIKE and r.relative_error < ZERO_LIKE]
    return min(measured, key=lambda r: r.function_error, default=None)


def best_reference(rows) -> MethodRow | None:
    """The row of the non-private method with the lowest grid-free kernel error (``None`` without such rows or
    errors): the reference no private estimate on these data is expected to beat."""
    measured = [r for r in rows
                if r.ran and not get_family(r.method).privacy.private and math.isfinite(r.function_error)]
    return min(measured, key=lambda r: r.function_error, default=None)


def compare_methods(stats, data_info: dict, config: FitConfig, epsilon: float, reference: np.ndarray,
                    public: Mapping, methods=None, include_slow: bool = False,
                    data_derived=(), fitter=fit_stats, released: bool = False, events: Events | None = None,
                    scenario: Scenario | None = None) -> tuple[MethodRow, ...]:
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
        Settings taken from the data (see :func:`~dphawkes_core.privacy.report.formal_status`). A count cap that
        ``config`` chose automatically is not one of them: it was released privately, and each row notes it.
    fitter : callable
        ``fitter(stats, config) -> FitResult``; on private data, a release through the privacy ledger
        (:func:`~dphawkes_core.release.session.ledger_fitter`: each formal method spends budget, a refusal is a row's
        note).
    released : bool
        ``fitter`` releases through a privacy session, so a row with formal settings is a formal release.
    events : Events, optional
        The events ``stats`` were computed from: a family fitting another kind of statistics than the chosen one
        (``Family.inputs.statistics``) gets its own from them (without them its row says it was not run).
    scenario : Scenario, optional
        The process the events came from: each row then has its grid-free kernel error.

    Returns
    -------
    tuple of MethodRow
        In the order of ``methods``.
    """
    cap_note = ""
    if config.count_cap == AUTO:  # the others are clipped at the C the chosen fit chose (and released) privately
        chosen_cap = data_info["count_cap"]
        cap_note = f"C = {chosen_cap} from {config.family.label}'s private choice, whose ε share that fit spent"
        config = config.with_selection(count_cap=chosen_cap)
    pieces = getattr(stats, "pieces", None)  # the gradient's structured product needs them (its cost: S sequences)
    sequences = None if pieces is None else int(pieces.n_bins.size)
    own = {_kind(config): stats}  # statistics by kind: the chosen fit's, and any other family's own
    rows = []
    for method in method_names() if methods is None else methods:
        try:
            other = config.for_method(method, epsilon, dict(public))
            other_stats = _statistics_for(other, own, events)
        except DPHawkesError as exc:
            rows.append(_not_run(method, f"not run: {exc}"))
            continue
        cost = estimate_fit_cost(data_info["n_bins"], stats.dim, stats.lags, other.family.cost.kind,
                                 iterations(other), n_events=data_info["n_events"], sequences=sequences)
        if not include_slow and cost.seconds > COMPARISON_BUDGET_S:
            rows.append(_not_run(method, f"skipped: predicted to take {cost.seconds:.2g} s"))
            continue
        try:
            result = fitter(other_stats, other)
        except DPHawkesError as exc:
            rows.append(_not_run(method, f"not run: {exc}"))
            continue
        note = cap_note if result.privacy is not None else ""  # a non-private fit has no ε for C to add to
        rows.append(replace(method_row(result, other, reference, data_info, data_derived, released, scenario),
                            note=note))
    return tuple(rows)


def _statistics_for(config: FitConfig, own: dict, events: Events | None):
    """The statistics ``config``'s family fits: the chosen fit's when of the same kind, else computed once from
    ``events`` (a ConfigError without them)."""
    kind = _kind(config)
    if kind not in own:
        if events is None:
            raise ConfigError(f"{config.family.label} fits its own statistics of the events, which were not given")
        own[kind] = prepare_stats(events, config)[0]
    return own[kind]


def _kind(config: FitConfig) -> FitConfig:
    """What statistics a config's fit reads (:meth:`~dphawkes_core.estimators.config.FitConfig.statistics_key`)."""
    return config.statistics_key()


def _not_run(method: str, note: str) -> MethodRow:
    return MethodRow(method, math.nan, math.nan, None, note)
