"""What a release spends, as typed events, and the one function that composes their ε; the zCDP and Gaussian DP
conversions it rests on.

The events are ``dp_accounting``'s (:mod:`dp_accounting.dp_event`): ``GaussianDpEvent(z)`` (noise multiplier
z = σ/S), ``LaplaceDpEvent(b)`` (scale over L1 sensitivity), ``ZCDpEvent(ρ)`` (a discrete Gaussian release: ρ-zCDP,
not μ-GDP), ``SelfComposedDpEvent(event, k)`` and ``ComposedDpEvent(events)``. dp-accounting 0.6 has no event for
a step that is ε-DP by construction (its ``LaplaceDpEvent`` is the Laplace mechanism's own, tighter privacy loss),
so that one is :class:`PureDpEvent`. A ledger entry stores each event with a label as a :class:`Mechanism`, the
ledger's file format (``kind``, ``parameter``, ``releases``, ``label``, and ``bound``: the family bound and version
its multiplier is over).

:func:`compose_epsilon` composes any of them (derivations in ``docs/privacy.md``, "The ledger"): Gaussians alone
exactly, as one Gaussian of ``μ² = Σ k_i/z_i²`` (Dong, Roth & Su 2019); with a Laplace or pure step, through
dp-accounting's privacy loss distributions (discretised pessimistically: an upper bound); with a zCDP event, all in
zCDP (ρ adds up, converted once by :func:`zcdp_epsilon`: an upper bound). Never by summing ε.

This is the one accountant: the only module of the product that imports ``dp_accounting`` (a test enforces it).
Its interface is the composition and its two inverses, both defined as searches over that one composition (the
pattern of dp-accounting's ``mechanism_calibration.calibrate_dp_mechanism``, which they call where no closed form
exists):

* :func:`compose_epsilon` — mechanisms → ε at δ;
* :func:`split` — (ε, δ) and a share → a selection's noise (one release of sensitivity 1 at ``share·ε`` alone) and
  the one Gaussian release after it that brings the two to exactly (ε, δ) (an automatic count cap, clip norm G or
  time scale, then the fit: :class:`Split`);
* :func:`remaining` — spent mechanisms and a budget → the ε (alone) of the largest one more release that still fits;
* :func:`grouped` — group privacy, only as mechanisms: every sensitivity times the group's size.

Where the composition is additive (Gaussians alone: μ² adds; anything with a zCDP event: ρ adds) the inverses are
that addition undone, in closed form; otherwise (a Laplace or pure step beside Gaussians: privacy loss distributions)
they search. The tests check each closed form against the search and the composition.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from dphawkes_core.errors import ConfigError, DPHawkesError
from dphawkes_core.validation import check_epsilon_delta, check_multiplier, check_share

MECHANISM_KINDS = ("gaussian", "discrete-gaussian", "laplace", "pure")
DEFAULT_BUDGET_EPSILON = 5.0  # the total (ε, δ) of a data set new to a ledger, unless its owner sets another
DEFAULT_BUDGET_DELTA = 1e-5
PLD_INTERVAL = 1e-3  # value discretisation of the PLD (pessimistic: an upper bound on ε)
_LEFT_OVER = 1e-9  # the release's share of the budget's μ² (or ρ) below which a split is rounding, not a budget
_SEARCH_TOLERANCE = 1e-10  # the search's tolerance on the next release's μ, relative to the budget's


class BudgetExceeded(DPHawkesError):
    """A release would take the composed ε of a data set above its budget."""


@dataclass(frozen=True)
class PureDpEvent:
    """A step that is ε-DP by construction (e.g. an exponential mechanism), composed through the worst-case privacy
    loss of any ε-DP mechanism (dp-accounting 0.6 has no such event).

    Attributes
    ----------
    epsilon : float
        Its ε.
    """

    epsilon: float


@dataclass(frozen=True)
class Mechanism:
    """One private step of a release with its label, as the ledger stores it (its fields are the ledger file's).

    Attributes
    ----------
    kind : {"gaussian", "discrete-gaussian", "laplace", "pure"}
        Gaussian noise, the discrete Gaussian on integers (``ρ = releases/(2z²)`` zCDP, not μ-GDP), Laplace
        noise, or a step that is ε-DP by construction (e.g. an exponential mechanism).
    parameter : float
        Gaussian and discrete Gaussian: noise multiplier ``z = σ/S`` (noise std over L2 sensitivity); Laplace:
        scale over L1 sensitivity; pure: its ε.
    releases : int
        How many times it is applied (adaptively), e.g. K noisy gradients.
    label : str
        What it releases, for display.
    bound : str
        The sensitivity bound its noise multiplier is over, as ``family/version`` (``exp/3``: version 3 of the
        exponential family's bounds): a release charged under a version later found short is re-costed when its
        ledger is read (:mod:`~dphawkes_core.release.recost`). Empty for a step whose sensitivity is not a family's
        bound (a count, a selection: sensitivity 1) and in ledgers written before bounds carried a version.
    """

    kind: str
    parameter: float
    releases: int = 1
    label: str = ""
    bound: str = ""

    def __post_init__(self):
        if self.kind not in MECHANISM_KINDS:
            raise DPHawkesError(f"unknown mechanism {self.kind!r}; choose one of {', '.join(MECHANISM_KINDS)}")
        if not (math.isfinite(self.parameter) and self.parameter > 0) or int(self.releases) < 1:
            raise DPHawkesError(f"a {self.kind} mechanism needs a positive parameter and releases >= 1, "
                                f"got {self.parameter!r} × {self.releases!r}")

    def dp_event(self):
        """The typed event this entry records: ``SelfComposedDpEvent`` of a ``GaussianDpEvent``, a ``ZCDpEvent``
        (``ρ = 1/(2z²)`` per discrete Gaussian release), a ``LaplaceDpEvent`` or a :class:`PureDpEvent`."""
        from dp_accounting import dp_event  # 0.9 s import: only when composing

        one = {"gaussian": lambda z: dp_event.GaussianDpEvent(z),
               "discrete-gaussian": lambda z: dp_event.ZCDpEvent(0.5 / z / z),
               "laplace": lambda b: dp_event.LaplaceDpEvent(b),
               "pure": PureDpEvent}[self.kind](float(self.parameter))
        return dp_event.SelfComposedDpEvent(one, int(self.releases))


def gaussian_mechanism(sigma: float, sensitivity: float, releases: int = 1, label: str = "") -> Mechanism:
    """``releases`` Gaussian releases with noise std σ and L2 sensitivity S (noise multiplier σ/S)."""
    return Mechanism("gaussian", float(sigma) / float(sensitivity), int(releases), label)


def compose_epsilon(events, delta: float) -> float:
    """Smallest ε such that all ``events`` together are (ε, δ)-DP (adaptive composition).

    Parameters
    ----------
    events : iterable
        ``dp_accounting`` events (:mod:`dp_accounting.dp_event`: Gaussian, Laplace, zCDP, self-composed, composed,
        no-op), :class:`PureDpEvent` or :class:`Mechanism` (a ledger entry's labelled event).
    delta : float
        δ.

    Returns
    -------
    float
        Gaussians alone: exact (one Gaussian of ``μ² = Σ k_i/z_i²``, dp-accounting's analytic Gaussian mechanism).
        With Laplace or pure steps: dp-accounting's privacy loss distributions (an upper bound). With a zCDP event:
        every event in zCDP (:func:`_rho_of_part`, an upper bound). No event: 0.

    Raises
    ------
    DPHawkesError
        For an event this accountant does not support (subsampling, ...).
    """
    parts = _parts(events)
    return _composed(parts, float(delta)) if parts else 0.0


def _parts(events) -> tuple:
    """``events`` as sorted ``((kind, parameter), repetitions)`` pairs (:func:`_collect`)."""
    parts: dict = {}
    for event in events:
        _collect(event.dp_event() if isinstance(event, Mechanism) else event, 1, parts)
    return tuple(sorted(parts.items()))


def _collect(event, count: int, parts: dict) -> None:
    """Add ``count`` times ``event`` to ``parts``: ``{(kind, parameter): repetitions}``, kind one of ``gaussian``
    (z), ``laplace`` (b), ``zcdp`` (ρ), ``pure`` (ε)."""
    from dp_accounting import dp_event

    leaf = {dp_event.GaussianDpEvent: lambda e: ("gaussian", float(e.noise_multiplier)),
            dp_event.LaplaceDpEvent: lambda e: ("laplace", float(e.noise_multiplier)),
            dp_event.ZCDpEvent: lambda e: ("zcdp", float(e.rho)) if e.xi == 0 else None,
            PureDpEvent: lambda e: ("pure", float(e.epsilon))}.get(type(event))
    if isinstance(event, dp_event.SelfComposedDpEvent):
        _collect(event.event, count * int(event.count), parts)
    elif isinstance(event, dp_event.ComposedDpEvent):
        for inner in event.events:
            _collect(inner, count, parts)
    elif isinstance(event, dp_event.NoOpDpEvent):
        return
    elif leaf is None or leaf(event) is None:
        raise DPHawkesError(f"the accountant cannot compose {type(event).__name__}")
    else:
        key = leaf(event)
        if not (math.isfinite(key[1]) and key[1] > 0) or count < 1:
            raise DPHawkesError(f"{type(event).__name__} needs a positive parameter, got {key[1]!r}")
        parts[key] = parts.get(key, 0) + count


def _currency(parts) -> str:
    """What the parts are composed in: ``gdp`` (Gaussians alone: μ² adds up), ``zcdp`` (any zCDP event: ρ adds up)
    or ``pld`` (a Laplace or pure step beside Gaussians: privacy loss distributions)."""
    kinds = {kind for (kind, _), _ in parts}
    return "zcdp" if "zcdp" in kinds else "gdp" if kinds <= {"gaussian"} else "pld"


def _mu_squared(parts) -> float:
    """``Σ k/z²`` of the Gaussian parts: one Gaussian's μ² (Dong, Roth & Su 2019)."""
    return sum(k / z**2 for (kind, z), k in parts if kind == "gaussian")


def _rho(parts) -> float:
    """``Σ k·ρ`` of every part in zCDP (:func:`_rho_of_part`)."""
    return sum(_rho_of_part(kind, value) * k for (kind, value), k in parts)


@functools.lru_cache(maxsize=4096)  # pages recompose the same ledger on every render (~10 ms per Gaussian)
def _composed(parts: tuple, delta: float) -> float:
    currency = _currency(parts)
    if currency == "zcdp":
        return zcdp_epsilon(_rho(parts), delta)
    mu_sq = _mu_squared(parts)
    others = [(kind, value, k) for (kind, value), k in parts if kind != "gaussian"]
    if currency == "gdp":
        from dp_accounting.gaussian_mechanism import get_epsilon_gaussian  # 1.3 s import: only when composing

        return float(get_epsilon_gaussian(1.0 / math.sqrt(mu_sq), delta))
    return _pld_epsilon(mu_sq, others, delta)


def _rho_of_part(kind: str, value: float) -> float:
    """ρ-zCDP of one event: ``1/(2z²)`` for a Gaussian — its Rényi divergence of order α is exactly ``α/(2z²)`` —,
    ρ itself for a zCDP event, and ``ε²/2`` for a Laplace (ε = 1/scale) or pure ε-DP step (Bun & Steinke 2016,
    Proposition 3.3)."""
    if kind == "gaussian":
        return 0.5 / value / value
    if kind == "zcdp":
        return value
    epsilon = 1.0 / value if kind == "laplace" else value
    return epsilon**2 / 2.0


def _pld_epsilon(mu_sq: float, others, delta: float) -> float:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    parts = [pld.from_gaussian_mechanism(standard_deviation=1.0 / math.sqrt(mu_sq),
                                         value_discretization_interval=PLD_INTERVAL)] if mu_sq > 0 else []
    for kind, value, releases in others:
        if kind == "laplace":
            one = pld.from_laplace_mechanism(parameter=value, value_discretization_interval=PLD_INTERVAL)
        else:
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(value, 0.0),
                                              value_discretization_interval=PLD_INTERVAL)
        parts.append(one.self_compose(releases) if releases > 1 else one)
    total = parts[0]
    for part in parts[1:]:
        total = total.compose(part)
    return float(total.get_epsilon_for_delta(delta))


# --- zCDP and Gaussian DP: ε ↔ ρ ↔ noise multiplier -------------------------------------------------------------


def discrete_gaussian_rho(sigma: float, sensitivity: float, releases: int = 1) -> float:
    """ρ of ``releases`` discrete Gaussian releases with scale σ and L2 sensitivity S: ``K·S²/(2σ²)``.

    For an integer shift v, ``Σ_x p(x)^α p(x − v)^(1−α) = e^{α(α−1)‖v‖²/(2σ²)} Σ_x e^{−‖x − (1−α)v‖²/(2σ²)} / Σ_x
    e^{−‖x‖²/(2σ²)}`` and the last ratio is at most 1 (a theta sum is largest at a lattice point), so
    ``D_α ≤ α‖v‖²/(2σ²)`` at every order (CKS 2020; OpenDP's privacy map gives the same ρ)."""
    return math.inf if sigma <= 0 else int(releases) * float(sensitivity) ** 2 / (2.0 * float(sigma) ** 2)


def _conversion(rho: float, delta: float, alpha):
    """ε at δ from ρ-zCDP at Rényi order α: ``αρ + log(1 − 1/α) − (log δ + log α)/(α − 1)`` (CKS 2020,
    Proposition 12; Asoodeh et al. 2021; dp-accounting's ``rdp.compute_epsilon``). Valid at every α > 1."""
    alpha = np.asarray(alpha, dtype=float)
    return alpha * rho + np.log1p(-1.0 / alpha) - (math.log(delta) + np.log(alpha)) / (alpha - 1.0)


@functools.lru_cache(maxsize=4096)
def zcdp_epsilon(rho: float, delta: float) -> float:
    """Smallest ε (at δ) that ρ-zCDP implies through :func:`_conversion`, minimised over the order α > 1 (a grid
    over ``log(α − 1)``, then Brent between its neighbours). Any order gives a valid bound, so a slightly
    suboptimal α only loosens ε. Equal to OpenDP's ``make_zCDP_to_approxDP`` (tested)."""
    from scipy.optimize import minimize_scalar

    rho, delta = float(rho), float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"δ must be in (0, 1), got {delta!r}")
    if rho <= 0:
        return 0.0
    if not math.isfinite(rho):
        return math.inf
    grid = np.linspace(-20.0, 25.0, 451)  # log(α − 1)
    values = _conversion(rho, delta, 1.0 + np.exp(grid))
    best = int(np.argmin(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    refined = minimize_scalar(lambda t: float(_conversion(rho, delta, 1.0 + math.exp(t))), bounds=(low, high),
                              method="bounded", options={"xatol": 1e-12})
    return max(0.0, min(float(values[best]), float(refined.fun)))


@functools.lru_cache(maxsize=1024)
def zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ whose :func:`zcdp_epsilon` at δ is at most ε (by bisection; shaded down so that it never exceeds ε)."""
    from scipy.optimize import brentq

    epsilon, delta = float(epsilon), float(delta)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"ε must be a positive number, got {epsilon!r}")
    high = epsilon
    while zcdp_epsilon(high, delta) <= epsilon:
        high *= 2.0
    low = high / 2.0
    while zcdp_epsilon(low, delta) > epsilon:
        low /= 2.0
    rho = brentq(lambda r: zcdp_epsilon(r, delta) - epsilon, low, high, xtol=1e-300, rtol=1e-15, maxiter=200)
    while zcdp_epsilon(rho, delta) > epsilon:
        rho *= 1.0 - 1e-12
    return float(rho)


def gaussian_multiplier(epsilon: float, delta: float, discrete: bool = False) -> float:
    """Noise multiplier ``z = σ/S`` of one Gaussian release that is exactly (ε, δ)-DP: the analytic Gaussian
    mechanism (continuous), or the ``1/√(2ρ)`` of the largest ρ-zCDP that converts to (ε, δ) (discrete)."""
    if discrete:
        return 1.0 / math.sqrt(2.0 * zcdp_rho(epsilon, delta))
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian  # here: 1.3 s import, private fits only

    return float(get_sigma_gaussian(epsilon, delta))


@functools.lru_cache(maxsize=4096)  # public numbers only; the neighbour search calibrates each pair (~10 ms)
def multiplier_epsilon(multiplier: float, delta: float, discrete: bool = False) -> float:
    """ε at δ of one Gaussian release with noise multiplier ``z = σ/S`` (inverse of :func:`gaussian_multiplier`);
    a multiplier below :data:`~dphawkes_core.validation.MULTIPLIER_MIN` is refused (its ε leaves float64's range)."""
    if not multiplier > 0:
        return math.inf
    check_multiplier(multiplier)
    if discrete:
        return zcdp_epsilon(0.5 / multiplier / multiplier, delta)  # underflows to ρ = 0 for a huge multiplier
    from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

    return float(get_epsilon_gaussian(multiplier, delta))


# --- the inverses of the composition: what is left of a budget, and a budget split -------------------------------


def remaining(mechanisms, budget, kind: str = "gaussian") -> float:
    """The remaining budget: the largest ε (alone, at the budget's δ) of one more ``kind`` release that the budget
    still holds beside ``mechanisms`` — the release whose composition with them is exactly the budget's ε. It exceeds
    ``budget − spent`` because releases compose sub-additively.

    Parameters
    ----------
    mechanisms : iterable
        What was spent (:class:`Mechanism` or ``dp_accounting`` events, as :func:`compose_epsilon` takes them).
    budget
        Anything with ``epsilon`` and ``delta`` (a ledger's budget).
    kind : {"gaussian", "discrete-gaussian"}
        The next release's noise.

    Returns
    -------
    float
        0 when the spent mechanisms already reach the budget.
    """
    past, epsilon, delta = tuple(mechanisms), float(budget.epsilon), float(budget.delta)
    if compose_epsilon(past, delta) >= epsilon:
        return 0.0
    mu, _ = _next_mu(past, epsilon, delta, kind)
    return multiplier_epsilon(1.0 / mu, delta, kind == "discrete-gaussian") if mu > 0 else 0.0


@dataclass(frozen=True)
class Split:
    """(ε, δ) split between a selection — one release of L2 sensitivity 1 that spends ``share·ε`` alone (an
    automatic count cap's tail counts, a clip norm's histogram, the time scale's count of events) — and the release
    after it, so that both together are exactly (ε, δ)-DP (:func:`split`).

    Attributes
    ----------
    epsilon, delta : float
        The whole budget.
    share : float
        The selection's share of ε.
    discrete : bool
        Both draw the discrete Gaussian (composed in zCDP); otherwise continuous Gaussians (composed in μ-GDP).
    selection_multiplier : float
        The selection's noise multiplier (its noise std: sensitivity 1).
    rest_multiplier : float
        The noise multiplier of the release after it, as one Gaussian release (K releases: :meth:`rest`).
    rest_epsilon : float
        ε of that release alone at δ: the target ε a release calibrated after the selection gets.
    """

    epsilon: float
    delta: float
    share: float
    discrete: bool
    selection_multiplier: float
    rest_multiplier: float
    rest_epsilon: float

    @property
    def kind(self) -> str:
        """The mechanisms' kind: ``discrete-gaussian`` or ``gaussian``."""
        return "discrete-gaussian" if self.discrete else "gaussian"

    def selection(self, label: str = "") -> Mechanism:
        """The selection's mechanism."""
        return Mechanism(self.kind, self.selection_multiplier, 1, label)

    def rest(self, releases: int = 1, label: str = "") -> Mechanism:
        """The release after the selection as ``releases`` adaptive releases of equal noise (multiplier
        ``√K·rest_multiplier`` each: together one release of ``rest_multiplier``)."""
        return Mechanism(self.kind, math.sqrt(releases) * self.rest_multiplier, int(releases), label)


@functools.lru_cache(maxsize=256)  # public numbers only; each page render asks again (a root search)
def split(epsilon: float, delta: float, share: float, discrete: bool = False, what: str = "the selection") -> Split:
    """Split (ε, δ) between a selection that spends ``share·ε`` alone and the release after it (:class:`Split`).

    The selection's multiplier calibrates one release of sensitivity 1 to ``(share·ε, δ)``
    (:func:`gaussian_multiplier`); the release after it is the largest one more release that the budget (ε, δ)
    holds beside it (what :func:`remaining` finds): μ-GDP, ``μ_rest² = μ(ε)² − 1/z_selection²``; discrete, in zCDP,
    ``ρ_rest = ρ(ε) − ρ_selection``.

    Parameters
    ----------
    epsilon, delta : float
        The whole budget.
    share : float
        The selection's share of ε, in (0, 1).
    discrete : bool
        Discrete Gaussian releases (zCDP); otherwise continuous Gaussians.
    what : str
        What the selection chooses, for the messages (``the count cap``, ``the time scale``, ...).

    Raises
    ------
    ConfigError
        For an ε, δ or share out of range, or when the selection leaves nothing for the release (a tiny ε: both
        multipliers are δ's alone, and what is left of μ² or ρ is rounding).
    """
    check_epsilon_delta(epsilon, delta)
    check_share(share, what)
    kind = "discrete-gaussian" if discrete else "gaussian"
    selection = Mechanism(kind, gaussian_multiplier(share * epsilon, delta, discrete))
    mu, mu_budget = _next_mu((selection,), float(epsilon), float(delta), kind)
    if not mu * mu > _LEFT_OVER * mu_budget * mu_budget:
        raise ConfigError(f"the share {share:g} of ε = {epsilon:g} spent on {what} leaves nothing for the release")
    return Split(float(epsilon), float(delta), float(share), bool(discrete), float(selection.parameter), 1.0 / mu,
                 multiplier_epsilon(1.0 / mu, delta, discrete))


def divided(multiplier: float, shares) -> tuple[float, ...]:
    """One Gaussian release of noise multiplier ``multiplier`` divided into adaptive Gaussian releases that compose
    exactly to it: release ``i`` gets the share ``shares[i]`` of its μ² = 1/z² (μ-GDP: μ² adds up), so its multiplier
    is ``z/√share``. Shares in (0, 1], summing to 1 (ctls's width chosen with a share of the budget: the choice's
    release and the direct one)."""
    shares = tuple(float(q) for q in shares)
    if not shares or any(not 0.0 < q <= 1.0 for q in shares) or abs(sum(shares) - 1.0) > 1e-12:
        raise ConfigError(f"the shares {', '.join(f'{q:g}' for q in shares)} must each be in (0, 1] and sum to 1")
    return tuple(float(multiplier) / math.sqrt(q) for q in shares)


def _next_mu(past: tuple, epsilon: float, delta: float, kind: str) -> tuple[float, float]:
    """``(μ_next, μ_budget)``: the ``1/z`` of the largest one more ``kind`` release whose composition with ``past``
    is at most ε at δ (0 when none fits), and that of one release spending ε alone. Gaussians alone: μ² adds up;
    with any zCDP event (a discrete Gaussian), ρ = μ²/2 adds up (:func:`compose_epsilon`'s currencies, undone in
    closed form); otherwise :func:`_search_next_mu`."""
    currency = _currency(_parts(past + (Mechanism(kind, 1.0),)))
    if currency == "gdp":
        mu_budget = 1.0 / gaussian_multiplier(epsilon, delta)
        rest = mu_budget**2 - _mu_squared(_parts(past))
        return (math.sqrt(rest) if rest > 0 else 0.0), mu_budget
    if currency == "zcdp":
        rho_budget = zcdp_rho(epsilon, delta)
        rest = rho_budget - _rho(_parts(past))
        return (math.sqrt(2.0 * rest) if rest > 0 else 0.0), math.sqrt(2.0 * rho_budget)
    return _search_next_mu(past, epsilon, delta, kind), 1.0 / gaussian_multiplier(epsilon, delta, False)


def _search_next_mu(past: tuple, epsilon: float, delta: float, kind: str) -> float:
    """The largest μ with ``compose_epsilon(past + (kind release of multiplier 1/μ,), δ) <= ε``, found by
    dp-accounting's ``calibrate_dp_mechanism`` (Brent's method on the ε gap, then a bisection that guarantees a
    non-positive gap) over this module's composition; ``0.0`` when ``past`` alone reaches ε. Valid whatever the
    mechanisms: the closed forms of :func:`_next_mu` are checked against it."""
    from dp_accounting import dp_event, mechanism_calibration

    epsilon, delta = float(epsilon), float(delta)
    if compose_epsilon(past, delta) >= epsilon:
        return 0.0
    mu_alone = 1.0 / gaussian_multiplier(epsilon, delta, kind == "discrete-gaussian")  # beside past: over ε

    def event(mu: float):
        return dp_event.NoOpDpEvent() if mu <= 0 else Mechanism(kind, 1.0 / mu).dp_event()

    mu = mechanism_calibration.calibrate_dp_mechanism(
        lambda: _accountant_class()(past), event, epsilon, delta,
        mechanism_calibration.ExplicitBracketInterval(0.0, mu_alone), tol=_SEARCH_TOLERANCE * mu_alone)
    return max(float(mu), 0.0)


@functools.cache
def _accountant_class() -> type:
    """dp-accounting's ``PrivacyAccountant`` over :func:`compose_epsilon`, starting from what was spent (kept
    apart from its own ledger, which the search asks to start empty); defined when a search first runs (the import
    takes a second)."""
    from dp_accounting import privacy_accountant

    class Composer(privacy_accountant.PrivacyAccountant):
        def __init__(self, spent: tuple):
            super().__init__(privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE)
            self._events = list(spent)

        def _maybe_compose(self, event, count, do_compose):
            if do_compose:
                self._events.extend([event] * int(count))
            return None  # every event is supported (compose_epsilon refuses the ones it cannot compose)

        def get_epsilon(self, target_delta: float) -> float:
            return compose_epsilon(self._events, target_delta)

    return Composer


def grouped(mechanisms, factor: float) -> tuple[Mechanism, ...] | None:
    """``mechanisms`` for a group of ``factor`` neighbours (group privacy): every sensitivity times the factor (by
    the triangle inequality), so a Gaussian, discrete Gaussian or Laplace noise multiplier divided by it (μ-GDP →
    kμ, ρ-zCDP → k²ρ) and a pure step's ε multiplied by it; ``None`` for an unbounded group."""
    if not math.isfinite(factor):
        return None
    if factor == 1:
        return tuple(mechanisms)
    return tuple(replace(m, parameter=m.parameter * factor if m.kind == "pure" else m.parameter / factor)
                 for m in mechanisms)


def gaussian_mu(mechanisms) -> float:
    """μ of Gaussian or discrete Gaussian ``mechanisms`` together: ``√(Σ k/z²)`` (μ-GDP; for discrete ones
    ``√(2ρ)`` of their ρ-zCDP, the same sum); a Laplace or pure step has no μ (refused)."""
    parts = _parts(mechanisms)
    if any(kind not in ("gaussian", "zcdp") for (kind, _), _ in parts):
        raise DPHawkesError("only Gaussian mechanisms have a μ")
    return math.sqrt(_mu_squared(parts) + 2.0 * sum(rho * k for (kind, rho), k in parts if kind == "zcdp"))
