"""Noise samplers, accounting, calibration, count caps and the privacy units' conversions."""
