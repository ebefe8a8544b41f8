"""The result of a fit: the estimate ``H = [H_1 … H_p, η]`` and how it was obtained."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dphawkes_core.privacy.report import PrivacyReport


@dataclass(frozen=True)
class FitResult:
    """A fitted model and how it was obtained.

    Attributes
    ----------
    method : str
        Estimator name.
    H : numpy.ndarray
        ``(d, dp+1)`` estimate ``[H_1 … H_p, η]`` (already divided by Δ).
    bin_size : float
        Δ.
    lags : int
        p.
    elapsed_s : float
        Wall time of the estimator (statistics excluded unless stated by the caller).
    loss_history : tuple of float
        Paper loss ``L(U_k)`` per iteration (iterative methods), for a convergence plot.
    privacy : Any
        Privacy report of a private method (``None`` for ``cls``).
    info : dict
        Extra diagnostics (e.g. condition number, solver used).
    """

    method: str
    H: np.ndarray
    bin_size: float
    lags: int
    elapsed_s: float
    loss_history: tuple = ()
    privacy: Any = None
    info: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """Number of dimensions d."""
        return int(self.H.shape[0])

    @property
    def kernels(self) -> np.ndarray:
        """``(d, d, p)`` array: ``kernels[i, j, k]`` estimates ``h_ij((k+1)Δ)``."""
        d, p = self.dim, self.lags
        return self.H[:, : d * p].reshape(d, p, d).transpose(0, 2, 1)

    @property
    def baseline(self) -> np.ndarray:
        """``(d,)`` estimate of the baseline η."""
        return self.H[:, -1]

    @property
    def lag_grid(self) -> np.ndarray:
        """Lag times ``Δ, 2Δ, …, pΔ`` of the kernel estimates."""
        return self.bin_size * np.arange(1, self.lags + 1)

    def to_record(self) -> dict:
        """The one serialisation of a result (JSON-able: the estimate, the privacy report, the diagnostics): the
        ledger stores it, the export builds its payload from it. Non-finite floats are kept."""
        return {"method": self.method, "H": np.asarray(self.H).tolist(), "bin_size": self.bin_size,
                "lags": self.lags, "elapsed_s": self.elapsed_s, "loss_history": list(self.loss_history),
                "privacy": self.privacy.to_record() if self.privacy is not None else None,
                "info": json.loads(json.dumps(self.info, default=_plain_number))}

    @classmethod
    def from_record(cls, record: dict) -> FitResult:
        """The result :meth:`to_record` wrote."""
        privacy = record["privacy"]
        if privacy is not None:
            privacy = PrivacyReport.from_record(privacy)
        return cls(method=record["method"], H=np.asarray(record["H"], dtype=float), bin_size=record["bin_size"],
                   lags=record["lags"], elapsed_s=record["elapsed_s"], loss_history=tuple(record["loss_history"]),
                   privacy=privacy, info=dict(record["info"]))


def _plain_number(value):
    """numpy values as plain JSON numbers and lists (anything else as text)."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else str(value)
