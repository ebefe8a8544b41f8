"""Held-out next-event-time prediction under a fitted discretised Hawkes model.

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

import numpy as np

from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.data.io import Events, EventSequence
from dphawkes_core.statistics.moments import MAX_DESIGN_ROWS

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
        seq = events.sequences[0]
        cut = train_fraction * seq.end_time
        train_seq = replace(seq, times=tuple(t[t < cut] for t in seq.times), end_time=cut)
        train = replace(events, sequences=(train_seq,))
        test, eval_from, mode = (seq,), (cut,), "timeline"
    else:
        n_train = math.ceil(train_fraction * events.n_sequences)
        if n_train >= events.n_sequences:
            raise ConfigError(f"a training fraction of {train_fraction:g} leaves no test sequence")
        train = replace(events, sequences=events.sequences[:n_train])
        test = events.sequences[n_train:]
        eval_from, mode = (0.0,) * len(test), "sequences"
    if train.n_events == 0:
        raise DataError("the training part holds no events; use a larger training fraction")
    return TrainTestSplit(train, tuple(test), tuple(eval_from), mode, float(train_fraction))


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
