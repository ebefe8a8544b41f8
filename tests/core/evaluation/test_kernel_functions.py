"""``kernel_functions`` in every fit's JSON: the exact breakpoints of the step kernels, both sides of each jump, and
the README's snippet that loads an exported estimate into tick and simulates from it (executed here)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dphawkes_cli.main import main
from dphawkes_core.evaluation.lag_average import average_lags

README = Path(__file__).resolve().parents[3] / "README.md"


def _readme_snippet() -> str:
    """The python block under the README's "Kernels as functions" heading."""
    text = README.read_text()
    section = text[text.index("### Kernels as functions"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_table_lists_both_sides_of_every_jump():
    rng = np.random.default_rng(0)
    steps = average_lags(rng.normal(size=(2, 2, 7)), np.ones(2), 0.3, 3)  # bins 0.9, 0.9 and 0.3
    table = steps.function_table()
    t, values = table["t"], table["values"]
    np.testing.assert_array_equal(t[::2], t[1::2])
    np.testing.assert_allclose(t[::2], [0.0, 0.9, 1.8, 2.1])
    assert values.shape == (2, 2, t.size) and t[0] == 0 and t[-1] == pytest.approx(steps.support)
    tiny = 1e-9
    np.testing.assert_array_equal(values[:, :, ::2], steps.values_at(t[::2] - tiny))  # left of each breakpoint
    np.testing.assert_array_equal(values[:, :, 1::2], steps.values_at(t[::2] + tiny))  # right of it
    assert np.all(values[:, :, 0] == 0) and np.all(values[:, :, -1] == 0)


@pytest.fixture(scope="module")
def exported_fit(tmp_path_factory):
    """A non-private ctls fit (σ² = 0: non-negative step kernels) exported by the CLI."""
    folder = tmp_path_factory.mktemp("kernel_functions")
    events = folder / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "4000", "--seed", "3", "--out", str(events)]) == 0
    out = folder / "fit.json"
    assert main(["fit", str(events), "--bin-size", "0.5", "--support", "4", "--method", "ctls", "--sigma2", "0",
                 "--json", str(out)]) == 0
    return out


def test_every_fit_exports_its_kernels_as_functions(exported_fit):
    payload = json.loads(exported_fit.read_text())
    table = payload["kernel_functions"]
    kernels = np.asarray(payload["kernels"])
    assert table["kind"] == "step" and table["t"][-1] == pytest.approx(payload["support"])
    np.testing.assert_allclose(np.asarray(table["values"])[:, :, 1:-1:2], kernels)  # right of 0, Δ, …, (p−1)Δ
    assert "kernel_functions" in payload["private_fields"]  # post-processing of the estimate: as private as it


def test_readme_snippet_loads_the_estimate_into_tick_and_simulates(exported_fit, monkeypatch, capsys):
    monkeypatch.chdir(exported_fit.parent)
    scope = {}
    exec(compile(_readme_snippet(), str(README), "exec"), scope)
    payload = json.loads(exported_fit.read_text())
    kernels, baseline, delta = np.asarray(payload["kernels"]), np.asarray(payload["baseline"]), payload["bin_size"]
    d, _, p = kernels.shape
    midpoints = delta * (np.arange(p) + 0.5)
    for i in range(d):
        for j in range(d):
            np.testing.assert_allclose(scope["kernels"][i][j].get_values(midpoints), kernels[i, j], rtol=1e-12)
            assert scope["kernels"][i][j].get_norm() == pytest.approx(kernels[i, j].sum() * delta, rel=1e-9)
    counts = [len(times) for times in scope["hawkes"].timestamps]
    assert capsys.readouterr().out.strip() == str(counts)
    # The simulated process is the estimate's: its event rates are the stationary rates (I − ‖h‖)⁻¹ η.
    norms = kernels.sum(axis=2) * delta
    rates = np.linalg.solve(np.eye(d) - norms, baseline)
    longer = scope["SimuHawkes"](baseline=list(baseline), kernels=scope["kernels"], end_time=40_000.0, seed=7,
                                 verbose=False)
    longer.simulate()
    observed = np.array([len(times) for times in longer.timestamps]) / 40_000.0
    np.testing.assert_allclose(observed, rates, rtol=0.08)
