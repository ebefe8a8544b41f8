"""What the Estimate page sets an estimate against: the non-private reference on the same counts and the private
family without noise (σ² = 0, the same post-processing). Both are computed from the raw data and deterministic,
so they sit in the process-wide caches and every session shares them."""

from __future__ import annotations

from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, get_family, is_sequence_unit
from dphawkes_core.estimators.registry import reference_method

from ..caches import config_items, fit_cached, stats_cached
from .context import PageContext
from .release import Shown


def noiseless_label(config: FitConfig) -> str:
    """The private family without noise (σ² = 0): the fair non-private comparison, with the same post-processing,
    named by the family's own noiseless limit (binned least squares is CLS; ctls's is its continuous-time least
    squares, exp's its exponential least squares, DP-PGD's its projected gradient), not by the reference's name."""
    family = config.family
    limit = family.audit_hints.noiseless_limit
    name = get_family(reference_method()).label if limit == "least squares" and not family.fits_event_times \
        else limit
    return f"{family.label} with σ² = 0: {name}, the same post-processing, no noise"


def reference_config(shown: Shown) -> FitConfig:
    """The non-private reference's settings (maximum likelihood beside a fit on exact event times, CLS beside a binned
    one): the shown fit's Δ and p on every event — no count cap. The C a private fit clips at may be chosen
    privately, afresh at each ε; a reference clipped there would move with ε (issue 43), so it reads the unclipped
    statistics, the same at every ε."""
    config = shown.config
    return FitConfig(method=reference_method(config.family), bin_size=config.bin_size, lags=config.lags)


def noiseless_config(shown: Shown) -> FitConfig:
    """The shown private fit with σ² = 0 (no noise, so its statistics' public C) and the same post-processing:
    an option left to a public rule that depends on σ (the ridge λ) keeps the value the private fit used, so
    e.g. the smoothing across lags (in units of λ) is the same."""
    config, result = shown.config, shown.result
    kept = {setting.name: float(result.info[setting.name]) for setting in config.family.settings
            if getattr(config, setting.name) is None and isinstance(result.info.get(setting.name), (int, float))}
    return config.with_selection(count_cap=shown.data_info["count_cap"]).noiseless(**kept)


def references(ctx: PageContext, shown: Shown):
    """The non-private reference on the same events, unclipped (no count cap, no cap or clip per sequence: the same
    at every ε), and the private family without noise, or ``None`` for each that does not apply (a non-private fit
    has neither; a family that needs noise to run has no σ² = 0 line)."""
    config, stats = shown.config, shown.stats
    if not config.family.privacy.private:
        return None, None
    reference_settings = reference_config(shown)
    reference_stats = stats_cached(ctx.fingerprint, ctx.events,
                                   config_items(reference_settings.statistics_key()))[0]  # unclipped
    reference = fit_cached(ctx.fingerprint, reference_stats, config_items(reference_settings))
    noiseless = None
    if not is_sequence_unit(config):
        try:
            noiseless = fit_cached(ctx.fingerprint, stats, config_items(noiseless_config(shown)))
        except DPHawkesError:
            noiseless = None
    return reference, noiseless
