"""``fit --bin-size auto`` and ``--decays auto``: Δ and s, and exp's decays, read from the count of events
(:mod:`dphawkes_core.privacy.time_scale`).

A formal fit draws the count with noise inside its recorded release (``--ledger``: the session does it, a replay
draws nothing); one count serves both choices, at one share of ε. Any other fit reads the exact count, and says
that the choice came from the data.
"""

from __future__ import annotations

import sys

from dphawkes_core.estimators import FitConfig
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.time_scale import (
    AUTO_SCALE_SHARE,
    DECAY_MULTIPLES,
    DECAYS,
    TIME_SCALE,
    AutoScale,
    decays_from_count,
    time_scale_from_count,
)

from .inputs import UsageError

__all__ = ["AUTO", "AUTO_SCALE_SHARE", "DECAYS_AUTO_HELP", "DECAY_MULTIPLES", "auto_choices", "auto_time_scale",
           "chosen_config"]

DECAYS_AUTO_HELP = (f"the decays {', '.join(f'{m:g}' for m in DECAY_MULTIPLES)} divided by the mean time between "
                    "events, read from a count of the events (a formal fit: a noisy count bought with "
                    "--time-scale-share of ε inside the --ledger release, the one --bin-size auto uses)")


def auto_choices(args) -> tuple[str, ...]:
    """What the command chooses from the count: the time scale (``--bin-size auto``), the decays (``--decays
    auto``), both or nothing."""
    return tuple(what for what, asked in ((TIME_SCALE, args.bin_size == AUTO),
                                          (DECAYS, getattr(args, "decays", None) == AUTO)) if asked)


def auto_time_scale(args, config: FitConfig, events, formal: bool,
                    choices=(TIME_SCALE,)) -> tuple[FitConfig, float | None]:
    """``(config, share)``: a formal fit keeps its placeholders and gets the share of ε its session spends on
    ``choices``; another fit gets them from the exact count now (``share`` None), said on stderr."""
    flags = " and ".join({TIME_SCALE: "--bin-size auto", DECAYS: "--decays auto"}[c] for c in choices)
    if formal:
        if not args.ledger or config.epsilon is None:
            raise UsageError(f"{flags} on a formal fit spends a share of ε inside the recorded release: give "
                             "--epsilon and --ledger PATH (or public values)")
        return config, args.time_scale_share
    observed = events.end_time  # T summed over sequences (the session's, for a formal fit)
    scale = time_scale_from_count(observed, events.n_events)
    changes, said = {}, []
    if TIME_SCALE in choices:
        changes.update(bin_size=scale.bin_size, lags=scale.lags)
        said.append(f"Δ = {scale.bin_size:g} and s = {scale.support:g} (p = {scale.lags}), about ¼ and 10× it")
    if DECAYS in choices:
        changes.update(decays=decays_from_count(observed, events.n_events))
        said.append("decays " + ", ".join(f"{b:.3g}" for b in changes["decays"]) + " ("
                    + ", ".join(f"{m:g}" for m in DECAY_MULTIPLES) + " over it)")
    print(f"note: {'; '.join(said)}: read from the data's exact count of events (mean gap {scale.mean_gap:.3g}): "
          "not a private choice", file=sys.stderr)
    return config.with_changes(**changes), None


def chosen_config(config: FitConfig, time_scale: dict) -> FitConfig:
    """The config the release fitted (:meth:`~dphawkes_core.privacy.time_scale.AutoScale.config_changes`): what was
    chosen, and the ε left to the fit."""
    return config.with_changes(**AutoScale(**time_scale).config_changes())
