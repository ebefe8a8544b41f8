"""Number fields whose out-of-range values are refused with a message, not silently ignored.

Streamlit's own ``min_value``/``max_value`` make a browser drop a typed value outside the range without a
word; :func:`bounded_number` accepts any number and raises a :class:`~dphawkes_core.errors.ConfigError` naming the
field, its range and the value typed, which the page shows as one line (keeping its last result)."""

from __future__ import annotations

import math

from dphawkes_core.errors import ConfigError


def bounded_number(container, label: str, low: float, high: float, value, key: str, **kwargs):
    """``container.number_input(label, value=value, key=key, **kwargs)``, checked to lie in [low, high].

    Parameters
    ----------
    container
        ``st``, ``st.sidebar`` or a column.
    label : str
        The field's label, also used in the message.
    low, high : float
        The accepted range (``math.inf`` for no upper limit).
    value
        The default (an ``int`` makes an integer field).
    key : str
        The widget key.

    Returns
    -------
    int or float
        The value typed, when in range.

    Raises
    ------
    ConfigError
        When the value lies outside [low, high] (or is not finite).
    """
    number = container.number_input(label, value=value, key=key, **kwargs)
    if not (math.isfinite(number) and low <= number <= high):
        upper = "" if math.isinf(high) else f" and at most {high:g}"
        raise ConfigError(f"{label} must be at least {low:g}{upper}; {number:g} was entered")
    return number


class FieldChecks:
    """Several :func:`bounded_number` fields read in one go: every field is drawn even after a refused one (so no
    field loses its value), and :meth:`check` then raises one error naming each refused field."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def number(self, container, label: str, low: float, high: float, value, key: str, **kwargs):
        """:func:`bounded_number`; a refused value is recorded and the default stands in until :meth:`check`."""
        try:
            return bounded_number(container, label, low, high, value, key, **kwargs)
        except ConfigError as exc:
            self.refused.append(str(exc))
            return value

    def check(self) -> None:
        """Raise one :class:`~dphawkes_core.errors.ConfigError` naming every refused field (nothing when none)."""
        if self.refused:
            raise ConfigError("; ".join(self.refused))
