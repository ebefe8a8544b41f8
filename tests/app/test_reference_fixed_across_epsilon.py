"""The non-private reference stays put when ε moves (issue 43: on the default preset its error was 0.0926 at ε = 1 and
10 but 0.139 at ε = 0.1, because it was fitted on counts clipped at the privately chosen C, which moves with ε).
It is fitted on every event — the same statistics at every ε — and equals an independent unclipped fit."""

import numpy as np
import pytest
from app_tools import decode, figures, open_estimate
from conftest import no_problems

from dphawkes_app.presets import DEFAULT_PRESET, get_preset
from dphawkes_core.estimators import FitConfig, fit
from dphawkes_core.estimators.registry import reference_method

pytestmark = pytest.mark.usefixtures("clear_streamlit_caches")
EPSILONS = (0.1, 1.0, 10.0)


def reference_trace(at) -> np.ndarray:
    kernels = figures(at)[0]
    return np.concatenate([decode(t["y"]) for t in kernels["data"] if t.get("name") == "non-private"])


def test_the_reference_is_the_same_at_every_epsilon_and_fitted_on_every_event():
    at = open_estimate()
    assert at.checkbox(key="Cauto").value  # the default preset chooses C privately: it moves with ε
    traces = {}
    for epsilon in EPSILONS:
        at.number_input(key="eps").set_value(epsilon).run()
        no_problems(at)
        traces[epsilon] = reference_trace(at)
    for epsilon in EPSILONS[1:]:
        np.testing.assert_array_equal(traces[epsilon], traces[EPSILONS[0]])
    preset = get_preset(DEFAULT_PRESET)
    config = preset.config
    unclipped, info = fit(preset.dataset().events,
                          FitConfig(method=reference_method(config.family), bin_size=config.bin_size,
                                    lags=config.lags))
    assert info["clipped_events"] == 0
    scale = np.abs(unclipped.kernels).max()
    np.testing.assert_allclose(traces[1.0], unclipped.kernels.reshape(-1), rtol=1e-9, atol=1e-9 * scale)
