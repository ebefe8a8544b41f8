"""One Fisher-scoring step for exp from a private least-squares pilot, measured as an oracle that can only flatter it
(``docs/accuracy.md``, "A likelihood release for exp, round 2": the measurement behind not building it).

Release 1 (a share q₁ of the μ²) is exp's release in the differences basis (the shipped formal fit) at C; its fit θ₀,
floored (kernel coefficients ≥ f, each baseline ≥ half its pilot), is the pilot. Release 2 would be the score
``v_i = Σ_{t ∈ i} φ(t)/λ₀_i(t)``, and ``θ₁ = θ₀ + F⁻¹(v − ∫φ)``. Flattered twice: F is the exact observed information
(not released, no noise), and v's noise is calibrated to a *lower* bound of its sensitivity — an event appended after
every other event, following a burst at the cap in one source (its own term only). Any valid release is noisier.

Tuning networks only (:data:`benchmarks.bench_exp_networks.TUNING_SEEDS`)::

    nice .venv/bin/python -m benchmarks.exp_likelihood_oracle --sizes 100000 --caps 3 --shares 0.3 0.5 0.7 \\
        --floors 0.01 0.02
    nice .venv/bin/python -m benchmarks.exp_likelihood_oracle --sizes 1000000 --caps 5 --floors 0.005 0.01

A script, not a ``bench_*`` module: it measures a mechanism the product does not have.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import numpy as np

from benchmarks.bench_exp_networks import DECAYS, TUNING_SEEDS, cached_events, exp_network, function_error
from dphawkes_core.estimators import FitConfig, prepare_stats
from dphawkes_core.estimators.exp.basis import feature_map
from dphawkes_core.estimators.exp.statistics import event_features
from dphawkes_core.estimators.pipeline import privacy_report
from dphawkes_core.privacy.accounting import divided
from dphawkes_core.privacy.noise import noise_source
from dphawkes_core.threads import blas_threads

WIDTH, DIM = 0.5, 5
BASELINE_FLOOR = 0.5  # each pilot baseline floored at this share of itself


def coefficients(adjacency, baseline) -> np.ndarray:
    """θ rows (decay-major columns ``u·d + j``, the baseline last) from a fit's info."""
    a = np.asarray(adjacency)  # [i, j, u]
    return np.column_stack([a.transpose(0, 2, 1).reshape(DIM, -1), np.asarray(baseline)])


def score_lower_bound(pilot: np.ndarray, cap: int, T: np.ndarray) -> float:
    """The change of the score vector when an event is appended after every other event, its dimension i's features
    those of a burst of C events at the end of every earlier w-bin of one source j (``C β/(1 − e^{−βw})``), in the
    differences basis: a lower bound of any valid sensitivity (max over i, j)."""
    beta = np.asarray(DECAYS)
    burst = cap * beta / (1.0 - np.exp(-beta * WIDTH))
    largest = 0.0
    for i in range(DIM):
        for j in range(DIM):
            phi = np.zeros(DIM * beta.size)
            phi[np.arange(beta.size) * DIM + j] = burst
            lam = pilot[i, -1] + pilot[i, :-1] @ phi
            largest = max(largest, float(np.linalg.norm(np.append(T @ phi, 1.0)) / lam))
    return largest


def one_step(pilot: np.ndarray, features, integral, duration, T: np.ndarray, noise: float, rng) -> np.ndarray:
    """θ₁ = θ₀ + F⁻¹(v − ∫φ) per target dimension, in the differences basis, v with Gaussian noise of std ``noise``,
    F the exact observed information; projected on θ ≥ 0; back in the decays basis."""
    T_inv = np.linalg.inv(T)
    out = pilot.copy()
    for i in range(DIM):
        X = np.hstack([features[i] @ T.T, np.ones((features[i].shape[0], 1))])
        theta = np.append(pilot[i, :-1] @ T_inv, pilot[i, -1])
        y = X / (X @ theta)[:, None]
        v = y.sum(axis=0) + noise * rng.standard_normal(y.shape[1])
        F = y.T @ y
        step = np.linalg.solve(F + 1e-9 * np.trace(F) * np.eye(F.shape[0]), v - np.append(T @ integral, duration))
        new = np.maximum(theta + step, 0.0)
        out[i, :-1], out[i, -1] = new[:-1] @ T, new[-1]
    return out


def measure(network: int, n_events: int, cap: int, share: float, floor: float, draws: int, score_noise: bool = True
            ) -> dict:
    scenario = exp_network(network)
    events = cached_events(scenario, n_events, network)
    shared = dict(method="exp", bin_size=WIDTH, lags=10, calibration="formal", decays=DECAYS,
                  exp_basis="differences")
    config = FitConfig(**shared, epsilon=1.0, count_cap="auto")
    stats, _ = prepare_stats(events, FitConfig(**shared, epsilon=1.0, count_cap=cap))
    report = privacy_report(stats, config)
    z = math.sqrt(report.sigma2) / report.sensitivity
    z_pilot, z_score = divided(z, (share, 1.0 - share))
    features, integral, duration = event_features(events, DECAYS, WIDTH, cap)
    T = np.kron(feature_map(DECAYS, "differences"), np.eye(DIM))
    row = {"network": network, "events": n_events, "C": cap, "share": share, "floor": floor,
           "score_noise": score_noise, "whole budget": [], "pilot": [], "one step": [], "bound": []}
    with blas_threads(1):
        for draw in range(1, draws + 1):
            for key, multiplier in (("whole budget", z), ("pilot", z_pilot)):
                at = dataclasses.replace(report, sigma2=(multiplier * report.sensitivity) ** 2)
                _, _, info = config.family.run(stats, config, at, noise_source(draw))
                row[key].append(function_error(info["adjacency"], scenario))
            pilot = coefficients(info["adjacency"], info["baseline"])
            pilot[:, :-1] = np.maximum(pilot[:, :-1], floor)
            pilot[:, -1] = np.maximum(pilot[:, -1], BASELINE_FLOOR * np.maximum(pilot[:, -1], 1e-3))
            bound = score_lower_bound(pilot, cap, T)
            theta = one_step(pilot, features, integral, duration, T, z_score * bound * score_noise,
                             np.random.default_rng(1000 + draw))
            row["one step"].append(function_error(theta[:, :-1].reshape(DIM, len(DECAYS), DIM).transpose(0, 2, 1),
                                                  scenario))
            row["bound"].append(bound)
    return {key: (float(np.mean(value)) if isinstance(value, list) else value) for key, value in row.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", nargs="+", type=int, default=list(TUNING_SEEDS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[100_000])
    parser.add_argument("--caps", nargs="+", type=int, default=[3])
    parser.add_argument("--shares", nargs="+", type=float, default=[0.5])
    parser.add_argument("--floors", nargs="+", type=float, default=[0.01, 0.02])
    parser.add_argument("--draws", type=int, default=3)
    args = parser.parse_args()
    for n_events in args.sizes:
        for cap in args.caps:
            for network in args.networks:
                for share in args.shares:
                    for floor in args.floors:
                        print(json.dumps(measure(network, n_events, cap, share, floor, args.draws)), flush=True)
                print(json.dumps(measure(network, n_events, cap, args.shares[0], args.floors[0], args.draws,
                                         score_noise=False)), flush=True)


if __name__ == "__main__":
    main()
