"""The contract every registered estimator family must pass (in the spirit of scikit-learn's
``parametrize_with_checks``): it runs on whatever is in the registry, the toy family of
``test_toy_family.py`` included when it is registered.

References here are independent of the package all the way down: counts are integer arrays written in the
test, Z is laid out with plain loops, and each noiseless limit is a dense loop written from the paper.

A family that fits exact event times (``family.statistics == "events"``: the grid-free one) is given events
laid in the same bins (:func:`events_from_counts`), its noiseless limit is the continuous-time least squares
written here from its definition (:func:`continuous_least_squares`), and its sensitivity is measured on the
adversarial events it documents (``family.worst_case_events``) through its own statistics."""

from __future__ import annotations

import numpy as np
import pytest

from dphawkes_core.statistics.binning import BinnedCounts
from dphawkes_core.errors import ConfigError
from dphawkes_core.data.io import from_arrays
from dphawkes_core.estimators import (FAMILIES, FitConfig, binned_stats, fit_stats, get_family, method_names,
                                      privacy_report, release_status)
from dphawkes_cli.main import _fit_config, build_parser

FAMILY_NAMES = method_names()
PRIVATE = [name for name in FAMILY_NAMES if get_family(name).private]
GRID = [(1, 6, 2), (1, 5, 3), (2, 3, 3), (1, 1, 1), (3, 4, 2)]  # (d, p, C) of the all-at-cap neighbour pairs


def dense_design(counts: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """``Z`` (rows ``[X_{t-1} … X_{t-p}, 1]``, lag-major) and ``Y`` (rows ``X_t``) for t = p … n−1, by loops."""
    n, d = counts.shape
    rows, targets = [], []
    for t in range(lags, n):
        z = []
        for k in range(1, lags + 1):
            z.extend(counts[t - k])
        rows.append(z + [1.0])
        targets.append(counts[t])
    return np.array(rows, dtype=float).T, np.array(targets, dtype=float).T


def dense_stats(counts: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    Z, Y = dense_design(counts, lags)
    N = Z.shape[1]
    return Z @ Z.T / N, Y @ Z.T / N


def config_for(name: str, lags: int, **shared) -> FitConfig:
    family = get_family(name)
    options = dict(family.worst_case_options) if family.private else {}
    private = dict(calibration="formal", count_cap=shared.pop("count_cap", 2), sigma2=shared.pop("sigma2", 1.0)) \
        if family.private else {}
    return FitConfig(method=name, bin_size=1.0, lags=family.worst_case_lags or lags, **private, **options, **shared)


def sample_counts(d: int, n: int = 60, cap: int = 3, seed: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, cap + 1, size=(n, d))


def binned(counts: np.ndarray, cap: int | None = None) -> BinnedCounts:
    return BinnedCounts((np.asarray(counts, dtype=np.int64),), 1.0, 0, 0, cap)


# --- noiseless limits, written from the paper ------------------------------------------------------------

def least_squares(A, b, config):
    return np.linalg.solve(A, b.T).T


def projected_gradient(A, b, config):
    U = np.zeros_like(b)
    for _ in range(config.iters):
        U = U - config.step_size * (U @ A - b) @ A
        norm = np.linalg.norm(U)
        if norm > config.bin_size * config.bound:
            U = U * (config.bin_size * config.bound / norm)
    return U


def frank_wolfe(A, b, config):
    U = np.zeros_like(b)
    mu = 1.0 / (config.iters + 2)
    for _ in range(config.iters):
        G = (U @ A - b) @ A
        u, s, vt = np.linalg.svd(G)
        U = (1 - mu) * U + mu * (-config.radius * np.outer(u[:, 0], vt[0]))
    return U


def clipped_gradient(A, b, config):  # nothing clipped: gradient of the per-bin loss Σ||y − Uz||²/(2N) = UA − b
    U = np.zeros_like(b)
    for _ in range(config.iters):
        U = U - config.step_size * (U @ A - b)
        norm = np.linalg.norm(U)
        if norm > config.bin_size * config.bound:
            U = U * (config.bin_size * config.bound / norm)
    return U


def events_from_counts(counts: np.ndarray) -> list[np.ndarray]:
    """Per dimension, the c events of bin k (width 1) at ``k + (i+1)/(c+1)``, i = 0 … c−1."""
    n, d = counts.shape
    return [np.array([k + (i + 1) / (c + 1) for k in range(n) for c in [int(counts[k, j])] for i in range(c)])
            for j in range(d)]


def continuous_least_squares(times: list[np.ndarray], end: float, lags: int) -> np.ndarray:
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


def maximum_likelihood(times: list[np.ndarray], end: float, lags: int) -> np.ndarray:
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


LIMITS = {"least squares": least_squares, "projected gradient": projected_gradient, "frank-wolfe": frank_wolfe,
          "clipped gradient": clipped_gradient}
LIMIT_OPTIONS = {  # public settings under which the limit is informative (not stuck at the constraint)
    "least squares": {}, "projected gradient": dict(bound=50.0, iters=40, step="constant", step_size=0.02),
    "frank-wolfe": dict(radius=5.0, iters=30), "clipped gradient": dict(bound=50.0, iters=40, step="constant",
                                                                        step_size=0.2),
    "continuous least squares": {}, "maximum likelihood": dict(mle_tol=1e-13, mle_max_iter=100000),
}
EVENT_LIMITS = {"continuous least squares": continuous_least_squares, "maximum likelihood": maximum_likelihood}
LIMIT_RTOL = {"maximum likelihood": 1e-6}  # an optimum found by two optimisers: equal to this share of its largest


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_with_no_noise_it_equals_its_declared_noiseless_limit(name):
    family = get_family(name)
    counts = sample_counts(2)
    lags = 2
    options = {**LIMIT_OPTIONS[family.noiseless_limit], **family.noiseless_options}
    shared = dict(calibration="formal", count_cap=3, sigma2=0.0) if family.private else {}
    config = FitConfig(method=name, bin_size=1.0, lags=lags, seed=0, **shared, **options)
    if family.statistics != "binned":  # exact event times, laid in the same bins
        times = events_from_counts(counts)
        result = fit_stats(family.prepare_stats(from_arrays(times, end_time=len(counts)), config)[0], config)
        expected = EVENT_LIMITS[family.noiseless_limit](times, len(counts), lags)
    else:
        result = fit_stats(binned_stats(binned(counts, 3), lags), config)
        A, b = dense_stats(counts, lags)
        expected = LIMITS[family.noiseless_limit](A, b, config)
    rtol = LIMIT_RTOL.get(family.noiseless_limit, 1e-10)
    assert np.allclose(result.H * config.bin_size, expected, rtol=rtol, atol=rtol * 1e-2 * np.abs(expected).max())


@pytest.mark.parametrize("name", PRIVATE)
def test_measured_sensitivity_stays_under_the_bound_and_reaches_the_documented_fraction(name):
    family = get_family(name)
    fractions = []
    for d, p, cap in GRID:
        config = config_for(name, p, count_cap=cap)
        lags = config.lags
        if hasattr(family, "worst_case_events"):  # exact event times: the adversarial events it documents
            s_d, s_n = (family.prepare_stats(events, config)[0] for events in family.worst_case_events(config, d))
        else:
            at_cap = np.full((40, d), cap, dtype=np.int64)
            fewer = at_cap.copy()
            if family.per_bin:  # the largest turn of a clipped per-bin term: an empty bin gets its first event
                at_cap[20, 0], fewer[20, 0] = 1, 0
            else:
                fewer[20, 0] = cap - 1
            s_d, s_n = binned_stats(binned(fewer, cap), lags), binned_stats(binned(at_cap, cap), lags)
        bound = privacy_report(s_d, config).sensitivity
        assert privacy_report(s_n, config).sensitivity == pytest.approx(bound, rel=1e-12)  # a public number
        moved = np.linalg.norm(family.release_vector(s_n, config) - family.release_vector(s_d, config))
        assert moved <= bound * (1 + 1e-9), (d, lags, cap)
        fractions.append(moved / bound)
    assert max(fractions) >= family.sensitivity_fraction, fractions


@pytest.mark.parametrize("name", PRIVATE)
def test_a_seeded_fit_is_not_formal_and_an_unseeded_release_is(name):
    config = config_for(name, 2, count_cap=2)
    info = {"window_stated": True, "dimensions_declared": True, "sequences_declared": True}
    assert release_status(config, info, released=True).formal
    unreleased = release_status(config, info)  # only a privacy session's release is formal
    assert not unreleased.formal and unreleased.settings_formal
    seeded = release_status(FitConfig(**{**config.to_dict(), "seed": 7}), info, released=True)
    assert not seeded.formal and any("seed" in reason for reason in seeded.reasons)


def _other_options() -> list[tuple[str, str]]:
    pairs = []
    for name in FAMILY_NAMES:
        family = get_family(name)
        others = {s.name for f in FAMILIES.values() for s in f.settings} - {s.name for s in family.settings}
        pairs.extend((name, option) for option in sorted(others))
    return pairs


@pytest.mark.parametrize("name,option", _other_options())
def test_options_it_does_not_read_are_refused(name, option):
    setting = next(s for f in FAMILIES.values() for s in f.settings if s.name == option)
    value = setting.choices[-1] if setting.kind == "choice" else (not setting.default if setting.kind == "bool"
                                                                    else 2)
    base = config_for(name, 2).to_dict()
    with pytest.raises(ConfigError, match=f"does not read {option}"):
        FitConfig(**{**base, option: value})


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_its_options_round_trip_through_to_dict_and_never_carry_another_familys(name):
    config = config_for(name, 2)
    assert FitConfig(**config.to_dict()) == config
    own = {s.name for s in get_family(name).settings}
    others = {s.name for f in FAMILIES.values() for s in f.settings} - own
    assert not others & set(config.to_dict())


def _non_default(setting):
    if setting.kind == "choice":
        return next(c for c in setting.choices if c != setting.default)
    if setting.kind == "bool":
        return not setting.default
    base = setting.default if setting.default is not None else (setting.minimum or 0) + 1
    value = base + (setting.step or 1)
    return int(value) if setting.kind == "int" else float(value)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_its_settings_build_a_cli_that_sets_every_option(name, tmp_path):
    family = get_family(name)
    argv = ["fit", "x.csv", "--bin-size", "1", "--lags", "2", "--method", name]
    if family.private:
        argv += ["--sigma2", "1", "--calibration", family.calibrations[0], "--count-cap", "2"]
    expected = {}
    for setting in family.settings:
        value = _non_default(setting)
        if setting.name == "step":  # a constant step needs its size (given below)
            value = "constant"
        expected[setting.name] = value
        if setting.kind == "bool":
            if value != setting.default and (setting.cli_negates or value):
                argv.append(setting.flag)
        else:
            argv += [setting.flag, str(value)]
    config = _fit_config(build_parser().parse_args(argv))
    assert config.method == name
    for option, value in expected.items():
        assert getattr(config, option) == value, option


def test_the_method_choice_lists_every_registered_family():
    fit = next(a for a in build_parser()._subparsers._group_actions[0].choices["fit"]._actions if a.dest == "method")
    assert tuple(fit.choices) == FAMILY_NAMES


def test_selection_settings_go_with_their_automatic_selection():
    """The share and range of an automatic C (or G) are refused beside a public C (or G): they would be carried
    in a config without being read, and a config must round-trip through to_dict."""
    with pytest.raises(ConfigError, match="go with count_cap='auto'"):
        FitConfig(method="ssp", count_cap=3, count_cap_share=0.2, epsilon=1.0, calibration="formal")
    with pytest.raises(ConfigError, match="goes with sequence_clip='auto'"):
        FitConfig(method="ssp", count_cap=3, epsilon=1.0, calibration="formal", privacy_unit="sequence",
                  max_events=10, sequence_clip_share=0.2)
    auto = FitConfig(method="ssp", count_cap="auto", count_cap_share=0.2, epsilon=1.0, calibration="formal")
    assert FitConfig(**auto.to_dict()) == auto
