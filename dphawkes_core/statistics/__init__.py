"""Binned counts and the sufficient statistics computed from them, in process and by partition."""
