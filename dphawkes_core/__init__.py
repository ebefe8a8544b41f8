"""dphawkes_core: differentially private estimation of multivariate Hawkes processes.

Pure library (no Streamlit): events → binning → sufficient statistics → CLS / DP-PGD / DP-CG / DP-SSP /
clipped-gradient DP-PGD, with privacy calibration (``privacy``), metrics, sweeps, audits and Plotly figure
builders. The ``dphawkes`` command line is :mod:`dphawkes_core.cli`.
"""

__version__ = "0.1.0"
