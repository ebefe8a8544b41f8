"""``fit --bin-size auto``: Δ and s read from the count of events (:mod:`dphawkes_core.privacy.selection`).

A formal fit draws the count with noise inside its recorded release (``--ledger``: the session does it, a replay
draws nothing); any other fit reads the exact count, and says that the choice came from the data.
"""

from __future__ import annotations

import sys

from dphawkes_core.estimators import FitConfig
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.selection import AUTO_SCALE_SHARE, AutoScale, time_scale_from_count

from .inputs import UsageError

__all__ = ["AUTO", "AUTO_SCALE_SHARE", "auto_time_scale", "chosen_config", "observed_time"]


def observed_time(events) -> float:
    """T: the observed time summed over sequences (public when the window is declared)."""
    return float(sum(seq.end_time for seq in events.sequences))


def auto_time_scale(args, config: FitConfig, events, formal: bool) -> tuple[FitConfig, float | None]:
    """``(config, share)``: a formal fit keeps its placeholder Δ and p and gets the share of ε its session spends
    on them; another fit gets Δ and p from the exact count now (``share`` None), said on stderr."""
    if formal:
        if not args.ledger or config.epsilon is None:
            raise UsageError("--bin-size auto on a formal fit spends a share of ε inside the recorded release: give "
                             "--epsilon and --ledger PATH (or a public --bin-size)")
        return config, args.time_scale_share
    scale = time_scale_from_count(observed_time(events), events.n_events)
    print(f"note: Δ = {scale.bin_size:g} and s = {scale.support:g} (p = {scale.lags}) read from the data's exact "
          f"count of events (about ¼ and 10× their mean gap {scale.mean_gap:.3g}): not a private choice",
          file=sys.stderr)
    return config.with_changes(bin_size=scale.bin_size, lags=scale.lags), None


def chosen_config(config: FitConfig, time_scale: dict) -> FitConfig:
    """The config the release fitted (:meth:`~dphawkes_core.privacy.selection.AutoScale.config_changes`): what was
    chosen, and the ε left to the fit."""
    return config.with_changes(**AutoScale(**time_scale).config_changes())
