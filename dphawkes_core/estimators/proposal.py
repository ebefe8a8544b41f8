"""Which family to propose, by one rule from public facts — never from the data's own held-out score (that would be a
setting read from the data): whether the fit must be private, what the user declares about the kernels, and the data
size when it is public (on private data: the size the user declares, or unknown). Each branch is a measurement of
``docs/accuracy.md`` ("Which family predicts: the proposal rule"):

* **non-private, kernels smooth and decreasing from t = 0** (aftershocks, replies): exp's maximum likelihood on
  decays from the support and the width (Japan quakes +0.41–0.43 nats per test event, MAT quakes +0.47–0.64, ahead of
  tick's EM by 0.07–0.18; exp-5d 0.100 against least squares' 0.117);
* **non-private, otherwise**: mle (step kernels by maximum likelihood: tick's EM's fit, 0.98–1.05× its error);
* **private, kernels smooth and decreasing**: exp's formal release (exp-5d at 10⁵ events: 0.221 against ctls's
  0.332 and DP-SSP's 0.456; Japan quakes at ε = 1, (5, 0.25) d: the best mean gain of the three, 10 draws); from
  :data:`DERIVED_FROM` events stated, in the differences basis with the Gram derived from the values (5-d test
  networks at 10⁵ events: 0.130 against the released Gram's 0.166, lower on 10 of 10; at 10⁶ 0.023 against 0.030);
* **private, delayed or flat, or not known, from** :data:`CTLS_FROM` **events**: ctls (paper-2d at 5·10⁴ events:
  0.135 against DP-SSP's 0.247; at 10⁵ ctls is better on paper-2d and sparse-5d);
* **private, below that or size unknown**: DP-SSP (better than ctls at 10⁴ events on all four held-out processes
  and on the near-critical ones at 10⁵).

The dimension d is not an input: no measurement so far has shown the choice turning on it (2 to 10 dimensions).
"""

from __future__ import annotations

from dataclasses import dataclass

from dphawkes_core.errors import ConfigError

SMOOTH, DELAYED, UNKNOWN = "smooth", "delayed", "unknown"
KERNEL_SHAPES = {SMOOTH: "smooth and decreasing from t = 0 (aftershocks, replies)",
                 DELAYED: "delayed or flat (an effect that starts late or lasts evenly)",
                 UNKNOWN: "I don't know"}
CTLS_FROM = 50_000  # events: ctls measured better than DP-SSP from about here (paper-2d, sparse-5d), not at 10⁴
DERIVED_FROM = 100_000  # events: the differences basis, Gram derived, from here (at 10⁴ it lost on near-critical-2d)


@dataclass(frozen=True)
class Proposal:
    """A proposed family (``method``, with ``options`` to set) and the sentence that says why."""

    method: str
    options: dict
    reason: str


def propose_family(private: bool, kernels: str = UNKNOWN, events: float | None = None) -> Proposal:
    """The one rule (the module's docstring).

    Parameters
    ----------
    private : bool
        Whether the fit must be a private release.
    kernels : str
        What the user declares: :data:`SMOOTH`, :data:`DELAYED` or :data:`UNKNOWN`.
    events : float, optional
        The data size when it is public (or declared); ``None``: unknown.
    """
    if kernels not in KERNEL_SHAPES:
        raise ConfigError(f"the kernels are declared {', '.join(KERNEL_SHAPES)}, got {kernels!r}")
    if not private:
        if kernels == SMOOTH:
            return Proposal("exp", {"exp_likelihood": True, "sigma2": 0.0, "calibration": "formal"},
                            "kernels declared smooth and decreasing, no privacy: exponential kernels by maximum "
                            "likelihood predicted best on both quake catalogues (ahead of tick's EM)")
        return Proposal("mle", {}, "no privacy and no smooth shape declared: step kernels by maximum likelihood "
                                   "(tick's EM's fit, faster)")
    if kernels == SMOOTH and events is not None and events >= DERIVED_FROM:
        return Proposal("exp", {"exp_basis": "differences", "exp_gram": "derived"},
                        f"kernels declared smooth and decreasing, {events:,.0f} events (≥ {DERIVED_FROM:,}): the "
                        "formal exponential-kernel release in the differences basis with the Gram derived from the "
                        "values was the best formal fit measured there (5-d exponential networks at 10⁵ and 10⁶ "
                        "events)")
    if kernels == SMOOTH:
        return Proposal("exp", {}, "kernels declared smooth and decreasing: the formal exponential-kernel release "
                                   "was the best formal fit measured there (exp-5d, Japan quakes)")
    if events is not None and events >= CTLS_FROM:
        return Proposal("ctls", {}, f"{events:,.0f} events (≥ {CTLS_FROM:,}) with kernels not declared smooth: ctls "
                                    "was measured better than DP-SSP from about this size")
    size = "size unknown" if events is None else f"{events:,.0f} events (< {CTLS_FROM:,})"
    return Proposal("ssp", {}, f"{size}, kernels not declared smooth: DP-SSP was measured better than ctls at 10⁴ "
                               "events and on near-critical processes")
