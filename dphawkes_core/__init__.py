"""dphawkes_core: differentially private estimation of multivariate Hawkes processes.

The pure core (no Streamlit, no Plotly): events → binning → sufficient statistics → the estimator
families of :mod:`.estimators` (CLS, DP-PGD, DP-CG, DP-SSP, clipped DP-PGD), with privacy calibration
(:mod:`.privacy`), the privacy units, the ledger and metrics. Experiments live in
:mod:`dphawkes_experiments`, the command line in :mod:`dphawkes_cli`, the app's helpers in
:mod:`dphawkes_app` (``docs/architecture.md``).
"""

__version__ = "0.1.0"
