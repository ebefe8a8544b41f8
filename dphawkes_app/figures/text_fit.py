"""Titles that fit their figure: a figure's title and axis titles wrapped onto lines that fit the narrowest width
the app draws it at, with the margins grown to hold the extra lines.

Plotly never wraps a title: a long one runs past the chart's edge and is cut. Widths are those of a window 1100 px
wide with the sidebar open (measured in Chromium): a full-width chart is 640 px wide, a chart in one of two
columns 312 px. Text widths are estimated from the character count: Streamlit's Plotly theme draws 0.42–0.45 em
per character in titles and axis titles (measured), counted here as :data:`EM_PER_CHARACTER`.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go

FULL_WIDTH = 640  # px: a full-width chart in a 1100 px window with the sidebar open
HALF_WIDTH = 312  # px: a chart in one of two columns there
TITLE_FONT = 16  # px: Streamlit's theme
AXIS_FONT = 14
EM_PER_CHARACTER = 0.5  # an upper estimate of the measured 0.42–0.45
LINE_HEIGHT = 1.3  # a wrapped line's height, in font sizes
TITLE_PAD = 12  # px: the title's distance from the figure's left edge, and some room on the right
TITLE_GAP = 8  # px: between the title's last line and the plot
TITLE_TOP = 24  # px: from the figure's top edge (Plotly draws a wrapped title's first line above its anchor)
_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"<br\s*/?>", re.I)


def visible_lines(text: str) -> list[str]:
    """The lines a Plotly text draws: split at ``<br>``, other tags (``<sub>``, ``<b>``…) removed."""
    return [_TAG.sub("", line) for line in _BREAK.split(text or "")]


def text_width(line: str, font: float) -> float:
    """The estimated width in px of one line of text at ``font`` px."""
    return len(line) * EM_PER_CHARACTER * font


def wrap(text: str, width: float, font: float) -> str:
    """``text`` wrapped at spaces onto lines no wider than ``width`` px (HTML line breaks); tags stay in their words.

    A line is measured by its visible characters; a word longer than a line stays whole.
    """
    lines = []
    for line in _BREAK.split(text or ""):
        current = ""
        for word in line.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and text_width(_TAG.sub("", candidate), font) > width:
                lines.append(current)
                candidate = word
            current = candidate
        lines.append(current)
    return "<br>".join(lines)


def fit_titles(fig: go.Figure, width: float = FULL_WIDTH) -> go.Figure:
    """Wrap ``fig``'s title and axis titles to what a figure ``width`` px wide has room for, growing the margins by
    the lines added (in place; returns ``fig``).

    The title has the figure's width; an x-axis title the width of its plot area plus the narrower side margin
    (it is centred under the plot); a y-axis title the plot's height.
    """
    title = fig.layout.title.text
    if title:
        wrapped = wrap(title, width - 2 * TITLE_PAD, TITLE_FONT)
        fig.update_layout(title_text=wrapped, margin_t=margin(fig, "t") + _added(title, wrapped, TITLE_FONT))
        if fig.layout.title.y is None:  # hung from the top: its lines grow down into the room added for them, never
            fig.update_layout(title_y=1, title_yref="container", title_yanchor="top",  # over the headers below
                              title_pad_t=TITLE_TOP)
            lines = len(visible_lines(wrapped))
            room = TITLE_TOP + lines * LINE_HEIGHT * TITLE_FONT + TITLE_GAP  # the whole title above the plot
            fig.update_layout(margin_t=max(margin(fig, "t"), room))
    for letter, side in (("x", "b"), ("y", "l")):
        added = 0.0
        for axis in axes(fig, letter):
            text = axis.title.text
            if text:
                wrapped = wrap(text, axis_room(fig, axis, letter, width), AXIS_FONT)
                axis.title.text = wrapped
                added = max(added, _added(text, wrapped, AXIS_FONT))
        if added:
            fig.update_layout({f"margin_{side}": margin(fig, side) + added})
    return fig


def _added(before: str, after: str, font: float) -> float:
    """The height in px of the lines wrapping added."""
    return (after.count("<br>") - before.count("<br>")) * LINE_HEIGHT * font


def margin(fig: go.Figure, side: str) -> float:
    """``fig``'s margin on ``side`` (``t``, ``b``, ``l``, ``r``), Plotly's default when unset."""
    value = fig.layout.margin[side]
    return float(value) if value is not None else DEFAULT_MARGIN[side]


DEFAULT_MARGIN = {"t": 100.0, "b": 80.0, "l": 80.0, "r": 80.0}  # Plotly's


def plot_height(fig: go.Figure) -> float:
    """The height in px of ``fig``'s plot area (the figure's height, 450 when unset, less the margins)."""
    return float(fig.layout.height or 450) - margin(fig, "t") - margin(fig, "b")


def axis_room(fig: go.Figure, axis, letter: str, width: float) -> float:
    """The room in px for ``axis``'s title in a figure ``width`` px wide."""
    low, high = axis.domain if axis.domain is not None else (0.0, 1.0)
    if letter == "y":
        return plot_height(fig) * (high - low) - TITLE_PAD
    left, right = margin(fig, "l"), margin(fig, "r")
    return (width - left - right) * (high - low) + min(left, right) - TITLE_PAD


def axes(fig: go.Figure, letter: str) -> list:
    """Every axis of ``fig`` whose name starts with ``letter`` (``xaxis``, ``xaxis2``, …)."""
    return [fig.layout[name] for name in fig.layout if re.fullmatch(rf"{letter}axis\d*", name)]
