"""Predict the memory and time a fit will take from the problem size, before doing any work.

The model counts the dominant operations of the data path (sufficient statistics: on the sparse path
binning ``E`` events and enumerating the pairs of non-empty bins at most ``p`` apart, or ``d²`` FFT
cross-correlations of length ``n`` when the series is short enough to lay out densely, whichever the
code would choose; the ``(dp+1)²`` Gram matrix; the
estimator: a Cholesky solve or ``A²`` in ``(dp+1)³``, ``K`` gradients of ``2 d (dp+1)²`` flops for
DP-PGD/DP-CG (or two structured FFT products per step and no ``A²`` when the number of sequences is
given and that is cheaper), building and ``K`` passes over the informative per-bin rows for clipped DP-PGD) with
pessimistic per-operation costs (clipped DP-PGD's measured, as its passes dominate), so that the app can warn before
slow work and refuse sizes that would freeze the page or exhaust memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dphawkes_core.statistics.moments import MAX_DESIGN_ROWS, MAX_FFT_CELLS, toeplitz_product_cost
from dphawkes_core.statistics.pair_passes import COMPILED_MIN_PAIRS, SECONDS_TO_LOAD_COMPILED, design_seconds
from dphawkes_core.statistics.per_bin import MAX_DEDUP_CELLS, MAX_DENSE_CELLS

WARN_SECONDS = 5.0
REFUSE_SECONDS = 120.0
WARN_BYTES = 512 * 2**20
REFUSE_BYTES = 2 * 2**30

_SECONDS_PER_FFT_UNIT = 2e-9  # per n·log2(n) for each of the d² lagged products
_SECONDS_PER_FLOP = 1e-9  # dense linear algebra, pessimistic for small matrices
_SECONDS_PER_GRADIENT_STEP = 3e-4  # DP-PGD/DP-CG per step besides the product: noise, projection, loss
# clipped DP-PGD (per informative row: its lagged entries, d dimensions; measured, see _clipped_gradient_cost)
# (re-measured with one BLAS thread, a step as (time at K − time at K/10)/(0.9 K) on six layouts:
# 0.6–1.4 ns per dense cell whatever d — the products multiply every dimension in one pass — where the earlier
# constants predicted 1.7 + 0.65·d ns; the largest is kept, so that a slow fit is never predicted fast)
_SECONDS_PER_DENSE_DESIGN_CELL = 1.2e-9  # both products of one step stream the rows: per row × lagged column
_SECONDS_PER_ROW = 1e-8  # residual, norm and clip factor of one row, per dimension (dominates at small p)
_SECONDS_PER_LOSS_FLOP = 2.5e-10  # the loss recorded at every step: a BLAS product of the (dp+1)² moments
_SECONDS_PER_SPARSE_ENTRY = 8e-9  # both sparse products of one step, per stored entry × dimension
_SECONDS_PER_SPARSE_ROW = 6e-8
_SECONDS_PER_MERGE_UNIT = 6e-9  # merging identical rows (a sort), per cell × log2(rows) (measured 2.5–8.6e-9)
_SECONDS_PER_SORT_UNIT = 2.8e-8  # assembling the sparse rows, per entry × log2(entries)
_BYTES_PER_BIN_CELL = 8 * 6  # int64 counts plus the FFT work arrays (complex, padded)
_BYTES_PER_EVENT = 8 * 12  # times, bin indices, sort keys and the (bin, dimension, count) entries
_SECONDS_PER_EVENT = 2e-7  # exact bin index, run-length encoding and sort of the entries
_SECONDS_PER_PAIR = 5e-8  # one pair of non-empty bins at most p apart (vectorised bincount)
# one pair of events at most s apart in the grid-free walk: compiled (above pair_passes.COMPILED_MIN_PAIRS) and in NumPy
# (below; 11–26 ns measured, 12–15 ns on bench_cost_model's ctls cases); loading the compiled passes (~0.7 s once per
# process, 4.5 s into an empty cache) is start-up, not the fit's cost (docs/load.md)
_SECONDS_PER_EVENT_PAIR = 4.5e-9
_SECONDS_PER_NUMPY_EVENT_PAIR = 1.5e-8
_SECONDS_PER_EDGE_CELL = 5e-8  # the head and tail pieces' runs turned into cells, per (B·d)² cell
_SECONDS_PER_NNLS_CUBE = 4e-10  # ctls's non-negative solve (Lawson–Hanson) per dimension and q³ (q = 641, d = 4: 0.4 s)
_BYTES_PER_GRAM_CELL = 8 * 6  # A, its Cholesky factor, accumulators and copies


@dataclass(frozen=True)
class CostEstimate:
    """Predicted cost of a fit and the verdict.

    Attributes
    ----------
    memory_bytes : float
        Peak memory predicted for binning, statistics and the estimator.
    seconds : float
        Predicted compute time.
    level : str
        ``ok``, ``warn`` (slow or large, but allowed) or ``refuse``.
    reason : str
        Plain-words explanation when ``level`` is not ``ok`` (empty otherwise).
    """

    memory_bytes: float
    seconds: float
    level: str
    reason: str = ""

    @property
    def refused(self) -> bool:
        """True when the work must not be started."""
        return self.level == "refuse"

    def summary(self) -> str:
        """One line: predicted memory and time."""
        return f"about {_fmt_bytes(self.memory_bytes)} of memory and {_fmt_seconds(self.seconds)} of compute"


def _fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _fmt_seconds(s: float) -> str:
    return f"{s:.2g} s" if s < 60 else f"{s / 60:.1f} min"


COST_KINDS = ("solve", "gradient", "clipped", "pairs", "likelihood")
_BYTES_PER_DESIGN_PAIR = 48  # mle's compiled sparse rows: the cells (column and count), their growth and the copies
# (mle's time: statistics as ctls's, then the pair design and its Newton iterations, pair_passes.design_seconds)


def estimate_fit_cost(n_bins: int, dim: int, lags: int, kind: str = "solve", iters: int = 1,
                      n_events: int | None = None, sequences: int | None = None,
                      extra_solves: tuple[int, ...] = ()) -> CostEstimate:
    """Predict memory and time of binning, statistics and one fit.

    Parameters
    ----------
    n_bins : int
        Total number of bins ``n = Σ_s ⌊T_s/Δ⌋`` (see :func:`~dphawkes_core.statistics.binning.n_bins_for`).
    dim : int
        d.
    lags : int
        p.
    kind : {"solve", "gradient", "clipped", "pairs", "likelihood"}
        The family's kind of work (:attr:`~dphawkes_core.estimators.family.CostTags.kind`): one solve of the
        normal equations (CLS, DP-SSP), K noisy gradients of the summed statistics (DP-PGD, DP-CG), K
        clipped per-bin gradients (clipped DP-PGD), or one solve on statistics of the pairs of events at most
        s apart (ctls: no FFT shortcut, however dense the counts; ``E·(1 + E(p+1)/n)`` pairs), or the same
        statistics and a likelihood maximised by Newton's method over the rows of their pairs (mle).
    iters : int
        K (ignored for ``solve``).
    n_events : int, optional
        Number of events E. Without it the statistics are costed as on dense counts (every bin laid out).
    sequences : int, optional
        Number of sequences S. With it DP-PGD/DP-CG steps are costed as the gradient operator chooses
        (the structured product from the moment pieces when cheaper); without it, as dense ``A²`` products.
    extra_solves : tuple of int
        Sizes q of further solves the fit runs (:meth:`~dphawkes_core.estimators.family.Family.extra_solves`,
        e.g. ctls's candidate widths), ``q³`` each.

    Returns
    -------
    CostEstimate
        With ``level == "refuse"`` over the hard limits (design size, memory, time).
    """
    if kind not in COST_KINDS:
        raise ValueError(f"unknown cost kind {kind!r}; one of {', '.join(COST_KINDS)} (a family's cost_kind)")
    n, d, p = max(int(n_bins), 1), int(dim), int(lags)
    q = d * p + 1
    exact_times = kind in ("pairs", "likelihood")
    memory, seconds = _statistics_cost(n, d, p, n_events, fft=not exact_times)
    memory += q * q * _BYTES_PER_GRAM_CELL
    seconds += p * p * d * d * (_SECONDS_PER_EDGE_CELL if exact_times else _SECONDS_PER_FLOP)  # edges
    if kind == "gradient":
        seconds += _gradient_seconds(d, p, int(iters), sequences)
    else:
        seconds += q**3 * _SECONDS_PER_FLOP  # Cholesky (CLS, DP-SSP)
    if kind == "pairs":
        seconds += d * q**3 * _SECONDS_PER_NNLS_CUBE
    seconds += sum(int(size) ** 3 for size in extra_solves) * _SECONDS_PER_FLOP
    if kind == "likelihood" and n_events is not None:
        design_memory, design_seconds = _likelihood_cost(float(n_events), n, d, p)
        memory += design_memory
        seconds += design_seconds
    if kind == "clipped":
        clip_memory, clip_seconds = _clipped_gradient_cost(n, d, p, int(iters), n_events)
        memory += clip_memory
        seconds += clip_seconds
    if q > MAX_DESIGN_ROWS:
        return CostEstimate(memory, seconds, "refuse",
                            f"d·p+1 = {q:,} parameters per dimension is over the {MAX_DESIGN_ROWS:,} limit: "
                            "use a larger bin size Δ or a shorter support s")
    if memory > REFUSE_BYTES or seconds > REFUSE_SECONDS:
        return CostEstimate(memory, seconds, "refuse",
                            f"this fit would need {_fmt_bytes(memory)} and {_fmt_seconds(seconds)} "
                            f"(limits {_fmt_bytes(REFUSE_BYTES)}, {_fmt_seconds(REFUSE_SECONDS)}): "
                            "use a larger Δ, a shorter support or fewer iterations K")
    if memory > WARN_BYTES or seconds > WARN_SECONDS:
        return CostEstimate(memory, seconds, "warn",
                            f"this fit needs {_fmt_bytes(memory)} and {_fmt_seconds(seconds)}; "
                            "a larger Δ, a shorter support or fewer iterations K make it faster")
    return CostEstimate(memory, seconds, "ok")


def _likelihood_cost(events: float, n: int, d: int, p: int) -> tuple[float, float]:
    """Memory and time of the likelihood's pair design and its Newton iterations, on the layout the fit will choose
    (:func:`~dphawkes_core.statistics.pair_passes.design_seconds`: dense rows and BLAS, or the compiled sparse rows,
    whichever is faster with the compiled passes' load counted; the load itself is start-up, not the fit's)."""
    pairs = events * (1.0 + events * (p + 1) / n)
    q = d * p
    dense, compiled = design_seconds(events, pairs, q)
    if dense <= compiled:
        return 2 * events * q, dense  # the rows' counts, a byte or two a cell (pair_passes.CountRows)
    return pairs * _BYTES_PER_DESIGN_PAIR, compiled - SECONDS_TO_LOAD_COMPILED


def _gradient_seconds(d: int, p: int, iters: int, sequences: int | None) -> float:
    """K DP-PGD/DP-CG steps: ``A²`` formed once (``(dp+1)³``) and a dense product per step or, when S is known
    and it is cheaper per step (the choice of :func:`~dphawkes_core.estimators.gradient.hessian_product`), two
    structured FFT products per step and no ``A²``; plus each step's fixed work (noise, projection, loss:
    measured 0.1-0.3 ms at small designs, where it dominates)."""
    q = d * p + 1
    dense = 2 * d * q * q + 2 * d * d * q
    structured = 2 * toeplitz_product_cost(d, p, int(sequences), d) if sequences is not None else math.inf
    total = iters * structured if structured < dense else q**3 + iters * dense
    return total * _SECONDS_PER_FLOP + iters * _SECONDS_PER_GRADIENT_STEP


def _clipped_gradient_cost(n: int, d: int, p: int, iters: int, n_events: int | None) -> tuple[float, float]:
    """Memory and time of clipped DP-PGD: build the informative per-bin rows once, then K passes over them.

    The layout is the one :func:`~dphawkes_core.statistics.per_bin.bin_design` chooses: identical rows merged and
    kept dense when they fit, a sparse matrix of the lagged entries otherwise. The rows are at most one per
    bin and at most ``p + 1`` per event; without the event count every bin is costed as informative.
    Calibrated on CPU time with one BLAS thread (``benchmarks/bench_beyond.py`` checks it within 2×).
    """
    rows = float(n) if n_events is None else min(float(n), float(n_events) * (p + 1))
    cells = rows * d * p  # lagged entries of the rows laid out densely
    entries = cells if n_events is None else min(cells, float(n_events) * p)
    merged = rows * (d * p + d) <= MAX_DEDUP_CELLS
    if merged:
        build = rows * (d * p + d) * math.log2(rows + 2) * _SECONDS_PER_MERGE_UNIT
    else:
        build = entries * math.log2(entries + 2) * _SECONDS_PER_SORT_UNIT
    if merged and cells <= MAX_DENSE_CELLS:
        memory = 4 * rows * (d * p + d) * 8  # the rows, their transpose, the merge's copy and its sort
        step = cells * _SECONDS_PER_DENSE_DESIGN_CELL + rows * d * _SECONDS_PER_ROW
    else:
        memory = 2 * entries * 16 + 4 * rows * d * 8  # CSR and its transpose (value + index), residual work
        step = entries * d * _SECONDS_PER_SPARSE_ENTRY + rows * d * _SECONDS_PER_SPARSE_ROW
    step += 2 * d * (d * p + 1) ** 2 * _SECONDS_PER_LOSS_FLOP  # the loss L(U_k) recorded at every step
    return memory, build + iters * step


def _statistics_cost(n: int, d: int, p: int, n_events: int | None, fft: bool = True) -> tuple[float, float]:
    """Memory and time of binning and the lagged products: the sparse pair enumeration, or the dense FFT
    when the series may be laid out densely and that is cheaper (the choice :mod:`~dphawkes_core.statistics.moments`
    makes; ``fft=False``: statistics of the event pairs themselves, which have no such shortcut); the dense model alone
    when the number of events is unknown."""
    dense = (n * d * _BYTES_PER_BIN_CELL, d * d * n * math.log2(n + 2) * _SECONDS_PER_FFT_UNIT)
    if n_events is None:
        return dense
    events = float(max(int(n_events), 0))
    pairs = events * (1.0 + events * (p + 1) / n)
    if not fft:  # the grid-free walk over pairs of events, compiled where that pays
        per_pair = _SECONDS_PER_EVENT_PAIR if pairs >= COMPILED_MIN_PAIRS else _SECONDS_PER_NUMPY_EVENT_PAIR
        return events * _BYTES_PER_EVENT, events * _SECONDS_PER_EVENT + pairs * per_pair
    sparse = (events * _BYTES_PER_EVENT, events * _SECONDS_PER_EVENT + pairs * _SECONDS_PER_PAIR)
    if n * d > MAX_FFT_CELLS:
        return sparse
    return min(sparse, dense, key=lambda cost: cost[1])


def estimate_simulation_cost(expected_events: float, dim: int) -> CostEstimate:
    """Predict the cost of simulating about ``expected_events`` events in ``dim`` dimensions.

    tick's simulation stores every event time (8 bytes, plus bookkeeping) and runs at roughly
    ``10⁵`` events per second per dimension pair on slow kernels.
    """
    from dphawkes_core.data.simulate import MAX_SIMULATED_EVENTS

    events = float(expected_events)
    memory = events * 8 * 4
    seconds = events * dim * dim * 5e-6
    if not math.isfinite(events) or events > MAX_SIMULATED_EVENTS:
        return CostEstimate(memory, seconds, "refuse",
                            f"about {events:,.0f} events expected, over the {MAX_SIMULATED_EVENTS:,} limit: "
                            "use fewer events or a shorter horizon")
    if seconds > REFUSE_SECONDS:
        return CostEstimate(memory, seconds, "refuse",
                            f"simulating would take about {_fmt_seconds(seconds)}: use fewer events")
    if seconds > WARN_SECONDS:
        return CostEstimate(memory, seconds, "warn", f"simulating will take about {_fmt_seconds(seconds)}")
    return CostEstimate(memory, seconds, "ok")
