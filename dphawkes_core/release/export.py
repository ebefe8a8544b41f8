"""Export a fit with every parameter needed to reproduce it: JSON (everything) and CSV (a tidy table).

The JSON holds the fit configuration (method, Δ, p, B or r, K, privacy target or σ², calibration,
count cap, and the seed only when one was set), where the data came from, the estimate (kernels on the
lag grid and baselines, and the kernels as functions of the lag: ``kernel_functions``, the exact breakpoints of step
kernels or a step of s/1000 for smooth ones, from :func:`~dphawkes_core.evaluation.exp_kernels.fit_functions`), the
privacy report, whether the estimate is
a formal release
(``formal_guarantee`` and ``formal_reasons``, from :func:`~dphawkes_core.privacy.report.formal_status`) and,
when the truth is known, every error metric. Non-finite numbers become ``null`` so the output is
strict JSON. Noise drawn from OS entropy has no seed, so none is exported.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from typing import TYPE_CHECKING

import numpy as np

from dphawkes_core.estimators import FitConfig, FitResult, release_status
from dphawkes_core.evaluation.exp_kernels import fit_functions
from dphawkes_core.evaluation.metrics import compare
from dphawkes_core.privacy.report import FormalStatus

if TYPE_CHECKING:  # pandas loads where a table is built (start-up of the CLI)
    import pandas as pd

FORMAT_VERSION = 1

PRIVATE_FIELDS = ("baseline", "kernels", "kernel_functions")
RELEASE_NOTE = (
    "Only 'baseline', 'kernels' and 'kernel_functions' (the estimate, and the same kernels as functions) "
    "are covered by the privacy report. Everything else "
    "computed from the data — loss_history, data_info (event, dropped and clipped counts), R and the "
    "paper-mode ε and σ² that use it, solver_info, metrics — is a diagnostic for the analyst and is NOT "
    "private: do not publish it with the estimate."
)


def _plain(value):
    """Recursively turn numpy values, dataclasses and non-finite floats into JSON-safe values."""
    if hasattr(value, "to_dict"):
        return _plain(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def config_fields(config: FitConfig) -> dict:
    """The configuration's settings for export (those the fit reads: :meth:`FitConfig.to_dict`), without ``seed``
    when there is none (OS-entropy noise)."""
    fields = config.to_dict()
    if fields["seed"] is None:
        del fields["seed"]
    return fields


def fit_payload(result: FitResult, config: FitConfig, data_info: dict, names, dataset_params: dict | None = None,
                truth: np.ndarray | None = None, data_derived=(), status: FormalStatus | None = None) -> dict:
    """Everything about one fit as plain JSON-ready data.

    Parameters
    ----------
    result : FitResult
        The estimate.
    config : FitConfig
        The configuration that produced it (the seed only when one was set).
    data_info : dict
        Binning diagnostics from :func:`~dphawkes_core.estimators.prepare_stats` (with ``window_stated``).
    names : sequence of str
        Dimension names.
    dataset_params : dict, optional
        How the data were obtained (scenario and seed, file name or sample name).
    truth : numpy.ndarray, optional
        ``H_true`` on the same lag grid; adds the error metrics.
    data_derived : iterable of str
        Settings the caller took from the data (``B``, ``r``, ``C``, ``T``, ``ridge``): they void the
        formal guarantee.
    status : FormalStatus, optional
        The release's status from the privacy session that made it
        (:class:`~dphawkes_core.release.session.SessionAnswer`);
        without one the fit was not released through a session, so it is not formal.

    Returns
    -------
    dict
    """
    record = result.to_record()  # the one serialisation of a result (the ledger stores it too)
    payload = {
        "format_version": FORMAT_VERSION,
        "method": record["method"],
        "config": config_fields(config),
        "support": result.bin_size * result.lags,
        "dataset": dataset_params or {},
        "data_info": data_info,
        "dimension_names": list(names),
        "lag_grid": result.lag_grid,
        "baseline": result.baseline,
        "kernels": result.kernels,
        "kernel_functions": fit_functions(result).function_table(),
        "privacy": result.privacy,
        "loss_history": record["loss_history"],
        "elapsed_s": record["elapsed_s"],
        "solver_info": record["info"],
    }
    if config.seed is not None:
        payload["seed"] = config.seed
    status = status or release_status(config, data_info, data_derived)
    payload.update(status.to_dict())
    if truth is not None:
        payload["metrics"] = compare(result.H, truth).to_dict()
    if result.privacy is not None:
        payload["privacy"] = dict(result.privacy.to_dict(), **status.to_dict())
        payload["private_fields"] = list(PRIVATE_FIELDS)
        payload["release_note"] = RELEASE_NOTE
    return _plain(payload)


def to_json(payload: dict) -> str:
    """Strict, indented JSON text (numpy values converted, non-finite numbers as ``null``)."""
    return json.dumps(_plain(payload), indent=2, allow_nan=False)


def result_table(result: FitResult, names, truth: np.ndarray | None = None) -> pd.DataFrame:
    """Tidy table: one row per kernel value and per baseline.

    Columns ``quantity`` (``kernel`` or ``baseline``), ``target``, ``source`` (dimension names;
    ``source`` empty for baselines), ``lag`` (time, empty for baselines), ``estimate`` and, when
    the truth is given, ``truth``.
    """
    import pandas as pd  # here: the JSON export of a CLI fit does not need pandas

    d, p = result.dim, result.lags
    names = list(names)
    kern = result.kernels
    rows = []
    true_kern = None
    if truth is not None:
        true_kern = np.asarray(truth)[:, : d * p].reshape(d, p, d).transpose(0, 2, 1)
    for i in range(d):
        for j in range(d):
            for k, lag in enumerate(result.lag_grid):
                row = {"quantity": "kernel", "target": names[i], "source": names[j], "lag": float(lag),
                       "estimate": float(kern[i, j, k])}
                if true_kern is not None:
                    row["truth"] = float(true_kern[i, j, k])
                rows.append(row)
    for i in range(d):
        row = {"quantity": "baseline", "target": names[i], "source": "", "lag": np.nan,
               "estimate": float(result.baseline[i])}
        if truth is not None:
            row["truth"] = float(np.asarray(truth)[i, -1])
        rows.append(row)
    return pd.DataFrame(rows)


def to_csv(result: FitResult, config: FitConfig, names, truth: np.ndarray | None = None,
           data_info: dict | None = None, data_derived=(), status: FormalStatus | None = None) -> str:
    """CSV text of :func:`result_table`, preceded by ``# key=value`` lines with the configuration and the same
    status line as every export: ``# formal_guarantee=…`` with its reasons (:func:`release_status` on
    ``data_info``; without it the window and domain are unknown, so not formal)."""
    buffer = io.StringIO()
    for key, value in config_fields(config).items():
        buffer.write(f"# {key}={value}\n")
    status = status or release_status(config, data_info or {}, data_derived)
    buffer.write(f"# formal_guarantee={'true' if status.formal else 'false'}\n")
    if status.reasons:
        buffer.write(f"# formal_reasons={'; '.join(status.reasons)}\n")
    result_table(result, names, truth).to_csv(buffer, index=False, float_format="%.10g")
    return buffer.getvalue()
