"""Held-out prediction under a fitted Hawkes model: the log-likelihood score (:func:`score_heldout`, the measure
on data without a known truth) and the next-event-time RMSE (:func:`evaluate_prediction`).

**The held-out log-likelihood.** The fit's kernels are read as functions of the lag (a family's steps, or the
exponential sums of an ``exp`` fit: :func:`~dphawkes_core.evaluation.exp_kernels.fit_functions`) and its intensity
is the continuous-time one,
``λ_i(t) = η_i + Σ_j Σ_{u ∈ j, u < t} h_ij(t − u)`` over the whole history (events of the training part count).
The score of the test part ``[X, T]`` is ``(Σ_{t_n ≥ X} log λ_{i_n}(t_n) − Σ_i ∫_X^T λ_i) / n``, nats per test
event, against the same for constant rates fitted on the training part (the Poisson model); an intensity ≤ 0 at a
test event scores −∞, with the count of such events (no floor). The standard error of the gain is a block
bootstrap: up to :data:`BOOTSTRAP_BLOCKS` equal blocks of the test window, none shorter than the kernel support
(several sequences: the test sequences are the blocks), resampled :data:`BOOTSTRAP_REPLICATES` times.

The split (:func:`heldout_split`), one way everywhere: one sequence is cut at a time X (train on the events
before X), several by a share of sequences (the first ones train).

**The next-event-time RMSE** (under the discretised model the binned fits came from):

What is computed (the paper's Table 1 reports an RMSE of "next event prediction" without saying how;
this is our definition):

* **The fitted intensity.** A fit gives ``η`` and kernel values ``h_ij(lΔ)`` for lags ``l = 1..p``.
  As in the INAR(p) model the fit came from, time is cut into bins ``[kΔ, (k+1)Δ)`` (from the start of
  each sequence) and the intensity is constant within a bin:
  ``λ_i(bin k) = η_i + Σ_j Σ_{l=1..p} h_ij(lΔ) X_{k−l, j}``, where ``X_{m, j}`` counts the events of
  dimension j in bin m (bins before the start of the sequence count zero). Each component is clipped
  at zero (a noisy estimate can make it negative) and the components are summed:
  ``λ(t) = Σ_i max(λ_i(t), 0)`` is the rate of *any* next event.
* **The prediction** at each event ``t_n`` is the expected waiting time to the next event assuming
  no further event happens until then: ``E[τ] = ∫_0^∞ S(u) du`` with ``S(u) = exp(−∫_{t_n}^{t_n+u} λ)``.
  The bin holding ``t_n`` counts only the events up to and including ``t_n``. Because the intensity is
  piecewise constant (the rest of the current bin, then ``p`` whole bins, then the baseline forever),
  the survival integral is evaluated exactly piece by piece — ``∫ S = Σ S(a_m)(1 − e^{−r_m L_m})/r_m``
  plus ``S(end)/r_tail`` — rather than by quadrature. If the clipped baseline sums to zero the
  expectation is infinite.
* **The evaluation**: the model is fitted on a training part and predicts, for every event of the
  test part that has a successor in its window, the waiting time to that successor (history includes
  the training part). The score is the RMSE of ``predicted − observed`` waiting times, in the data's
  time unit. A homogeneous Poisson process fitted on the training part (constant prediction
  ``T_train / n_train``) is the reference any self-exciting fit should beat.

Splits: one sequence is split on its timeline (train on ``[0, f·T)``, predict from ``f·T`` on);
several sequences are split by sequence (the first ``⌈f·S⌉`` train, the others are predicted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from dphawkes_core.data import timeaxis
from dphawkes_core.data.baseline_bins import BASELINE_FLOOR_SHARE, BaselineProfile
from dphawkes_core.data.io import Events, EventSequence
from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.statistics.moments import MAX_DESIGN_ROWS
from dphawkes_experiments.rectified import can_be_nonpositive, rectified_integrals
from dphawkes_experiments.verdict import Verdict, heldout_verdict

_CHUNK_CELLS = 4_000_000  # predictions × (p+1)·d intensities held in memory at once


@dataclass(frozen=True)
class TrainTestSplit:
    """A training set and the test windows the predictions are scored on.

    Attributes
    ----------
    train : Events
        What the model is fitted on.
    test : tuple of EventSequence
        Sequences whose events are predicted (their full history is used as input).
    eval_from : tuple of float
        Per test sequence, predictions are made at events ``t_n >= eval_from``.
    mode : str
        ``timeline`` (one sequence cut in time) or ``sequences`` (split by sequence).
    train_fraction : float
        The requested fraction f.
    """

    train: Events
    test: tuple
    eval_from: tuple
    mode: str
    train_fraction: float


@dataclass(frozen=True)
class PredictionReport:
    """Held-out next-event-time errors of a fit and of the Poisson reference.

    Attributes
    ----------
    rmse : float
        Root mean squared error of the predicted waiting times (``inf`` if a prediction is infinite).
    mae : float
        Mean absolute error.
    poisson_rmse : float
        RMSE of the constant prediction ``T_train / n_train`` (homogeneous Poisson reference).
    n_predictions : int
        Number of scored predictions.
    mean_observed_wait : float
        Mean observed waiting time in the test part.
    infinite_predictions : int
        Predictions that are infinite because the clipped fitted baseline sums to zero.
    """

    rmse: float
    mae: float
    poisson_rmse: float
    n_predictions: int
    mean_observed_wait: float
    infinite_predictions: int

    def to_dict(self) -> dict:
        """Plain dict for tables."""
        return dict(vars(self))


def split_events(events: Events, train_fraction: float = 0.7) -> TrainTestSplit:
    """Split data into a training part and a test part.

    Parameters
    ----------
    events : Events
        One sequence (split on its timeline) or several (split by sequence, in their order).
    train_fraction : float
        Fraction f in (0, 1) of the time line (one sequence) or of the sequences used for training.

    Returns
    -------
    TrainTestSplit
    """
    if not 0 < train_fraction < 1:
        raise ConfigError(f"the training fraction must be between 0 and 1, got {train_fraction!r}")
    if events.n_sequences == 1:
        return _timeline_split(events, train_fraction * events.sequences[0].end_time)
    n_train = math.ceil(train_fraction * events.n_sequences)
    if n_train >= events.n_sequences:
        raise ConfigError(f"a training fraction of {train_fraction:g} leaves no test sequence")
    train = replace(events, sequences=events.sequences[:n_train])
    test = events.sequences[n_train:]
    if train.n_events == 0:
        raise DataError("the training part holds no events; use a larger training fraction")
    return TrainTestSplit(train, tuple(test), (0.0,) * len(test), "sequences", float(train_fraction))


def _timeline_split(events: Events, cut: float) -> TrainTestSplit:
    """One sequence: train on the events before ``cut`` (window ``[0, cut)``), test from ``cut`` on."""
    seq = events.sequences[0]
    train_seq = replace(seq, times=tuple(t[t < cut] for t in seq.times), end_time=cut)
    if train_seq.n_events == 0:
        raise DataError("the training part holds no events; start the test part later")
    return TrainTestSplit(replace(events, sequences=(train_seq,)), (seq,), (cut,), "timeline",
                          float(cut / seq.end_time))


def _lag_operator(kernels: np.ndarray) -> np.ndarray:
    """Matrix T with ``λ_m − η = Σ_q T[m, q] V_q``: ``T[m, q] = K[m+q−1]`` when ``1 ≤ m+q ≤ p``.

    ``V_0`` is the partial count of the current bin, ``V_q`` (q ≥ 1) the count q bins back; ``m = 0``
    is the current bin and ``m = 1..p`` the following ones. Returned flattened to
    ``((p+1)d, (p+1)d)`` so that ``λ_flat = V_flat @ T.T``.
    """
    d, _, p = kernels.shape
    op = np.zeros((p + 1, p + 1, d, d))
    for m in range(p + 1):
        for q in range(max(0, 1 - m), p + 1 - m):
            op[m, q] = kernels[:, :, m + q - 1]
    return op.transpose(0, 2, 1, 3).reshape((p + 1) * d, (p + 1) * d)


def _sorted_events(seq: EventSequence) -> tuple[np.ndarray, np.ndarray]:
    times = np.concatenate([np.asarray(t, float) for t in seq.times])
    dims = np.concatenate([np.full(len(t), j) for j, t in enumerate(seq.times)]).astype(np.int64)
    order = np.argsort(times, kind="stable")
    return times[order], dims[order]


def expected_waits(kernels: np.ndarray, baseline: np.ndarray, bin_size: float, seq: EventSequence,
                   at: np.ndarray) -> np.ndarray:
    """Expected waiting time to the next event after each chosen event of one sequence.

    Parameters
    ----------
    kernels : numpy.ndarray
        ``(d, d, p)`` fitted ``h_ij(lΔ)``, ``kernels[i, j, l-1]`` for lag l.
    baseline : numpy.ndarray
        ``(d,)`` fitted η.
    bin_size : float
        Δ of the fit.
    seq : EventSequence
        The history (all its events up to each prediction time are used).
    at : numpy.ndarray
        Indices, into the time-sorted events of ``seq``, of the events to predict from.

    Returns
    -------
    numpy.ndarray
        Expected waiting times (``inf`` where the clipped baseline sums to zero).
    """
    d, _, p = kernels.shape
    if (p + 1) * d > MAX_DESIGN_ROWS:
        raise ConfigError(f"(p+1)·d = {(p + 1) * d:,} is too large for prediction; use a larger bin size")
    times, dims = _sorted_events(seq)
    at = np.asarray(at, dtype=np.int64)
    if at.size == 0:
        return np.empty(0)
    bins = np.floor(times / bin_size).astype(np.int64)
    n_bins = int(bins[-1]) + 1
    counts = np.zeros((n_bins + p, d))  # p leading zero rows: history before the sequence start
    np.add.at(counts, (bins + p, dims), 1.0)
    onehot = np.zeros((times.size, d))
    onehot[np.arange(times.size), dims] = 1.0
    cum = np.cumsum(onehot, axis=0)
    first_in_bin = np.searchsorted(bins, bins, side="left")  # first event of each event's bin
    op = _lag_operator(kernels)
    eta = np.asarray(baseline, float)
    tail_rate = float(np.clip(eta, 0, None).sum())
    out = np.empty(at.size)
    chunk = max(1, _CHUNK_CELLS // ((p + 1) * d))
    for start in range(0, at.size, chunk):
        idx = at[start:start + chunk]
        k = bins[idx]
        partial = cum[idx] - np.where(first_in_bin[idx, None] > 0, cum[np.maximum(first_in_bin[idx] - 1, 0)], 0.0)
        # V[:, q] = count q bins back (q >= 1), V[:, 0] = partial current bin.
        back = (k[:, None] + p) - np.arange(1, p + 1)[None, :]
        window = np.concatenate([partial[:, None, :], counts[back]], axis=1)
        lam = (window.reshape(idx.size, -1) @ op.T).reshape(idx.size, p + 1, d) + eta
        rates = np.clip(lam, 0, None).sum(axis=2)
        lengths = np.full((idx.size, p + 1), float(bin_size))
        lengths[:, 0] = (k + 1) * bin_size - times[idx]
        out[start:start + chunk] = _survival_integral(rates, lengths, tail_rate)
    return out


def _survival_integral(rates: np.ndarray, lengths: np.ndarray, tail_rate: float) -> np.ndarray:
    """``∫_0^∞ S`` for piecewise-constant rates (rows: predictions), then ``tail_rate`` forever."""
    hazard = rates * lengths
    cum = np.concatenate([np.zeros((rates.shape[0], 1)), np.cumsum(hazard, axis=1)], axis=1)
    surv_start = np.exp(-cum[:, :-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        piece = np.where(rates > 0, -np.expm1(-hazard) / rates, lengths)
    total = (surv_start * piece).sum(axis=1)
    surv_end = np.exp(-cum[:, -1])
    if tail_rate > 0:
        return total + surv_end / tail_rate
    return np.where(surv_end > 0, np.inf, total)


def _test_targets(seq: EventSequence, eval_from: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices of events ``t_n >= eval_from`` with a successor, and the observed waits."""
    times, _ = _sorted_events(seq)
    idx = np.nonzero(times[:-1] >= eval_from)[0]
    return idx, times[idx + 1] - times[idx]


def evaluate_prediction(kernels: np.ndarray, baseline: np.ndarray, bin_size: float,
                        split: TrainTestSplit) -> PredictionReport:
    """Score next-event-time predictions of a fitted model on the test part of a split.

    Parameters
    ----------
    kernels, baseline, bin_size
        The fit (``FitResult.kernels``, ``.baseline``, ``.bin_size``).
    split : TrainTestSplit
        From :func:`split_events`.

    Returns
    -------
    PredictionReport
    """
    predicted, observed = [], []
    for seq, start in zip(split.test, split.eval_from):
        idx, waits = _test_targets(seq, start)
        predicted.append(expected_waits(kernels, baseline, bin_size, seq, idx))
        observed.append(waits)
    pred = np.concatenate(predicted) if predicted else np.empty(0)
    obs = np.concatenate(observed) if observed else np.empty(0)
    if obs.size == 0:
        raise DataError("the test part has no event with a successor to predict; use a smaller training fraction")
    poisson_wait = split.train.end_time / split.train.n_events
    err = pred - obs
    return PredictionReport(
        rmse=float(np.sqrt(np.mean(err**2))),
        mae=float(np.mean(np.abs(err))),
        poisson_rmse=float(np.sqrt(np.mean((poisson_wait - obs) ** 2))),
        n_predictions=int(obs.size),
        mean_observed_wait=float(obs.mean()),
        infinite_predictions=int(np.count_nonzero(~np.isfinite(pred))),
    )


# --- held-out log-likelihood -------------------------------------------------------------------------------

BOOTSTRAP_BLOCKS = 20  # at most this many blocks of the test window (each at least the kernel support long)
BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 0  # the resampling is a diagnostic's, not privacy noise: fixed, so a score is reproducible
_PAIR_CELLS = 4_000_000  # d·d·pairs kernel values held in memory at once
RECTIFY_SHARE = BASELINE_FLOOR_SHARE  # a fit that can reach 0 is read as at least this share of the mean rate


class KernelFunctions(Protocol):
    """Kernels as functions of the lag (:class:`~dphawkes_core.evaluation.step_kernels.StepKernels` is one)."""

    support: float

    def values_at(self, t: np.ndarray) -> np.ndarray:
        """``h_ij(t)``, ``(d, d, len(t))``."""

    def primitive_at(self, t: np.ndarray) -> np.ndarray:
        """``∫_0^t h_ij``, ``(d, d, len(t))``."""


@dataclass(frozen=True)
class HeldOutScore:
    """Held-out log-likelihood of a fitted Hawkes model against the constant-rate Poisson model.

    Attributes
    ----------
    loglik_per_event : float
        ``(Σ_test log λ_{i_n}(t_n) − Σ_i ∫_test λ_i) / n``, the intensity conditioning on the whole history
        (events before the test part count); ``-inf`` when the intensity is ≤ 0 at a test event.
    poisson_loglik_per_event : float
        The same for constant rates ``μ_i`` = events of i / duration of the training part.
    gain_over_poisson : float
        ``loglik_per_event − poisson_loglik_per_event`` (nats per test event; > 0: the fit predicts better).
    gain_standard_error : float
        Block-bootstrap standard error of the gain (NaN when the score is infinite or there are fewer than 2
        blocks).
    n_test_events : int
        Events scored.
    nonpositive_intensity_events : int
        Test events at which the fit's own intensity of their dimension is ≤ 0 (or undefined): the fit says they
        could not happen. Unless ``rectified``, each scores −∞.
    n_blocks : int
        Blocks the bootstrap resamples (time blocks of the test window, or test sequences).
    split : str
        How the data were split (:attr:`TrainTestSplit.mode`).
    conditioned_events : int
        Events exactly at a test window's start (``t = 0`` of a test sequence): where the observation begins, not
        an outcome, so conditioned on (history), not scored.
    rectified : bool
        The fit's intensity can be ≤ 0 and was read as ``max(λ_i, f_i)``, ``f_i`` = :data:`RECTIFY_SHARE` of the
        training part's mean rate of i (:mod:`~dphawkes_experiments.rectified`).
    """

    loglik_per_event: float
    poisson_loglik_per_event: float
    gain_over_poisson: float
    gain_standard_error: float
    n_test_events: int
    nonpositive_intensity_events: int
    n_blocks: int
    split: str
    conditioned_events: int = 0
    rectified: bool = False

    @property
    def verdict(self) -> Verdict:
        """Better, worse or cannot tell against the constant-rate model (:func:`~dphawkes_experiments.verdict.
        heldout_verdict`)."""
        return heldout_verdict(self.gain_over_poisson, self.gain_standard_error, self.n_test_events,
                               self.nonpositive_intensity_events, self.rectified, RECTIFY_SHARE)

    def to_dict(self) -> dict:
        """Plain dict for JSON with the verdict: ``-inf``/``inf`` as the strings ``"-inf"``/``"inf"`` (reported as
        such), NaN as None."""
        return {**{key: _json_number(value) for key, value in vars(self).items()}, **self.verdict.to_dict()}


def _json_number(value):
    """A float for strict JSON: ±∞ as text, NaN as None; anything else as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def heldout_split(events: Events, holdout_start: float | None = None, train_fraction: float = 0.7) -> TrainTestSplit:
    """The split every held-out score uses: one sequence is cut at a time, several by a share of sequences.

    Parameters
    ----------
    events : Events
        The data.
    holdout_start : float, optional
        One sequence: the test part starts here (relative to the window start, :func:`relative_time`);
        without it at ``train_fraction`` of the window. Refused for several sequences.
    train_fraction : float
        Several sequences: the share of sequences (the first ones) used for training.

    Returns
    -------
    TrainTestSplit
    """
    if holdout_start is None:
        return split_events(events, train_fraction)
    if events.n_sequences > 1:
        raise ConfigError("several sequences are split by a share of sequences (--train-fraction), not by a time")
    length = events.sequences[0].end_time
    if not 0 < holdout_start < length:
        raise ConfigError(f"the hold-out start must lie inside the window (0, {length:.6g}) after its start, "
                          f"got {holdout_start:.6g}")
    return _timeline_split(events, float(holdout_start))


def relative_time(events: Events, value) -> float:
    """A time on the data's own axis (a number, or an ISO-8601 datetime for datetime data; in seconds when a
    ``--time-unit`` was given, like ``--end-time``) as a time relative to the (first) window's start."""
    raw = timeaxis.scalar_ticks(value, events.time_kind, 0, "hold-out start")
    seconds = raw / timeaxis.NS_PER_SECOND if events.time_kind == "datetime" else raw
    return float(seconds) / timeaxis.unit_seconds(events.time_unit) - events.sequences[0].start_time


def score_fit(result, split: TrainTestSplit) -> HeldOutScore:
    """:func:`score_heldout` of a fit: its kernels as functions (:func:`~dphawkes_core.evaluation.exp_kernels.
    fit_functions`) and its baseline, periodic when it has one (:func:`~dphawkes_core.evaluation.exp_kernels.
    fit_baseline`)."""
    from dphawkes_core.evaluation.exp_kernels import fit_baseline, fit_functions

    return score_heldout(fit_functions(result), fit_baseline(result.baseline, result.info), split)


def score_heldout(kernels: KernelFunctions, baseline, split: TrainTestSplit, rectify: bool = True) -> HeldOutScore:
    """Held-out log-likelihood per test event of a fit and of the Poisson model fitted on the training part.

    Parameters
    ----------
    kernels : KernelFunctions
        The fitted kernels as functions (:func:`~dphawkes_core.evaluation.exp_kernels.fit_functions` of a fit).
    baseline : numpy.ndarray or BaselineProfile
        ``(d,)`` fitted constant baseline η, or a baseline that follows the clock
        (:class:`~dphawkes_core.data.baseline_bins.BaselineProfile`).
    split : TrainTestSplit
        From :func:`heldout_split` (or :func:`split_events`).
    rectify : bool
        A fit whose intensity can be ≤ 0 is read as ``max(λ, f)`` (:mod:`~dphawkes_experiments.rectified`);
        ``False``: as it is (−∞ where it is ≤ 0 at a test event).

    Returns
    -------
    HeldOutScore
    """
    profile = baseline if isinstance(baseline, BaselineProfile) else BaselineProfile.constant(baseline)
    _check_profile(profile, split)
    poisson = split.train.counts_per_dimension() / split.train.end_time
    floor = RECTIFY_SHARE * np.maximum(poisson, 1.0 / split.train.end_time)
    rectified = rectify and can_be_nonpositive(kernels, profile)
    per_sequence = split.mode == "sequences"  # independent sequences are the blocks; one is cut in time blocks
    parts = [_block_terms(kernels, profile, poisson, seq, start, 1 if per_sequence else
                          _time_blocks(seq.end_time - start, kernels.support), floor if rectified else None)
             for seq, start in zip(split.test, split.eval_from)]
    fit_ll, poisson_ll, counts, bad = (np.concatenate([part[k] for part in parts]) for k in range(4))
    conditioned = sum(part[4] for part in parts)
    n = int(counts.sum())
    if n == 0:
        raise DataError("the test part holds no events; move the hold-out start earlier")
    n_bad = int(bad.sum())
    infinite = bool(n_bad) and not rectified
    model = -math.inf if infinite else float(fit_ll.sum()) / n
    reference = float(poisson_ll.sum()) / n
    se = math.nan if infinite else _bootstrap_se(fit_ll - poisson_ll, counts)
    return HeldOutScore(loglik_per_event=model, poisson_loglik_per_event=reference,
                        gain_over_poisson=model - reference, gain_standard_error=se, n_test_events=n,
                        nonpositive_intensity_events=n_bad, n_blocks=int(counts.size), split=split.mode,
                        conditioned_events=int(conditioned), rectified=bool(rectified))


def _check_profile(profile: BaselineProfile, split: TrainTestSplit) -> None:
    """A baseline in bins of each window does not reach past the training window of one sequence cut in time."""
    if split.mode == "timeline" and not profile.bins.constant and profile.bins.period is None:
        raise ConfigError("a baseline in bins of the window does not reach past the training window: score it on "
                          "several sequences (--train-fraction), or fit a baseline with a period (--baseline-period)")


def _time_blocks(length: float, support: float) -> int:
    """Blocks of the test window: :data:`BOOTSTRAP_BLOCKS`, fewer when a block would be shorter than the support
    (a block must hold most of the dependence it resamples), at least one."""
    return int(max(1, min(BOOTSTRAP_BLOCKS, length // support)))


def _block_terms(kernels: KernelFunctions, profile: BaselineProfile, poisson: np.ndarray, seq: EventSequence,
                 start: float, n_blocks: int, floor: np.ndarray | None) -> tuple:
    """Per block of ``[start, T]`` cut in ``n_blocks`` equal parts: the fit's and Poisson's log-likelihood, the
    number of events and the number where the fit's own intensity is ≤ 0 (their log terms left out of the fit's sum
    unless ``floor`` is given: then the fit is read as ``max(λ, floor)``); and the events at the window's start,
    conditioned on (``start = 0``)."""
    times, dims = _sorted_events(seq)
    first = int(np.searchsorted(times, start, side="right" if start <= 0 else "left"))
    conditioned = first - int(np.searchsorted(times, start, side="left"))
    lam = _intensities_at(kernels, profile.at(times, dims, seq.start_time, seq.end_time), times, dims, first,
                          profile.dim)
    positive = lam > 0
    edges = np.linspace(start, seq.end_time, n_blocks + 1)
    block = np.clip(np.searchsorted(edges, times[first:], side="right") - 1, 0, n_blocks - 1)
    with np.errstate(divide="ignore"):
        log_mu = np.log(poisson)[dims[first:]]
    widths = np.diff(edges)
    if floor is None:
        log_lam = np.log(np.where(positive, lam, 1.0))
        mass = (np.array([profile.integral(a, b, seq.start_time, seq.end_time).sum()
                          for a, b in zip(edges[:-1], edges[1:])])
                + np.diff(_kernel_compensator(kernels, times, dims, edges)))
    else:
        log_lam = np.log(np.maximum(lam, floor[dims[first:]]))
        mass = rectified_integrals(kernels, profile, floor, times, dims, edges, seq.start_time, seq.end_time)
    fit_ll = np.bincount(block, log_lam, n_blocks) - mass
    poisson_ll = np.bincount(block, log_mu, n_blocks) - poisson.sum() * widths
    return (fit_ll, poisson_ll, np.bincount(block, minlength=n_blocks),
            np.bincount(block, ~positive, n_blocks).astype(np.int64), conditioned)


def _intensities_at(kernels: KernelFunctions, base: np.ndarray, times: np.ndarray, dims: np.ndarray,
                    first: int, d: int) -> np.ndarray:
    """``λ_{i_n}(t_n)`` at the events from index ``first`` on: the baseline there (``base``, one value per event)
    plus ``h(t_n − u)`` over every earlier event ``u`` less than the support before (all of the history), walking
    the pairs one offset at a time."""
    targets = np.arange(first, times.size)
    lam = np.asarray(base, dtype=float)[targets].copy()
    chunk = max(1, _PAIR_CELLS // (d * d))
    offset = 1
    while targets.size:
        sources = targets - offset
        near = (sources >= 0) & (times[targets] - times[np.maximum(sources, 0)] <= kernels.support)
        targets, sources = targets[near], sources[near]  # sorted times: a pair too far stays too far
        for lo in range(0, targets.size, chunk):
            tgt, src = targets[lo:lo + chunk], sources[lo:lo + chunk]
            values = kernels.values_at(times[tgt] - times[src])
            np.add.at(lam, tgt - first, values[dims[tgt], dims[src], np.arange(tgt.size)])
        offset += 1
    return lam


def _kernel_compensator(kernels: KernelFunctions, times: np.ndarray, dims: np.ndarray,
                        at: np.ndarray) -> np.ndarray:
    """``Σ_i Σ_{u < c} ∫_0^{c−u} h_{i, j_u}`` at each ``c`` of ``at``: the kernels' part of the compensator from
    the sequence's start (differences give it over any interval)."""
    mass = kernels.primitive_at(np.array([kernels.support])).sum(axis=0)[:, 0]  # (d,): Σ_i ∫ h_ij
    out = np.empty(at.size)
    for k, c in enumerate(at):
        old = int(np.searchsorted(times, c - kernels.support, side="left"))
        recent = slice(old, int(np.searchsorted(times, c, side="left")))
        full = np.bincount(dims[:old], minlength=mass.size) @ mass
        partial = kernels.primitive_at(c - times[recent]).sum(axis=0)
        out[k] = full + partial[dims[recent], np.arange(partial.shape[1])].sum()
    return out


def _bootstrap_se(gain: np.ndarray, counts: np.ndarray) -> float:
    """Standard error of ``Σ gain / Σ counts`` over blocks resampled with replacement (NaN for < 2 blocks)."""
    if gain.size < 2:
        return math.nan
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = rng.integers(0, gain.size, size=(BOOTSTRAP_REPLICATES, gain.size))
    totals = counts[draws].sum(axis=1)
    keep = totals > 0
    return float(np.std(gain[draws].sum(axis=1)[keep] / totals[keep], ddof=1))
