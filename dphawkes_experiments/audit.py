"""Empirical privacy audit: a statistical lower bound on the ε a mechanism actually delivers.

Recipe (Jagielski et al. 2020, Nasr et al. 2021):

1. Two neighbouring data sets D and D' = D plus one event, in the (sequence, bin, dimension) where the
   added event moves the output most (searched over a set of adversarial candidates: the bin after
   the largest burst, the first and last bins, the most active lag window, random bins).
2. Run the real mechanism (:func:`dphawkes_core.estimators.run_private`, with the same calibration as a
   fit) ``trials`` times on each, with independent seeds, and observe its release
   (:func:`observed_output`).
3. Split the outputs in halves. Project them on the likelihood-ratio direction of Gaussian outputs,
   ``Σ⁻¹Δμ`` (Δμ: the output's move under common noise; Σ, shrunk by Ledoit–Wolf, from the first half)
   and choose the threshold on the first half; on the second half count false positives (D called D')
   and false negatives.
4. With one-sided Clopper–Pearson upper bounds ``FPR_ub``, ``FNR_ub`` (each at level ``α/2``; jointly
   valid with confidence ``1 − α``), any (ε, δ)-DP mechanism satisfies ``FPR + e^ε FNR >= 1 − δ`` and
   ``FNR + e^ε FPR >= 1 − δ``, so ``ε >= max(log((1−δ−FNR_ub)/FPR_ub), log((1−δ−FPR_ub)/FNR_ub))``
   holds with confidence ``1 − α``.

A lower bound above the claimed ε is a (statistically certain) violation; a lower bound below it is
consistent with the claim but proves nothing more. The ``broken`` option divides the noise std by a
factor while still claiming the original ε, to show that such a bug is caught.

Worst-case neighbours (``neighbours="worst-case"``): instead of the natural data, audit the pair built
from the public bounds alone — every count at the cap C in all n bins of every dimension, and the same
with one event fewer in the middle bin (so the change enters one target and p regressor rows, each at
the largest norm the cap allows: the pair of the sensitivity property tests). This is where a
sensitivity bug shows. The family may fix d of the pair (``worst_case_dim``: the formal gradient bound
of DP-PGD/DP-CG is reached at d = 1 only) and a public state at which its releases are observed
(``worst_case_state``: clipped DP-PGD's per-bin terms reach its bound only where they flip sign, never
from ``U = 0``).

A family fitted to exact event times (``family.fits_event_times``: ctls, exp) computes its statistics from
the events (``family.prepare_stats``), so its neighbours add an event, not a count
(:func:`prepare_event_audit`): naturally, the added event (at the start or the middle of a candidate bin)
that moves the release most; in the worst case, the family's own adversarial pair
(``family.worst_case_events``, at the family's ``worst_case_lags`` unless the user says otherwise:
:func:`worst_case_lags`).

The formal calibration claims more than (ε, δ): K releases of sensitivity S with noise σ are exactly
``μ``-GDP with ``μ = √K·S/σ`` (Dong, Roth & Su 2019). For a μ-GDP mechanism every test obeys
``FNR >= Φ(Φ⁻¹(1 − FPR) − μ)``, hence ``(FPR + FNR)/2 >= Φ(−μ/2)``: a test trained on the first
``train_fraction`` of the trials (threshold midway between the medians) whose mean error on the rest has
the Clopper–Pearson bound ``e_ub`` (level ``α/2``; the pointwise bounds then take ``α/4`` each) gives
``μ >= 2 Φ⁻¹(1 − e_ub)`` — for any mechanism, Gaussian or not. A lower bound above the claimed μ
refutes the formal claim; its ε under the Gaussian profile is reported as ``epsilon_lower_bound_gdp``.
This test is far stronger than the pointwise (ε, δ) one at a few thousand trials (the pointwise bound
needs tail events at rate ~δ to reach the claim); for the paper calibrations, which claim only (ε, δ),
only the pointwise bound is a refutation. A mechanism that sits exactly at its bound (the worst case of
DP-SSP, clipped DP-PGD) is refuted with probability up to ``α/2`` by this test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from dphawkes_core.data.io import Events
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, binned_stats, get_family, prepare_stats
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.statistics.binning import BinnedCounts, bin_events

from .audit_events import prepare_event_audit
from .audit_session import (
    DIRECTION_PROBES,
    AuditCancelled,
    AuditConfig,
    AuditResult,
    AuditSession,
    AutoCapData,
    Neighbour,
    _as_run,
    audited_report,
    candidate_cells,
    common_noise_shift,
    worst_case_dim,
)


def default_count_cap(events: Events, bin_size: float) -> int:
    """The audit's default public cap: the largest bin count of the data (so nothing is clipped)."""
    binned = bin_events(events, bin_size)
    return max(1, max(int(x.max()) if x.size else 0 for x in binned.counts))


def worst_case_fit(method: str, lags: int = 3, count_cap: int = 3, epsilon: float = 4.0) -> FitConfig:
    """Public settings under which a worst-case audit sees most of a formal method's claimed sensitivity:
    the family's ``worst_case_options`` and ``worst_case_lags`` (what ``dphawkes audit --worst-case`` uses
    unless told otherwise), with C, the formal calibration and ε (default 4).

    One release (K = 1) from ``U = 0``; a constraint radius so small (``B = r = 10⁻³``) that the
    U-dependent part of the DP-PGD/DP-CG bound vanishes; a constant step too small to reach the
    constraint (pgd-clip's estimate is then a linear image of its release). Clipped DP-PGD is observed at
    its :meth:`~dphawkes_core.estimators.family.Family.worst_case_state` instead of ``U = 0``.
    """
    family = get_family(method)
    return FitConfig(method=method, bin_size=1.0, lags=family.audit_hints.worst_case_lags or lags, count_cap=count_cap,
                     calibration="formal", epsilon=epsilon, **family.audit_hints.worst_case_options)


def worst_case_pair(dim: int, n_bins: int, bin_size: float, count_cap: int, empty_bin: bool = False
                    ) -> tuple[BinnedCounts, BinnedCounts, tuple[int, int, int]]:
    """Neighbours from the public bounds: every count at C in all ``n_bins`` bins, and the middle bin of
    dimension 0 at C − 1 in D and C in D' (the change enters one target row and p regressor rows, each
    at the largest norm the cap allows; the pair of the sensitivity property tests). With ``empty_bin``
    that bin goes from 0 to 1 instead: the largest change of per-bin *clipped* gradients at U = 0 (a
    per-bin family observed from its start), where the direction, not the size, of each term moves.
    Returns D, D' and the (sequence, bin, dim) of the added event."""
    if n_bins < 1 or count_cap < 1:
        raise ConfigError("the worst-case pair needs at least one bin and a count cap C >= 1")
    d_prime = np.full((n_bins, dim), count_cap, dtype=np.int64)
    cell = (0, n_bins // 2, 0)
    if empty_bin:
        d_prime[cell[1], cell[2]] = 1
    d = d_prime.copy()
    d[cell[1], cell[2]] -= 1
    pair = [BinnedCounts((x,), bin_size, 0, 0, count_cap) for x in (d, d_prime)]
    return pair[0], pair[1], cell


def add_event(binned: BinnedCounts, sequence: int, bin_index: int, dim: int) -> BinnedCounts:
    """The neighbour with one more event in ``(sequence, bin, dim)`` (must stay within the count cap)."""
    counts = list(binned.counts)
    x = counts[sequence].copy()
    if binned.count_cap is not None and x[bin_index, dim] >= binned.count_cap:
        raise ConfigError("that bin is already at the count cap: adding an event would change nothing")
    x[bin_index, dim] += 1
    counts[sequence] = x
    return replace(binned, counts=tuple(counts))


def prepare_audit(events: Events, config: AuditConfig) -> AuditSession:
    """Bin the data, find the most revealing neighbour and calibrate the mechanism on both data sets
    (or, with ``neighbours="worst-case"``, build the worst-case pair on the data's d and number of bins)."""
    fit = config.fit
    if fit.family.fits_event_times:
        return prepare_event_audit(events, config)
    if fit.count_cap == AUTO:
        return _prepare_auto_cap(bin_events(events, fit.bin_size), config)
    binned = bin_events(events, fit.bin_size, fit.count_cap)
    if config.neighbours == "worst-case":
        return prepare_worst_case(config, worst_case_dim(config, binned.dim), binned.n_bins)
    stats_d = binned_stats(binned, fit.lags)
    claimed = audited_report(stats_d, config)
    report_d = _as_run(claimed, config.broken_factor)
    rng = np.random.default_rng(config.seed)
    best = None
    cells = candidate_cells(binned, fit.lags, config.candidates, rng)
    for cell in cells:
        stats_n = binned_stats(add_event(binned, *cell), fit.lags)
        report_n = _as_run(audited_report(stats_n, config), config.broken_factor)
        moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, cell, stats_n, report_n)
    _, (s, b, j), stats_n, report_n = best
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    neighbour = Neighbour(s, b, j, float(np.linalg.norm(moved)), len(cells))
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed, direction=moved)


def prepare_worst_case(config: AuditConfig, dim: int, n_bins: int) -> AuditSession:
    """An audit session on the worst-case pair of :func:`worst_case_pair` for d dimensions and n bins
    (public numbers only: no data are read). A family with a
    :meth:`~dphawkes_core.estimators.family.Family.worst_case_state` is observed at that state, on the
    all-at-cap pair; one without, from its own start (a per-bin family on the empty-bin pair)."""
    fit = config.fit
    if fit.count_cap is None:
        raise ConfigError("the worst-case neighbours are built from the public count cap C: give one")
    state = fit.family.worst_case_state(dim, fit.lags, fit.count_cap, fit)
    d, d_prime, (s, b, j) = worst_case_pair(dim, n_bins, fit.bin_size, fit.count_cap,
                                            empty_bin=fit.family.inputs.per_bin and state is None)
    stats_d, stats_n = binned_stats(d, fit.lags), binned_stats(d_prime, fit.lags)
    claimed = audited_report(stats_d, config)
    report_d, report_n = (_as_run(audited_report(st, config), config.broken_factor) for st in (stats_d, stats_n))
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES, state)
    info = {"worst_case_dim": int(dim), "worst_case_bins": int(n_bins),
            "released_at_state": None if state is None else np.asarray(state).tolist()}
    return AuditSession(
        config,
        stats_d,
        stats_n,
        report_d,
        report_n,
        Neighbour(s, b, j, float(np.linalg.norm(moved)), 1),
        claimed,
        direction=moved,
        state=state,
        info=info,
    )


def _prepare_auto_cap(binned: BinnedCounts, config: AuditConfig) -> AuditSession:
    """The natural neighbours of :func:`prepare_audit` for the automatic-cap mechanism."""
    if config.neighbours == "worst-case":
        raise ConfigError("the worst-case neighbours need a public count cap C, not 'auto'")
    data_d = AutoCapData(binned, config, config.broken_factor)
    best = None
    cells = candidate_cells(binned, config.fit.lags, config.candidates, np.random.default_rng(config.seed))
    for cell in cells:
        data_n = AutoCapData(add_event(binned, *cell), config, config.broken_factor)
        moved = np.mean([data_n.output(seed) - data_d.output(seed) for seed in (10**9 + 7, 10**9 + 9)], axis=0)
        if best is None or np.linalg.norm(moved) > np.linalg.norm(best[0]):
            best = (moved, cell, data_n)
    moved, (s, b, j), data_n = best
    cap = int(data_d.output(config.seed)[-1])
    stats_d, report_d = data_d.at_cap(cap)
    claimed = audited_report(stats_d, config)
    return AuditSession(config, data_d, data_n, report_d, data_n.at_cap(cap)[1],
                        Neighbour(s, b, j, float(np.linalg.norm(moved)), len(cells)), claimed, direction=moved)


def run_audit(events: Events, config: AuditConfig, progress: Callable[[int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None, chunk: int = 100) -> AuditResult:
    """Prepare and run a whole audit, reporting progress and stopping when ``should_stop()`` is true.

    Raises
    ------
    AuditCancelled
        When stopped before all trials ran.
    """
    start = time.perf_counter()
    result = run_session(prepare_audit(events, config), progress, should_stop, chunk)
    return replace(result, elapsed_s=time.perf_counter() - start)


def run_session(session: AuditSession, progress: Callable[[int, int], None] | None = None,
                should_stop: Callable[[], bool] | None = None, chunk: int = 100) -> AuditResult:
    """Run every trial of a prepared session (as :func:`run_audit`) and evaluate the test."""
    trials = session.config.trials
    while not session.done:
        if should_stop is not None and should_stop():
            raise AuditCancelled(f"the audit was stopped after {session.completed} of {trials} trials")
        session.run_chunk(chunk)
        if progress is not None:
            progress(session.completed, trials)
    return session.result()


def prepare_sequence_audit(events: Events, config: AuditConfig, index: int, replacement) -> AuditSession:
    """An audit of a sequence-level fit (``privacy_unit="sequence"``) on sequence neighbours: D is the data,
    D' the data with sequence ``index`` replaced by ``replacement`` (an
    :class:`~dphawkes_core.data.io.EventSequence` on the same window). The test sees the fit's release
    (``ssp_release``: ``full`` or the sequence unit's ``lagged`` one)."""
    fit = config.fit
    if fit.privacy_unit != "sequence":
        raise ConfigError("sequence neighbours audit a fit with privacy_unit='sequence'")
    if not 0 <= index < events.n_sequences:
        raise ConfigError(f"there is no sequence {index} to replace (the data have {events.n_sequences})")
    if replacement.end_time != events.sequences[index].end_time:
        raise ConfigError("the replacement sequence must have the replaced sequence's (public) window")
    sequences = list(events.sequences)
    sequences[index] = replacement
    stats_d = prepare_stats(events, fit)[0]
    stats_n = prepare_stats(replace(events, sequences=tuple(sequences)), fit)[0]
    claimed = audited_report(stats_d, config)
    report_d, report_n = (_as_run(audited_report(st, config), config.broken_factor) for st in (stats_d, stats_n))
    moved = common_noise_shift(stats_d, report_d, stats_n, report_n, fit, DIRECTION_PROBES)
    neighbour = Neighbour(index, -1, -1, float(np.linalg.norm(moved)), 1)  # the whole sequence: no bin, no dim
    return AuditSession(config, stats_d, stats_n, report_d, report_n, neighbour, claimed, direction=moved)
