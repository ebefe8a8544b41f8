"""The noise source (``dphawkes_core/privacy/noise.py``): a seeded source is numpy's generator bit for bit, an unseeded
one is a CSPRNG that cannot be replayed, with OpenDP's exact discrete Gaussian for integer releases; the discrete
Gaussian is accounted in zCDP, checked against OpenDP's own privacy map and conversion and against
dp-accounting's RDP accountant; a formal DP-SSP release through the privacy session draws it and spends what
was planned."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

import dphawkes_core.privacy.noise as noise
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.estimators import FitConfig, fit_stats, prepare_stats, privacy_report
from dphawkes_core.estimators.ssp import release_pieces
from dphawkes_core.privacy.accounting import discrete_gaussian_rho, zcdp_epsilon, zcdp_rho
from dphawkes_core.privacy.calibration import compose_count_cap, gaussian_epsilon, gaussian_sigma
from dphawkes_core.privacy.count_cap import cap_rng
from dphawkes_core.privacy.noise import SecureNoise, SeededNoise, noise_source
from dphawkes_core.privacy.sequence import clip_rng
from dphawkes_core.privacy.unit_conversion import unit_conversion
from dphawkes_core.release.ledger import Mechanism, compose_epsilon
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.session import PrivacySession

DELTA = 1e-5


@pytest.fixture(scope="module")
def events():
    data = simulate(get_scenario("paper-2d"), n_events=2000, seed=7)
    return dataclasses.replace(data, window_stated=True, dimensions_declared=True, sequences_declared=True)


def _discrete_measurement(sigma: float):
    """OpenDP's discrete Gaussian mechanism, built here independently of ``noise.py``."""
    from opendp.domains import atom_domain, vector_domain
    from opendp.measurements import make_gaussian
    from opendp.metrics import l2_distance
    from opendp.mod import enable_features

    enable_features("contrib")
    return make_gaussian(vector_domain(atom_domain(T="i64")), l2_distance(T="i64"), scale=sigma)


# ---- the seeded source: numpy's draws, bit for bit --------------------------------------------------------------

def test_a_seeded_source_is_numpys_generator_in_the_same_order():
    source, reference = noise_source(11), np.random.default_rng(11)
    for shape in ((3, 4), 5, (2, 2, 2), (0,)):
        assert np.array_equal(source.standard_normal(shape), reference.standard_normal(shape))
    assert isinstance(noise_source(11, discrete=True), SeededNoise)  # a seed never draws the discrete Gaussian
    assert not noise_source(11, discrete=True).discrete
    wrapped = noise.as_source(np.random.default_rng(4))
    assert np.array_equal(wrapped.standard_normal(6), np.random.default_rng(4).standard_normal(6))


def test_the_selection_streams_of_a_seeded_fit_are_unchanged():
    assert np.array_equal(cap_rng(3).standard_normal(64), np.random.default_rng((3, 0xCA9)).standard_normal(64))
    assert np.array_equal(cap_rng(3, discrete=True).standard_normal(8),
                          np.random.default_rng((3, 0xCA9)).standard_normal(8))
    assert np.array_equal(clip_rng(3).standard_normal(13), np.random.default_rng((3, 0x5E9C)).standard_normal(13))


@pytest.mark.parametrize("method, options", [
    ("ssp", dict(count_cap=3)), ("ssp", dict(count_cap=3, ssp_release="full")), ("ssp", dict(count_cap="auto")),
    ("pgd", dict(count_cap=3, bound=1.0, iters=20)), ("cg", dict(count_cap=3, radius=0.5, iters=20)),
    ("pgd-clip", dict(bound=1.0, clip=2.0, iters=20)),
])
def test_a_seeded_fit_draws_exactly_what_numpy_drew_before(events, method, options):
    """``run_private`` with a seed gives the family's fit on ``numpy.random.default_rng(seed)`` itself, bit for bit
    (the generator and the call order are today's), calibrated as before (continuous Gaussian)."""
    config = FitConfig(method=method, bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", seed=21, **options)
    stats, _ = prepare_stats(events, config)
    result = fit_stats(stats, config)
    report = privacy_report(stats, config)
    assert not report.discrete and not result.privacy.discrete
    U, _, _ = config.family.run(stats, config, report, np.random.default_rng(21))
    assert np.array_equal(result.H, U / config.bin_size)


# ---- the unseeded source: a CSPRNG ------------------------------------------------------------------------------

def test_an_unseeded_source_cannot_be_seeded_and_never_repeats():
    with pytest.raises(TypeError):
        SecureNoise(seed=1)  # type: ignore[call-arg]
    with pytest.raises(Exception, match="needs a seed"):
        SeededNoise(None)
    source = noise_source(None)
    assert isinstance(source, SecureNoise) and not source.seeded and not source.discrete
    first, second = source.standard_normal(1000), source.standard_normal(1000)
    assert not np.array_equal(first, second)
    assert not np.array_equal(noise_source(None).standard_normal(1000), noise_source(None).standard_normal(1000))
    values = np.arange(200)
    assert not np.array_equal(SecureNoise(True).discrete_gaussian(values, 5.0),
                              SecureNoise(True).discrete_gaussian(values, 5.0))


def test_the_csprng_normals_are_standard_normal():
    x = SecureNoise().standard_normal((400, 500))
    assert x.shape == (400, 500) and x.dtype == np.float64
    n = x.size
    assert abs(x.mean()) < 6 / math.sqrt(n)
    assert abs(x.var() - 1.0) < 6 * math.sqrt(2.0 / n)
    assert scipy_stats.kstest(x.ravel(), "norm").pvalue > 1e-6
    assert np.abs(x).max() < 9.4  # 63-bit uniforms: the tails stop at Φ⁻¹(2⁻⁶⁵)


SAMPLERS = {"release": lambda: SecureNoise(discrete=True),  # OpenDP's exact sampler
            "audit": lambda: SeededNoise(11, discrete=True)}  # the seeded CKS sampler the audit runs the release with


@pytest.mark.parametrize("sampler", list(SAMPLERS))
@pytest.mark.parametrize("sigma", [0.7, 3.0, 40.0])
def test_the_discrete_gaussian_has_the_right_law(sigma, sampler):
    """Integer noise with the variance of N_Z(0, σ²) (computed from its probability mass function; below σ² for
    small σ) and, for σ = 0.7 and 3, the mass function itself (chi-square): the release's sampler and the audit's
    seeded one (a rounded continuous Gaussian, variance σ² + 1/12, fails at σ = 0.7)."""
    n = 20000
    values = np.full(n, 1000, dtype=np.int64)
    noisy = SAMPLERS[sampler]().discrete_gaussian(values, sigma)
    assert noisy.dtype == np.int64 and noisy.shape == (n,)
    y = noisy - 1000
    support = np.arange(-int(12 * sigma) - 3, int(12 * sigma) + 4)
    mass = np.exp(-support.astype(float) ** 2 / (2 * sigma**2))
    mass /= mass.sum()
    variance = float(np.sum(mass * support**2))
    assert abs(y.mean()) < 6 * math.sqrt(variance / n)
    assert abs(y.var() - variance) < 6 * variance * math.sqrt(2.0 / n)  # var of the sample variance ≈ 2v²/n
    if sigma < 10:
        keep = mass * n >= 5
        observed = np.array([np.sum(y == k) for k in support[keep]], float)
        expected = mass[keep] * n
        observed, expected = np.append(observed, n - observed.sum()), np.append(expected, n - expected.sum())
        if expected[-1] < 5:
            observed, expected = observed[:-1], expected[:-1]
            expected *= observed.sum() / expected.sum()
        assert scipy_stats.chisquare(observed, expected).pvalue > 1e-6


def test_the_audits_seeded_discrete_gaussian_repeats_with_its_seed_and_only_there():
    values = np.arange(12).reshape(3, 4)
    first, again = (SeededNoise(5, discrete=True).discrete_gaussian(values, 2.5) for _ in range(2))
    assert first.dtype == np.int64 and first.shape == (3, 4) and np.array_equal(first, again)
    assert not np.array_equal(first, SeededNoise(6, discrete=True).discrete_gaussian(values, 2.5))
    assert not noise_source(5, discrete=True).discrete  # a fit's seed never draws it: only the audit asks for it
    with pytest.raises(ValueError, match="integers only"):
        SeededNoise(5, discrete=True).discrete_gaussian(np.array([0.5]), 1.0)


def test_the_discrete_gaussian_refuses_what_is_not_an_integer():
    source = SecureNoise(discrete=True)
    with pytest.raises(ValueError, match="integers only"):
        source.discrete_gaussian(np.array([1.0, 2.5]), 1.0)
    with pytest.raises(ValueError, match="positive"):
        source.discrete_gaussian(np.array([1, 2]), 0.0)
    assert np.array_equal(source.discrete_gaussian(np.zeros((0, 3)), 2.0), np.zeros((0, 3), dtype=np.int64))
    with pytest.raises(Exception, match="cannot be seeded"):
        SeededNoise(1).discrete_gaussian(np.array([1, 2]), 1.0)


def test_an_unseeded_lagged_release_adds_integer_noise_to_every_piece(events):
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=3)
    stats, _ = prepare_stats(events, config)
    pieces = stats.pieces
    noisy = release_pieces(pieces, 7.5, SecureNoise(discrete=True))
    for name in ("lagged", "totals", "heads", "tails"):
        before, after = getattr(pieces, name), getattr(noisy, name)
        assert after.shape == before.shape
        assert np.array_equal(after, np.rint(after)) and not np.array_equal(after, before)
    assert np.array_equal(noisy.lagged[0], noisy.lagged[0].T)  # C[0] released by its upper triangle, mirrored
    assert np.array_equal(noisy.n_bins, pieces.n_bins)


# ---- accounting: zCDP, against OpenDP and dp-accounting ---------------------------------------------------------

@pytest.mark.parametrize("sigma, d_in", [(1.0, 1), (3.0, 1), (3.0, 2), (57.0, 21), (250.0, 7)])
def test_rho_is_opendps_privacy_map(sigma, d_in):
    assert discrete_gaussian_rho(sigma, d_in) == pytest.approx(_discrete_measurement(sigma).map(d_in), rel=1e-12)
    assert discrete_gaussian_rho(sigma, d_in, releases=4) == pytest.approx(4 * d_in**2 / (2 * sigma**2), rel=1e-15)


@pytest.mark.parametrize("sigma", [0.8, 3.0, 10.0, 80.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_zcdp_epsilon_is_opendps_conversion(sigma, delta):
    from opendp.combinators import make_zCDP_to_approxDP

    profile = make_zCDP_to_approxDP(_discrete_measurement(sigma)).map(1)
    assert zcdp_epsilon(discrete_gaussian_rho(sigma, 1), delta) == pytest.approx(profile.epsilon(delta), rel=1e-9)


@pytest.mark.parametrize("rho", [1e-4, 0.03, 0.5, 5.0])
def test_zcdp_epsilon_is_dp_accountings_rdp_conversion(rho):
    """dp-accounting's RDP accountant with the same curve ``αρ`` on its orders: ours optimises over every α > 1,
    so it is at most the accountant's and matches it on a dense grid of orders."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    ours = zcdp_epsilon(rho, DELTA)
    default = rdp.RdpAccountant()
    default.compose(dp_event.ZCDpEvent(rho))
    dense = rdp.RdpAccountant(orders=list(1.0 + np.exp(np.linspace(-9, 12, 20000))))
    dense.compose(dp_event.ZCDpEvent(rho))
    assert ours <= default.get_epsilon(DELTA) * (1 + 1e-12)
    assert ours == pytest.approx(dense.get_epsilon(DELTA), rel=1e-6)


def test_a_target_epsilon_is_met_and_what_the_discrete_gaussian_costs():
    for epsilon in (0.1, 1.0, 4.0):
        rho = zcdp_rho(epsilon, DELTA)
        assert zcdp_epsilon(rho, DELTA) <= epsilon and zcdp_epsilon(rho, DELTA) == pytest.approx(epsilon, rel=1e-10)
        sigma = gaussian_sigma(epsilon, DELTA, 2.0, 1, discrete=True)
        assert gaussian_epsilon(sigma, DELTA, 2.0, 1, discrete=True) == pytest.approx(epsilon, rel=1e-10)
    # the quick check: at σ = 3, δ = 1e-5 zCDP costs about 9 % more ε than the continuous mechanism
    cost = gaussian_epsilon(3.0, DELTA, 1.0, 1, discrete=True) / gaussian_epsilon(3.0, DELTA, 1.0, 1) - 1
    assert 0.085 < cost < 0.095
    # at ε = 1 the discrete calibration needs about 8 % more noise
    ratio = gaussian_sigma(1.0, DELTA, 1.0, 1, discrete=True) / gaussian_sigma(1.0, DELTA, 1.0, 1)
    assert 1.07 < ratio < 1.10


def test_an_automatic_cap_and_the_release_compose_in_zcdp():
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    sigma, split = compose_count_cap(1.0, DELTA, 0.5, 1, 0.05, 3, discrete=True)
    rho_cap, rho_release = 1 / (2 * split.cap_sigma ** 2), discrete_gaussian_rho(sigma, 0.5)
    assert split.epsilon_total == pytest.approx(1.0, rel=1e-10)
    assert zcdp_epsilon(rho_cap, DELTA) == pytest.approx(0.05, rel=1e-9)
    accountant = rdp.RdpAccountant(orders=list(1.0 + np.exp(np.linspace(-9, 12, 20000))))
    accountant.compose(dp_event.ComposedDpEvent([dp_event.ZCDpEvent(rho_cap), dp_event.ZCDpEvent(rho_release)]))
    assert accountant.get_epsilon(DELTA) == pytest.approx(1.0, rel=1e-6)
    continuous, _ = compose_count_cap(1.0, DELTA, 0.5, 1, 0.05, 3)
    assert sigma > continuous


def test_the_ledger_composes_a_discrete_gaussian_in_zcdp_never_as_gdp():
    """A ledger with a discrete Gaussian composes every mechanism in zCDP: equal to dp-accounting's RDP accountant
    on the same curves, above the exact GDP composition of the same multipliers (which would under-count), and a
    ledger of continuous Gaussians alone keeps its exact composition."""
    from dp_accounting import dp_event
    from dp_accounting.gaussian_mechanism import get_epsilon_gaussian
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    discrete = (Mechanism("discrete-gaussian", 60.0, 1), Mechanism("discrete-gaussian", 4.2, 1))
    continuous = (Mechanism("gaussian", 30.0, 50),)
    mixed = discrete + continuous
    ours = compose_epsilon(mixed, DELTA)
    accountant = rdp.RdpAccountant(orders=list(1.0 + np.exp(np.linspace(-9, 12, 20000))))
    accountant.compose(dp_event.ComposedDpEvent(
        [dp_event.ZCDpEvent(1 / (2 * 60.0**2)), dp_event.ZCDpEvent(1 / (2 * 4.2**2)),
         dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(30.0), 50)]))
    assert ours == pytest.approx(accountant.get_epsilon(DELTA), rel=1e-6)
    mu = math.sqrt(sum(m.releases / m.parameter**2 for m in mixed))
    as_if_gdp = float(get_epsilon_gaussian(1 / mu, DELTA))
    assert ours > as_if_gdp * 1.05
    assert compose_epsilon(continuous, DELTA) == pytest.approx(
        float(get_epsilon_gaussian(30.0 / math.sqrt(50), DELTA)), rel=1e-12)
    # a pure ε-DP step joins through ε²/2-zCDP: still an upper bound, above the discrete part alone
    assert compose_epsilon(discrete + (Mechanism("pure", 0.1),), DELTA) > compose_epsilon(discrete, DELTA)


def test_group_privacy_of_a_discrete_fit_is_in_zcdp(events):
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=3)
    stats, _ = prepare_stats(events, config)
    report = privacy_report(stats, config)
    assert report.discrete and report.to_dict()["noise"].startswith("discrete Gaussian")
    assert zcdp_epsilon(report.rho, report.dp_delta) == pytest.approx(1.0, rel=1e-10)
    conversion = unit_conversion(report, 4)
    assert conversion.accounting == "zcdp"
    assert conversion.person_epsilon == pytest.approx(zcdp_epsilon(16 * report.rho, report.dp_delta), rel=1e-12)
    assert conversion.event_epsilon == pytest.approx(1.0, rel=1e-10)
    assert "zCDP" in " ".join(conversion.sentences())


# ---- a release through the privacy session -----------------------------------------------------------------------

@pytest.mark.parametrize("cap", [3, "auto"])
def test_an_unseeded_dp_ssp_release_records_the_discrete_mechanism_and_spends_what_was_planned(
        events, cap, tmp_path, monkeypatch):
    drawn = {"discrete": 0, "float": 0}
    original_discrete, original_float = SecureNoise.discrete_gaussian, SecureNoise.standard_normal

    def counted_discrete(self, values, sigma):
        drawn["discrete"] += 1
        return original_discrete(self, values, sigma)

    def counted_float(self, shape):
        drawn["float"] += 1
        return original_float(self, shape)

    monkeypatch.setattr(SecureNoise, "discrete_gaussian", counted_discrete)
    monkeypatch.setattr(SecureNoise, "standard_normal", counted_float)
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap=cap)
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")
    status, planned = session.plan(config)
    assert status.formal and planned and all(m.kind == "discrete-gaussian" for m in planned)
    assert drawn == {"discrete": 0, "float": 0}  # planning draws nothing
    answer = session.release(config)
    assert not answer.replayed and answer.result.privacy.discrete
    assert drawn == {"discrete": 2 if cap == "auto" else 1, "float": 0}  # the tail counts, the pieces; no float
    assert answer.entry.mechanisms == planned
    delta = answer.ledger.budget.delta
    assert compose_epsilon(answer.entry.mechanisms, delta) == pytest.approx(compose_epsilon(planned, delta), rel=1e-12)
    assert answer.ledger.spent() == pytest.approx(1.0, rel=1e-9)
    assert answer.result.privacy.mechanisms(config.family.bound) == planned  # the stored report says the same
    again = session.release(config)
    assert again.replayed and drawn["discrete"] == (2 if cap == "auto" else 1)
    # a continuous release on the same data set: the ledger composes both in zCDP
    gradients = FitConfig(method="pgd", bin_size=1.0, lags=3, epsilon=0.5, calibration="formal", count_cap=3,
                          bound=1.0, iters=10)
    mixed = session.release(gradients)
    assert [m.kind for m in mixed.entry.mechanisms] == ["gaussian"] and drawn["float"] == 10
    rho = sum(m.releases / (2 * m.parameter**2) for m in mixed.ledger.mechanisms())
    assert mixed.ledger.spent() == pytest.approx(zcdp_epsilon(rho, delta), rel=1e-12)


def test_a_seeded_release_draws_no_discrete_noise(events, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a seeded fit drew from the CSPRNG")

    monkeypatch.setattr(SecureNoise, "discrete_gaussian", refuse)
    monkeypatch.setattr(SecureNoise, "standard_normal", refuse)
    config = FitConfig(method="ssp", bin_size=1.0, lags=3, epsilon=1.0, calibration="formal", count_cap="auto",
                       seed=5)
    session = PrivacySession.for_events(events, LedgerBook(tmp_path / "l.json"), "data")
    answer = session.release(config)
    assert not answer.entry.formal and not answer.result.privacy.discrete


def test_which_fits_draw_the_discrete_gaussian():
    def discrete(**settings):
        base = dict(bin_size=1.0, lags=3, epsilon=1.0, calibration="formal")
        return noise.discrete_noise(FitConfig(**{**base, **settings}))

    assert discrete(method="ssp", count_cap=3) and discrete(method="ssp", count_cap="auto")
    assert not discrete(method="ssp", count_cap=3, seed=1)  # seeded: numpy, continuous calibration
    assert not discrete(method="ssp", count_cap=3, ssp_release="full")  # 2·10⁶ numbers at p = 500, d = 4
    assert not discrete(method="ssp", count_cap=3, privacy_unit="sequence", max_events=10, sequence_clip=5.0)
    assert not discrete(method="pgd", count_cap=3, bound=1.0)  # real-valued gradients
    assert not discrete(method="pgd-clip", bound=1.0, clip=1.0)
    assert not discrete(method="ctls", count_cap=3)  # G's pieces are real: the whole release stays continuous
    assert not discrete(method="ctls", count_cap="auto")


def test_the_session_refuses_a_release_that_draws_other_noise_than_planned():
    from dphawkes_core.errors import DPHawkesError
    from dphawkes_core.release.session import _check_plan

    planned = (Mechanism("discrete-gaussian", 4.0, 1),)
    _check_plan(planned, planned, None)
    with pytest.raises(DPHawkesError, match="drew gaussian noise, planned discrete-gaussian"):
        _check_plan(planned, (Mechanism("gaussian", 4.0, 1),), None)
