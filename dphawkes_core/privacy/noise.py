"""The noise every mechanism draws (the samplers): one source per fit, seeded for experiments, a CSPRNG for a release.

* :class:`SeededNoise` (an int seed, or a numpy ``Generator``): tests, teaching, experiments — never a
  release (:func:`~dphawkes_core.privacy.report.formal_status`). numpy's PCG64 with its ziggurat normals, drawn in
  the order the mechanisms have always drawn them, so every seeded result is reproduced bit for bit. A seeded
  fit is never calibrated for the discrete Gaussian (:func:`discrete_noise`); only the privacy audit, which runs
  a release's mechanism seeded, asks for a discrete seeded source: it draws the discrete Gaussian by Canonne,
  Kamath & Steinke's rejection sampler on numpy's generator (:func:`seeded_discrete_gaussian`).
* :class:`SecureNoise` (seed ``None``): a release. It takes no seed and keeps no state that could replay it.

  - real-valued numbers (:meth:`~NoiseSource.standard_normal`): the operating system's CSPRNG
    (``os.urandom``: Linux ``getrandom``, ChaCha20) gives 64 random bits per number; 63 of them make a
    uniform ``u ∈ (2⁻⁶⁵, ½]`` and the last one a sign: ``±Φ⁻¹(u)`` (scipy's ``ndtri``). About 75 ns per
    number (numpy's PCG64 ziggurat: 40 ns). A float sampler nonetheless: the CSPRNG removes the
    predictability of the generator, not the gap between floating-point and real Gaussian noise;
  - integer-valued releases of a *discrete* fit (:meth:`~NoiseSource.discrete_gaussian`): OpenDP's exact
    sampler of the discrete Gaussian ``N_Z(0, σ²)`` (Canonne, Kamath & Steinke 2020), on ``i64`` vectors with
    the L2 distance; about 11–18 µs per number. No floating point touches the noise.

Which releases are drawn how, and what the discrete Gaussian costs in ε, is in ``docs/privacy.md`` ("The
noise: samplers and generators"). This module only draws: what the noise costs (zCDP, Gaussian DP, the
composition) is :mod:`~dphawkes_core.privacy.accounting`.

A mechanism is given ``rng``: a :class:`NoiseSource` or a numpy ``Generator`` (the privacy audit passes
one); both have ``standard_normal(shape)``, and :func:`uses_discrete` tells whether integer releases must
take the discrete Gaussian.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from dphawkes_core.errors import ConfigError

#: What :attr:`NoiseSource.sampler` says, for reports and docs.
NUMPY_SAMPLER = "numpy PCG64 (seeded)"
CSPRNG_SAMPLER = "OS CSPRNG, inverse-CDF normals"
DISCRETE_SAMPLER = "OpenDP discrete Gaussian (OS CSPRNG)"
SEEDED_DISCRETE_SAMPLER = "discrete Gaussian, CKS rejection sampler on numpy PCG64 (seeded: audits only)"
_EXACT_INTEGER = 2.0**53  # integers a float64 holds exactly


class NoiseSource:
    """Where a fit's noise comes from.

    Attributes
    ----------
    seeded : bool
        Reproducible by whoever knows the seed (never a release).
    discrete : bool
        The release's integer-valued numbers are drawn from the exact discrete Gaussian
        (:meth:`discrete_gaussian`); only an unseeded source of a fit calibrated for it
        (:func:`discrete_noise`) is discrete.
    """

    seeded: bool = False
    discrete: bool = False
    sampler: str = ""

    def standard_normal(self, shape) -> np.ndarray:
        """Independent N(0, 1) numbers of ``shape`` (an int or a tuple), as
        ``numpy.random.Generator.standard_normal``."""
        raise NotImplementedError

    def discrete_gaussian(self, values, sigma: float) -> np.ndarray:
        """``values + Y`` with ``Y`` independent discrete Gaussians ``N_Z(0, σ²)``: the discrete Gaussian
        mechanism on an integer array (returned as ``int64`` of the same shape)."""
        raise ConfigError("this noise source has no discrete Gaussian: OpenDP's exact sampler cannot be seeded, "
                          "so only an unseeded release draws it")


class SeededNoise(NoiseSource):
    """numpy's generator: ``numpy.random.default_rng(seed)`` (or a given ``Generator``), exactly as before.

    Parameters
    ----------
    seed : int, sequence of int, or numpy.random.Generator
        Anything ``numpy.random.default_rng`` takes except ``None`` (that is :class:`SecureNoise`).
    """

    seeded = True

    def __init__(self, seed, discrete: bool = False):
        if seed is None:
            raise ConfigError("SeededNoise needs a seed; unseeded noise is SecureNoise")
        self.generator = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.discrete = bool(discrete)
        self.sampler = SEEDED_DISCRETE_SAMPLER if self.discrete else NUMPY_SAMPLER

    def standard_normal(self, shape) -> np.ndarray:
        return self.generator.standard_normal(shape)

    def discrete_gaussian(self, values, sigma: float) -> np.ndarray:
        if not self.discrete:
            return super().discrete_gaussian(values, sigma)
        values = _integer_array(values, sigma)
        return values + seeded_discrete_gaussian(values.shape, sigma, self.generator)

    def __repr__(self) -> str:
        return f"SeededNoise(numpy PCG64, discrete={self.discrete})"


class SecureNoise(NoiseSource):
    """Noise from the operating system's CSPRNG; cannot be seeded.

    Parameters
    ----------
    discrete : bool
        Integer-valued releases take OpenDP's exact discrete Gaussian (the fit was calibrated for it).
    """

    seeded = False

    def __init__(self, discrete: bool = False):
        self.discrete = bool(discrete)
        self.sampler = DISCRETE_SAMPLER if self.discrete else CSPRNG_SAMPLER

    def standard_normal(self, shape) -> np.ndarray:
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        return csprng_standard_normal(math.prod(shape)).reshape(shape)

    def discrete_gaussian(self, values, sigma: float) -> np.ndarray:
        return opendp_discrete_gaussian(values, sigma)

    def __repr__(self) -> str:
        return f"SecureNoise(discrete={self.discrete})"


def noise_source(seed, discrete: bool = False) -> NoiseSource:
    """The source of a fit: :class:`SeededNoise` for a seed (``discrete`` ignored: a seeded fit's noise is numpy's
    continuous one), :class:`SecureNoise` for ``None`` (discrete when the fit's report was calibrated for the
    discrete Gaussian). Only the audit makes a seeded discrete source, itself: ``SeededNoise(seed, discrete=True)``."""
    return SecureNoise(discrete) if seed is None else SeededNoise(seed)


def as_source(rng) -> NoiseSource:
    """``rng`` as a :class:`NoiseSource` (a numpy ``Generator`` becomes :class:`SeededNoise` around it)."""
    return rng if isinstance(rng, NoiseSource) else SeededNoise(rng)


def uses_discrete(rng) -> bool:
    """Whether integer releases drawn from ``rng`` take the discrete Gaussian (never for a numpy ``Generator``)."""
    return isinstance(rng, NoiseSource) and rng.discrete


def discrete_noise(config) -> bool:
    """Whether the fit of ``config`` is drawn from the discrete Gaussian and accounted in zCDP: an unseeded fit
    (a release) whose family says every number it releases is an integer
    (:meth:`~dphawkes_core.estimators.family.Family.integer_release`). A seeded fit keeps numpy's continuous
    noise and its exact Gaussian calibration (its results do not change)."""
    return config.seed is None and bool(config.family.integer_release(config))


# --- the samplers ---------------------------------------------------------------------------------------------


def csprng_standard_normal(size: int) -> np.ndarray:
    """``size`` standard normals from ``os.urandom``: per number 64 bits, 63 for ``u = (k + ½)·2⁻⁶⁴ ∈ (2⁻⁶⁵, ½]``
    and one for the sign, ``±Φ⁻¹(u)`` (the tails reach ±9.3)."""
    from scipy.special import ndtri  # here: only an unseeded release needs it

    bits = np.frombuffer(os.urandom(8 * int(size)), dtype=np.uint64)
    uniform = ((bits >> np.uint64(1)).astype(np.float64) + 0.5) * 2.0**-64
    magnitude = -ndtri(uniform)
    return np.where((bits & np.uint64(1)).astype(bool), -magnitude, magnitude)


@functools.lru_cache(maxsize=64)
def _discrete_gaussian_measurement(sigma: float):
    # here, and not ``opendp.prelude`` (2.2 s: it imports scikit-learn when present): 0.25 s, unseeded integer
    # releases only
    from opendp.domains import atom_domain, vector_domain
    from opendp.measurements import make_gaussian
    from opendp.metrics import l2_distance
    from opendp.mod import enable_features

    enable_features("contrib")
    return make_gaussian(vector_domain(atom_domain(T="i64")), l2_distance(T="i64"), scale=sigma)


def opendp_discrete_gaussian(values, sigma: float) -> np.ndarray:
    """OpenDP's discrete Gaussian mechanism on the integer array ``values`` (any shape, floats holding integers
    accepted): ``values + N_Z(0, σ²)`` per entry, as ``int64`` of the same shape.

    Raises
    ------
    ValueError
        For a value that is not an integer (or too large for a float64 to hold exactly), or σ not positive.
    """
    values = _integer_array(values, sigma)
    flat = np.ascontiguousarray(values.ravel())
    if flat.size == 0:
        return values
    noisy = _discrete_gaussian_measurement(float(sigma))(flat)
    return np.asarray(noisy, dtype=np.int64).reshape(values.shape)


def _integer_array(values, sigma: float) -> np.ndarray:
    """``values`` as ``int64`` after the discrete Gaussian's checks (integers a float64 holds exactly; σ > 0)."""
    values = np.asarray(values)
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"the discrete Gaussian needs a positive finite σ, got {sigma!r}")
    if values.dtype.kind == "f":
        if not np.all(np.abs(values) < _EXACT_INTEGER) or not np.array_equal(values, np.rint(values)):
            raise ValueError("the discrete Gaussian adds noise to integers only: a released number is not an integer")
    elif values.dtype.kind not in "iub":
        raise ValueError(f"the discrete Gaussian needs integers, got {values.dtype}")
    return values.astype(np.int64)


def seeded_discrete_gaussian(shape, sigma: float, generator: np.random.Generator) -> np.ndarray:
    """Independent ``N_Z(0, σ²)`` of ``shape`` from a seeded numpy generator (the audit's runs of a discrete release).

    Canonne, Kamath & Steinke (2020), Algorithm 3: with ``t = ⌊σ⌋ + 1``, draw ``Y`` from the discrete Laplace
    ``P(y) ∝ e^{−|y|/t}`` (a difference of two geometric counts) and keep it with probability
    ``exp(−(|Y| − σ²/t)²/(2σ²))``; the kept values are exactly ``N_Z(0, σ²)`` when the probabilities are exact, here
    to float64's rounding (the release's OpenDP sampler has none; it cannot be seeded). Batches are drawn until
    enough are kept, so a seed gives one sequence."""
    size = math.prod(shape) if np.ndim(shape) else int(shape)
    t = math.floor(sigma) + 1
    success = -math.expm1(-1.0 / t)  # P(stop) of a geometric count with P(k) ∝ e^{−k/t}
    kept = []
    while sum(len(k) for k in kept) < size:
        batch = 2 * size + 16  # acceptance is at least about 1/2 (CKS 2020): rarely more than one round
        laplace = generator.geometric(success, batch) - generator.geometric(success, batch)
        keep = generator.random(batch) < np.exp(-((np.abs(laplace) - sigma**2 / t) ** 2) / (2 * sigma**2))
        kept.append(laplace[keep])
    return np.concatenate(kept)[:size].astype(np.int64).reshape(shape)
