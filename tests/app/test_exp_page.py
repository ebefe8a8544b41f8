"""The exponential-kernel family on the Estimate page: offered by the registry, its decays a text control built
from its settings (comma-separated), a fit drawn with them, and a bad list refused in one line."""

from __future__ import annotations

import re
from pathlib import Path

from app_tools import open_estimate, use_formal_method
from conftest import no_problems

from dphawkes_app.guidance import method_help
from dphawkes_core.estimators import get_family


def test_the_estimate_page_fits_it_with_the_decays_typed_in(clear_streamlit_caches):
    family = get_family("exp")
    at = use_formal_method(open_estimate(), family)
    no_problems(at)
    decays = at.text_input(key="decays")
    assert decays.value == "0.7, 1.5, 3" and "decays" in decays.label
    decays.set_value("1, 4").run()
    no_problems(at)
    assert at.get("plotly_chart"), "the fit is drawn"
    at.text_input(key="decays").set_value("1, -4").run()
    assert any("decays" in e.value for e in at.error) and not at.exception


def test_choosing_it_shows_where_it_is_better_and_where_not_from_the_measured_figures(clear_streamlit_caches):
    """The guidance is the family's summary (the registry's, as ``fit --help`` prints it), on the page once exp is
    chosen, and every figure it quotes is in docs/accuracy.md's exponential-kernel section."""
    family = get_family("exp")
    at = open_estimate()
    at.selectbox(key="method").set_value(family.label).run()
    no_problems(at)
    shown = " ".join(c.value for c in at.sidebar.caption)
    assert method_help(family) in shown  # the summary, capitalised after what the method reads
    assert "Better where the kernels are smooth" in shown and "Worse where an effect is delayed or flat" in shown
    docs = (Path(__file__).parents[2] / "docs" / "accuracy.md").read_text()
    section = docs.split("## Exponential kernels on public decays")[1].split("\n## ")[0]
    figures = re.findall(r"\d\.\d{3}", family.summary)
    assert len(figures) >= 8 and all(f in section for f in figures), [f for f in figures if f not in section]


def test_the_gram_derived_from_the_values_is_a_choice_with_its_words_and_draws_a_fit(clear_streamlit_caches):
    """The option's control is built from its setting, shows its choices in words (not the core's names), and a
    fit drawn with the derived Gram is on the page."""
    at = use_formal_method(open_estimate(), get_family("exp"))
    control = at.selectbox(key="exp_gram")
    assert control.value == "released" and "derived from the released values" in control.format_func("derived")
    control.set_value("derived").run()
    no_problems(at)
    assert at.get("plotly_chart"), "the fit is drawn"


def test_the_fit_caption_says_a_derived_grams_bias_on_many_short_windows_in_words():
    """A derived Gram fitted on 60 windows of 8 time units carries its note of the bias (an edge share above 1 %);
    the Estimate page's caption under the fit says it, with no command-line flag."""
    from types import SimpleNamespace

    import numpy as np

    from dphawkes_app.estimate.view import fit_caption
    from dphawkes_core.data.io import Events, EventSequence
    from dphawkes_core.estimators import FitConfig, fit

    rng = np.random.default_rng(11)
    events = Events(tuple(EventSequence(tuple(np.sort(rng.uniform(0, 8, 6)) for _ in range(2)), 8.0)
                          for _ in range(60)), ("0", "1"), window_stated=True)
    config = FitConfig(method="exp", bin_size=0.5, lags=4, calibration="formal", count_cap=2, epsilon=1.0, seed=1,
                       exp_gram="derived")
    result, info = fit(events, config)
    shown = SimpleNamespace(result=result, config=config, data_info=info, entry=None)
    caption = fit_caption(shown, SimpleNamespace(summary=lambda: "0.1 s"))
    assert f"Note: {result.info['gram_note']}." in caption and "--" not in caption
