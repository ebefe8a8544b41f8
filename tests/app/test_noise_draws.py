"""AppTests of fresh noise on public simulated data: no cache shared between sessions pins one
noise draw for everyone; "Draw the noise again" draws new noise; a band shows several draws at once; a seed
still reproduces a fit."""

import numpy as np
from app_tools import estimate_trace, figures, open_estimate, use_formal_method, with_comparison
from conftest import no_problems


def test_each_session_draws_its_own_noise():
    first = use_formal_method(open_estimate(preset="small"))
    second = use_formal_method(open_estimate(preset="small"))  # another visitor, same settings, same server
    no_problems(first)
    no_problems(second)
    assert not np.allclose(estimate_trace(first), estimate_trace(second))
    again = estimate_trace(first)
    first.run()  # the same session and settings: the same draw (no new noise by re-rendering)
    np.testing.assert_array_equal(estimate_trace(first), again)


def test_draw_the_noise_again_gives_a_new_estimate():
    at = use_formal_method(open_estimate(preset="small"))
    before = estimate_trace(at)
    at.button(key="draw_again").click().run()
    no_problems(at)
    assert not np.allclose(estimate_trace(at), before)


def test_a_band_of_draws_is_drawn_under_the_estimate():
    at = use_formal_method(open_estimate(preset="small"))
    at.selectbox(key="band_draws").set_value(10).run()
    no_problems(at)
    kernels, baselines = figures(at)[:2]
    band = [t for t in kernels["data"] if t.get("fill") == "tonexty"]
    assert band and band[0]["name"].startswith("10 fresh noise draws")
    assert any(t.get("error_y") for t in baselines["data"])  # the baselines' spread as error bars


def test_a_seed_reproduces_the_fit_across_sessions():
    first = use_formal_method(open_estimate(preset="small"))
    first.number_input(key="seed").set_value(3).run()
    second = use_formal_method(open_estimate(preset="small"))
    second.number_input(key="seed").set_value(3).run()
    np.testing.assert_array_equal(estimate_trace(first), estimate_trace(second))
    assert not any(b.key == "draw_again" for b in first.button)  # seeded noise: nothing to draw again


def test_the_comparison_table_is_not_one_draw_for_everyone():
    def others(at):
        with_comparison(at)
        table = next(df.value for df in at.dataframe if "formal guarantee" in df.value.columns).set_index("method")
        private = [label for label in table.index if "chosen" not in label and "non-private" not in label
                   and "all-zero" not in label]
        return table.loc[private, table.columns[0]].astype(float).to_numpy()

    first, second = open_estimate(preset="small"), open_estimate(preset="small")
    assert not np.allclose(others(first), others(second), rtol=0, atol=0)
