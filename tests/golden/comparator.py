"""The golden comparator: two JSON trees, every number compared at a tolerance of its own scale.

A number passes when ``|actual − expected| ≤ max(RTOL · max(|expected|, |actual|), k · EPS · scale, ATOL)``:

* ``RTOL`` = 1e-12 relative, for a quantity of order one (an error, ε, σ², a sensitivity, a threshold);
* ``k · EPS · scale`` absolute, for a number whose round-off is set by a larger quantity than itself — an
  entry of an estimate near zero, a loss at the least-squares optimum, the minimum of a plotted curve. Which
  numbers, their ``scale`` and their ``k`` are the :data:`SCALE_RULES`; the scale is always read from the
  expected (recorded) tree, so it does not move with the run under test;
* ``ATOL`` = 1e-300, so exact zeros stay zeros.

Why: which OpenBLAS kernel runs (chosen by the CPU, or ``OPENBLAS_CORETYPE``) changes the order of the sums of
a matrix product, so a number changes by a few EPS of the terms it is computed from — far more than 1e-12 of
itself when it is much smaller than those terms (a CLS loss of 1e-33 … 1e-29 moved by 30 %).

Each ``k`` (:data:`SCALE_RULES`) was set from the largest difference measured, in units of ``EPS · scale``,
between the outputs of all 55 cases under ten OpenBLAS kernels (``OPENBLAS_CORETYPE`` = Prescott, Nehalem,
Sandybridge, Haswell, Zen, SkylakeX, Cooperlake, SapphireRapids, Bulldozer, Excavator) and the recorded
outputs, and between every two of those kernels.

A number in a table row about a fit that stops at a convergence tolerance (maximum likelihood) is compared at a
multiple of that tolerance, relative (:data:`CONVERGED_ROW_RULES`): another kernel stops it at another point near
the optimum.

NaN equals NaN; strings, booleans, None, int-vs-float, dict keys and list lengths compare exactly.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from dphawkes_core.estimators.mle import SETTINGS as MLE_SETTINGS

MLE_TOL = next(s.default for s in MLE_SETTINGS if s.name == "mle_tol")

RTOL, ATOL = 1e-12, 1e-300
EPS = sys.float_info.epsilon  # 2.2e-16, the spacing of doubles at 1


# ---- the scales ------------------------------------------------------------------------------------------

def largest_magnitude(value, owner: dict) -> float:
    """The largest ``|x|`` of the numbers in ``value`` (an array of nested lists): the scale of every entry of
    an estimate, whose round-off is a few EPS of the whole array's size (a solve or an iteration mixes all
    entries), not of the entry."""
    return max(abs(x) for x in _floats(value) if math.isfinite(x))


def zero_estimate_loss(owner: dict) -> float:
    """A lower bound, from the same fit output, of the loss of the zero estimate ``L(0) = ½‖b‖²``.

    The paper's loss ``L(U) = ‖U A − b‖²_F / 2`` (``A = ZZᵀ/N``, ``b = YZᵀ/N``) is computed from terms of
    the size of ``½‖b‖²``, so its round-off is a few EPS of that, whatever the loss itself: at the CLS
    optimum the loss is pure round-off, about ``EPS² · ½‖b‖²`` (1e-34 … 1e-29 recorded). ``½‖b‖²`` is not in
    the output, but its lower bound is: the column of ``b`` for the constant holds each dimension's mean
    count per bin, which sum over the ``d`` dimensions to the fit's binned events per bin ``m`` (up to the
    first ``p`` bins, which are no targets), so ``½‖b‖² ≥ m² / (2d)`` (Cauchy–Schwarz). A lower bound keeps
    the tolerance at most ``k · EPS · L(0)``. (``binned_events`` counts the events after the count cap, as
    the statistics do; a sequence-unit clip that scales a sequence's statistics down is not in ``m``.)

    Parameters
    ----------
    owner : dict
        The fit output holding the loss history (its ``binned_events``, ``n_bins`` and ``dim``).
    """
    per_bin = owner["binned_events"] / owner["n_bins"]
    return per_bin**2 / (2 * owner["dim"])


def loss_scale(value, owner: dict) -> float:
    """The scale of a loss history: the larger of its largest loss and :func:`zero_estimate_loss`.

    Both are lower bounds of the terms its losses are computed from. A DP-PGD or DP-CG history starts at the
    zero estimate, so its first loss is ``L(0)`` itself (and noisy iterates may go higher); a one-shot fit's
    history is one loss, at CLS's optimum pure round-off, where only the bound from the counts is left.
    """
    return max(largest_magnitude(value, owner), zero_estimate_loss(owner))


def curve_extent(value, owner: dict) -> float:
    """``max(|min|, |max|)`` of a plotted array's summary (``owner``: its ``n``, ``sum``, ``min``, ``max``):
    the scale of its minimum and maximum (a curve's smallest value is computed like its largest)."""
    return max(abs(owner["min"]), abs(owner["max"]))


def curve_sum_extent(value, owner: dict) -> float:
    """``n_finite · max(|min|, |max|)``: the scale of the sum of a plotted array (a sum of that many values,
    each with the round-off of :func:`curve_extent`)."""
    return owner["n_finite"] * curve_extent(value, owner)


@dataclass(frozen=True)
class ScaleRule:
    """The numbers of one kind of field, whose round-off is set by a scale larger than themselves.

    Attributes
    ----------
    field : str
        Regular expression that a field's JSON path (``$.output.kernels``; list indices as ``[i]``) matches
        in full; the rule covers every number in that field's value.
    k : int
        The absolute tolerance of each of those numbers is ``k · EPS · scale``.
    scale : callable
        ``scale(value, owner)``: from the field's expected value and the dict that holds the field.
    """

    field: str
    k: int
    scale: Callable[[object, dict], float]


_PLOT = r".*\.traces\[\d+\]\.(x|y|z|base|width)"  # an app figure's trace: the summary of one data array

#: The first rule whose ``field`` matches a field's path covers the numbers in it (its nested fields are not
#: looked at again); every other number is compared at ``RTOL`` alone. Each ``k`` against the largest
#: difference measured (module docstring):
#:
#: * kernels and baselines (a fit's and its lag average's): 43 · EPS · their largest |entry| (CLS 4-d) →
#:   k = 256, 6× that; a 1e-9 relative change of the smallest nonzero recorded entry (9.7e-5 of its array's
#:   largest: a baseline at its floor, ``fit_seq_max_events``) is still 1.7× the tolerance (``test_comparator.py``
#:   checks every recorded entry);
#: * losses: 11 · EPS · :func:`loss_scale` → k = 128 (11×);
#: * the summaries of an app figure's arrays: 1146 · EPS · the curve's extent (the audit's histogram of
#:   scores, each a projection on a direction solved from a sample covariance, which amplifies round-off) →
#:   k = 4096 ≈ RTOL / EPS, i.e. 1e-12 of the extent: the order-one tolerance, at the curve's scale.
SCALE_RULES: tuple[ScaleRule, ...] = (
    ScaleRule(r".*\.(kernels|baseline)", 256, largest_magnitude),
    ScaleRule(r".*\.loss_history", 128, loss_scale),
    ScaleRule(_PLOT + r"\.(min|max)", 4096, curve_extent),
    ScaleRule(_PLOT + r"\.sum", 4096, curve_sum_extent),
)


@dataclass(frozen=True)
class ConvergedRowRule:
    """The numbers of a table row about a fit that stops at a convergence tolerance, not at round-off.

    An iterative fit (projected Newton for maximum likelihood) stops when its largest relative change falls below
    ``tol``;
    another BLAS kernel changes the path of its iterates, so it stops at another point within about ``tol``
    (relative) of the optimum, and every error computed from it moves by that much, far above 1e-12.

    Attributes
    ----------
    label : str
        Regular expression that the row's first cell (the method's name) matches in full.
    k : int
        Each number of the row is compared at ``k · tol`` relative.
    tol : float
        The fit's convergence tolerance (its default setting: the app runs it at the default).
    """

    label: str
    k: int
    tol: float


#: A table row whose method name matches one of these is compared at its fit's convergence tolerance. The
#: maximum-likelihood rows of the app's comparison (then fitted by EM) moved by 9.7e-9 and 2.8e-8 relative
#: (2.8 · tol) between OpenBLAS's Haswell and SkylakeX kernels → k = 64 (23×); the Newton fit that replaced EM
#: stops at the same tolerance, and is re-checked under both kernels.
CONVERGED_ROW_RULES: tuple[ConvergedRowRule, ...] = (
    ConvergedRowRule(r".*\(maximum likelihood\).*", 64, MLE_TOL),
)

#: When the comparison's non-private reference is such a fit (its row ends with this), the figures' curves named
#: :data:`REFERENCE_TRACE` are that fit too, and are compared at the same multiple of its tolerance, of their extent
#: (measured: 1.5e-12 of the extent between the Sandybridge and SkylakeX kernels; a CLS reference keeps 1e-12).
REFERENCE_ROW_SUFFIX = "(non-private)"
REFERENCE_TRACE = "non-private"


def tolerances(tree) -> dict[str, float]:
    """The absolute tolerance of every number of ``tree`` under a rule, by JSON path: ``k · EPS · scale``
    under a :data:`SCALE_RULES` rule, ``k · tol · |x|`` in a row of a :data:`CONVERGED_ROW_RULES` rule, and
    ``k · tol`` of the extent on the reference's curves when that row is the non-private reference."""
    found = {}
    for path, value, owner, rule in _ruled_fields(tree, "$"):
        numbers = [leaf for leaf, x in _leaves(value, path) if isinstance(x, float) and math.isfinite(x)]
        if numbers:  # (a field may hold none: a masked loss history is a string)
            found.update(dict.fromkeys(numbers, rule.k * EPS * rule.scale(value, owner)))
    reference_rule = None
    for path, row, rule in _converged_rows(tree, "$"):
        found.update({f"{path}[{j}]": rule.k * rule.tol * abs(x) for j, x in enumerate(row)
                      if isinstance(x, float) and math.isfinite(x)})
        if row[0].endswith(REFERENCE_ROW_SUFFIX):
            reference_rule = rule
    if reference_rule is not None:
        found.update(_converged_reference_traces(tree, reference_rule))
    return found


def _converged_reference_traces(tree, rule: ConvergedRowRule) -> dict[str, float]:
    """The tolerances of the figures' :data:`REFERENCE_TRACE` curves in an output whose comparison names its
    non-private reference a converged fit: ``k · tol`` of the curve's extent for a minimum or maximum, times the
    number of finite values for a sum (the fit moves by about ``tol`` relative, every plotted value with it)."""
    found = {}
    for path, trace in _traces(tree, "$"):
        if trace.get("name") != REFERENCE_TRACE:
            continue
        for axis, summary in trace.items():
            if isinstance(summary, dict) and {"min", "max", "sum", "n_finite"} <= summary.keys():
                extent = curve_extent(None, summary)
                found[f"{path}.{axis}.min"] = found[f"{path}.{axis}.max"] = rule.k * rule.tol * extent
                found[f"{path}.{axis}.sum"] = rule.k * rule.tol * summary["n_finite"] * extent
    return found


def _traces(tree, path: str):
    """``(path, trace)`` of every figure trace (a dict in a list under ``traces``)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == "traces" and isinstance(value, list):
                yield from ((f"{path}.traces[{i}]", t) for i, t in enumerate(value) if isinstance(t, dict))
            else:
                yield from _traces(value, f"{path}.{key}")
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _traces(value, f"{path}[{i}]")


def _converged_rows(tree, path: str):
    """``(path, row, rule)`` of every table row (a list under ``rows`` or ``cells``) whose first cell names a
    method of a :data:`CONVERGED_ROW_RULES` rule."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            sub = f"{path}.{key}"
            if key in ("rows", "cells") and isinstance(value, list):
                for i, row in enumerate(value):
                    rule = _converged_rule(row)
                    if rule is not None:
                        yield f"{sub}[{i}]", row, rule
            else:
                yield from _converged_rows(value, sub)
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _converged_rows(value, f"{path}[{i}]")


def _converged_rule(row) -> ConvergedRowRule | None:
    if not (isinstance(row, list) and row and isinstance(row[0], str)):
        return None
    return next((r for r in CONVERGED_ROW_RULES if re.fullmatch(r.label, row[0])), None)


def _ruled_fields(tree, path: str):
    """``(path, value, owner, rule)`` of every dict field of ``tree`` that a rule covers (the first rule whose
    pattern its path matches; the fields nested in it are not looked at again)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            sub = f"{path}.{key}"
            rule = next((r for r in SCALE_RULES if re.fullmatch(r.field, sub)), None)
            if rule is not None:
                yield sub, value, tree, rule
            else:
                yield from _ruled_fields(value, sub)
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _ruled_fields(value, f"{path}[{i}]")


def _leaves(tree, path: str):
    """``(path, value)`` of every leaf (not dict, not list) of ``tree``."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, f"{path}.{key}")
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _leaves(value, f"{path}[{i}]")
    else:
        yield path, tree


def _floats(tree):
    return (x for _, x in _leaves(tree, "$") if isinstance(x, float))


# ---- the comparison --------------------------------------------------------------------------------------

def compare(expected, actual, permitted: tuple[str, ...] = ()) -> list[str]:
    """Every difference between two JSON trees, as ``"<JSON path>: <what>"`` lines in document order.

    Parameters
    ----------
    expected, actual
        The recorded tree and the one under test; the scales of :data:`SCALE_RULES` are read from
        ``expected``.
    permitted : tuple of str
        JSON paths (``$.output.release_note``) under which differences are ignored.
    """
    return _diff(expected, actual, "$", permitted, tolerances(expected))


def _diff(expected, actual, path: str, permitted, atol: dict) -> list[str]:
    if _permitted(path, permitted):
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        diffs = []
        for key in sorted(set(expected) | set(actual)):
            sub = f"{path}.{key}"
            if _permitted(sub, permitted):
                continue
            if key not in actual:
                diffs += [f"{sub}: missing (expected {_show(expected[key])})"]
            elif key not in expected:
                diffs += [f"{sub}: unexpected (got {_show(actual[key])})"]
            else:
                diffs += _diff(expected[key], actual[key], sub, permitted, atol)
        return diffs
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            n = min(len(expected), len(actual))
            surplus = (f"extra items {_show(actual[n:])}" if len(actual) > n
                       else f"missing items {_show(expected[n:])}")
            head = [f"{path}: length {len(actual)}, expected {len(expected)} ({surplus})"]
            for i in range(n):  # the first common item that differs, where the lists part
                item = _diff(expected[i], actual[i], f"{path}[{i}]", permitted, atol)
                if item:
                    return head + item
            return head
        return [d for i, (e, a) in enumerate(zip(expected, actual))
                for d in _diff(e, a, f"{path}[{i}]", permitted, atol)]
    if _kind(expected) != _kind(actual):
        return [f"{path}: {_kind(actual)} {_show(actual)}, expected {_kind(expected)} {_show(expected)}"]
    if isinstance(expected, float):
        return [] if _close(expected, actual, atol.get(path, ATOL)) else [_number_diff(path, expected, actual)]
    return [] if expected == actual else [f"{path}: {_show(actual)}, expected {_show(expected)}"]


def _number_diff(path: str, expected: float, actual: float) -> str:
    rel = abs(actual - expected) / max(abs(expected), abs(actual)) if math.isfinite(actual - expected) else math.inf
    return f"{path}: {actual!r}, expected {expected!r} (relative difference {rel:.3g})"


def _permitted(path: str, permitted) -> bool:
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[") for p in permitted)


def _kind(value) -> str:
    """JSON type, with int and float told apart (bool is not a number)."""
    for kind, types in (("bool", bool), ("int", int), ("float", float), ("str", str), ("list", list),
                        ("dict", dict)):
        if isinstance(value, types):
            return kind
    return "null" if value is None else type(value).__name__


def _close(expected: float, actual: float, atol: float) -> bool:
    """Equal within ``RTOL`` relative or ``atol`` absolute (at least ``ATOL``); NaN equals NaN only."""
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    if math.isinf(expected) or math.isinf(actual):
        return expected == actual
    return abs(actual - expected) <= max(RTOL * max(abs(expected), abs(actual)), atol, ATOL)


def _show(value) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
