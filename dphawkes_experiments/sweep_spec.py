"""What a privacy–utility sweep runs: its data source (:class:`DataSource`: a scenario simulated afresh per run, or
fixed data), its grid (:class:`SweepSpec`: methods, bin sizes, privacy levels, runs and settings, expanded into
cells), each cell's key (:func:`cell_key`, what a cache of finished cells is keyed by) and noise seed
(:func:`noise_seed`). Running them: :mod:`dphawkes_experiments.sweep_cells`, :mod:`dphawkes_experiments.sweep`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dphawkes_core.data.io import Events
from dphawkes_core.data.kernels import Scenario
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import UNIT_KEYWORDS, FitConfig, get_family, method_names
from dphawkes_core.privacy.calibration import CALIBRATIONS
from dphawkes_core.statistics.binning import lags_from_support

PRIVACY_KINDS = ("sigma2", "epsilon")
MAX_CELLS = 20_000


@dataclass(frozen=True)
class DataSource:
    """Where the data of every run come from.

    Attributes
    ----------
    scenario : Scenario, optional
        The true process. Without ``events`` it is simulated afresh for every seed; with ``events``
        it is the ground truth of those fixed data.
    n_events, end_time : optional
        Size of each simulation (exactly one, when simulating).
    events : Events, optional
        Fixed data (every seed then only changes the noise). Without a scenario the metric is the
        held-out next-event-time RMSE (train on a ``train_fraction`` part, predict the rest).
    label : str
        Short description for tables.
    train_fraction : float
        Training part for the prediction metrics: the share of sequences (several), or of the window (one
        sequence without ``holdout_start``).
    holdout_start : float, optional
        One sequence: the test part of the prediction metrics starts here (relative to the window start;
        :func:`~dphawkes_experiments.prediction.heldout_split`).
    """

    scenario: Scenario | None = None
    n_events: int | None = None
    end_time: float | None = None
    events: Events | None = None
    label: str = ""
    train_fraction: float = 0.7
    holdout_start: float | None = None

    def __post_init__(self):
        if self.events is None:
            if self.scenario is None:
                raise ConfigError("a sweep needs a scenario to simulate or a data set")
            if (self.n_events is None) == (self.end_time is None):
                raise ConfigError("give exactly one of the number of events or the horizon of each simulation")
        if not 0 < self.train_fraction < 1:
            raise ConfigError(f"the training fraction must be between 0 and 1, got {self.train_fraction!r}")

    @property
    def simulated(self) -> bool:
        """True when every seed gets a fresh simulation."""
        return self.events is None

    @property
    def has_truth(self) -> bool:
        """True when the true process is known (relative errors), else the prediction metric is used."""
        return self.scenario is not None

    @functools.cached_property
    def fingerprint(self) -> str:
        """Short hash identifying the data (scenario and size, or the fixed events)."""
        h = hashlib.sha1()
        if self.scenario is not None:
            h.update(repr(self.scenario).encode())
        h.update(repr((self.n_events, self.end_time, self.train_fraction)).encode())
        if self.holdout_start is not None:
            h.update(repr(self.holdout_start).encode())
        if self.events is not None:
            h.update(repr(self.events.names).encode())
            for seq in self.events.sequences:
                h.update(np.float64(seq.end_time).tobytes())
                for t in seq.times:
                    h.update(np.asarray(t, float).tobytes() + b"|")
        return h.hexdigest()[:12]

    def describe(self) -> dict:
        """JSON-able description (the fixed events are represented by their fingerprint)."""
        return {
            "label": self.label,
            "scenario": self.scenario.name if self.scenario is not None else None,
            "simulated": self.simulated,
            "n_events": self.n_events,
            "end_time": self.end_time,
            "train_fraction": None if self.has_truth else self.train_fraction,
            "holdout_start": None if self.has_truth else self.holdout_start,
            "data_fingerprint": self.fingerprint,
        }


@dataclass(frozen=True)
class SweepSpec:
    """A privacy–utility grid.

    Attributes
    ----------
    source : DataSource
        The data.
    methods : tuple of str
        Estimators (names from :func:`dphawkes_core.estimators.method_names`). Non-private methods get one
        cell per (seed, Δ), private ones one per privacy level.
    bin_sizes : tuple of float
        Δ values.
    privacy : str
        ``sigma2`` (levels are noise variances, ε is reported) or ``epsilon`` (levels are targets).
    levels : tuple of float
        Privacy levels.
    runs : int
        Independent repetitions (seeds ``seed .. seed+runs-1``).
    seed : int
        First seed.
    support : float
        Kernel support s; ``p = ⌈s/Δ⌉``.
    bound : float, optional
        B for PGD-type methods; ``None``: the truth's ``||H_true||_F`` (or the non-private fit's when
        there is no truth — data-dependent, not private).
    radius : float, optional
        r for CG; ``None``: the truth's ``||ΔH_true||_*`` (or the non-private fit's).
    iters, calibration, dp_delta, count_cap, step, fw_step :
        As in :class:`~dphawkes_core.estimators.FitConfig`.
    options : tuple of (str, value) pairs
        Further :class:`~dphawkes_core.estimators.FitConfig` fields for every fit (e.g. ``("clip", 1.0)``).
    """

    source: DataSource
    methods: tuple = ("pgd",)
    bin_sizes: tuple = (0.1,)
    privacy: str = "sigma2"
    levels: tuple = (0.0,)
    runs: int = 1
    seed: int = 0
    support: float = 4.0
    bound: float | None = None
    radius: float | None = None
    iters: int = 1000
    calibration: str = "paper"
    dp_delta: float = 1e-5
    count_cap: int | None = None
    step: str = "theorem"
    fw_step: str = "paper"
    options: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "options", tuple(sorted((str(k), v) for k, v in dict(self.options).items())))
        object.__setattr__(self, "bin_sizes", tuple(float(x) for x in self.bin_sizes))
        object.__setattr__(self, "levels", tuple(float(x) for x in self.levels))
        unknown = [m for m in self.methods if m not in method_names()]
        if unknown or not self.methods:
            raise ConfigError(f"unknown or no method {unknown}; choose from {', '.join(method_names())}")
        if self.privacy not in PRIVACY_KINDS:
            raise ConfigError(f"privacy level must be one of {PRIVACY_KINDS}, got {self.privacy!r}")
        if not self.bin_sizes or not self.levels:
            raise ConfigError("give at least one bin size and one privacy level")
        for level in self.levels:
            ok = level > 0 if self.privacy == "epsilon" else level >= 0
            if not (math.isfinite(level) and ok):
                raise ConfigError(
                    f"privacy level {level!r} is not a valid {'ε > 0' if self.privacy == 'epsilon' else 'σ² >= 0'}"
                )
        if int(self.runs) != self.runs or self.runs < 1:
            raise ConfigError(f"the number of runs must be a positive integer, got {self.runs!r}")
        if self.calibration not in CALIBRATIONS:
            raise ConfigError(f"unknown calibration {self.calibration!r}")
        for dt in self.bin_sizes:
            lags = lags_from_support(self.support, dt)
            for method in self.methods:  # FitConfig's own checks, before any work starts
                cell_config(self, {"method": method, "bin_size": dt, "level": self.levels[-1], "seed": 0},
                             lags, self.bound or 1.0, self.radius or 1.0)
        if self.n_cells > MAX_CELLS:
            raise ConfigError(f"the grid has {self.n_cells:,} cells, over the {MAX_CELLS:,} limit")

    @property
    def seeds(self) -> tuple:
        """Repetition seeds."""
        return tuple(range(self.seed, self.seed + int(self.runs)))

    def cells(self) -> list[dict]:
        """Every cell's own parameters (method, bin_size, level, seed), in a fixed order."""
        out = []
        for dt in self.bin_sizes:
            for method in self.methods:
                levels = self.levels if get_family(method).privacy.private else (math.nan,)
                for level in levels:
                    for seed in self.seeds:
                        out.append({"method": method, "bin_size": dt, "level": level, "seed": seed})
        return out

    @property
    def n_cells(self) -> int:
        """Number of cells of the grid."""
        per_seed = sum(len(self.levels) if get_family(m).privacy.private else 1 for m in self.methods)
        return per_seed * len(self.bin_sizes) * int(self.runs)

    def to_dict(self) -> dict:
        """JSON-able parameters of the whole sweep (saved with the table)."""
        out = {k: v for k, v in vars(self).items() if k != "source"}
        out["methods"], out["bin_sizes"], out["levels"] = list(self.methods), list(self.bin_sizes), list(self.levels)
        out["source"] = self.source.describe()
        out["options"] = dict(self.options)
        return out


def cell_key(spec: SweepSpec, cell: Mapping) -> str:
    """Stable identifier of one cell: everything that determines its result."""
    private = get_family(cell["method"]).privacy.private
    params = {
        "data": spec.source.fingerprint, "support": spec.support, "iters": spec.iters,
        "bound": spec.bound, "radius": spec.radius, "count_cap": spec.count_cap,
        "step": spec.step, "fw_step": spec.fw_step, "options": repr(spec.options),
        "method": cell["method"], "bin_size": float(cell["bin_size"]), "seed": int(cell["seed"]),
        "privacy": spec.privacy if private else None,
        "level": float(cell["level"]) if private else None,
        "calibration": spec.calibration if private else None,
        "dp_delta": spec.dp_delta if private else None,
    }
    return hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]


def noise_seed(seed: int, bin_size: float, method: str, level: float) -> int:
    """Seed of a cell's noise generator: a stable hash of its coordinates."""
    return zlib.crc32(repr((int(seed), float(bin_size), method, float(level))).encode())


def cell_config(spec: SweepSpec, cell: Mapping, lags: int, bound: float, radius: float) -> FitConfig:
    """A cell's config: the sweep's settings, each given to the families that read it."""
    family = get_family(cell["method"])
    private = family.privacy.private
    level = cell["level"]
    public = dict(bound=bound, radius=radius, iters=spec.iters, step=spec.step, fw_step=spec.fw_step)
    unit = {k: v for k, v in spec.options if k in UNIT_KEYWORDS}
    options = {k: v for k, v in spec.options if k not in UNIT_KEYWORDS}
    return FitConfig(
        method=cell["method"], bin_size=cell["bin_size"], lags=lags, calibration=spec.calibration,
        dp_delta=spec.dp_delta, count_cap=spec.count_cap, **unit, **family.own_options({**public, **options}),
        sigma2=level if private and spec.privacy == "sigma2" else None,
        epsilon=level if private and spec.privacy == "epsilon" else None,
        seed=noise_seed(cell["seed"], cell["bin_size"], cell["method"], level),
    )
