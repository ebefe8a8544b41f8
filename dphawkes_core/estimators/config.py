"""Configuration and result of a fit, and the names of the estimators and their options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..binning import check_bin_size
from ..count_cap import AUTO, AUTO_CAP_MAX, AUTO_CAP_SHARE, check_share
from ..errors import ConfigError
from ..sequence_privacy import AUTO_CLIP_SHARE, PRIVACY_UNITS

METHODS = ("cls", "pgd", "cg", "ssp", "pgd-clip")
FORMAL_ONLY_METHODS = ("ssp", "pgd-clip")
# the one display name of each method (app pages, figures, tables, reports)
METHOD_NAMES = {"cls": "CLS", "pgd": "DP-PGD", "cg": "DP-CG", "ssp": "DP-SSP", "pgd-clip": "clipped DP-PGD"}
STEP_RULES = ("theorem", "constant")
FW_STEP_RULES = ("paper", "classic")
SSP_STABILISERS = ("ridge", "psd")
SSP_RELEASES = ("lagged", "full")


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a fit, so that a result can be reproduced from it.

    Attributes
    ----------
    method : str
        ``cls`` (non-private), ``pgd`` (DP-PGD, Algorithm 1), ``cg`` (DP-CG, Algorithm 2), ``ssp``
        (one noisy release of ``A``, ``b`` then least squares) or ``pgd-clip`` (DP-PGD on the per-bin
        loss with per-bin gradients clipped at G). ``ssp`` and ``pgd-clip`` need ``calibration="formal"``.
    bin_size : float
        Δ.
    lags : int
        p (use :func:`~dphawkes_core.binning.lags_from_support` for ``p = ⌈s/Δ⌉``).
    bound : float, optional
        B of the Frobenius constraint ``||H||_F ≤ B`` (``||U||_F ≤ ΔB``), for ``pgd`` and ``pgd-clip``.
    radius : float, optional
        r of the nuclear-norm constraint ``||U||_* ≤ r``, for ``cg``.
    iters : int
        K, the number of (noisy) gradient steps.
    epsilon, dp_delta : float, optional
        Target privacy; the noise is calibrated from them unless ``sigma2`` is given.
    sigma2 : float, optional
        Noise variance σ² per gradient entry, given directly (then ε is reported, not targeted).
    calibration : str
        ``paper``, ``formal`` or ``tight-paper`` (see :mod:`dphawkes_core.privacy`).
    count_cap : int or "auto", optional
        Public cap C on each bin count (needed by the formal calibration), or ``"auto"`` (``ssp`` with ε):
        spend ``count_cap_share`` of ε on a private choice of C (:mod:`~dphawkes_core.count_cap`).
    step : str
        ``theorem`` (η_k of Theorem 2) or ``constant``.
    step_size : float, optional
        The constant step when ``step == "constant"``.
    fw_step : str
        DP-CG step: ``paper`` (μ = 1/(K+2), as Algorithm 2 is written) or ``classic`` (2/(k+2)).
    seed : int, optional
        Seed of the noise generator. ``None`` (the default) draws the noise from OS entropy: a private
        release. A seed makes the noise reproducible by anyone who knows it — for teaching, tests and
        experiments — so a seeded fit is *not* a private release (:func:`~dphawkes_core.privacy.formal_status`).
    clip : float, optional
        G, the Frobenius norm each per-bin gradient term is clipped to (``pgd-clip``).
    ridge : float, optional
        λ added to the noisy ``A`` by ``ssp`` (``None``: the public rule ``λ = 4σ√q`` for the lagged
        release, ``8σ√q`` for the full one, see :func:`ssp_ridge`).
    stabiliser : str
        ``ssp`` post-processing: ``ridge`` (``Â + λI``) or ``psd`` (eigenvalues of ``Â`` floored at λ).
    ssp_release : str
        What ``ssp`` releases: ``lagged`` (the lagged cross-products, totals and edge rows; about √p less
        noise) or ``full`` (the upper triangle of ``A`` and ``b``).
    ssp_nonnegative : bool
        ``ssp`` post-processing: kernels and baselines constrained to be ``>= 0`` (no privacy cost).
    ssp_smoothing : float
        Public weight s of a roughness penalty across lags, ``λ·s·||second differences of θ||²`` (0: none).
    count_cap_share : float
        Share of ε spent on an automatic count cap.
    count_cap_max : int
        Public range ``1 … count_cap_max`` searched by an automatic count cap.
    privacy_unit : str
        ``event`` (one event added or removed: the paper's unit) or ``sequence`` (one sequence — one
        person — replaced whole; ``ssp`` only, which then releases the full statistics: see
        :mod:`~dphawkes_core.sequence_privacy`).
    sequence_clip : float or "auto", optional
        Public G: each sequence's contribution is scaled to L2 norm at most G (sequence unit; ``None``:
        the G that ``max_events`` guarantees never clips; ``"auto"``: spend ``sequence_clip_share`` of ε on a
        private choice of G below that one, :func:`~dphawkes_core.sequence_privacy.dp_sequence_clip`).
    max_events : int, optional
        Public M: each sequence keeps its first M events, the later ones are dropped (sequence unit).
    sequence_clip_share : float
        Share of ε spent on an automatic G.
    """

    method: str = "cls"
    bin_size: float = 0.1
    lags: int = 50
    bound: float | None = None
    radius: float | None = None
    iters: int = 1000
    epsilon: float | None = None
    dp_delta: float = 1e-5
    sigma2: float | None = None
    calibration: str = "paper"
    count_cap: int | str | None = None
    step: str = "theorem"
    step_size: float | None = None
    fw_step: str = "paper"
    seed: int | None = None
    clip: float | None = None
    ridge: float | None = None
    stabiliser: str = "ridge"
    ssp_release: str = "lagged"
    ssp_nonnegative: bool = True
    ssp_smoothing: float = 10.0
    count_cap_share: float = AUTO_CAP_SHARE
    count_cap_max: int = AUTO_CAP_MAX
    privacy_unit: str = "event"
    sequence_clip: float | str | None = None
    max_events: int | None = None
    sequence_clip_share: float = AUTO_CLIP_SHARE

    def __post_init__(self):
        check_bin_size(self.bin_size)
        if self.method not in METHODS:
            raise ConfigError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        if int(self.lags) != self.lags or self.lags < 1:
            raise ConfigError(f"the number of lags p must be a positive integer, got {self.lags!r}")
        if int(self.iters) != self.iters or self.iters < 1:
            raise ConfigError(f"the number of iterations K must be a positive integer, got {self.iters!r}")
        if self.step not in STEP_RULES:
            raise ConfigError(f"unknown step rule {self.step!r}; choose one of {', '.join(STEP_RULES)}")
        if self.step == "constant" and not (self.step_size is not None and self.step_size > 0):
            raise ConfigError("a constant step needs a positive step size")
        if self.fw_step not in FW_STEP_RULES:
            raise ConfigError(f"unknown DP-CG step rule {self.fw_step!r}; choose one of {', '.join(FW_STEP_RULES)}")
        if self.method in FORMAL_ONLY_METHODS and self.calibration != "formal":
            raise ConfigError(f"method {self.method} has only the formal calibration; choose calibration 'formal'")
        if self.method == "pgd-clip" and not (self.clip is not None and self.clip > 0):
            raise ConfigError("pgd-clip needs a positive clip norm G")
        if self.ridge is not None and not (np.isfinite(self.ridge) and self.ridge >= 0):
            raise ConfigError(f"the ridge λ must be a number >= 0, got {self.ridge!r}")
        if self.stabiliser not in SSP_STABILISERS:
            raise ConfigError(f"unknown SSP stabiliser {self.stabiliser!r}; choose one of {', '.join(SSP_STABILISERS)}")
        self._check_count_cap()
        if self.ssp_release not in SSP_RELEASES:
            raise ConfigError(f"unknown SSP release {self.ssp_release!r}; choose one of {', '.join(SSP_RELEASES)}")
        if not (np.isfinite(self.ssp_smoothing) and self.ssp_smoothing >= 0):
            raise ConfigError(f"the SSP smoothing weight must be a number >= 0, got {self.ssp_smoothing!r}")
        self._check_privacy_unit()

    def _check_privacy_unit(self):
        if self.privacy_unit not in PRIVACY_UNITS:
            raise ConfigError(f"unknown privacy unit {self.privacy_unit!r}; choose one of {', '.join(PRIVACY_UNITS)}")
        if self.privacy_unit == "event":
            if self.sequence_clip is not None or self.max_events is not None:
                raise ConfigError("the clip G and the cap M on events per sequence belong to the sequence unit")
            return
        if self.method not in ("cls", "ssp"):
            raise ConfigError(f"the sequence unit is available for ssp (DP-SSP), not {self.method}")
        if self.count_cap == AUTO:
            raise ConfigError("the sequence unit needs a public count cap C or none, not 'auto'")
        if self.sequence_clip == AUTO:
            self._check_auto_clip()
        elif self.sequence_clip is not None and (isinstance(self.sequence_clip, str)
                                                 or not (np.isfinite(self.sequence_clip) and self.sequence_clip > 0)):
            raise ConfigError(f"the clip norm G must be a positive number or 'auto', got {self.sequence_clip!r}")
        if self.max_events is not None and (isinstance(self.max_events, str) or int(self.max_events) != self.max_events
                                            or self.max_events < 1):
            raise ConfigError(f"the cap M on events per sequence must be a positive whole number, got {self.max_events!r}")
        if self.method == "ssp" and self.sequence_clip is None and self.max_events is None:
            raise ConfigError("the sequence unit needs a public clip norm G or a public cap M on events per sequence")

    def _check_auto_clip(self):
        if self.method != "ssp" or self.epsilon is None or self.sigma2 is not None or self.max_events is None:
            raise ConfigError("an automatic clip norm G is available for DP-SSP with a target ε (it spends a share "
                              "of ε) and a public cap M on events per sequence (the top of its grid)")
        share = self.sequence_clip_share
        if not (share is not None and np.isfinite(share) and 0 < share < 1):
            raise ConfigError(f"the share of ε spent on the clip norm G must be in (0, 1), got {share!r}")

    def _check_count_cap(self):
        if self.count_cap is None:
            return
        if self.count_cap != AUTO:
            if isinstance(self.count_cap, str) or int(self.count_cap) != self.count_cap or self.count_cap < 1:
                raise ConfigError(f"the count cap C must be a positive integer or 'auto', got {self.count_cap!r}")
            return
        if self.method != "ssp" or self.epsilon is None or self.sigma2 is not None:
            raise ConfigError("an automatic count cap is available for DP-SSP with a target ε (it spends a "
                              "share of ε); give a public cap C otherwise")
        check_share(self.count_cap_share)
        if int(self.count_cap_max) != self.count_cap_max or self.count_cap_max < 1:
            raise ConfigError(f"the largest automatic count cap must be a positive integer, got {self.count_cap_max!r}")


@dataclass(frozen=True)
class FitResult:
    """A fitted model and how it was obtained.

    Attributes
    ----------
    method : str
        Estimator name.
    H : numpy.ndarray
        ``(d, dp+1)`` estimate ``[H_1 … H_p, η]`` (already divided by Δ).
    bin_size : float
        Δ.
    lags : int
        p.
    elapsed_s : float
        Wall time of the estimator (statistics excluded unless stated by the caller).
    loss_history : tuple of float
        Paper loss ``L(U_k)`` per iteration (iterative methods), for a convergence plot.
    privacy : Any
        Privacy report of a private method (``None`` for ``cls``).
    info : dict
        Extra diagnostics (e.g. condition number, solver used).
    """

    method: str
    H: np.ndarray
    bin_size: float
    lags: int
    elapsed_s: float
    loss_history: tuple = ()
    privacy: Any = None
    info: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return int(self.H.shape[0])

    @property
    def kernels(self) -> np.ndarray:
        """``(d, d, p)`` array: ``kernels[i, j, k]`` estimates ``h_ij((k+1)Δ)``."""
        d, p = self.dim, self.lags
        return self.H[:, : d * p].reshape(d, p, d).transpose(0, 2, 1)

    @property
    def baseline(self) -> np.ndarray:
        """``(d,)`` estimate of the baseline η."""
        return self.H[:, -1]

    @property
    def lag_grid(self) -> np.ndarray:
        """Lag times ``Δ, 2Δ, …, pΔ`` of the kernel estimates."""
        return self.bin_size * np.arange(1, self.lags + 1)
