"""Audit neighbours for a family fitted to exact event times (``family.fits_event_times``: ctls, exp): its
statistics come from the events (``family.prepare_stats``), so D' adds an event, not a count. Naturally, the
added event (at the start or the middle of a candidate bin) that moves the release most; in the worst case,
the family's own adversarial pair (``family.worst_case_events``, at the family's ``worst_case_lags`` unless the
user says otherwise); under an automatic cap, the whole mechanism that chooses C.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dphawkes_core.data.io import Events
from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.statistics.binning import bin_events, bin_sparse

from .audit_session import (
    DIRECTION_PROBES,
    AuditConfig,
    AuditSession,
    AutoCapData,
    Neighbour,
    _as_run,
    audited_report,
    candidate_cells,
    common_noise_shift,
    worst_case_dim,
)


def worst_case_lags(family) -> int:
    """p (B) of the worst-case audit unless given: the family's ``worst_case_lags`` (ctls: 25, where its
    adversarial events reach 0.95 of its bound for d = 1 … 3, against 0.84 at B = 3), else 3."""
    return int(family.audit_hints.worst_case_lags or 3)


def add_event_time(events: Events, sequence: int, time: float, dim: int) -> Events:
    """The neighbour with one more event at ``time`` in dimension ``dim`` of ``sequence`` (inside its window)."""
    seq = events.sequences[sequence]
    if not 0 <= time <= seq.end_time:
        raise ConfigError(f"an added event must lie in its sequence's window [0, {seq.end_time:g}], got {time!r}")
    times = list(seq.times)
    times[dim] = np.sort(np.append(np.asarray(times[dim], dtype=float), float(time)))
    sequences = list(events.sequences)
    sequences[sequence] = replace(seq, times=tuple(times))
    return replace(events, sequences=tuple(sequences))


def candidate_times(events: Events, bin_size: float, lags: int, extra: int, rng: np.random.Generator) -> list:
    """Adversarial ``(sequence, time, dim)`` candidates for an added event: in every bin of
    :func:`candidate_cells` (on the w-bin counts, uncapped: under keep-first-C an event early in a full bin
    still enters, evicting the bin's last kept one), at the bin's start (first in its bin: always kept) and at
    its middle."""
    binned = bin_events(events, bin_size)
    cells = candidate_cells(binned, lags, extra, rng)
    return [(s, (b + offset) * bin_size, j) for s, b, j in cells for offset in (0.001, 0.5)
            if (b + offset) * bin_size <= events.sequences[s].end_time]


def added_event(d_events: Events, d_prime: Events) -> tuple[int, float, int]:
    """``(sequence, time, dim)`` of the event D' has and D has not (D' = D plus one event)."""
    for s, (a, b) in enumerate(zip(d_events.sequences, d_prime.sequences)):
        for j, (x, y) in enumerate(zip(a.times, b.times)):
            if len(y) == len(x) + 1:
                x, y = np.sort(x), np.sort(y)
                at = int(np.argmax(np.append(x, np.inf) != y))  # the first place the two differ
                return s, float(y[at]), j
    raise ConfigError("the worst-case events are not neighbours: D' must be D plus one event")


def prepare_event_audit(events: Events, config: AuditConfig) -> AuditSession:
    """:func:`prepare_audit` for a family fitted to exact event times: its statistics come from the events
    (:meth:`~dphawkes_core.estimators.family.Family.prepare_stats`), so D' adds an event, not a count. Natural
    neighbours: the added event that moves the release most among :func:`candidate_times`; worst case: the
    family's ``worst_case_events`` (:func:`prepare_worst_case_events`); ``count_cap="auto"``:
    :class:`AutoCapEvents`."""
    fit = config.fit
    family = fit.family
    if fit.count_cap == AUTO:
        return _prepare_auto_cap_events(events, config)
    if config.neighbours == "worst-case":
        return prepare_worst_case_events(config, worst_case_dim(config, events.dim))
    stats_d = family.prepare_stats(events, fit)[0]
    claimed = audited_report(stats_d, config)
    report_d = _as_run(claimed, config.broken_factor)
    candidates = candidate_times(events, fit.bin_size, fit.lags, config.candidates, np.random.default_rng(config.seed))
    best = None
    for s, t, j in candidates:
        stats_n = family.prepare_stats(add_event_time(events, s, t, j), fit)[0]
        report_n = _as_run(audited_report(stats_n, config), config.broken_factor)
        moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, (s, t, j), stats_n, report_n)
    _, (s, t, j), stats_n, report_n = best
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    neighbour = Neighbour(s, int(t // fit.bin_size), j, float(np.linalg.norm(moved)), len(candidates))
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed, direction=moved,
                        info={"added_event_time": t})


def prepare_worst_case_events(config: AuditConfig, dim: int) -> AuditSession:
    """An audit session on the family's adversarial events (``family.worst_case_events(fit, dim)``: D' adds one
    event, built from the public d, B, C and w alone). Reports the fraction of the claimed sensitivity the pair
    moves the release by (``worst_case_reached``: what makes a noise cut detectable)."""
    fit = config.fit
    family = fit.family
    if fit.count_cap is None:
        raise ConfigError("the worst-case neighbours are built from the public count cap C: give one")
    if not callable(getattr(family, "worst_case_events", None)):
        raise ConfigError(f"{family.label} documents no adversarial events (worst_case_events): no worst-case audit")
    d_events, d_prime = family.worst_case_events(fit, dim)
    stats_d, stats_n = (family.prepare_stats(e, fit)[0] for e in (d_events, d_prime))
    claimed = audited_report(stats_d, config)
    report_d, report_n = (_as_run(audited_report(st, config), config.broken_factor) for st in (stats_d, stats_n))
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    s, t, j = added_event(d_events, d_prime)
    shift = float(np.linalg.norm(moved))
    info = {"worst_case_dim": int(dim), "worst_case_lags": int(fit.lags), "worst_case_count_cap": int(fit.count_cap),
            "worst_case_bin_size": float(fit.bin_size), "worst_case_events": int(d_prime.n_events),
            "added_event_time": t,
            "worst_case_reached": shift / claimed.sensitivity if claimed.sensitivity else None}
    return AuditSession(config, stats_d, stats_n, report_d, report_n, Neighbour(s, int(t // fit.bin_size), j, shift, 1),
                        claimed, direction=moved, info=info)


@dataclass
class AutoCapEvents(AutoCapData):
    """:class:`AutoCapData` for a family fitted to exact event times: each run chooses C from the w-bin counts
    of ``events`` (``binned``: :func:`~dphawkes_core.statistics.binning.bin_sparse`, as the family's ``prepare_stats``
    does), then releases the family's statistics of the events kept under that C."""

    events: Events | None = None

    def at_cap(self, cap: int) -> tuple:
        if cap not in self.by_cap:
            stats = self.fit.family.prepare_stats(self.events, replace(self.fit, count_cap=int(cap)))[0]
            self.by_cap[cap] = (stats, _as_run(audited_report(stats, self.config), self.broken_factor))
        return self.by_cap[cap]


def _prepare_auto_cap_events(events: Events, config: AuditConfig) -> AuditSession:
    """The natural neighbours of :func:`prepare_event_audit` for the automatic-cap mechanism."""
    if config.neighbours == "worst-case":
        raise ConfigError("the worst-case neighbours need a public count cap C, not 'auto'")
    fit = config.fit

    def data(ev: Events) -> AutoCapEvents:
        return AutoCapEvents(bin_sparse(ev, fit.bin_size), config, config.broken_factor, events=ev)

    data_d = data(events)
    best = None
    candidates = candidate_times(events, fit.bin_size, fit.lags, config.candidates, np.random.default_rng(config.seed))
    for s, t, j in candidates:
        data_n = data(add_event_time(events, s, t, j))
        moved = np.mean([data_n.output(seed) - data_d.output(seed) for seed in (10**9 + 7, 10**9 + 9)], axis=0)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, (s, t, j), data_n)
    moved, (s, t, j), data_n = best
    cap = int(data_d.output(config.seed)[-1])
    stats_d, report_d = data_d.at_cap(cap)
    claimed = audited_report(stats_d, config)
    return AuditSession(config, data_d, data_n, report_d, data_n.at_cap(cap)[1],
                        Neighbour(s, int(t // fit.bin_size), j, float(np.linalg.norm(moved)), len(candidates)),
                        claimed, direction=moved, info={"added_event_time": t})
