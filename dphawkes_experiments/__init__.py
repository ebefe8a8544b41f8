"""Experiments over the core: privacy–utility sweeps, privacy audits, the paper's reproduction, method
comparison and prediction. Imports :mod:`dphawkes_core`; never the CLI or the app."""
