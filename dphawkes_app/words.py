"""Numbers and facts in the words a user reads: an ε that may be unbounded, a percentage that never breaks across
lines, what was read from a file — without the core's internal markers ("(stated)") or Python's ``inf``.

Pure functions (no Streamlit): every page formats with them, and the page-text scan
(``tests/app/test_plain_words.py``) checks that none of the internal words they replace reaches the screen."""

from __future__ import annotations

import math

NBSP = "\u00a0"  # between a number and its unit: "50 %" never splits across lines
UNBOUNDED = "not bounded"


def epsilon_text(value: float | None, digits: int = 3) -> str:
    """An ε for people: ``1.47``; ``not bounded`` for an infinite one (a closed per-sequence view, an uncapped
    event-level release seen per person), never ``inf``; ``—`` for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if not math.isfinite(value):
        return UNBOUNDED
    return f"{value:.{digits}g}"


def percent_text(share: float, digits: int = 0) -> str:
    """A share as a percentage whose number and sign stay on one line: ``31 %`` with a no-break space."""
    return f"{100 * share:.{digits}f}{NBSP}%"


def window_words(events) -> str:
    """The observation window in words, without the core's "(stated)" marker: a stated window is the normal case,
    and one read from the data gets its own warning where it matters (``[0, 73288.5], length 73288.5``, or
    ``2,000 windows, 46,000 h long in all``)."""
    unit = f" {events.time_unit}" if events.time_unit else ""
    if events.n_sequences > 1:
        return f"{events.n_sequences:,} windows, {events.end_time:,.6g}{unit} long in all"
    text = events.window_text()
    return text[: text.rfind(" (")] if text.endswith(")") else text


def read_words(events) -> str:
    """What was read, in one line: dimensions, events, sequences, window and dropped events (the core's
    ``Events.describe`` without its internal markers)."""
    parts = [f"{events.dim} dimension{'s' if events.dim != 1 else ''}: {', '.join(events.names)}",
             f"{events.n_events:,} event{'s' if events.n_events != 1 else ''}"]
    if events.n_sequences > 1:
        parts.append(f"{events.n_sequences:,} sequences")
    parts.append(("" if events.n_sequences > 1 else "window ") + window_words(events))
    if events.outside_window:
        parts.append(f"{events.outside_window:,} outside the window dropped")
    return "; ".join(parts)

ADMIN = "For administrators"
"""The title of the one place a page may name a command, a path or an environment variable (an expander)."""
