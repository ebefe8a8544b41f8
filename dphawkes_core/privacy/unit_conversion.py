"""A fit's guarantee for the other privacy unit: an event-level fit seen per person (group privacy over the
person's k events, or over the 2M capped events one sequence moves under an enforced cap M), and a sequence-level
fit seen per event (it protects each event too)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.accounting import compose_epsilon, gaussian_mu, grouped
from dphawkes_core.privacy.report import PrivacyReport
from dphawkes_core.privacy.sequence import capped_event_group
from dphawkes_core.validation import check_positive_whole


@dataclass(frozen=True)
class UnitConversion:
    """The guarantee of a fit for the other privacy unit.

    Attributes
    ----------
    fit_unit : str
        The unit the fit was calibrated for.
    events_per_person : int
        k: how many events the person (sequence) has (an assumption), or the enforced cap M of an event-level fit.
    mu : float
        The fit's GDP parameter (``μ`` with ``(ε, δ)`` its Gaussian profile).
    person_mu, person_epsilon : float
        Guarantee for a person: event unit ``k·μ`` for a person with k events (group privacy, exact for Gaussian
        mechanisms in GDP), or ``2M·μ`` under an enforced cap M (one sequence replaced is at most M capped events
        out and M in), and its ε at δ; sequence unit ``μ`` itself.
    event_mu, event_epsilon : float
        Guarantee for one event: the fit's own for the event unit (``2μ`` per raw event under a cap: one raw event
        can push a kept one out); for the sequence unit ``μ`` (an event added or removed in one sequence is a
        replacement of that sequence).
    naive_epsilon, naive_delta : float
        Event unit only: the generic (ε, δ) group-privacy bound ``kε``, ``k e^{(k−1)ε} δ`` (looser).
    dp_delta : float
    accounting : str
        ``gdp`` (continuous Gaussian noise, exact), or ``zcdp`` for a discrete Gaussian fit: then every μ above is
        ``√(2ρ)`` of its ρ-zCDP (a group of k is ``k²ρ``-zCDP) and every ε is converted from zCDP.
    capped : bool
        Event unit: the person's figure comes from an enforced cap M (``events_per_person``), not an assumed k.
    """

    fit_unit: str
    events_per_person: int
    mu: float
    person_mu: float
    person_epsilon: float
    event_mu: float
    event_epsilon: float
    naive_epsilon: float | None
    naive_delta: float | None
    dp_delta: float
    accounting: str = "gdp"
    capped: bool = False

    def sentences(self, formulas: bool = True) -> tuple[str, ...]:
        """Plain-words lines for display.

        Parameters
        ----------
        formulas : bool
            Keep the accounting's figures in the lines (μ of Gaussian DP, ρ of zCDP, the group factors); without
            them the lines say the same guarantees in words only (the app shows the figures on request).
        """
        k, delta = self.events_per_person, self.dp_delta

        def figure(text: str) -> str:
            return text if formulas else ""

        if self.capped:
            raw, person = ("2²ρ", f"({2 * k})²ρ") if self.accounting == "zcdp" else ("2μ", f"{2 * k}μ")
            return (f"Per raw event: ε = {self.event_epsilon:.3g} at δ = {delta:g} (one event added can push a kept "
                    f"one out of the first M = {k}: two capped events{figure(', ' + raw)}).",
                    f"Per person (one whole sequence, enforced cap M = {k}: at most {k} kept events out and {k} in"
                    f"{figure(', ' + person)}): ε = {self.person_epsilon:.3g} at δ = {delta:g}.")
        if self.accounting == "zcdp" and self.fit_unit == "event":
            rho, person_rho = self.mu**2 / 2, self.person_mu**2 / 2
            return (f"Per event: ε = {self.event_epsilon:.3g} at δ = {delta:g} ({figure(f'ρ = {rho:.3g} zCDP, ')}"
                    "discrete Gaussian noise).",
                    f"Per person with k = {k} events (group privacy{figure(f' in zCDP, k²ρ = {person_rho:.3g}')}): "
                    f"ε = {self.person_epsilon:.3g} at δ = {delta:g}.")
        if self.fit_unit == "event":
            generic = "the generic bound kε, k·e^((k−1)ε)·δ" if formulas else "the generic group bound"
            naive = (f" ({generic} gives ε = {self.naive_epsilon:.3g} with δ = {self.naive_delta:.3g})"
                     if self.naive_delta is not None else f" ({generic} gives δ >= 1: nothing)")
            return (f"Per event: ε = {self.event_epsilon:.3g} at δ = {delta:g}{figure(f' (μ = {self.mu:.3g} GDP)')}.",
                    f"Per person with k = {k} events (group privacy, exact for Gaussian noise"
                    f"{figure(f': k·μ = {self.person_mu:.3g} GDP')}): ε = {self.person_epsilon:.3g} at "
                    f"δ = {delta:g}{naive}.")
        how = f"ρ = {self.mu**2 / 2:.3g} zCDP" if self.accounting == "zcdp" else f"μ = {self.mu:.3g} GDP"
        return (f"Per person (one whole sequence, any number of events): ε = {self.person_epsilon:.3g} at "
                f"δ = {delta:g}{figure(f' ({how})')}.",
                f"Per event: at least as strong — ε = {self.event_epsilon:.3g} at δ = {delta:g} (one event "
                "changed is one sequence replaced).")

    def to_dict(self) -> dict:
        """Plain dict for JSON export."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def unit_conversion(report: PrivacyReport, events_per_person: int, max_events: int | None = None) -> UnitConversion:
    """Convert a formal fit's guarantee to the other unit.

    Group privacy is the report's mechanisms (:meth:`PrivacyReport.mechanisms`) grouped
    (:func:`~dphawkes_core.privacy.accounting.grouped`: every sensitivity times the group's size) and composed by
    the accountant. Both formal mechanisms here are Gaussian (one release, K releases or a release plus the
    automatic count cap's), so they are exactly μ-GDP, and a group of k neighbours is exactly kμ-GDP (Dong, Roth &
    Su 2019, Theorem 2.14). A discrete Gaussian fit (``report.discrete``, event unit) is not μ-GDP: it is ρ-zCDP
    (:attr:`PrivacyReport.rho`), and a group of k events shifts its integer releases by at most k times the
    sensitivity, so ``k²ρ``-zCDP.

    Under an enforced cap M (an event-level fit of the capped data, ``max_events``) the groups are the ledger's
    (:func:`~dphawkes_core.privacy.sequence.capped_event_group`): 2 capped events per raw event and 2M per
    sequence, whatever k — a person's ``k·μ`` would understate it (derivation in ``docs/privacy.md``, "Both
    privacy units, one budget").

    Parameters
    ----------
    report : PrivacyReport
        A formal report (its ``privacy_unit`` says which unit it was calibrated for).
    events_per_person : int
        k >= 1: the events one person is assumed to have (ignored under a cap).
    max_events : int, optional
        The cap M enforced on each sequence before an event-level fit (``FitConfig.max_events``).
    """
    check_positive_whole(events_per_person, "the number of events per person k")
    if not report.formal:
        raise ConfigError("only a formal guarantee can be converted between units")
    unit, k, delta = report.privacy_unit, int(events_per_person), report.dp_delta
    eps = report.epsilon_by_calibration.get("formal") or report.epsilon
    discrete = getattr(report, "discrete", False)
    mechanisms = report.mechanisms() if report.sigma2 > 0 else None  # σ² = 0: no noise, nothing bounded

    def group(factor: float) -> tuple[float, float]:
        """μ (GDP, or √(2ρ) of zCDP) and ε at δ of the fit's mechanisms for a group of ``factor`` neighbours."""
        if mechanisms is None:
            return math.inf, math.inf
        seen = grouped(mechanisms, factor)
        return gaussian_mu(seen), compose_epsilon(seen, delta)

    mu = group(1)[0]
    if unit == "event" and max_events is not None:
        (event_mu, event_eps), (person_mu, person_eps) = (group(capped_event_group(view, int(max_events)))
                                                          for view in ("event", "sequence"))
        return UnitConversion("event", int(max_events), mu, person_mu, person_eps, event_mu, event_eps, None, None,
                              delta, "zcdp" if discrete else "gdp", capped=True)
    if unit != "event":  # a sequence-level fit protects each event too: the same guarantee
        return UnitConversion(unit, k, mu, mu, eps, mu, eps, None, None, delta, "zcdp" if discrete else "gdp")
    person_mu, person_eps = group(k)
    if discrete:
        return UnitConversion(unit, k, mu, person_mu, person_eps, mu, eps, None, None, delta, "zcdp")
    log_naive_delta = math.log(k) + (k - 1) * eps + math.log(delta)  # in logs: e^((k−1)ε) overflows
    return UnitConversion(unit, k, mu, person_mu, person_eps, mu, eps, k * eps,
                          math.exp(log_naive_delta) if log_naive_delta < 0 else None, delta)
