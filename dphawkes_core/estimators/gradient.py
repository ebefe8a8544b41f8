"""The paper's private first-order methods as two families: DP-PGD (Algorithm 1) and DP-CG (Algorithm 2), with
their sensitivity bounds and calibrations.

Both release a noisy gradient ``∇L(U_k) + ζ_k`` at every step; that is their only access to the data.
Privacy unit (the paper's Definition 1): two data sets are neighbours when their bin-count series differ by one in
one bin of one dimension (one event added or removed); the number of bins n, the window, Δ, p, d, B, r and K are
public. Their three calibrations (:func:`calibrate`):

* ``paper`` — Theorems 1 and 3 as published: ``σ² = 8(ΔB)²R²K log²(K/δ)/ε²`` (PGD) and
  ``σ² = 128KΔ²r²R²log²(K/δ)/ε²`` (CG), with R from Assumption 1 computed **from the private data**
  (``R = max(||A||²_F, ||b||²_F)``). Not a formal guarantee: the noise scale depends on the data, and
  the paper's Lipschitz bound is not a worst-case bound over neighbours.
* ``tight-paper`` — the paper's own gradient sensitivity ``2L₂`` (``L₂ = 2ΔBR`` for PGD, ``2ΔrR`` for
  CG) with exact accounting instead of strong composition: shows how much of the paper's noise is the
  accounting's slack. Still data-dependent through R, so still not a formal guarantee.
* ``formal`` — a worst-case L2 sensitivity of the released noisy gradient over every U in the constraint
  set and every pair of neighbouring count series clipped at a public cap C
  (:meth:`FormalBounds.gradient_sensitivity`, derivation in ``docs/privacy.md``), composed over K releases exactly
  (:func:`~dphawkes_core.privacy.calibration.gaussian_sigma`): a formal (ε, δ)-DP guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.family import AuditHints, CostTags, Family, NoisedQuery, PrivacyTags, StateSpace
from dphawkes_core.estimators.settings import ITERATIONS, STEP_RULES, Setting, options_class
from dphawkes_core.estimators.solvers import paper_loss
from dphawkes_core.privacy.calibration import CALIBRATION_LABELS, CALIBRATIONS, data_R, gaussian_epsilon, gaussian_sigma
from dphawkes_core.privacy.report import PrivacyReport
from dphawkes_core.statistics.moments import SufficientStats, ToeplitzMomentOperator, toeplitz_product_cost
from dphawkes_core.validation import check_epsilon_delta, check_privacy_inputs, check_sigma2

FW_STEP_RULES = ("paper", "classic")


# --- the bounds and calibrations of the noisy gradient ----------------------------------------------------------


@dataclass(frozen=True)
class FormalBounds:
    """Public worst-case bounds on the statistics of count series clipped at C.

    Attributes
    ----------
    z_norm_max : float
        ``max ||z_t|| = sqrt(d p C² + 1)``.
    y_norm_max : float
        ``max ||y_t|| = sqrt(d) C``.
    A_op_max : float
        ``sup ||A||_op <= z_norm_max²``.
    b_fro_max : float
        ``sup ||b||_F <= y_norm_max · z_norm_max``.
    dA_fro_max : float
        ``sup ||A' − A||_F`` over neighbours: ``√p (2 z_norm_max + 1) / N``.
    db_fro_max : float
        ``sup ||b' − b||_F`` over neighbours: ``(z_norm_max + √p · y_norm_max) / N``.
    """

    z_norm_max: float
    y_norm_max: float
    A_op_max: float
    b_fro_max: float
    dA_fro_max: float
    db_fro_max: float

    def gradient_sensitivity(self, u_fro_max: float) -> float:
        """L2 sensitivity of ``∇L(U) = (UA − b)A`` uniformly over ``||U||_F <= u_fro_max``.

        ``2 β M_A D_A + M_b D_A + M_A D_b`` (see ``docs/privacy.md``).
        """
        beta = u_fro_max
        return (2 * beta * self.A_op_max * self.dA_fro_max + self.b_fro_max * self.dA_fro_max
                + self.A_op_max * self.db_fro_max)

    def gradient_norm_max(self, u_fro_max: float) -> float:
        """Public bound on ``||∇L(U)||_F`` over ``||U||_F <= u_fro_max`` (a Lipschitz constant L₂)."""
        return (u_fro_max * self.A_op_max + self.b_fro_max) * self.A_op_max

    def statistics_sensitivity(self) -> float:
        """L2 sensitivity of the pair ``(A, b)`` released together: ``sqrt(D_A² + D_b²)``."""
        return math.hypot(self.dA_fro_max, self.db_fro_max)


def formal_bounds(dim: int, lags: int, n_rows: int, count_cap: int) -> FormalBounds:
    """Worst-case bounds for d dimensions, p lags, N rows and per-bin count cap C."""
    if count_cap is None or count_cap < 1:
        raise ConfigError("the formal calibration needs a public count cap C >= 1 (counts are clipped at C)")
    c = float(count_cap)
    z_max = math.sqrt(dim * lags * c * c + 1.0)
    y_max = math.sqrt(dim) * c
    return FormalBounds(
        z_norm_max=z_max,
        y_norm_max=y_max,
        A_op_max=z_max**2,
        b_fro_max=y_max * z_max,
        dA_fro_max=math.sqrt(lags) * (2 * z_max + 1) / n_rows,
        db_fro_max=(z_max + math.sqrt(lags) * y_max) / n_rows,
    )


@dataclass(frozen=True)
class PaperTheorem:
    """The published calibration of one of the paper's algorithms, in the form both share:
    ``σ² = constant · scale² · R² · K · log²(K/δ) / ε²`` and gradient sensitivity ``2L₂ = 2 · 2 · scale · R``,
    with ``scale = ΔB`` for DP-PGD (Theorem 1) and ``Δr`` for DP-CG (Theorem 3). The family holds its
    theorem and its scale; this module only does the arithmetic."""

    name: str
    constant: float


THEOREM_1 = PaperTheorem("Theorem 1 (DP-PGD)", 8.0)
THEOREM_3 = PaperTheorem("Theorem 3 (DP-CG)", 128.0)


def paper_sigma2(theorem: PaperTheorem, epsilon: float, delta: float, iters: int, scale: float, R: float) -> float:
    """σ² of ``theorem`` as published (``scale`` = ΔB for Theorem 1, Δr for Theorem 3)."""
    check_epsilon_delta(epsilon, delta)
    return _paper_factor(theorem, iters, delta, scale, R) / epsilon / epsilon  # inf, not an error, past float64


def paper_epsilon(theorem: PaperTheorem, sigma2: float, delta: float, iters: int, scale: float, R: float) -> float:
    """The ε that ``theorem`` claims for a given σ² (inverse of :func:`paper_sigma2`)."""
    if sigma2 <= 0:
        return math.inf
    return math.sqrt(_paper_factor(theorem, iters, delta, scale, R) / sigma2)


def _paper_factor(theorem: PaperTheorem, iters, delta, scale, R) -> float:
    return theorem.constant * scale**2 * R**2 * iters * math.log(iters / delta) ** 2


def paper_sensitivity(scale: float, R: float) -> float:
    """The paper's bound ``2L₂`` on the gradient difference: ``L₂ = 2·scale·R`` (2ΔBR for PGD, 2ΔrR for CG)."""
    return 2 * (2 * scale * R)


def calibrate(stats: SufficientStats, theorem: PaperTheorem, scale: float, fro_radius: float, iters: int,
              calibration: str, dp_delta: float, epsilon: float | None = None, sigma2: float | None = None,
              count_cap: int | None = None) -> PrivacyReport:
    """Find σ² for a target ε (or ε for a given σ²) of K noisy gradients and report every calibration side by side.

    Parameters
    ----------
    stats : SufficientStats
        Statistics of the (clipped) data; R is read from them for the paper modes.
    theorem : PaperTheorem
        The paper's calibration of the algorithm (:data:`THEOREM_1` for DP-PGD, :data:`THEOREM_3` for DP-CG).
    scale : float
        ΔB (DP-PGD) or Δr (DP-CG), as the theorem reads it.
    fro_radius : float
        The largest ``||U||_F`` of the constraint set (ΔB, or r as ``||U||_F <= ||U||_*``): the formal bound's.
    iters : int
        K.
    calibration : {"paper", "formal", "tight-paper"}
    dp_delta : float
        δ.
    epsilon, sigma2 : float
        Exactly one: the target ε or the noise variance σ².
    count_cap : int, optional
        Public cap C; required by ``formal``, and must be the cap the data were clipped at.

    Returns
    -------
    PrivacyReport
    """
    if calibration not in CALIBRATIONS:
        raise ConfigError(f"unknown calibration {calibration!r}; choose one of {', '.join(CALIBRATIONS)}")
    check_privacy_inputs(epsilon, sigma2, dp_delta)
    if count_cap is not None and stats.count_cap != count_cap:
        raise ConfigError(f"the statistics were clipped at C = {stats.count_cap}, not at the requested C = {count_cap}")
    R = data_R(stats)
    sens = {
        "paper": paper_sensitivity(scale, R),
        "tight-paper": paper_sensitivity(scale, R),
        "formal": (formal_bounds(stats.dim, stats.lags, stats.n_rows, stats.count_cap).gradient_sensitivity(fro_radius)
                   if stats.count_cap is not None else None),
    }
    if calibration == "formal" and sens["formal"] is None:
        raise ConfigError("the formal calibration needs a public count cap C (counts are clipped at C)")
    if sigma2 is None:
        if calibration == "paper":
            sigma2 = paper_sigma2(theorem, epsilon, dp_delta, iters, scale, R)
        else:
            sigma2 = gaussian_sigma(epsilon, dp_delta, sens[calibration], iters) ** 2
        check_sigma2(sigma2, f"the {calibration} calibration's σ² for ε = {epsilon:g}")
    sigma = math.sqrt(sigma2)
    eps_by = {
        "paper": paper_epsilon(theorem, sigma2, dp_delta, iters, scale, R),
        "tight-paper": gaussian_epsilon(sigma, dp_delta, sens["tight-paper"], iters),
        "formal": gaussian_epsilon(sigma, dp_delta, sens["formal"], iters) if sens["formal"] else None,
    }
    chosen = epsilon if epsilon is not None else eps_by[calibration]
    return PrivacyReport(
        sigma2=float(sigma2),
        epsilon=float(chosen),
        dp_delta=float(dp_delta),
        calibration=calibration,
        sensitivity=sens[calibration],
        R=R,
        epsilon_by_calibration=eps_by,
        sensitivity_by_calibration=sens,
        formal=calibration == "formal",
        iters=int(iters),
        note=CALIBRATION_LABELS[calibration],
    )


def theorem_step_scale(stats: SufficientStats, config, report: PrivacyReport) -> float:
    """``c`` in Theorem 2's step ``η_k = c/√k = ΔB / sqrt(k (L₂² + d(dp+1)σ²))``.

    L₂ is the paper's ``2ΔBR`` (data-dependent) under the paper calibrations and the public gradient
    bound under the formal one, so that the step size, too, comes only from public numbers there.
    """
    beta = config.family.fro_radius(config)
    if config.calibration == "formal":
        lipschitz = formal_bounds(stats.dim, stats.lags, stats.n_rows, stats.count_cap).gradient_norm_max(beta)
    else:
        lipschitz = 2 * beta * report.R
    return beta / np.sqrt(lipschitz**2 + stats.dim * stats.n_params * report.sigma2)


SINGLE_PRECISION_FROM = 1024  # dp+1 from which a non-formal fit may run a dense A² product in float32
_PROBE_TOLERANCE = 1e-9  # structured vs dense A on a probe, relative to its largest entry (float64 agrees to ~1e-15)


def hessian_product(stats: SufficientStats, exact: bool) -> str:
    """How :class:`GradientOperator` computes ``A² Uᵀ``: ``structured`` (``A(AUᵀ)`` with two float64
    :class:`~dphawkes_core.statistics.moments.ToeplitzMomentOperator` products, when ``stats`` carry the moment pieces
    they were assembled from and that is cheaper by :func:`~dphawkes_core.statistics.moments.toeplitz_product_cost`),
    else a dense ``A²`` in ``float64``, or ``float32`` when not ``exact`` and ``dp+1 >= SINGLE_PRECISION_FROM``.

    The dense product reads ``(dp+1)² d`` numbers per step (half the bytes in float32); the structured one
    grows with the number of sequences S (their edge corrections), so many short sequences stay dense.
    """
    q = stats.n_params
    precision = "float32" if not exact and q >= SINGLE_PRECISION_FROM else "float64"
    pieces = getattr(stats, "pieces", None)
    if pieces is None:
        return precision
    dense_flops = 2 * q * q * stats.dim * (0.5 if precision == "float32" else 1.0)
    structured_flops = 2 * toeplitz_product_cost(stats.dim, stats.lags, pieces.n_bins.size, stats.dim)
    return "structured" if structured_flops < dense_flops else precision


def hessian_info(stats: SufficientStats, exact: bool) -> dict:
    """What a fit reports about its gradient arithmetic: ``hessian_product`` (``structured`` or ``dense``) and
    ``hessian_precision`` (``float64``; ``float32`` only for a dense product off the formal path)."""
    product = hessian_product(stats, exact)
    return {"hessian_product": "structured" if product == "structured" else "dense",
            "hessian_precision": "float32" if product == "float32" else "float64"}


class GradientOperator:
    """``Uᵀ ↦ (∇L(U)ᵀ, L(U))`` with ``∇L(U)ᵀ = A² Uᵀ − (bA)ᵀ``: the exact gradient DP-PGD and DP-CG
    release (plus noise) at every step; iterates are kept transposed (``Uᵀ``, ``q × d``).

    ``A² Uᵀ`` is the only large work per iteration, done as :func:`hessian_product` says. Structured:
    ``A(AUᵀ)`` by FFTs from the moment pieces of the very statistics given (checked against ``stats.A``
    once), float64, ``O(S d² p log p)`` per step and no ``A²`` to form (``(dp+1)³``). Dense: ``A²``
    formed once, then ``(dp+1)² d`` per step; with ``exact=False`` and ``dp+1 >= SINGLE_PRECISION_FROM``
    in float32 (memory-bound, so about half the cost). float32 is **not** allowed on the formal path: the
    gradient's large terms cancel, and the float32 rounding error — about 1e-7 of ``||A²|| ||U||``,
    independent of N — is not covered by the sensitivity, which shrinks like 1/N (measured: change between
    adversarial neighbours 1.02× the claimed sensitivity at d = 1, p = 1023, C = 3, N ≈ 3·10⁴). The
    pipeline asks for ``exact=True`` under the formal calibration.
    """

    def __init__(self, stats: SufficientStats, exact: bool = True):
        self.product = hessian_product(stats, exact)
        self.bAt = (stats.b @ stats.A).T.copy()
        self.bb = float(np.sum(stats.b**2))
        if self.product == "structured":
            self.moment = _checked_moment_operator(stats)
        else:
            A2 = stats.A @ stats.A
            self.A2 = A2.astype(np.float32) if self.product == "float32" else A2

    def __call__(self, Ut: np.ndarray) -> tuple[np.ndarray, float]:
        if self.product == "structured":
            A2Ut = self.moment @ (self.moment @ Ut)
        elif self.product == "float32":
            A2Ut = (self.A2 @ Ut.astype(np.float32)).astype(np.float64)
        else:
            A2Ut = self.A2 @ Ut
        loss = 0.5 * float(np.sum(Ut * A2Ut) - 2 * np.sum(Ut * self.bAt) + self.bb)  # ||UA − b||²/2
        return A2Ut - self.bAt, loss


def _checked_moment_operator(stats: SufficientStats) -> ToeplitzMomentOperator:
    """The structured ``A`` of ``stats.pieces``, refused unless it reproduces ``stats.A`` on a probe block (the
    pieces must be those the statistics were assembled from: e.g. never the true pieces beside a private A)."""
    operator = ToeplitzMomentOperator(stats.pieces)
    probe = np.cos(np.arange(stats.n_params * 2).reshape(-1, 2))
    expected = stats.A @ probe
    if not np.allclose(operator @ probe, expected, rtol=0, atol=_PROBE_TOLERANCE * np.abs(expected).max()):
        raise ValueError("the statistics' moment pieces do not reproduce their A: the gradient would not be "
                         "the one of the statistics given")
    return operator


def _noise(rng: np.random.Generator, sigma: float, shape: tuple) -> np.ndarray | float:
    """Gaussian noise ``ζ`` of the shape of U (``d × q``), returned transposed; 0 when σ = 0."""
    return sigma * rng.standard_normal(shape).T if sigma > 0 else 0.0


def _noisy_first_order(stats: SufficientStats, iters: int, sigma2: float, rng: np.random.Generator,
                       update, exact: bool, transcript: list | None) -> tuple[np.ndarray, list]:
    """The loop both paper algorithms share, from ``U_0 = 0``: at step k release the noisy gradient
    ``∇L(U_k) + ζ_k`` (the only access to the data) and let ``update(k, Uᵀ, noisy gradientᵀ)`` return
    ``U_{k+1}ᵀ``. Returns ``U_K`` and the loss ``L(U_k)`` for ``k = 0..K``; appends every release
    (transposed) to ``transcript`` when given (the privacy audit observes them)."""
    gradient = GradientOperator(stats, exact)
    Ut = np.zeros_like(stats.b.T)
    sigma = float(np.sqrt(sigma2))
    history = []
    for k in range(iters):
        grad_t, loss = gradient(Ut)
        history.append(loss)
        released = grad_t + _noise(rng, sigma, stats.b.shape)
        if transcript is not None:
            transcript.append(released)
        Ut = update(k, Ut, released)
    U = Ut.T.copy()
    history.append(paper_loss(U, stats))
    return U, history


def run_dp_pgd(stats: SufficientStats, radius_fro: float, iters: int, sigma2: float,
               steps: np.ndarray, rng: np.random.Generator, exact: bool = True,
               transcript: list | None = None) -> tuple[np.ndarray, list]:
    """Algorithm 1: ``U_{k+1} = Proj_{||U||_F <= radius}(U_k − η_k(∇L(U_k) + ζ_k))`` from ``U_0 = 0``.

    Returns the last iterate ``U_K`` and the loss ``L(U_k)`` for ``k = 0..K``. ``exact=False`` allows
    the float32 Hessian product of :class:`GradientOperator` (never on the formal path); every noisy
    gradient released is appended to ``transcript`` when given.
    """
    def projected_step(k, Ut, noisy_t):
        Ut = Ut - steps[k] * noisy_t
        norm = np.linalg.norm(Ut)
        return Ut * (radius_fro / norm) if norm > radius_fro else Ut

    return _noisy_first_order(stats, iters, sigma2, rng, projected_step, exact, transcript)


def run_dp_cg(stats: SufficientStats, radius: float, iters: int, sigma2: float, step_rule: str,
              rng: np.random.Generator, exact: bool = True, transcript: list | None = None) -> tuple[np.ndarray, list]:
    """Algorithm 2 (Frank–Wolfe on ``||U||_* <= r``) with noisy gradients, from ``U_0 = 0``.

    The linear minimisation oracle over the nuclear ball is ``−r u₁v₁ᵀ`` for the top singular pair of
    the noisy gradient. Step ``μ = 1/(K+2)`` as Algorithm 2 is written (``paper``) or ``2/(k+2)``
    (``classic``). ``exact`` and ``transcript`` as in :func:`run_dp_pgd`.
    """
    def frank_wolfe_step(k, Ut, noisy_t):
        vertex = -radius * _top_singular_outer(noisy_t.T)
        mu = 1.0 / (iters + 2) if step_rule == "paper" else 2.0 / (k + 2)
        return (1 - mu) * Ut + mu * vertex.T

    return _noisy_first_order(stats, iters, sigma2, rng, frank_wolfe_step, exact, transcript)


def _top_singular_outer(G: np.ndarray) -> np.ndarray:
    """``u₁ v₁ᵀ`` for the top singular pair of a wide ``d × q`` matrix (via the ``d × d`` Gram matrix)."""
    gram = G @ G.T
    values, vectors = np.linalg.eigh(gram)
    u = vectors[:, -1]
    s = np.sqrt(max(values[-1], 0.0))
    if s == 0:
        return np.zeros_like(G)
    v = G.T @ u / s
    return np.outer(u, v)


def _check_pgd_step(options) -> None:
    if options.step == "constant" and options.step_size is None:
        raise ConfigError("a constant step needs a positive step size")


#: The gradient families' audit: the formal gradient bound is reached at d = 1, more closely for larger p (at C = 5:
#: 0.95 at p = 3, 0.97 at p = 8); at d >= 2 its triangle inequalities leave about 0.72 on every pair and state searched.
#: The first release at U_0 = 0 on the all-at-cap pair reaches 0.93 at d = 1, p = 5, C = 3.
GRADIENT_AUDIT = AuditHints(sensitivity_fraction=0.91, worst_case_dim=1, worst_case_lags=8)


class _NoisyGradientFamily(Family):
    """What DP-PGD and DP-CG share: K noisy gradients, three calibrations, the formal gradient bound."""

    privacy = PrivacyTags(calibrations=CALIBRATIONS)
    cost = CostTags(iterative=True, kind="gradient")
    theorem = THEOREM_1

    def fro_radius(self, config) -> float:
        """The largest ``||U||_F`` of the constraint set."""
        raise NotImplementedError

    def theorem_scale(self, config) -> float:
        """ΔB or Δr: what the paper's theorem multiplies R by."""
        raise NotImplementedError

    def query_vector(self, stats, config) -> np.ndarray:
        """The first noisy gradient's mean, ``∇L(U_0) = (U_0 A − b)A`` at ``U_0 = 0``."""
        return -(stats.b @ stats.A).ravel()

    def noised_queries(self, stats, config, state=None):
        """The noisy gradient's mean at ``state`` (``U``; ``None``: ``U_0 = 0``), ``(UA − b)A``, at the per-step
        gradient bound of the privacy report (which holds over the whole constraint set)."""
        U = np.zeros_like(stats.b) if state is None else np.asarray(state, dtype=float)
        return (NoisedQuery("gradient", ((U @ stats.A - stats.b) @ stats.A).ravel(),
                            float(self.privacy_report(stats, config).sensitivity)),)

    def query_states(self, config, dim: int) -> StateSpace:
        """Every step releases at an iterate of the constraint set, inside ``||U||_F <= fro_radius``."""
        return StateSpace((int(dim), int(dim) * config.lags + 1), float(self.fro_radius(config)))

    def privacy_report(self, stats, config):
        return calibrate(stats, self.theorem, self.theorem_scale(config), self.fro_radius(config), config.iters,
                         config.calibration, config.dp_delta,
                         **config.privacy_target, count_cap=config.count_cap)


PGD_SETTINGS = (
    Setting("bound", "bound B on the kernels' size", "float", None, "the constraint ||H||_F <= B (||U||_F <= ΔB)",
            minimum=0.0, minimum_exclusive=True, public_bound=True),
    ITERATIONS,
    Setting("step", "step rule", "choice", "theorem", "theorem: η_k of Theorem 2; constant: a fixed step",
            choices=STEP_RULES),
    Setting("step_size", "constant step size", "float", None, "the step of the constant rule", minimum=0.0,
            minimum_exclusive=True, optional=True, none_means="needed by the constant rule only"),
)
PGDOptions = options_class("PGDOptions", PGD_SETTINGS, "DP-PGD", __name__, _check_pgd_step)


class PGD(_NoisyGradientFamily):
    """Algorithm 1: projected gradient descent on ``||U||_F <= ΔB`` with Gaussian noise on every gradient."""

    name = "pgd"
    label = "DP-PGD"
    summary = ("the paper's Algorithm 1: K noisy steps down the least-squares loss, each pulled back inside a "
               "ball of public radius B")
    settings = PGD_SETTINGS
    options_type = PGDOptions
    privacy = replace(_NoisyGradientFamily.privacy, constraint="bound")
    audit_hints = replace(GRADIENT_AUDIT, noiseless_limit="projected gradient",
                          worst_case_options=dict(bound=1e-3, iters=1, step="constant", step_size=1e-12))

    def fro_radius(self, config) -> float:
        return config.bin_size * config.bound

    def theorem_scale(self, config) -> float:
        return config.bin_size * config.bound

    def run(self, stats, config, report, rng, transcript=None):
        beta = self.fro_radius(config)
        k = np.arange(1, config.iters + 1)
        if config.step == "constant":
            steps = np.full(config.iters, float(config.step_size))
        else:
            steps = theorem_step_scale(stats, config, report) / np.sqrt(k)
        U, history = run_dp_pgd(stats, beta, config.iters, report.sigma2, steps, rng, exact=report.formal,
                                transcript=transcript)
        info = {"step_rule": config.step, "first_step": float(steps[0]), "constraint_fro": beta}
        info.update(hessian_info(stats, exact=report.formal))  # float64 on the formal path
        return U, history, info


CG_SETTINGS = (
    Setting("radius", "radius r on the kernels' size", "float", None,
            "the constraint ||U||_* <= r on the nuclear norm", minimum=0.0, minimum_exclusive=True, public_bound=True),
    Setting("iters", "iterations K", "int", 100, "number of noisy Frank–Wolfe steps", minimum=1, maximum=10**7,
            step=100, primary=True),
    Setting("fw_step", "Frank–Wolfe step", "choice", "paper",
            "paper: μ = 1/(K+2) as Algorithm 2 is written; classic: 2/(k+2)", choices=FW_STEP_RULES),
)
CGOptions = options_class("CGOptions", CG_SETTINGS, "DP-CG", __name__)


class CG(_NoisyGradientFamily):
    """Algorithm 2: Frank–Wolfe over the nuclear-norm ball ``||U||_* <= r`` with noisy gradients."""

    name = "cg"
    label = "DP-CG"
    summary = ("the paper's Algorithm 2: K noisy Frank–Wolfe steps, each towards the best point of a ball of "
               "public radius r in the nuclear norm (which favours few independent patterns)")
    settings = CG_SETTINGS
    options_type = CGOptions
    privacy = replace(_NoisyGradientFamily.privacy, constraint="radius")
    theorem = THEOREM_3
    audit_hints = replace(GRADIENT_AUDIT, noiseless_limit="frank-wolfe", worst_case_options=dict(radius=1e-3, iters=1))

    def fro_radius(self, config) -> float:
        return config.radius  # ||U||_F <= ||U||_*

    def theorem_scale(self, config) -> float:
        return config.bin_size * config.radius

    def run(self, stats, config, report, rng, transcript=None):
        U, history = run_dp_cg(stats, config.radius, config.iters, report.sigma2, config.fw_step, rng,
                               exact=report.formal, transcript=transcript)
        info = {"step_rule": config.fw_step, "constraint_nuclear": config.radius}
        info.update(hessian_info(stats, exact=report.formal))
        return U, history, info
