"""Kernel specs against closed forms / numerical integration, and the paper's scenarios."""

import numpy as np
import pytest
from scipy.integrate import quad

from dphawkes_core.data.kernels import (
    BoxKernel,
    ExponentialKernel,
    PowerLawKernel,
    Scenario,
    SumKernel,
    ZeroKernel,
    get_scenario,
)
from dphawkes_core.errors import ConfigError

KERNELS = [
    ExponentialKernel(0.4, 2.0),
    PowerLawKernel(0.3, 0.5, 2.5),
    BoxKernel(0.2, 1.0, 3.0),
    SumKernel((ExponentialKernel(0.1, 1.0), BoxKernel(0.05, 0.0, 2.0))),
    ZeroKernel(),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
def test_l1_norm_matches_numerical_integral(kernel):
    breakpoints = [1.0, 2.0, 3.0]
    integral = sum(
        quad(lambda t: float(kernel.value(np.array(t))), a, b, limit=200)[0]
        for a, b in zip([0.0] + breakpoints, breakpoints + [np.inf])
    )
    assert integral == pytest.approx(kernel.l1_norm(), rel=1e-6, abs=1e-9)


def test_support_leaves_tail_mass_below_tolerance():
    for kernel in KERNELS[:2]:
        tail = quad(lambda t, kernel=kernel: float(kernel.value(np.array(t))), kernel.support(), np.inf)[0]
        assert tail <= 1.01e-6 * kernel.l1_norm()


def test_paper_2d_truth():
    sc = get_scenario("paper-2d")
    assert sc.baseline == (0.25, 0.125)
    t = np.array([0.5, 1.0, 2.0, 3.0, 3.5, 4.0, 4.5])
    values = sc.kernel_values(t)
    np.testing.assert_allclose(values[0, 0], 0)
    np.testing.assert_allclose(values[0, 1], [0, 0.125, 0.125, 0.125, 0, 0, 0])
    np.testing.assert_allclose(values[1, 0], [0, 0, 0.2, 0.2, 0.2, 0.2, 0])
    np.testing.assert_allclose(values[1, 1], 0.25 * np.exp(-t))


def test_paper_4d_truth_is_the_block_structure():
    sc = get_scenario("paper-4d")
    t = np.linspace(0.05, 5, 40)
    h12 = 0.125 * ((t >= 1) & (t <= 3))
    h21 = 0.25 * ((t >= 2) & (t <= 4))
    h22 = 0.2 * np.exp(-t)
    h0 = np.array([[np.zeros_like(t), h12], [h21, h22]])
    full = np.empty((4, 4, t.size))
    full[:2, :2] = h0
    full[:2, 2:] = h0.transpose(1, 0, 2)
    full[2:, :2] = h0
    full[2:, 2:] = h0.transpose(1, 0, 2)
    np.testing.assert_allclose(sc.kernel_values(t), full)
    assert sc.baseline == (0.125,) * 4
    # the discretised parameter matrix is rank 2 (the paper's low-rank claim)
    H = sc.true_H(0.1, 50)
    assert np.linalg.matrix_rank(H[:, :-1], tol=1e-9) == 2


def test_true_H_layout():
    sc = get_scenario("paper-2d")
    H = sc.true_H(0.5, 8)
    assert H.shape == (2, 17)
    # H[i, k*d + j] = h_ij((k+1)Δ): lag k=3 is t=2.0
    assert H[0, 3 * 2 + 1] == pytest.approx(0.125)
    assert H[1, 3 * 2 + 0] == pytest.approx(0.2)
    assert H[1, 0 * 2 + 1] == pytest.approx(0.25 * np.exp(-0.5))
    np.testing.assert_allclose(H[:, -1], [0.25, 0.125])


def test_stationarity():
    assert get_scenario("paper-2d").spectral_radius() < 1
    assert get_scenario("paper-4d").spectral_radius() == pytest.approx(0.2 + np.sqrt(0.04 + 0.75**2), rel=1e-9)
    explosive = Scenario("x", (0.1,), ((ExponentialKernel(1.2, 1.0),),))
    with pytest.raises(ConfigError, match="explosive"):
        explosive.check_stationary()


def test_bad_kernel_parameters():
    with pytest.raises(ConfigError):
        ExponentialKernel(0.5, 0.0)
    with pytest.raises(ConfigError):
        PowerLawKernel(0.1, 1.0, 1.0)
    with pytest.raises(ConfigError):
        BoxKernel(0.1, 2.0, 1.0)
    with pytest.raises(ConfigError, match="unknown scenario"):
        get_scenario("nope")
