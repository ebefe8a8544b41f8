"""Errors of an estimate against a known truth and the lag-averaged step kernels they read."""
