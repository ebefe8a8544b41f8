"""``make bench``'s target for the issue's real-data spread (``docs/accuracy.md``, "The recommended formal fit on the
quake catalogues"): the recommended formal fit (:func:`benchmarks.realdata_spread.recommended`: exp in the decays basis,
ρ = 1, C = 3, chosen on Japan quakes only) at (s, w) = (20, 1) days, ε = 1, ten seeded draws (noise seeds 200–209), on
Japan and MAT quakes: the held-out gain's spread (max − min) against ≤ 0.15 nats per test event. Missed on MAT in the
tables (0.289 over 20 draws): reported as it comes. A data set that is not on the machine is reported as not measured.

The full table (20 draws, both settings, beside the table's configuration)::

    DPHAWKES_DATA_DIR=/work/shared/data nice .venv/bin/python -m benchmarks.realdata_spread --round-2
"""

from __future__ import annotations

import numpy as np

from benchmarks.heldout_real import DATA, load
from benchmarks.realdata_spread import gains, recommended
from dphawkes_core.data.datasets import default_data_dir

TARGET = 0.15
DRAWS = range(200, 210)
SETTING = (20.0, 1.0)


def rows() -> list[dict]:
    """One row per data set: the recommended fit's spread over ten draws at (20, 1), ε = 1."""
    out = []
    for data in DATA:
        label = f"recommended formal fit, {data.name}, (s, w) = {SETTING}: spread of 10 draws"
        if not (default_data_dir() / data.name / "events.csv").exists():
            out.append({"benchmark": label, "measured": f"not measured: not in {default_data_dir()}",
                        "target": "measured", "met": False})
            continue
        _, split = load(data)
        values = gains(split, lambda draw: recommended(*SETTING, draw), DRAWS)
        spread = float(np.ptp(values))
        out.append({"benchmark": label, "measured": f"{spread:.3f} (mean gain {values.mean():+.3f})",
                    "target": f"<= {TARGET}", "met": bool(np.all(np.isfinite(values))) and spread <= TARGET})
    return out
