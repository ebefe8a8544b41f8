"""The contract every estimator family must pass, as functions a plug-in author can run outside this
repository's tests (in the spirit of scikit-learn's ``check_estimator``): :func:`check_family` runs them all.

Each check takes a :class:`~dphawkes_core.estimators.family.Family` and raises :class:`FamilyCheckError` when the
family breaks its contract:

* :func:`check_noiseless_limit` — with σ² = 0 the fit equals its declared ``noiseless_limit``, computed here by
  an independent dense reference written from the paper (counts laid out with plain loops, Z built row by row);
* :func:`check_sensitivity` — on adversarial neighbour pairs (all counts at the cap C and one count lower, or the
  family's own ``worst_case_events``) the release vector moves at most the sensitivity the family's privacy
  report states, and at least its documented ``sensitivity_fraction`` of it (the bound is not loose);
* :func:`check_neighbour_search` — the family-blind adversary
  (:mod:`~dphawkes_core.estimators.neighbour_search`): neighbours it builds without asking the family anything but
  its noised vectors (insertions, swaps, bursts over the cap, edges and ulps, ties, 0 and T, partitioned stores,
  replaced sequences) never move a noised vector by more than its stated sensitivity (the bound is not short);
* :func:`check_only_a_session_release_is_formal` — a fit outside a privacy session, or a seeded one, never
  carries the formal claim;
* :func:`check_foreign_options_refused` and :func:`check_options_round_trip` — an option another family reads is
  refused, and a config survives ``to_dict``.

The references are independent of the package all the way down: nothing here calls the package's binning, its
moments or its solvers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dphawkes_core.data.io import Events, EventSequence, from_arrays
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.binned import binned_stats
from dphawkes_core.estimators.config import FitConfig
from dphawkes_core.estimators.family import Family
from dphawkes_core.estimators.neighbour_search import Budget, search_neighbours, search_sequence_neighbours
from dphawkes_core.estimators.pipeline import fit_stats, prepare_stats, privacy_report, release_status
from dphawkes_core.estimators.registry import FAMILIES
from dphawkes_core.statistics.binning import BinnedCounts

#: (d, p, C) of the all-at-cap neighbour pairs the sensitivity check walks.
SENSITIVITY_GRID = ((1, 6, 2), (1, 5, 3), (2, 3, 3), (1, 1, 1), (3, 4, 2))
#: Relative slack of "moves at most the bound" (round-off of a norm of ~100 numbers).
BOUND_SLACK = 1e-9
#: A fit and its noiseless limit agree to ``LIMIT_K · EPS`` of the limit's largest |entry|: the two are summed
#: in different orders (and by whichever BLAS kernel runs), and a solve, an SVD or 40 iterations mix every
#: entry, so an entry's round-off is a few EPS of the whole array's size, not of the entry. Measured at most
#: 73 (DP-CG's Frank–Wolfe; ctls 33) under the OpenBLAS kernels Prescott, Nehalem, Sandybridge, Haswell and
#: SkylakeX; 1024 leaves 14×.
LIMIT_K = 1024
#: Limits whose solve is worse conditioned, with their own k: the exponential family's three default decays give
#: nearly collinear columns of G, so its least squares amplifies round-off (measured at most 1,888 EPS of the
#: largest entry on six samples; 32768 leaves 17×).
LIMIT_K_FOR = {"exponential least squares": 32768}
EPS = float(np.finfo(float).eps)


class FamilyCheckError(AssertionError):
    """A family broke its contract; the message names the check and what was measured."""


@dataclass(frozen=True)
class CheckOutcome:
    """One check's result for one family.

    Attributes
    ----------
    check : str
        The check's name.
    passed : bool
        Ran and held.
    skipped : str
        Why it did not run (empty when it ran).
    """

    check: str
    passed: bool
    skipped: str = ""


# ---- inputs built by hand -------------------------------------------------------------------------------

def sample_counts(d: int, n: int = 60, cap: int = 3, seed: int = 4) -> np.ndarray:
    """``n × d`` integer counts in ``0 … cap``."""
    return np.random.default_rng(seed).integers(0, cap + 1, size=(n, d))


def binned(counts: np.ndarray, cap: int | None = None) -> BinnedCounts:
    """One sequence of unit-width bins holding ``counts`` as given (nothing binned by the package)."""
    return BinnedCounts((np.asarray(counts, dtype=np.int64),), 1.0, 0, 0, cap)


def events_from_counts(counts: np.ndarray) -> list[np.ndarray]:
    """Per dimension, the c events of bin k (width 1) at ``k + (i+1)/(c+1)``, i = 0 … c−1."""
    n, d = counts.shape
    return [np.array([k + (i + 1) / (c + 1) for k in range(n) for c in [int(counts[k, j])] for i in range(c)])
            for j in range(d)]


def config_for(family: Family, lags: int, **shared) -> FitConfig:
    """A formal config of ``family`` at its worst-case public options (C = 2, σ² = 1 unless given)."""
    options = dict(family.audit_hints.worst_case_options) if family.privacy.private else {}
    private = dict(calibration="formal", count_cap=shared.pop("count_cap", 2), sigma2=shared.pop("sigma2", 1.0)) \
        if family.privacy.private else {}
    return FitConfig(method=family.name, bin_size=1.0, lags=family.audit_hints.worst_case_lags or lags, **private,
                     **options, **shared)


# ---- noiseless limits, written from the paper -----------------------------------------------------------

def dense_design(counts: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """``Z`` (rows ``[X_{t-1} … X_{t-p}, 1]``, lag-major) and ``Y`` (rows ``X_t``) for t = p … n−1, by loops."""
    n, _ = counts.shape
    rows, targets = [], []
    for t in range(lags, n):
        z = []
        for k in range(1, lags + 1):
            z.extend(counts[t - k])
        rows.append(z + [1.0])
        targets.append(counts[t])
    return np.array(rows, dtype=float).T, np.array(targets, dtype=float).T


def dense_stats(counts: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """``A = ZZᵀ/N`` and ``b = YZᵀ/N`` from :func:`dense_design`."""
    Z, Y = dense_design(counts, lags)
    N = Z.shape[1]
    return Z @ Z.T / N, Y @ Z.T / N


def least_squares(A, b, config):
    """``U`` solving ``U A = b``."""
    return np.linalg.solve(A, b.T).T


def projected_gradient(A, b, config):
    """Algorithm 1 without noise: gradient steps on ``||UA − b||²/2``, projected on ``||U||_F ≤ ΔB``."""
    U = np.zeros_like(b)
    for _ in range(config.iters):
        U = U - config.step_size * (U @ A - b) @ A
        norm = np.linalg.norm(U)
        if norm > config.bin_size * config.bound:
            U = U * (config.bin_size * config.bound / norm)
    return U


def frank_wolfe(A, b, config):
    """Algorithm 2 without noise: Frank–Wolfe over ``||U||_* ≤ r`` with step ``1/(K+2)``."""
    U = np.zeros_like(b)
    mu = 1.0 / (config.iters + 2)
    for _ in range(config.iters):
        G = (U @ A - b) @ A
        u, _, vt = np.linalg.svd(G)
        U = (1 - mu) * U + mu * (-config.radius * np.outer(u[:, 0], vt[0]))
    return U


def clipped_gradient(A, b, config):
    """Projected gradient on the per-bin loss ``Σ||y − Uz||²/(2N)`` (gradient ``UA − b``), nothing clipped."""
    U = np.zeros_like(b)
    for _ in range(config.iters):
        U = U - config.step_size * (U @ A - b)
        norm = np.linalg.norm(U)
        if norm > config.bin_size * config.bound:
            U = U * (config.bin_size * config.bound / norm)
    return U


def continuous_least_squares(times: list[np.ndarray], end: float, lags: int, config=None) -> np.ndarray:
    """``U = θ`` (width 1) minimising ``∫_s^T λ² − 2 Σ_{t ≥ s} λ(t)`` over step kernels, from its definition:
    ``G = ∫ φφᵀ`` exactly on the pieces between breakpoints, ``c_i = Σ φ(t_k)`` by loops, ``θ_i = G⁻¹ c_i``."""
    d = len(times)
    events = [(float(t), j) for j in range(d) for t in times[j]]

    def phi(t):
        v = np.zeros(d * lags + 1)
        v[-1] = 1.0
        for u, j in events:
            for b in range(lags):
                if b < t - u <= b + 1:
                    v[b * d + j] += 1
        return v

    points = sorted({float(lags), float(end)} | {u + b for u, _ in events for b in range(lags + 1)
                                                if lags < u + b < end})
    G = sum((t1 - t0) * np.outer(phi((t0 + t1) / 2), phi((t0 + t1) / 2)) for t0, t1 in zip(points, points[1:]))
    c = np.zeros((d, d * lags + 1))
    for t, i in events:
        if t >= lags:
            c[i] += phi(t)
    return np.linalg.solve(G, c.T).T


def exponential_least_squares(times: list[np.ndarray], end: float, lags: int, config) -> np.ndarray:
    """``U`` (width 1) of the least squares with kernels ``Σ_u a_iju β_u e^{−β_u t}`` over ``[0, T]``, from its
    definition: ``G`` and ``c`` as double sums over pairs of events (the integrals of products of exponentials
    in closed form), ``θ_i = G⁻¹ c_i``, then each kernel's integral over the lag steps ``(k, k+1]``."""
    decays = config.decays
    d, U = len(times), len(decays)
    q = d * U + 1

    def column(u, j):
        return u * d + j

    G, c = np.zeros((q, q)), np.zeros((d, q))
    G[-1, -1] = end
    for u, bu in enumerate(decays):
        for j in range(d):
            G[column(u, j), -1] = G[-1, column(u, j)] = sum(1 - np.exp(-bu * (end - s)) for s in times[j])
            for i in range(d):
                c[i, column(u, j)] = sum(bu * np.exp(-bu * (t - s)) for t in times[i] for s in times[j] if s < t)
            for v, bv in enumerate(decays):
                for k in range(d):
                    G[column(u, j), column(v, k)] = sum(
                        bu * bv * np.exp(-bu * (max(s, r) - s) - bv * (max(s, r) - r))
                        * (1 - np.exp(-(bu + bv) * (end - max(s, r)))) / (bu + bv)
                        for s in times[j] for r in times[k])
    c[:, -1] = [len(t) for t in times]
    theta = np.linalg.solve(G, c.T).T
    out = np.zeros((d, d * lags + 1))
    for i in range(d):
        for j in range(d):
            for k in range(lags):
                out[i, k * d + j] = sum(theta[i, column(u, j)] * (np.exp(-bu * k) - np.exp(-bu * (k + 1)))
                                        for u, bu in enumerate(decays))
    out[:, -1] = theta[:, -1]
    return out


def maximum_likelihood(times: list[np.ndarray], end: float, lags: int, config=None) -> np.ndarray:
    """``θ`` (width 1) maximising ``Σ_{t >= s} log λ(t) − ∫_s^T λ`` over step kernels ``a >= 0`` and ``μ > 0``,
    from its definition: each target's step counts and each step's ``∫_s^T`` by loops, then scipy's L-BFGS-B
    (an optimiser unrelated to the family's EM) on each dimension's concave problem."""
    from scipy.optimize import minimize

    d = len(times)
    events = [(float(t), j) for j in range(d) for t in times[j]]
    exposure = np.zeros(d * lags + 1)
    exposure[-1] = end - lags
    for u, j in events:
        for b in range(lags):
            exposure[b * d + j] += max(min(u + b + 1, end) - max(u + b, lags), 0.0)
    theta = np.zeros((d, d * lags + 1))
    for i in range(d):
        rows = []
        for t in times[i]:
            if t >= lags:
                x = np.zeros(d * lags + 1)
                x[-1] = 1.0
                for u, j in events:
                    for b in range(lags):
                        x[b * d + j] += b < t - u <= b + 1
                rows.append(x)
        X = np.array(rows)

        def minus_loglik(v, X=X):
            lam = X @ v
            return -np.sum(np.log(lam)) + v @ exposure, -(X.T @ (1.0 / lam)) + exposure

        start = np.append(np.full(d * lags, 0.05), len(rows) / exposure[-1])
        bounds = [(0.0, None)] * (d * lags) + [(1e-9, None)]
        theta[i] = minimize(minus_loglik, start, jac=True, method="L-BFGS-B", bounds=bounds,
                            options=dict(ftol=1e-16, gtol=1e-12, maxiter=20000)).x
    return theta


#: Binned noiseless limits by name, with the public settings under which each is informative.
LIMITS: dict[str, tuple[Callable, dict]] = {
    "least squares": (least_squares, {}),
    "projected gradient": (projected_gradient, dict(bound=50.0, iters=40, step="constant", step_size=0.02)),
    "frank-wolfe": (frank_wolfe, dict(radius=5.0, iters=30)),
    "clipped gradient": (clipped_gradient, dict(bound=50.0, iters=40, step="constant", step_size=0.2)),
}
#: The limit of a family fitted to exact event times (``family.fits_event_times``).
EVENT_TIME_LIMITS = {"continuous least squares": continuous_least_squares,
                     "exponential least squares": exponential_least_squares,
                     "maximum likelihood": maximum_likelihood}
#: Public settings under which an exact-time limit is compared (the likelihood's EM run to a tight tolerance).
EVENT_TIME_OPTIONS = {"maximum likelihood": dict(mle_tol=1e-13, mle_max_iter=100000)}
#: Limits that are an optimum found by two different optimisers (the family's EM, scipy's L-BFGS-B here), each to
#: its own tolerance, not a closed form: equal to this share of the largest entry, not to round-off.
LIMIT_RTOL_FOR = {"maximum likelihood": 1e-6}


def has_reference(family: Family) -> bool:
    """Whether this module has an independent reference for the family's declared noiseless limit."""
    return family.audit_hints.noiseless_limit in (EVENT_TIME_LIMITS if family.fits_event_times else LIMITS)


# ---- the checks -----------------------------------------------------------------------------------------

def check_noiseless_limit(family: Family) -> None:
    """With σ² = 0 the fit equals the declared noiseless limit to round-off (:data:`LIMIT_K` EPS of the limit's
    largest entry), on 60 bins of 2-d counts in 0 … 3 with p = 2."""
    counts, lags = sample_counts(2), 2
    reference, options = (EVENT_TIME_LIMITS[family.audit_hints.noiseless_limit],
                          EVENT_TIME_OPTIONS.get(family.audit_hints.noiseless_limit, {})) if family.fits_event_times \
        else LIMITS[family.audit_hints.noiseless_limit]
    shared = dict(calibration="formal", count_cap=3, sigma2=0.0) if family.privacy.private else {}
    config = FitConfig(method=family.name, bin_size=1.0, lags=lags, seed=0, **shared,
                       **family.own_options({**options, **family.audit_hints.noiseless_options}))
    if family.fits_event_times:
        times = events_from_counts(counts)
        stats = family.prepare_stats(from_arrays(times, end_time=len(counts)), config)[0]
        expected = reference(times, len(counts), lags, config)
    else:
        stats = binned_stats(binned(counts, 3), lags)
        expected = reference(*dense_stats(counts, lags), config)
    got = fit_stats(stats, config).H * config.bin_size
    limit = family.audit_hints.noiseless_limit
    share = LIMIT_RTOL_FOR.get(limit, LIMIT_K_FOR.get(limit, LIMIT_K) * EPS)
    if np.abs(got - expected).max() > share * np.abs(expected).max():
        raise FamilyCheckError(f"{family.name}: with σ² = 0 the fit is not its {limit} limit "
                               f"(largest difference {np.abs(got - expected).max():.3g})")


def _neighbour_stats(family: Family, config: FitConfig, d: int, cap: int):
    """Statistics of a neighbour pair at which the family's bound binds: its own adversarial events, or every
    count at C against one count lower (for a per-bin family: an empty bin against its first event)."""
    if hasattr(family, "worst_case_events"):
        return tuple(family.prepare_stats(events, config)[0] for events in family.worst_case_events(config, d))
    at_cap = np.full((40, d), cap, dtype=np.int64)
    fewer = at_cap.copy()
    if family.inputs.per_bin:
        at_cap[20, 0], fewer[20, 0] = 1, 0
    else:
        fewer[20, 0] = cap - 1
    return binned_stats(binned(fewer, cap), config.lags), binned_stats(binned(at_cap, cap), config.lags)


def check_sensitivity(family: Family) -> None:
    """On each pair of :data:`SENSITIVITY_GRID` the release vector moves at most the stated sensitivity (which
    is the same number on both sides: a public one), and on some pair at least ``sensitivity_fraction`` of it."""
    fractions = []
    for d, p, cap in SENSITIVITY_GRID:
        config = config_for(family, p, count_cap=cap)
        s_d, s_n = _neighbour_stats(family, config, d, cap)
        bound = privacy_report(s_d, config).sensitivity
        if not np.isclose(privacy_report(s_n, config).sensitivity, bound, rtol=1e-12, atol=0.0):
            raise FamilyCheckError(f"{family.name}: the sensitivity differs between neighbours (read from data)")
        moved = float(np.linalg.norm(family.query_vector(s_n, config) - family.query_vector(s_d, config)))
        if moved > bound * (1 + BOUND_SLACK):
            raise FamilyCheckError(f"{family.name}: a neighbour pair (d={d}, p={config.lags}, C={cap}) moves the "
                                   f"release {moved:.6g}, over its bound {bound:.6g}")
        fractions.append(moved / bound)
    if max(fractions) < family.audit_hints.sensitivity_fraction:
        raise FamilyCheckError(f"{family.name}: adversarial pairs reach {max(fractions):.3f} of the bound, less "
                               f"than the documented {family.audit_hints.sensitivity_fraction}")


#: The neighbour search's budget in the contract suite (``make test``): 3 configs, 2 climbs of 25 moves, one round
#: of polish, the sequence unit's 2 configs; measured at about 25 s of CPU for the six private families together
#: (ctls the most, ~9 s). The long sweep is ``make bench``'s ``neighbour_search`` target.
SEARCH_BUDGET = Budget(configs=3, starts=2, steps=25, polish=1, sequence_configs=2, sequence_steps=15)


def check_neighbour_search(family: Family, budget: Budget = SEARCH_BUDGET) -> None:
    """No neighbouring pair the family-blind search builds (:func:`~dphawkes_core.estimators.neighbour_search.
    search_neighbours`, and :func:`~dphawkes_core.estimators.neighbour_search.search_sequence_neighbours` for a
    family with the sequence unit) moves any vector the family adds noise to by more than the sensitivity it
    states for it (``1 + BOUND_SLACK``), nor gives a sensitivity that differs between the two data sets; and the
    search measured something (a family that refuses every config drawn fails)."""
    reports = [search_neighbours(family, budget)]
    if "sequence" in family.privacy.units:
        reports.append(search_sequence_neighbours(family, budget))
    for report in reports:
        worst = report.worst
        if worst is not None and worst.ratio > 1 + BOUND_SLACK:
            raise FamilyCheckError(f"{family.name}: the neighbour search found neighbours that move a noised vector "
                                   f"past its stated sensitivity: {worst.describe()}")
    if not reports[0].findings:
        raise FamilyCheckError(f"{family.name}: the neighbour search measured nothing (every config refused: "
                               f"{'; '.join(reports[0].skipped)[:300]})")


def sequence_neighbours(rng: np.random.Generator) -> tuple[Events, Events]:
    """Replace-one neighbours of the sequence unit at which √2·G binds: six 2-d sequences on [0, 60], the last a
    burst of 20 events in dimension 0, replaced by the same burst in dimension 1. Every released number names
    its dimensions, so the two bursts' vectors have disjoint supports: clipped at a G below both norms, they are
    √2·G apart."""
    def burst(dim: int) -> EventSequence:
        return EventSequence(tuple(1.0 + 0.05 * np.arange(20) if j == dim else np.empty(0) for j in range(2)), 60.0)

    others = tuple(EventSequence(tuple(np.sort(rng.uniform(0, 60, rng.integers(2, 12))) for _ in range(2)), 60.0)
                   for _ in range(5))
    return (Events(others + (burst(0),), ("0", "1"), window_stated=True),
            Events(others + (burst(1),), ("0", "1"), window_stated=True))


def check_sequence_sensitivity(family: Family) -> None:
    """The sequence unit (replace one sequence): the release vector of :func:`sequence_neighbours` moves at most
    the stated sensitivity (the same on both sides) and at least 0.99 of it, at a G that clips the bursts."""
    config = config_for(family, 2, count_cap=None, privacy_unit="sequence", sequence_clip=1e-3)
    stats_d, stats_n = (prepare_stats(events, config)[0] for events in sequence_neighbours(np.random.default_rng(0)))
    bound = privacy_report(stats_d, config).sensitivity
    if not np.isclose(privacy_report(stats_n, config).sensitivity, bound, rtol=1e-12, atol=0.0):
        raise FamilyCheckError(f"{family.name}: the sequence unit's sensitivity differs between neighbours")
    moved = float(np.linalg.norm(family.query_vector(stats_n, config) - family.query_vector(stats_d, config)))
    if not 0.99 * bound <= moved <= bound * (1 + BOUND_SLACK):
        raise FamilyCheckError(f"{family.name}: replacing a sequence moves the release {moved:.6g}, its bound is "
                               f"{bound:.6g} (expected 0.99 to 1 of it)")


def check_only_a_session_release_is_formal(family: Family) -> None:
    """Formal settings are formal only when released by a session, and never with a seed."""
    config = config_for(family, 2, count_cap=2)
    info = {"window_stated": True, "dimensions_declared": True, "sequences_declared": True}
    if not release_status(config, info, released=True).formal:
        raise FamilyCheckError(f"{family.name}: an unseeded session release of formal settings is not formal")
    unreleased = release_status(config, info)
    if unreleased.formal or not unreleased.settings_formal:
        raise FamilyCheckError(f"{family.name}: a fit outside a privacy session carries the formal claim")
    seeded = release_status(config.with_changes(seed=7), info, released=True)
    if seeded.formal or not any("seed" in reason for reason in seeded.reasons):
        raise FamilyCheckError(f"{family.name}: a seeded fit is labelled formal (or the reason omits the seed)")


def foreign_options(family: Family) -> list[str]:
    """Options that other registered families read and this one does not."""
    others = {s.name for f in FAMILIES.values() for s in f.settings} - {s.name for s in family.settings}
    return sorted(others)


def check_foreign_options_refused(family: Family) -> None:
    """A config of this family with another family's option is refused, naming the option."""
    base = config_for(family, 2)
    for option in foreign_options(family):
        setting = next(s for f in FAMILIES.values() for s in f.settings if s.name == option)
        value = setting.choices[-1] if setting.kind == "choice" else (not setting.default if setting.kind == "bool"
                                                                        else 2)
        try:
            base.with_changes(**{option: value})
        except ConfigError as error:
            if f"does not read {option}" not in str(error):
                raise FamilyCheckError(f"{family.name}: refusing {option} does not name it: {error}") from error
        else:
            raise FamilyCheckError(f"{family.name}: accepts {option}, which it does not read")


def check_options_round_trip(family: Family) -> None:
    """A config rebuilt from :meth:`~FitConfig.to_dict` (``with_changes``) is equal, and ``to_dict`` holds no other
    family's option."""
    config = config_for(family, 2)
    if config.with_changes(seed=config.seed) != config:
        raise FamilyCheckError(f"{family.name}: a config does not survive to_dict")
    if set(foreign_options(family)) & set(config.to_dict()):
        raise FamilyCheckError(f"{family.name}: to_dict carries another family's option")


#: Every check, by name, in the order :func:`check_family` runs them.
CHECKS: dict[str, Callable[[Family], None]] = {
    "noiseless limit": check_noiseless_limit,
    "sensitivity": check_sensitivity,
    "neighbour search": check_neighbour_search,
    "sequence-unit sensitivity": check_sequence_sensitivity,
    "only a session release is formal": check_only_a_session_release_is_formal,
    "foreign options refused": check_foreign_options_refused,
    "options round trip": check_options_round_trip,
}


def skip_reason(family: Family, check: str) -> str:
    """Why ``check`` does not apply to ``family`` (empty when it does)."""
    if check == "noiseless limit" and not has_reference(family):
        return f"no independent reference here for the noiseless limit {family.audit_hints.noiseless_limit!r}"
    if check in ("sensitivity", "neighbour search", "sequence-unit sensitivity", "only a session release is formal") \
            and not family.privacy.private:
        return "not private: nothing released"
    if check == "sequence-unit sensitivity" and "sequence" not in family.privacy.units:
        return "no sequence unit"
    return ""


def check_family(family: Family) -> list[CheckOutcome]:
    """Run every check of :data:`CHECKS` that applies to ``family``.

    Parameters
    ----------
    family : Family
        A family instance; it must be registered (``register``) for the config-level checks.

    Returns
    -------
    list of CheckOutcome
        One per check: passed, or skipped with the reason.

    Raises
    ------
    FamilyCheckError
        At the first check the family fails.
    """
    outcomes = []
    for name, check in CHECKS.items():
        reason = skip_reason(family, name)
        if not reason:
            check(family)
        outcomes.append(CheckOutcome(name, passed=not reason, skipped=reason))
    return outcomes
