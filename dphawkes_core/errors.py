"""Exceptions with one-line, user-facing messages."""


class DPHawkesError(ValueError):
    """Base class: a problem the user can fix, described in one line."""


class DataError(DPHawkesError):
    """Malformed or unusable event data."""


class ConfigError(DPHawkesError):
    """Parameters that are invalid, inconsistent or would exhaust time or memory."""
