"""The contract every registered estimator family must pass, run through the package's own
:func:`~dphawkes_core.estimators.checks.check_family` checks (the same a plug-in author runs), one test per
family and check, plus what only the CLI can check: that a family's settings build its flags.

The checks' references are independent of the package all the way down (``dphawkes_core/estimators/checks.py``);
the toy family of ``test_toy_family.py`` runs them too, when it is registered."""

from __future__ import annotations

import pytest

from dphawkes_cli.fit import fit_config
from dphawkes_cli.main import build_parser
from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators import FitConfig, get_family, method_names
from dphawkes_core.estimators.checks import CHECKS, FamilyCheckError, check_family, skip_reason

FAMILY_NAMES = method_names()


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_every_family_passes_every_check_that_applies(name, check):
    family = get_family(name)
    reason = skip_reason(family, check)
    if reason:
        pytest.skip(reason)
    CHECKS[check](family)


def test_every_registered_family_has_a_reference_for_its_noiseless_limit():
    """A skip must not hide a family: every registered one is checked against an independent limit."""
    assert [name for name in FAMILY_NAMES if skip_reason(get_family(name), "noiseless limit")] == []


def test_check_family_reports_each_check():
    outcomes = check_family(get_family("cls"))
    assert [o.check for o in outcomes] == list(CHECKS)
    assert [o.check for o in outcomes if o.skipped] == ["sensitivity", "neighbour search", "sequence-unit sensitivity",
                                                         "only a session release is formal"]


def test_the_sensitivity_check_catches_a_family_that_understates_its_bound(monkeypatch):
    family = get_family("ssp")
    real = type(family).privacy_report
    monkeypatch.setattr(type(family), "privacy_report",
                        lambda self, stats, config: _scaled(real(self, stats, config), 0.9))
    with pytest.raises(FamilyCheckError, match="over its bound"):
        CHECKS["sensitivity"](family)


@pytest.mark.parametrize("factor", [0.9, 1.2])
def test_the_sequence_unit_check_catches_a_bound_too_low_or_too_loose(monkeypatch, factor):
    family = get_family("exp")
    real = type(family).privacy_report
    monkeypatch.setattr(type(family), "privacy_report",
                        lambda self, stats, config: _scaled(real(self, stats, config), factor))
    with pytest.raises(FamilyCheckError, match="replacing a sequence moves the release"):
        CHECKS["sequence-unit sensitivity"](family)


def _scaled(report, factor):
    from dataclasses import replace
    return replace(report, sensitivity=report.sensitivity * factor)


def test_the_noiseless_check_catches_a_wrong_fit(monkeypatch):
    family = get_family("cls")
    real = type(family).run

    def off(self, stats, config, report, rng, transcript=None):
        U, history, info = real(self, stats, config, report, rng, transcript)
        return U * (1 + 1e-6), history, info

    monkeypatch.setattr(type(family), "run", off)
    with pytest.raises(FamilyCheckError, match="least squares limit"):
        CHECKS["noiseless limit"](family)


def _non_default(setting):
    if setting.kind == "choice":
        return next(c for c in setting.choices if c != setting.default)
    if setting.kind == "bool":
        return not setting.default
    if setting.kind == "floats":
        return tuple(2.0 * x for x in setting.default) + (9.5,)
    base = setting.default if setting.default is not None else (setting.minimum or 0) + 1
    value = base + (setting.step or 1)
    return int(value) if setting.kind == "int" else float(value)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_its_settings_build_a_cli_that_sets_every_option(name, tmp_path):
    family = get_family(name)
    argv = ["fit", "x.csv", "--bin-size", "1", "--lags", "2", "--method", name]
    if family.privacy.private:
        argv += ["--sigma2", "1", "--calibration", family.privacy.calibrations[0], "--count-cap", "2"]
    expected = {}
    for setting in family.settings:
        value = _non_default(setting)
        if setting.name == "step":  # a constant step needs its size (given below)
            value = "constant"
        expected[setting.name] = value
        if setting.kind == "bool":
            if value != setting.default and (setting.cli_negates or value):
                argv.append(setting.flag)
        else:
            argv += [setting.flag, ",".join(map(str, value)) if setting.kind == "floats" else str(value)]
    config = fit_config(build_parser().parse_args(argv))
    assert config.method == name
    for option, value in expected.items():
        assert getattr(config, option) == value, option


def test_the_method_choice_lists_every_registered_family():
    fit = next(a for a in build_parser()._subparsers._group_actions[0].choices["fit"]._actions if a.dest == "method")
    assert tuple(fit.choices) == FAMILY_NAMES


def test_selection_settings_go_with_their_automatic_selection():
    """The share and range of an automatic C (or G) are refused beside a public C (or G): they would be carried
    in a config without being read, and a config must round-trip through to_dict."""
    with pytest.raises(ConfigError, match="go with count_cap='auto'"):
        FitConfig(method="ssp", count_cap=3, count_cap_share=0.2, epsilon=1.0, calibration="formal")
    with pytest.raises(ConfigError, match="goes with sequence_clip='auto'"):
        FitConfig(method="ssp", count_cap=3, epsilon=1.0, calibration="formal", privacy_unit="sequence",
                  max_events=10, sequence_clip_share=0.2)
    auto = FitConfig(method="ssp", count_cap="auto", count_cap_share=0.2, epsilon=1.0, calibration="formal")
    assert FitConfig(**auto.to_dict()) == auto
