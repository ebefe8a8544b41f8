"""The rendered text of a page, and the internal words and formulas it must not hold (issue 43.4), shared by the
AppTest scan (``test_plain_words.py``) and the Chromium one (``test_layout_browser.py``).

What is scanned: every text element, widget label and option, button, metric, expander and tab label, and table
cell and header as drawn (a column's configured label). What is not: help tooltips (formulas may sit behind help),
and — for commands and environment variables only — whatever is inside an expander titled "For administrators".
"""

from __future__ import annotations

import json
import math
import re

from dphawkes_core.estimators import FAMILIES

ADMIN = "For administrators"
TEXT_KINDS = ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader", "text",
              "code", "latex", "exception", "toast")
OPTION_KINDS = ("selectbox", "radio", "multiselect", "select_slider")
LABEL_KINDS = ("button", "download_button", "checkbox", "toggle", "number_input", "text_input", "text_area",
               "slider", "date_input", "time_input", "color_picker", "file_uploader", *OPTION_KINDS)

#: the issue's list: each name, and what finds it in rendered text
INTERNAL = {
    "the window marker '(stated)'": re.compile(r"\(stated\)"),
    "an unset marker '0 = unset'": re.compile(r"0 = unset"),
    "a formula": re.compile(r"√|⌈|⌉|‖|\\lVert|\\rVert|\$\\|\|\||d\(dp\s*\+\s*1\)|ρσ|dB\+1|dU\+1"),
    "an infinite ε": re.compile(r"\binf\b|Infinity"),
    "a number split from its % sign": re.compile(r"\d %"),
}
COMMANDS = {
    "an environment variable": re.compile(r"\bDPHAWKES_[A-Z_]+"),
    "a command": re.compile(r"\bdphawkes (?:fit|score|ledger|audit|reproduce|sweep|simulate)\b|python -m|\.venv/"),
}


def raw_choices() -> set[str]:
    """Every registered family's choice values (``stated``, ``validation``, ``psd`` …): internal option names that
    a control must show in words."""
    return {str(c) for family in FAMILIES.values() for s in family.settings if s.kind == "choice" for c in s.choices}


def _element_texts(node) -> list[str]:
    kind = node.type
    out = []
    if kind in TEXT_KINDS or kind in ("alert",):
        out.append(str(getattr(node, "value", "") or ""))
    if kind in LABEL_KINDS or kind == "metric":
        out.append(str(getattr(node, "label", "") or ""))
    if kind in OPTION_KINDS:
        out += [str(o) for o in (getattr(node, "options", None) or [])]
    if kind == "metric":
        out.append(str(node.value))
    if kind in ("dataframe", "table"):
        out += _table_texts(node)
    return out


def _table_texts(node) -> list[str]:
    frame = node.value
    labels = json.loads(node.proto.columns or "{}") if hasattr(node.proto, "columns") else {}
    headers = [str((labels.get(str(c)) or {}).get("label", c)) for c in frame.columns]
    cells = []
    for value in frame.to_numpy().ravel():
        if isinstance(value, float) and math.isinf(value):
            cells.append("inf")
        elif value is not None and not (isinstance(value, float) and math.isnan(value)):
            cells.append(str(value))
    return headers + cells


def page_texts(at) -> list[tuple[tuple[str, ...], str]]:
    """``(enclosing expander/tab labels, text)`` of everything the page renders, in order, sidebar included."""
    found: list = []

    def walk(node, where):
        for child in getattr(node, "children", {}).values():
            here = where
            if child.type in ("expander", "tab"):
                here = where + (str(child.label),)
                found.append((where, str(child.label)))
            found.extend((here, text) for text in _element_texts(child) if text)
            walk(child, here)

    walk(at.main, ())
    walk(at.sidebar, ("sidebar",))
    return found


def word_problems(texts, admin_aware: bool = True) -> list[str]:
    """Each internal word or formula found, with where; commands and environment variables are allowed inside the
    "For administrators" expander only."""
    choices = raw_choices()
    problems = []
    for where, text in texts:
        for name, pattern in INTERNAL.items():
            problems += [f"{name} {m.group(0)!r} in {where}: {text[:140]!r}" for m in pattern.finditer(text)]
        if not (admin_aware and any(w.startswith(ADMIN) for w in where)):
            for name, pattern in COMMANDS.items():
                problems += [f"{name} {m.group(0)!r} in {where}: {text[:140]!r}" for m in pattern.finditer(text)]
        if text.strip() in choices:
            problems.append(f"an option shown by its internal name {text.strip()!r} in {where}")
    return problems
