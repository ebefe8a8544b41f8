"""Reproducible speed/accuracy benchmarks (``make bench``)."""
