"""One adversary for every family: a search for neighbouring data sets that move what a family adds noise to by
as much as it can, measured against the sensitivity the family states — told nothing about where the family's
bound is reached.

**What it asks of a family.** Only :meth:`~dphawkes_core.estimators.family.Family.noised_queries` (every vector
the release adds noise to, each with its stated L2 sensitivity S) and, for an iterative family,
:meth:`~dphawkes_core.estimators.family.Family.query_states` (the public set of states it releases at). Statistics
come from :func:`~dphawkes_core.estimators.pipeline.prepare_stats` or ``prepare_partitioned``: the code that runs.
Nothing reads a family's bound, its corners or its adversarial events; the only facts used to build data are the
config's public ones (d, the bin width w, the count cap C, the window).

**What it builds** (one sequence on a declared window ``[0, T]``, ``T = n·w``; the event unit):

* data sets filled bin by bin on the w-grid, per (dimension, bin): empty, one event, C events packed at the bin's
  start, at its end, one ulp below the next edge (which the edge rule may count in the next bin), tied at one
  time, uniform, or a burst over the cap (C + 1, C + 2);
* the added event z: exactly on an edge, one ulp below it, just after it, just before the next, mid-bin, on an
  existing event's time (a tie), just ahead of an existing event, at 0, at T and one ulp below T;
* every neighbour as ``D' = D + z`` (a removal is the same pair read the other way: the change is symmetric),
  labelled from the public C and w: an *insertion* (z's bin in its dimension held fewer than C events), a
  *swap* (it held C or more and z comes ahead of the C-th: keeping the first C, the kept sets then differ by a
  removal and an insertion, so the two events' corners mix), or *beyond the cap* (z after the C kept);
* a hill climb on the measured ratio ``max over queries ‖v(D') − v(D)‖ / S``: moves re-fill a bin, fill every bin
  before z alike and every bin after z alike, re-pack z's own bin around z, set a swap up, move z (and its
  dimension), add or remove an event; an iterative family's state moves too (a random step, to the boundary, to 0),
  inside its state space;
* a polish of the best insertion and the best swap by coordinate ascent (:func:`_polish`: each of those moves tried
  in all its values; the state by power steps along the ratio's gradient), and the best pair of each config again
  through partitioned Parquet stores cut at z, just after z, at z's bin edge and inside z's bin (where the family
  reads partitions);
* the sequence unit (``privacy_unit="sequence"``): several sequences, one of them replaced by another (bursts in
  one dimension, packed bins, empty, random), climbed the same way.

The configs are drawn from public settings only: d, C, w, p, and each of the family's own options from its
:class:`~dphawkes_core.estimators.settings.Setting` (every choice, numbers at their default and ×¼ or ×4 within
their range, a required public bound at 1 or 10): a new family is searched without saying anything.

Entry points: :func:`search_neighbours` (the event unit) and :func:`search_sequence_neighbours`; the contract
suite's ``neighbour search`` check (:func:`~dphawkes_core.estimators.checks.check_neighbour_search`) runs both with
a small budget; ``benchmarks/bench_neighbour_search.py`` runs a long sweep.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dphawkes_core.data.events import Events, EventSequence
from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.estimators.config import FitConfig
from dphawkes_core.estimators.family import Family
from dphawkes_core.estimators.pipeline import prepare_partitioned, prepare_stats
from dphawkes_core.statistics.binning import bin_index

INSERT, SWAP, BEYOND, REPLACE = "insertion", "swap", "beyond the cap", "sequence replaced"
SHARED_GRID = {"dim": (1, 2, 3, 5), "count_cap": (1, 2, 3), "bin_size": (0.5, 1.0, 2.0, 4.0), "lags": (1, 2, 3, 5)}
OPTION_FACTORS = (1.0, 1.0, 0.25, 4.0)  # a number option: its default half the time, else a quarter or 4×
PUBLIC_BOUNDS = (1.0, 10.0)  # a public bound without a default
BINS = 32  # n: the window is n bins of the config's w
TINY = (1e-6, 1e-9)  # offsets of packed events, in units of w
SENSITIVITY_RTOL = 1e-12  # S on both sides of a pair must agree to this: it is a public number
ROUND_OFF = 1e-9  # ratios this close are equal: a climb's path must not turn on how a BLAS kernel rounds


def _not_worse(new: float, old: float) -> bool:
    return new >= old * (1 - ROUND_OFF)


def _better(new: float, old: float) -> bool:
    return new > old * (1 + ROUND_OFF)


@dataclass(frozen=True)
class Budget:
    """How hard the search tries.

    Attributes
    ----------
    configs : int
        Configs drawn (event unit).
    starts : int
        Hill climbs per config, each from a fresh data set.
    steps : int
        Moves per climb.
    polish : int
        Rounds of coordinate ascent from the best insertion and the best swap (:func:`_polish`).
    partitions : bool
        Re-measure each config's best pair through partitioned stores.
    sequence_configs, sequence_steps : int
        The sequence unit's configs and moves per climb (two climbs each).
    seed : int
        The search's own generator (the data it builds, not any noise).
    """

    configs: int = 8
    starts: int = 3
    steps: int = 60
    polish: int = 2
    partitions: bool = True
    sequence_configs: int = 3
    sequence_steps: int = 40
    seed: int = 0


@dataclass(frozen=True)
class Finding:
    """The worst pair found for one config and kind of neighbour.

    Attributes
    ----------
    ratio : float
        ``‖v(D') − v(D)‖ / S`` of the query that moved most (inf: S differed between D and D').
    kind : str
        :data:`INSERT`, :data:`SWAP`, :data:`BEYOND` or :data:`REPLACE`.
    query : str
        The query's name.
    config : dict
        ``config.to_dict()``.
    dim : int
        d.
    events : tuple
        D: per dimension its times (one sequence), or per sequence per dimension (the sequence unit).
    added : tuple
        ``(dimension, time)`` of z; the sequence unit: ``(index, replacement times per dimension)``.
    end_time : float
        T.
    where : str
        ``in process`` or the partitioned layout it was measured through.
    state_norm : float
        ``‖U‖_F`` of the state it was measured at (0: the first release).
    """

    ratio: float
    kind: str
    query: str
    config: dict
    dim: int
    events: tuple
    added: tuple
    end_time: float
    where: str = "in process"
    state_norm: float = 0.0

    def describe(self) -> str:
        """One line: the ratio, the kind and where."""
        shared = {k: self.config.get(k) for k in ("bin_size", "lags", "count_cap")}
        return (f"{self.ratio:.4f} × S ({self.kind}, query {self.query}, d = {self.dim}, {shared}, "
                f"z = {self.added}, {self.where})")


@dataclass(frozen=True)
class SearchReport:
    """Everything a search measured for one family.

    Attributes
    ----------
    family : str
    findings : tuple of Finding
        The best pair of every (config, kind) searched.
    evaluations : int
        Pairs measured.
    skipped : tuple of str
        Configs the family refused (a one-line reason each).
    """

    family: str
    findings: tuple = ()
    evaluations: int = 0
    skipped: tuple = ()

    @property
    def worst(self) -> Finding | None:
        """The largest ratio found."""
        return max(self.findings, key=lambda f: f.ratio, default=None)

    def worst_by_kind(self) -> dict:
        """``{kind: Finding}``: the largest ratio of each kind of neighbour."""
        out: dict = {}
        for finding in self.findings:
            if finding.kind not in out or finding.ratio > out[finding.kind].ratio:
                out[finding.kind] = finding
        return out


# --- configs from public settings only ---------------------------------------------------------------------------

def _option_value(setting, rng: np.random.Generator):
    """A value of one of the family's options: every choice, a number at its default or ×¼ / ×4 within range."""
    if setting.kind == "choice":
        return setting.choices[int(rng.integers(len(setting.choices)))]
    if setting.kind == "bool":
        return setting.default
    if setting.default is None:
        return None if setting.optional else float(PUBLIC_BOUNDS[int(rng.integers(len(PUBLIC_BOUNDS)))])
    factor = OPTION_FACTORS[int(rng.integers(len(OPTION_FACTORS)))]
    if setting.kind == "int":
        return setting.default
    lo = setting.minimum if setting.minimum is not None else -math.inf
    hi = setting.maximum if setting.maximum is not None else math.inf

    def scaled(x):
        return float(min(max(x * factor, lo), hi))

    return tuple(scaled(x) for x in setting.default) if setting.kind == "floats" else scaled(setting.default)


def draw_config(family: Family, rng: np.random.Generator, unit: str = "event", tries: int = 40,
                defaults: bool = False):
    """A formal config of ``family`` from public settings only (:data:`SHARED_GRID`, its own options from its
    settings — ``defaults``: each at its default, the release users make unless they change it) and d:
    ``(config, d)``; ``None`` when ``tries`` draws are all refused."""
    calibration = "formal" if "formal" in family.privacy.calibrations else family.privacy.calibrations[0]
    for _ in range(tries):
        shared = {name: values[int(rng.integers(len(values)))] for name, values in SHARED_GRID.items()}
        options = {s.name: s.default if defaults and (s.default is not None or s.optional) else _option_value(s, rng)
                   for s in family.settings}
        unit_options = dict(count_cap=shared["count_cap"]) if unit == "event" else dict(
            privacy_unit="sequence", count_cap=None, sequence_clip=float(rng.choice([1e-3, 1.0, 1e3])))
        try:
            config = FitConfig(method=family.name, bin_size=shared["bin_size"], lags=shared["lags"],
                               calibration=calibration, sigma2=1e4,
                               **{**{k: v for k, v in options.items() if v is not None}, **unit_options})
        except ConfigError:
            continue
        return config, int(shared["dim"])
    return None


# --- data sets on the public grid --------------------------------------------------------------------------------

def _below(edge: float, ulps: int) -> float:
    """``edge`` moved ``ulps`` units in the last place down."""
    x = float(edge)
    for _ in range(ulps):
        x = float(np.nextafter(x, -np.inf))
    return x


def bin_fill(rng: np.random.Generator, k: int, w: float, cap: int, kind: str | None = None) -> list[float]:
    """The events of one dimension in bin ``[kw, (k+1)w)``, by ``kind`` (random when None)."""
    kinds = ("empty", "one", "start", "end", "ulp below next edge", "tied", "uniform", "burst", "start and end")
    kind = kind or kinds[int(rng.integers(len(kinds)))]
    lo, hi = k * w, (k + 1) * w
    tiny = float(rng.choice(TINY)) * w
    c = int(cap)
    if kind == "empty":
        return []
    if kind == "one":
        return [lo + float(rng.random()) * w]
    if kind == "start":
        return [lo + tiny * i for i in range(c)]
    if kind == "end":
        return [hi - tiny * (i + 1) for i in range(c)]
    if kind == "ulp below next edge":
        return [_below(hi, i + 1) for i in range(c)]
    if kind == "tied":
        return [lo + float(rng.random()) * w] * c
    if kind == "uniform":
        return list(lo + rng.random(c) * w)
    if kind == "burst":
        return [lo + float(rng.random()) * w * 0.999 + tiny * i for i in range(c + int(rng.integers(1, 3)))]
    return [lo + tiny * i for i in range(c)] + [hi - tiny * (i + 1) for i in range(c)]


@dataclass
class _Point:
    """A point of the climb: D bin by bin (``bins[j][k]``: dimension j's events in bin k), z and the state."""

    bins: list
    z_dim: int
    z: float
    state: np.ndarray | None = None

    def events(self) -> tuple:
        return tuple(np.sort(np.array([t for b in row for t in b], dtype=float)) for row in self.bins)

    def copy(self) -> _Point:
        return _Point([[list(b) for b in row] for row in self.bins], self.z_dim, self.z,
                      None if self.state is None else self.state.copy())


def _z_time(rng: np.random.Generator, point: _Point, w: float, end: float, near: int | None = None) -> float:
    """A time for z: on an edge, an ulp below it, just after, just before the next, mid-bin, a tie, just ahead
    of an existing event, 0, T or an ulp below T."""
    n = len(point.bins[0])
    k = int(rng.integers(n)) if near is None else int(np.clip(near + rng.integers(-2, 3), 0, n - 1))
    tiny = float(rng.choice(TINY)) * w
    existing = [t for row in point.bins for b in row for t in b]
    options = [k * w, _below(k * w, 1), k * w + tiny, (k + 1) * w - tiny, (k + 0.5) * w, 0.0, end, _below(end, 1)]
    if existing:
        t = float(existing[int(rng.integers(len(existing)))])
        options += [t, max(t - tiny, 0.0)]
    weights = np.array([3, 3, 3, 3, 1, 0.3, 0.3, 0.3] + [1.5, 1.5][:len(options) - 8])
    return float(options[int(rng.choice(len(options), p=weights / weights.sum()))])


def _z_bin(point: _Point, w: float) -> int:
    """z's w-bin by the binned families' edge rule (n for a z on T or an ulp below it)."""
    return int(bin_index(np.array([point.z]), w)[0])


# --- measuring a pair --------------------------------------------------------------------------------------------

class _Measure:
    """Measures pairs of one config: the statistics of D cached, every query's ``‖Δv‖ / S``."""

    def __init__(self, family: Family, config: FitConfig, dim: int, end: float):
        self.family, self.config, self.dim, self.end = family, config, dim, float(end)
        self.names = tuple(str(j) for j in range(dim))
        self.cache: dict = {}
        self.evaluations = 0

    def events(self, times) -> Events:
        return Events((EventSequence(tuple(np.asarray(t, dtype=float) for t in times), self.end),), self.names,
                      window_stated=True, dimensions_declared=True, sequences_declared=True)

    def stats(self, times):
        key = tuple(np.asarray(t, dtype=float).tobytes() for t in times)
        if key not in self.cache:
            if len(self.cache) > 64:
                self.cache.clear()
            self.cache[key] = prepare_stats(self.events(times), self.config)[0]
        return self.cache[key]

    def compare(self, stats_d, stats_n, state) -> tuple[float, str]:
        """``(ratio, query)`` of the query that moved most; inf when a query's S differs between D and D'."""
        self.evaluations += 1
        worst = (0.0, "")
        for q_d, q_n in zip(self.family.noised_queries(stats_d, self.config, state),
                            self.family.noised_queries(stats_n, self.config, state), strict=True):
            if not math.isclose(q_d.sensitivity, q_n.sensitivity, rel_tol=SENSITIVITY_RTOL, abs_tol=0.0):
                return math.inf, q_d.name + " (its sensitivity differs between D and D': read from the data)"
            moved = float(np.linalg.norm(q_n.vector - q_d.vector))
            ratio = moved / q_d.sensitivity if q_d.sensitivity > 0 else (math.inf if moved > 0 else 0.0)
            if ratio > worst[0] or not worst[1]:
                worst = (ratio, q_d.name)
        return worst

    def ratio(self, point: _Point) -> tuple[float, str]:
        base = point.events()
        added = list(base)
        added[point.z_dim] = np.sort(np.append(added[point.z_dim], point.z))
        return self.compare(self.stats(base), self.stats(added), point.state)

    def kind(self, point: _Point) -> str:
        """:data:`INSERT`, :data:`SWAP` or :data:`BEYOND`, from the public C and w (a label only)."""
        cap = self.config.count_cap
        if not isinstance(cap, int):
            return INSERT
        times = point.events()[point.z_dim]
        k = _z_bin(point, self.config.bin_size)
        same = times[bin_index(times, self.config.bin_size) == k] if times.size else times
        if same.size < cap:
            return INSERT
        return SWAP if np.sum(same <= point.z) < cap else BEYOND


# --- moves -------------------------------------------------------------------------------------------------------

def _random_point(rng: np.random.Generator, dim: int, n: int, w: float, cap: int, end: float, space) -> _Point:
    """A fresh data set: every bin filled alike (a packed pattern) or each at random, and a z."""
    pattern = rng.random() < 0.6
    kinds = ("start", "end", "ulp below next edge", "start and end", "tied", "burst")
    bins = []
    for _ in range(dim):
        kind = kinds[int(rng.integers(len(kinds)))] if pattern else None
        bins.append([bin_fill(rng, k, w, cap, kind) for k in range(n)])
    point = _Point(bins, int(rng.integers(dim)), 0.0, _random_state(rng, space))
    point.z = _z_time(rng, point, w, end, near=n // 2)
    return point


def _around(z: float, g: int, w: float, tiny: float, count: int, where: int) -> list[float]:
    """``count`` events of bin g: just after z (``where`` 0), just before (1), at z (2), at the bin's end (3) or
    start (4)."""
    lo, hi = g * w, (g + 1) * w
    times = {0: [z + tiny * (i + 1) for i in range(count)], 1: [z - tiny * (i + 1) for i in range(count)],
             2: [z] * count, 3: [hi - tiny * (i + 1) for i in range(count)], 4: [lo + tiny * i for i in range(count)]}
    return [t for t in times[where] if lo <= t < hi or t == z]


def _swap_bin(rng: np.random.Generator, z: float, g: int, w: float, cap: int) -> list[float]:
    """Bin g of z's dimension holding C events, the last of them v after z (at the bin's end, an ulp below the next
    edge, or anywhere after z) and the C − 1 others around z: adding z then evicts v (keeping the first C), a
    removal and an insertion at two places of one bin."""
    hi = (g + 1) * w
    tiny = float(rng.choice(TINY)) * w
    v = [hi - tiny, _below(hi, 1), z + (hi - z) * float(rng.random())][int(rng.integers(3))]
    others = _around(z, g, w, tiny, cap - 1, int(rng.integers(5)))
    return [t for t in others if t < v] + [v] if v > z else others


def _random_state(rng: np.random.Generator, space, scale: float = 1.0) -> np.ndarray | None:
    if space is None:
        return None
    U = rng.standard_normal(space.shape)
    return U * (space.radius * scale / max(np.linalg.norm(U), 1e-300))


def _project(U: np.ndarray, space) -> np.ndarray:
    norm = np.linalg.norm(U)
    return U * (space.radius / norm) if norm > space.radius else U


def _move(rng: np.random.Generator, point: _Point, w: float, cap: int, end: float, space) -> _Point:
    """One random change of the point (module docstring)."""
    new = point.copy()
    dim, n = len(new.bins), len(new.bins[0])
    g = min(_z_bin(new, w), n - 1)
    move = int(rng.integers(9 if space is not None else 8))
    if move == 0:  # z elsewhere, near its bin or anywhere
        new.z = _z_time(rng, new, w, end, near=g if rng.random() < 0.7 else None)
    elif move == 1:  # z's dimension
        new.z_dim = int(rng.integers(dim))
    elif move == 2:  # one bin re-filled
        j, k = int(rng.integers(dim)), int(np.clip(g + rng.integers(-3, 4), 0, n - 1))
        new.bins[j][k] = bin_fill(rng, k, w, cap)
    elif move == 3:  # the bins before z filled alike, and those after z alike, in one dimension or all
        kinds = ("start", "end", "ulp below next edge", "start and end", "empty", "tied", None)
        before, after = (kinds[int(rng.integers(len(kinds)))] for _ in range(2))
        for j in ([int(rng.integers(dim))] if rng.random() < 0.3 else range(dim)):
            for k, kind in [(k, before) for k in range(g)] + [(k, after) for k in range(g + 1, n)]:
                if kind is not None:
                    new.bins[j][k] = bin_fill(rng, k, w, cap, kind)
    elif move == 4:  # z's own bin re-packed around z in one dimension or all: just before z, at z, just after,
        # or at the bin's ends
        tiny = float(rng.choice(TINY)) * w
        where = int(rng.integers(5))
        for j in ([int(rng.integers(dim))] if rng.random() < 0.5 else range(dim)):
            new.bins[j][g] = _around(new.z, g, w, tiny, int(rng.integers(0, cap + 2)), where)
    elif move == 5:  # one event added or removed near z
        j, k = int(rng.integers(dim)), int(np.clip(g + rng.integers(-2, 3), 0, n - 1))
        if new.bins[j][k] and rng.random() < 0.5:
            new.bins[j][k].pop(int(rng.integers(len(new.bins[j][k]))))
        else:
            new.bins[j][k].append(k * w + float(rng.random()) * w)
    elif move == 6:  # a whole bin's events shifted by a small step
        j, k = int(rng.integers(dim)), int(np.clip(g + rng.integers(-3, 4), 0, n - 1))
        step = float(rng.normal()) * w * float(rng.choice([1e-3, 0.05]))
        new.bins[j][k] = [min(max(t + step, 0.0), end) for t in new.bins[j][k]]
    elif move == 7:  # a swap set up: z's bin holds C events of its dimension, the last (v) after z
        new.bins[new.z_dim][g] = _swap_bin(rng, new.z, g, w, cap)
    else:  # the state: a random step, to the boundary or to 0
        choice = int(rng.integers(3))
        if choice == 0:
            step = _random_state(rng, space, float(rng.choice([0.05, 0.3])))
            new.state = _project(new.state + step, space)
        elif choice == 1:
            norm = np.linalg.norm(new.state)
            new.state = new.state * (space.radius / norm) if norm > 0 else _random_state(rng, space)
        else:
            new.state = np.zeros(space.shape) if rng.random() < 0.5 else _random_state(rng, space)
    return new


# --- the climb ---------------------------------------------------------------------------------------------------

def _climb(measure: _Measure, rng: np.random.Generator, start: _Point, steps: int, space, best: dict) -> None:
    """Hill-climb from ``start`` (a move kept when the ratio does not drop), recording in ``best`` the best
    point of every kind."""
    w, cap, end = measure.config.bin_size, measure.config.count_cap, measure.end
    cap = cap if isinstance(cap, int) else 2
    point, (ratio, query) = start, measure.ratio(start)
    _record(best, measure, point, ratio, query)
    for _ in range(steps):
        candidate = _move(rng, point, w, cap, end, space)
        try:
            r, q = measure.ratio(candidate)
        except (ConfigError, DataError):
            continue
        _record(best, measure, candidate, r, q)
        if _not_worse(r, ratio):
            point, ratio = candidate, r


def _record(best: dict, measure: _Measure, point: _Point, ratio: float, query: str) -> None:
    kind = measure.kind(point)
    if kind not in best or ratio > best[kind][0]:
        best[kind] = (ratio, query, point.copy())


FILLS = ("start", "end", "ulp below next edge", "start and end", "empty", "tied", "burst")


def _refilled(point: _Point, rng, w: float, cap: int, span, kind: str) -> _Point:
    new = point.copy()
    for j in range(len(new.bins)):
        for k in span:
            new.bins[j][k] = bin_fill(rng, k, w, cap, kind)
    return new


def _own_bins(point: _Point, g: int, dims, times) -> _Point:
    new = point.copy()
    for j in dims:
        new.bins[j][g] = list(times)
    return new


def _coordinates(point: _Point, rng, w: float, cap: int, end: float, space) -> list:
    """The coordinates of the polish, each a function of the current point giving its alternatives: the bins
    before z filled alike (every fill), those after z, z's place in its bin and on the edges around it, the
    other dimensions' events of z's bin around z, z's own dimension's (fewer than C around z, or C with the last
    after z: a swap) and an iterative family's state (to the boundary, halved, negated, 0, random)."""
    n = len(point.bins[0])

    def bin_of(p):
        return min(_z_bin(p, w), n - 1)

    def before(p):
        return [_refilled(p, rng, w, cap, range(bin_of(p)), kind) for kind in FILLS]

    def after(p):
        return [_refilled(p, rng, w, cap, range(bin_of(p) + 1, n), kind) for kind in FILLS]

    def place(p):
        g, tiny = bin_of(p), TINY[0] * w
        lo, hi = g * w, (g + 1) * w
        out = []
        for z in (lo, _below(lo, 1), lo + tiny, lo + 3 * tiny, (g + 0.5) * w, hi - tiny, _below(hi, 1), hi):
            new = p.copy()
            new.z = float(min(max(z, 0.0), end))
            out.append(new)
        return out

    def others(p):
        g, dims = bin_of(p), [j for j in range(len(p.bins)) if j != p.z_dim]
        if not dims:
            return []
        return [_own_bins(p, g, dims, _around(p.z, g, w, TINY[0] * w, count, where))
                for where in range(5) for count in (cap, cap + 1)] + [_own_bins(p, g, dims, [])]

    def own(p):
        g, tiny = bin_of(p), TINY[0] * w
        hi = (g + 1) * w
        out = [_own_bins(p, g, [p.z_dim], _around(p.z, g, w, tiny, cap - 1, where)) for where in range(5)]
        for v in (hi - tiny, _below(hi, 1), p.z + 2 * tiny):
            for where in (0, 1, 4):
                rest = [t for t in _around(p.z, g, w, tiny, cap - 1, where) if t < v]
                if v > p.z:
                    out.append(_own_bins(p, g, [p.z_dim], rest + [v]))
        return out

    return [before, after, place, others, own]


def _with_state(point: _Point, state: np.ndarray) -> _Point:
    new = point.copy()
    new.state = state
    return new


def _polish(measure: _Measure, rng, point: _Point, rounds: int, space, best: dict) -> None:
    """Coordinate ascent from ``point``: each coordinate of :func:`_coordinates` in turn set to its best
    alternative, ``rounds`` times over."""
    w, end = measure.config.bin_size, measure.end
    cap = measure.config.count_cap if isinstance(measure.config.count_cap, int) else 2
    ratio = measure.ratio(point)[0]
    for _ in range(rounds):
        for coordinate in _coordinates(point, rng, w, cap, end, space):
            for candidate in coordinate(point):
                try:
                    r, q = measure.ratio(candidate)
                except (ConfigError, DataError):
                    continue
                _record(best, measure, candidate, r, q)
                if _better(r, ratio):
                    point, ratio = candidate, r
        if space is not None:
            point, ratio = _state_ascent(measure, rng, point, ratio, space, best)


def _state_ascent(measure: _Measure, rng, point: _Point, ratio: float, space, best: dict, probes: int = 40,
                  power_steps: int = 3):
    """The state alone climbed on the pair of ``point`` (its statistics cached, so each probe costs a query):
    ``power_steps`` steps to the boundary point along the ratio's finite-difference gradient (for a vector affine
    in the state the squared ratio is a convex quadratic, and these are the power method's steps to its largest
    value on the ball), then random steps that shrink after failures, each projected on the state space."""
    h = 1e-4 * space.radius
    for _ in range(power_steps):
        base = point.state if np.linalg.norm(point.state) > 0 else _random_state(rng, space)
        f0 = measure.ratio(_with_state(point, base))[0] ** 2
        grad = np.zeros(space.shape)
        for index in np.ndindex(*space.shape):
            probe = base.copy()
            probe[index] += h
            grad[index] = (measure.ratio(_with_state(point, probe))[0] ** 2 - f0) / h
        if not np.linalg.norm(grad) > 0 or not np.all(np.isfinite(grad)):
            break
        candidate = _with_state(point, grad * (space.radius / np.linalg.norm(grad)))
        r, q = measure.ratio(candidate)
        _record(best, measure, candidate, r, q)
        if not _not_worse(r, ratio):
            break
        point, ratio = candidate, r
    step = 0.5
    for _ in range(probes):
        U = _project(point.state + _random_state(rng, space, step), space)
        if rng.random() < 0.5 and np.linalg.norm(U) > 0:
            U = U * (space.radius / np.linalg.norm(U))
        candidate = _with_state(point, U)
        r, q = measure.ratio(candidate)
        _record(best, measure, candidate, r, q)
        if _not_worse(r, ratio):
            point, ratio = candidate, r
        else:
            step = max(step * 0.8, 1e-3)
    return point, ratio


def _finding(measure: _Measure, kind: str, entry, where: str = "in process") -> Finding:
    ratio, query, point = entry
    return Finding(float(ratio), kind, query, measure.config.to_dict(), measure.dim,
                   tuple(tuple(float(x) for x in t) for t in point.events()), (point.z_dim, float(point.z)),
                   measure.end, where, 0.0 if point.state is None else float(np.linalg.norm(point.state)))


def search_config(family: Family, config: FitConfig, dim: int, budget: Budget, rng: np.random.Generator
                  ) -> tuple[list[Finding], int]:
    """The climbs, the sweep and the partitioned re-measure for one config: the best finding of each kind and the
    number of pairs measured."""
    end = BINS * float(config.bin_size)
    measure = _Measure(family, config, dim, end)
    space = family.query_states(config, dim)
    cap = config.count_cap if isinstance(config.count_cap, int) else 2
    best: dict = {}
    for _ in range(budget.starts):
        start = _random_point(rng, dim, BINS, config.bin_size, cap, end, space)
        try:
            _climb(measure, rng, start, budget.steps, space, best)
        except (ConfigError, DataError):
            if not best:
                raise
    for kind in [k for k in (INSERT, SWAP) if k in best]:
        _polish(measure, rng, best[kind][2], budget.polish, space, best)
    findings = [_finding(measure, kind, entry) for kind, entry in best.items()]
    if budget.partitions:
        top = max(best.values(), key=lambda e: e[0])
        findings += through_partitions(measure, top)
    return findings, measure.evaluations


def search_neighbours(family: Family, budget: Budget = Budget(), configs=None) -> SearchReport:
    """The event unit's neighbour search on ``family`` (module docstring).

    Parameters
    ----------
    family : Family
        Any registered private family; nothing else is asked of it.
    budget : Budget
        How many configs, climbs and moves.
    configs : sequence of (FitConfig, int), optional
        ``(config, d)`` pairs to search; default: ``budget.configs`` drawn by :func:`draw_config`, the first with
        the family's options at their defaults (however many options a family grows, its default release is searched).

    Returns
    -------
    SearchReport
    """
    rng = np.random.default_rng(budget.seed)
    if configs is None:
        configs = [c for c in (draw_config(family, rng, defaults=k == 0) for k in range(budget.configs))
                   if c is not None]
    findings, evaluations, skipped = [], 0, []
    for config, dim in configs:
        try:
            found, count = search_config(family, config, dim, budget, rng)
        except (ConfigError, DataError) as error:
            skipped.append(f"{config.to_dict()}: {error}")
            continue
        findings += found
        evaluations += count
    return SearchReport(family.name, tuple(findings), evaluations, tuple(skipped))


# --- partitioned stores ------------------------------------------------------------------------------------------

def _write_store(root: Path, times, cuts) -> list[str]:
    """D as Parquet partitions of one sequence cut in time at ``cuts`` (an event on a cut in the later one)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = np.concatenate([np.asarray(x, dtype=float) for x in times])
    d = np.concatenate([np.full(len(x), j, dtype=np.int64) for j, x in enumerate(times)])
    edges = [-np.inf, *sorted(cuts), np.inf]
    root.mkdir(parents=True)
    paths = []
    for k in range(len(edges) - 1):
        part = (t >= edges[k]) & (t < edges[k + 1])
        path = root / f"part-{k:02d}.parquet"
        pq.write_table(pa.table({"time": t[part], "dimension": d[part], "sequence": np.zeros(part.sum(), np.int64)}),
                       path)
        paths.append(str(path))
    return paths


def through_partitions(measure: _Measure, entry) -> list[Finding]:
    """The pair of ``entry`` measured again on partitioned stores of D and D', cut at z, just after z, at z's bin
    edge and inside z's bin (none when the family reads no partitions, e.g. a per-bin family)."""
    from dphawkes_core.statistics.partitioned import partitioned_window

    _, _, point = entry
    w = measure.config.bin_size
    g = _z_bin(point, w)
    base = point.events()
    added = list(base)
    added[point.z_dim] = np.sort(np.append(added[point.z_dim], point.z))
    layouts = {"cut at z": [point.z], "cut just after z": [float(np.nextafter(point.z, np.inf))],
               "cut at z's bin edge": [g * w], "cut inside z's bin": [(g + 0.5) * w, (g + 0.75) * w]}
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cuts in layouts.items():
            cuts = [c for c in cuts if 0.0 < c < measure.end]
            try:
                stats = []
                for label, times in (("d", base), ("d_prime", added)):
                    paths = _write_store(Path(tmp) / name.replace(" ", "_").replace("'", "") / label, times, cuts)
                    window = partitioned_window(paths, end_time=measure.end, dimensions=measure.dim)
                    stats.append(prepare_partitioned(paths, measure.config, window)[0])
            except (ConfigError, DataError):
                return findings
            ratio, query = measure.compare(stats[0], stats[1], point.state)
            findings.append(_finding(measure, measure.kind(point), (ratio, query, point), where=f"partitions: {name}"))
    return findings


# --- the sequence unit ---------------------------------------------------------------------------------------------

SEQUENCES = 4  # sequences of the sequence unit's data sets


def _random_sequence(rng: np.random.Generator, dim: int, n: int, w: float) -> list[np.ndarray]:
    """One sequence: a burst in one dimension, packed bins, empty, or random."""
    style = int(rng.integers(4))
    if style == 0:
        j = int(rng.integers(dim))
        burst = (float(rng.integers(n)) + np.sort(rng.random(int(rng.integers(5, 40))))) * w
        return [burst if k == j else np.empty(0) for k in range(dim)]
    if style == 1:
        cap = int(rng.integers(1, 4))
        kind = ("start", "end", "tied", "burst")[int(rng.integers(4))]
        return [np.sort(np.array([t for k in range(n) for t in bin_fill(rng, k, w, cap, kind)])) for _ in range(dim)]
    if style == 2:
        return [np.empty(0) for _ in range(dim)]
    return [np.sort(rng.uniform(0, n * w, int(rng.integers(0, 30)))) for _ in range(dim)]


def _sequences(seqs, measure: _Measure) -> Events:
    return Events(tuple(EventSequence(tuple(s), measure.end) for s in seqs), measure.names, window_stated=True,
                  dimensions_declared=True, sequences_declared=True)


def search_sequence_neighbours(family: Family, budget: Budget = Budget()) -> SearchReport:
    """The sequence unit's search (for a family with ``"sequence"`` in its units): D holds :data:`SEQUENCES`
    sequences on one declared window; D' replaces the last by another. Two climbs per config, each move
    re-drawing the replaced sequence, its replacement or one of the others."""
    rng = np.random.default_rng(budget.seed + 1)
    findings, evaluations, skipped = [], 0, []
    for _ in range(budget.sequence_configs):
        drawn = draw_config(family, rng, unit="sequence")
        if drawn is None:
            continue
        config, dim = drawn
        n = 16
        measure = _Measure(family, config, dim, n * config.bin_size)

        def ratio(seqs, other, measure=measure):
            stats = [prepare_stats(_sequences(x, measure), measure.config)[0] for x in (seqs, seqs[:-1] + [other])]
            return measure.compare(stats[0], stats[1], None)

        best = None
        try:
            for _ in range(2):
                seqs = [_random_sequence(rng, dim, n, config.bin_size) for _ in range(SEQUENCES)]
                other = _random_sequence(rng, dim, n, config.bin_size)
                current = ratio(seqs, other)
                for _ in range(budget.sequence_steps):
                    new_seqs, new_other = list(seqs), other
                    pick = int(rng.integers(SEQUENCES + 1))
                    if pick == SEQUENCES:
                        new_other = _random_sequence(rng, dim, n, config.bin_size)
                    else:
                        new_seqs[pick] = _random_sequence(rng, dim, n, config.bin_size)
                    r = ratio(new_seqs, new_other)
                    if _not_worse(r[0], current[0]):
                        seqs, other, current = new_seqs, new_other, r
                    if best is None or current[0] > best[0]:
                        best = (current[0], current[1], seqs, other)
        except (ConfigError, DataError) as error:
            skipped.append(f"{config.to_dict()}: {error}")
            continue
        evaluations += measure.evaluations
        if best is not None:
            findings.append(Finding(float(best[0]), REPLACE, best[1], config.to_dict(), dim,
                                    tuple(tuple(tuple(float(x) for x in t) for t in s) for s in best[2]),
                                    (SEQUENCES - 1, tuple(tuple(float(x) for x in t) for t in best[3])),
                                    measure.end))
    return SearchReport(family.name, tuple(findings), evaluations, tuple(skipped))

