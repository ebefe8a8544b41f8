"""Every page, rendered on the default data, on a real data set opened by link and on an upload, shows no
repository path, no command-line flag outside a code block and no emoji glyph (Debian's Chromium draws ❌ 🟡 ⛔
as empty boxes; the pages use Material icons). Code blocks (``st.code``, fenced Markdown) may hold commands."""

from __future__ import annotations

import re

import pytest
from app_tools import ROOT, TIMEOUT, private_dataset
from conftest import no_problems
from streamlit.testing.v1 import AppTest

from dphawkes_core.data.datasets import list_samples

PAGES = ["app.py", *(f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py")))]
REPOSITORY_PATH = re.compile(r"\b(?:scripts|docs|benchmarks|tests|sample_data|dphawkes_\w+)/|\b\w+\.(?:py|md)\b")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u231A\u231B\u23E9-\u23FA]")
FENCED = re.compile(r"```.*?```", re.S)
TEXT_ELEMENTS = ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader",
                 "text", "latex", "exception", "toast")
WIDGETS = ("button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "select_slider", "slider",
           "number_input", "text_input", "text_area", "date_input", "time_input", "color_picker")


def shown_words(at: AppTest) -> list[str]:
    """Every piece of text a page shows outside code blocks: text elements, widget labels, help and options,
    icons, expander labels and table cells."""
    words = []
    for kind in TEXT_ELEMENTS:
        for element in at.get(kind):
            words.append(FENCED.sub("", str(getattr(element, "value", "") or "")))
            words.append(str(getattr(element.proto, "icon", "") or ""))
    for kind in WIDGETS:
        for widget in at.get(kind):
            words += [str(widget.label), str(getattr(widget, "help", "") or "")]
            words += [str(o) for o in getattr(widget, "options", []) or []]
    for expander in at.get("expandable"):
        words.append(str(expander.label))
    for frame in [*at.dataframe, *at.table]:
        words += [str(v) for v in frame.value.astype(str).to_numpy().ravel()]
        words += [str(c) for c in frame.value.columns]
    return [w for w in words if w]


def problems(at: AppTest) -> list[str]:
    found = []
    for text in shown_words(at):
        for name, pattern in (("repository path", REPOSITORY_PATH), ("flag", FLAG), ("emoji", EMOJI)):
            found += [f"{name} {m.group(0)!r} in: {text[:160]}" for m in pattern.finditer(text)]
    return found


def render(page: str, how: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    if how == "link":
        sample = next((s.name for s in list_samples() if s.name == "email_dyad"), None)
        if sample is None:
            pytest.skip("the real data directory is not available")
        at.query_params.update({"data": "sample", "name": sample})
    elif how == "upload":
        at.session_state["dataset"] = private_dataset()
    return at.run()


@pytest.mark.parametrize("how", ["default", "link", "upload"])
@pytest.mark.parametrize("page", PAGES)
def test_no_repository_path_flag_or_emoji_on_screen(page, how):
    at = render(page, how)
    no_problems(at)
    assert not problems(at)


def test_the_checks_catch_what_they_look_for():
    assert REPOSITORY_PATH.search("precomputed by scripts/privacy_cost_table.py")
    assert REPOSITORY_PATH.search("see docs/reproduction.md")
    assert FLAG.search("(declare it: --dimensions)") and not FLAG.search("ε — the budget")
    assert EMOJI.search("Verdict: ❌ not supported") and EMOJI.search("🟡") and EMOJI.search("⛔")
    assert not EMOJI.search("ε ≤ 1, δ = 10⁻⁵, σ², ‖Ĥ−H‖, → ×")
