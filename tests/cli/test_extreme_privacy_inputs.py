"""Extreme ε and σ² through the CLI: every private method and every calibration path (paper,
tight-paper, formal; continuous and discrete Gaussian; an automatic count cap or clip norm) either fits or exits 2
with one line — never a solver's traceback (``ctls --sigma2 5e-324`` and ``--epsilon 1e308`` ended in brentq's).

The edges are public limits of the calibration (:data:`~dphawkes_core.validation.EPSILON_MAX`,
:data:`~dphawkes_core.validation.SIGMA2_MAX`, :data:`~dphawkes_core.validation.MULTIPLIER_MIN`); at the largest ε
taken the noise drawn must still give at most that ε, checked against dp-accounting's own inverse."""

from __future__ import annotations

import json

import pytest
from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

from dphawkes_cli.main import main
from dphawkes_core.validation import EPSILON_MAX, SIGMA2_MAX

END = "600"
WINDOW = ["--bin-size", "1", "--lags", "3", "--end-time", END, "--dimensions", "2"]
FORMAL = ["--calibration", "formal", "--count-cap", "3"]
METHODS = {  # every private family, with each calibration path its ε and σ² go through
    "pgd paper": ["--method", "pgd", "--bound", "0.6", "--iters", "3", "--calibration", "paper"],
    "pgd tight-paper": ["--method", "pgd", "--bound", "0.6", "--iters", "3", "--calibration", "tight-paper"],
    "pgd formal": ["--method", "pgd", "--bound", "0.6", "--iters", "3", *FORMAL],
    "cg paper": ["--method", "cg", "--radius", "0.5", "--iters", "3", "--calibration", "paper"],
    "cg formal": ["--method", "cg", "--radius", "0.5", "--iters", "3", *FORMAL],
    "pgd-clip": ["--method", "pgd-clip", "--clip", "1", "--bound", "0.6", "--iters", "3", *FORMAL],
    "ssp discrete": ["--method", "ssp", *FORMAL],  # unseeded lagged release: discrete Gaussian, zCDP
    "ssp seeded": ["--method", "ssp", *FORMAL, "--seed", "1"],
    "ssp full": ["--method", "ssp", *FORMAL, "--ssp-release", "full"],
    "ctls": ["--method", "ctls", *FORMAL],
}
AUTO = {  # a private selection spends a share of a target ε
    "ssp auto C, discrete": ["--method", "ssp", "--calibration", "formal", "--count-cap", "auto"],
    "ssp auto C, seeded": ["--method", "ssp", "--calibration", "formal", "--count-cap", "auto", "--seed", "1"],
    "ctls auto C": ["--method", "ctls", "--calibration", "formal", "--count-cap", "auto", "--seed", "1"],
    "ssp auto G": ["--method", "ssp", *FORMAL, "--privacy-unit", "sequence", "--max-events", "2000",
                   "--sequence-clip", "auto"],
}
REFUSED_SIGMA2 = ("5e-324", "1e-300", "1e101", "1e308")
REFUSED_EPSILON = ("1e308", "1e200", str(EPSILON_MAX * 1.01))


@pytest.fixture(scope="module")
def events_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("extreme") / "events.csv"
    assert main(["simulate", "--scenario", "paper-2d", "--events", "600", "--seed", "2", "--out", str(path)]) == 0
    return str(path)


def _fails_in_one_line(argv, capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    errors = [line for line in err if line.startswith("error: ")]  # progress lines (a sweep's) may come first
    assert len(errors) == 1 and err[-1] == errors[0] and not any("Traceback" in line for line in err), err
    return errors[0]


@pytest.mark.parametrize("name", list(METHODS))
def test_extreme_sigma2_and_epsilon_exit_2_in_one_line(name, events_csv, capsys, tmp_path):
    base = ["fit", events_csv, *WINDOW, *METHODS[name], "--json", str(tmp_path / "out.json")]
    messages = [_fails_in_one_line(base + ["--sigma2", value], capsys) for value in REFUSED_SIGMA2]
    messages += [_fails_in_one_line(base + ["--epsilon", value], capsys) for value in REFUSED_EPSILON]
    assert "the accountants" in messages[0] and "σ² = 0" in messages[0]  # it says what to do instead
    assert f"above {EPSILON_MAX:g}" in messages[-1]
    if name.endswith(" paper"):  # Theorems 1 and 3: σ² ∝ 1/ε², past float64 at a tiny ε
        assert "above 1e+100" in _fails_in_one_line(base + ["--epsilon", "1e-300"], capsys)
    else:  # the analytic and discrete Gaussians tend to δ's own noise
        assert main(base + ["--epsilon", "1e-300"]) == 0
    assert main(base + ["--sigma2", str(SIGMA2_MAX)]) == 0  # the edges themselves are taken
    capsys.readouterr()


@pytest.mark.parametrize("name", list(AUTO))
def test_a_private_selection_refuses_what_leaves_nothing_for_the_release(name, events_csv, capsys, tmp_path):
    base = ["fit", events_csv, *WINDOW, *AUTO[name], "--json", str(tmp_path / "out.json")]
    assert "leaves nothing for the release" in _fails_in_one_line(base + ["--epsilon", "1e-300"], capsys)
    assert f"above {EPSILON_MAX:g}" in _fails_in_one_line(base + ["--epsilon", "1e308"], capsys)


def test_at_the_largest_epsilon_the_noise_still_gives_at_most_that_epsilon(events_csv, tmp_path):
    """dp-accounting's calibration overshoots its target at a large ε (1.5 % at 10²⁰): at the limit it must not."""
    out = tmp_path / "ctls.json"
    argv = ["fit", events_csv, *WINDOW, *METHODS["ctls"], "--epsilon", str(EPSILON_MAX), "--json", str(out)]
    assert main(argv) == 0
    report = json.loads(out.read_text())["privacy"]
    multiplier = report["sigma2"] ** 0.5 / report["sensitivity"]
    assert get_epsilon_gaussian(multiplier, report["dp_delta"]) <= EPSILON_MAX * (1 + 1e-12)


def test_the_audit_and_the_sweep_refuse_them_too(capsys, tmp_path):
    audit = ["audit", "--scenario", "paper-2d", "--events", "300", "--bin-size", "1", "--support", "2",
             "--method", "ssp", "--count-cap", "3", "--trials", "40", "--json", str(tmp_path / "a.json")]
    _fails_in_one_line(audit + ["--epsilon", "1e308"], capsys)
    assert main(audit + ["--broken", "--broken-factor", "1e300"]) == 0  # σ²/factor² underflows, not overflows
    capsys.readouterr()
    sweep = ["sweep", "--scenario", "paper-2d", "--events", "300", "--bin-size", "1", "--support", "2",
             "--method", "ssp", "--runs", "1", "--calibration", "formal", "--count-cap", "3",
             "--out", str(tmp_path / "s.csv")]
    _fails_in_one_line(sweep + ["--epsilon", "1e308"], capsys)
    _fails_in_one_line(sweep + ["--sigma2", "5e-324"], capsys)
