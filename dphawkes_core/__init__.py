"""dphawkes_core: differentially private estimation of multivariate Hawkes processes.

The pure core (no Streamlit, no Plotly), in layers: :mod:`.data` (events, loaders, simulation) →
:mod:`.statistics` (binned counts, sufficient statistics) → :mod:`.privacy` (noise, accounting, calibration)
→ :mod:`.estimators` (the families of the registry, :func:`~dphawkes_core.estimators.registry.method_names`)
→ :mod:`.evaluation` (errors against a truth) → :mod:`.release` (the privacy session, the ledger, the export).
Experiments live in
:mod:`dphawkes_experiments`, the command line in :mod:`dphawkes_cli`, the app's helpers in
:mod:`dphawkes_app` (``docs/architecture.md``).
"""

__version__ = "0.1.0"
