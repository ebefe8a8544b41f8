"""The configuration of a fit: the shared settings, the privacy unit and the chosen family's own options.

``FitConfig(method="ssp", bin_size=0.1, lags=40, epsilon=1, calibration="formal", count_cap=2, ridge=0.5)``:
the shared settings are fields; the family's options (here ``ridge``) are given as keywords and become
``config.options``, a frozen dataclass of that family alone (:mod:`~dphawkes_core.estimators.registry`),
readable as ``config.ridge``. An option the family does not read is refused, so it can never change what a
release costs; :meth:`FitConfig.to_dict` holds exactly what the fit reads (the export and the ledger's
identity of a release use it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dphawkes_core.errors import ConfigError
from dphawkes_core.estimators.family import Family, Statistics
from dphawkes_core.estimators.registry import FAMILIES, get_family, reference_method
from dphawkes_core.estimators.units import EventUnit, SequenceUnit, make_unit
from dphawkes_core.privacy.count_cap import AUTO, AUTO_CAP_MAX, AUTO_CAP_SHARE
from dphawkes_core.privacy.sequence import AUTO_CLIP_SHARE
from dphawkes_core.validation import (
    check_bin_size,
    check_count_cap,
    check_lags,
    check_positive_whole,
    check_privacy_settings,
    check_share,
    is_whole,
)

UNIT_KEYWORDS = ("privacy_unit", "sequence_clip", "max_events", "sequence_clip_share")  # the unit's flat keywords


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a fit, so that a result can be reproduced from it.

    Attributes
    ----------
    method : str
        The family's name (:func:`~dphawkes_core.estimators.registry.method_names`).
    bin_size : float
        Δ.
    lags : int
        p (:func:`~dphawkes_core.statistics.binning.lags_from_support` for ``p = ⌈s/Δ⌉``).
    epsilon, dp_delta : float, optional
        Target privacy; the noise is calibrated from them unless ``sigma2`` is given. Checked when the config is
        built: ε in ``(0, EPSILON_MAX]``, δ in (0, 1) (:func:`~dphawkes_core.validation.check_privacy_settings`).
    sigma2 : float, optional
        Noise variance given directly (then ε is reported, not targeted), in ``[0, SIGMA2_MAX]``. What a
        calibration targets is :attr:`privacy_target`.
    calibration : str
        ``paper``, ``formal`` or ``tight-paper`` (:mod:`dphawkes_core.privacy.calibration`); a formal-only family needs
        ``formal``.
    count_cap : int or "auto", optional
        Public cap C on each bin count, or ``"auto"`` (a family with ``auto_count_cap``, with ε): spend
        ``count_cap_share`` of ε on a private choice of C in ``1 … count_cap_max``
        (:mod:`~dphawkes_core.privacy.count_cap`).
    count_cap_share, count_cap_max : float, int
        The automatic cap's share of ε and public range.
    seed : int, optional
        Seed of the noise. ``None`` (the default) draws from OS entropy: a private release. A seed makes the
        noise reproducible by anyone who knows it — teaching, tests, experiments — so a seeded fit is *not* a
        private release (:func:`~dphawkes_core.privacy.report.formal_status`).
    unit : EventUnit or SequenceUnit
        The privacy unit and its public bounds (flat keywords ``privacy_unit``, ``sequence_clip``,
        ``max_events``, ``sequence_clip_share``).
    options : dataclass
        The family's own options (its :attr:`~dphawkes_core.estimators.family.Family.settings`), given as
        keywords.
    """

    method: str = "cls"
    bin_size: float = 0.1
    lags: int = 50
    epsilon: float | None = None
    dp_delta: float = 1e-5
    sigma2: float | None = None
    calibration: str = "paper"
    count_cap: int | str | None = None
    count_cap_share: float = AUTO_CAP_SHARE
    count_cap_max: int = AUTO_CAP_MAX
    seed: int | None = None
    unit: EventUnit | SequenceUnit = EventUnit()
    options: object = None

    def __init__(self, method: str = "cls", bin_size: float = 0.1, lags: int = 50, epsilon: float | None = None,
                 dp_delta: float = 1e-5, sigma2: float | None = None, calibration: str = "paper",
                 count_cap: int | str | None = None, count_cap_share: float = AUTO_CAP_SHARE,
                 count_cap_max: int = AUTO_CAP_MAX, seed: int | None = None, unit=None, options=None,
                 **keywords):
        family = get_family(method)
        unit_keywords = {k: keywords.pop(k) for k in UNIT_KEYWORDS if k in keywords}
        values = dict(method=method, bin_size=bin_size, lags=lags, epsilon=epsilon, dp_delta=dp_delta,
                      sigma2=sigma2, calibration=calibration, count_cap=count_cap, count_cap_share=count_cap_share,
                      count_cap_max=count_cap_max, seed=seed, unit=_unit(unit, unit_keywords),
                      options=_options(family, options, keywords))
        for name, value in values.items():
            object.__setattr__(self, name, value)
        self._check(family)

    def __getattr__(self, name: str):
        """The family's options read as attributes (``config.bound``); anything else is an AttributeError."""
        if name.startswith("__") or name in ("options", "unit"):
            raise AttributeError(name)
        options = self.__dict__.get("options")
        if options is not None and name in options.__dataclass_fields__:
            return getattr(options, name)
        raise AttributeError(f"{type(self).__name__} of method {self.__dict__.get('method')!r} has no setting {name!r}")

    @property
    def family(self) -> Family:
        """The estimator family that runs this config."""
        return get_family(self.method)

    @property
    def privacy_target(self) -> dict:
        """The one privacy target a calibration takes, as its keywords: ``{"epsilon": None, "sigma2": σ²}`` when σ²
        is given (ε is then reported, not targeted), else ``{"epsilon": ε, "sigma2": None}``."""
        if self.sigma2 is not None:
            return {"epsilon": None, "sigma2": self.sigma2}
        return {"epsilon": self.epsilon, "sigma2": None}

    @property
    def privacy_unit(self) -> str:
        """``event`` or ``sequence``."""
        return self.unit.name

    @property
    def sequence_clip(self):
        """G of the sequence unit (``None`` for the event unit)."""
        return getattr(self.unit, "clip", None)

    @property
    def max_events(self):
        """M, the enforced cap on events per sequence of either unit (``None``: no cap)."""
        return getattr(self.unit, "max_events", None)

    @property
    def sequence_clip_share(self) -> float | None:
        """The share of ε an automatic G spends (``None`` unless the sequence unit)."""
        return getattr(self.unit, "clip_share", None)

    def to_dict(self) -> dict:
        """The keywords that rebuild this config, holding exactly what the fit reads: the shared settings,
        the unit's bounds (for the sequence unit), the automatic cap's share and range (only with ``auto``)
        and the family's options. ``FitConfig(**config.to_dict()) == config``."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("unit", "options")}
        if shared["count_cap"] != AUTO:
            del shared["count_cap_share"], shared["count_cap_max"]
        return {**shared, **self.unit.to_dict(), **dataclasses.asdict(self.options)}

    # ---- derived configs: the one place a config is built from another's settings ----------------------

    def with_changes(self, **changes) -> FitConfig:
        """This config with ``changes`` (keywords as :meth:`to_dict` holds them), validated anew: the only place a
        config is rebuilt from another one's settings (a test allows no other)."""
        return FitConfig(**{**self.to_dict(), **changes}) if changes else self

    def noiseless(self, **kept) -> FitConfig:
        """The same fit with σ² = 0, no target ε and no seed (nothing drawn), and ``kept`` post-processing values
        that a public rule would otherwise set from σ (e.g. the ridge λ the private fit used)."""
        return self.with_changes(sigma2=0.0, epsilon=None, seed=None, **kept)

    def with_selection(self, count_cap=None, sequence_clip=None, *, clip_removed: bool = False) -> FitConfig:
        """An automatic C or G replaced by a value: the one the release chose (public once released) or a
        placeholder; the selection's share and range go back to their defaults (they go with ``auto`` only).
        ``clip_removed``: an automatic G becomes no clip (a plan's placeholder)."""
        changes = {}
        if self.count_cap == AUTO and count_cap is not None:
            changes.update(count_cap=int(count_cap), count_cap_share=AUTO_CAP_SHARE, count_cap_max=AUTO_CAP_MAX)
        if self.sequence_clip == AUTO and (sequence_clip is not None or clip_removed):
            changes.update(sequence_clip=None if clip_removed else float(sequence_clip),
                           sequence_clip_share=AUTO_CLIP_SHARE)
        return self.with_changes(**changes)

    def for_method(self, method: str, epsilon: float, public: dict) -> FitConfig:
        """This fit's shared settings (Δ, p, C, δ, unit, seed) with another ``method`` at target ``epsilon``: each
        option the other family reads comes from this config when its family reads it too, else from ``public``
        (public settings stated for every family: B, r, G, K); a formal-only family gets the formal calibration."""
        family = get_family(method)
        options = family.own_options({**dict(public), **dataclasses.asdict(self.options)})
        calibration = "formal" if family.formal_only else self.calibration
        shared = {k: v for k, v in self.to_dict().items() if not self.family.reads(k)}
        return FitConfig(**{**shared, "method": method, "epsilon": epsilon, "sigma2": None,
                            "calibration": calibration, **options})

    def statistics_key(self) -> FitConfig:
        """The config the statistics of this one are computed and cached under: the settings they depend on.

        Δ, p and C; for an automatic C (a private release) also the method, ε, δ, seed and share it is chosen with, and
        the family's public settings that shape its statistics (exp's decays); an enforced cap M (either unit); for the
        sequence unit also G (each sequence's contribution is clipped before the sums) and, for a G chosen privately,
        ε, δ, seed and its share. With a public C and the event unit every family that fits the binned moments shares
        them (keyed on the non-private reference); a family with statistics of its own (exact event times) keys them on
        its own config without the noise."""
        required = {s.name: getattr(self, s.name) for s in self.family.settings
                    if s.default is None and not s.optional}  # its public bounds: any config of it states them
        if self.privacy_unit == "sequence":
            chosen = ({"epsilon": self.epsilon, "dp_delta": self.dp_delta, "seed": self.seed,
                       "sequence_clip_share": self.sequence_clip_share} if self.sequence_clip == AUTO else {})
            return FitConfig(method=self.method, bin_size=self.bin_size, lags=self.lags, count_cap=self.count_cap,
                             calibration="formal", privacy_unit="sequence", max_events=self.max_events,
                             sequence_clip=self.sequence_clip, **chosen, **required)
        if self.count_cap != AUTO and self.family.inputs.statistics != Statistics.BINNED:
            return self.with_changes(epsilon=1.0 if self.family.privacy.private else None, sigma2=None, seed=None)
        cap = {"max_events": self.max_events} if self.max_events is not None else {}  # the events kept
        if self.count_cap != AUTO:
            return FitConfig(method=reference_method(), bin_size=self.bin_size, lags=self.lags,
                             count_cap=self.count_cap, **cap)
        shaping = {s.name: getattr(self, s.name) for s in self.family.settings if s.public_bound}  # exp's decays
        return FitConfig(method=self.method, bin_size=self.bin_size, lags=self.lags, count_cap=AUTO,
                         epsilon=self.epsilon, dp_delta=self.dp_delta, seed=self.seed, calibration="formal",
                         count_cap_share=self.count_cap_share, count_cap_max=self.count_cap_max,
                         **{**cap, **required, **shaping})

    def _check(self, family: Family) -> None:
        check_privacy_settings(self.epsilon, self.sigma2, self.dp_delta)
        check_bin_size(self.bin_size)
        check_lags(self.lags)
        if self.unit.name not in family.privacy.units:
            able = [f.label for f in FAMILIES.values() if self.unit.name in f.privacy.units and f.privacy.private]
            raise ConfigError(f"the {self.unit.name} unit is available for {' and '.join(able)}, not {family.label}")
        self._check_count_cap(family)
        family.check(self)

    def _check_count_cap(self, family: Family) -> None:
        if self.count_cap != AUTO:
            if family.privacy.auto_count_cap and not (
                self.count_cap is None or is_whole(self.count_cap) and self.count_cap >= 1
            ):
                raise ConfigError(f"the count cap C must be a positive integer or 'auto', got {self.count_cap!r}")
            check_count_cap(self.count_cap)
            if (self.count_cap_share, self.count_cap_max) != (AUTO_CAP_SHARE, AUTO_CAP_MAX):
                raise ConfigError("the share of ε and the range of an automatic count cap go with count_cap='auto'")
            return
        if isinstance(self.unit, SequenceUnit):
            raise ConfigError("the sequence unit needs a public count cap C or none, not 'auto'")
        if not family.privacy.auto_count_cap or self.epsilon is None or self.sigma2 is not None:
            raise ConfigError("an automatic count cap is available for DP-SSP with a target ε (it spends a "
                              "share of ε); give a public cap C otherwise")
        check_share(self.count_cap_share)
        check_positive_whole(self.count_cap_max, "the largest automatic count cap")


def _unit(unit, keywords: dict) -> EventUnit | SequenceUnit:
    """The unit from a unit object and/or flat keywords (the keywords win: ``replace(config, max_events=9)``)."""
    if unit is None:
        return make_unit(**keywords)
    if not keywords:
        return unit
    return make_unit(**{**_unit_keywords(unit), **keywords})


def _unit_keywords(unit) -> dict:
    flat = unit.to_dict()
    if isinstance(unit, SequenceUnit):
        flat.setdefault("sequence_clip_share", unit.clip_share)
    return flat


def _flag(name: str) -> str:
    """The command-line flag of the option ``name`` (from the setting that declares it)."""
    return next(s.flag for f in FAMILIES.values() for s in f.settings if s.name == name)


def _options(family: Family, options, keywords: dict):
    """The family's options from an options object and/or keywords.

    Keywords the family does not read are refused (with the families that do read them); an options object of
    another family (``dataclasses.replace(config, method=…)``) keeps the values of the options both read."""
    foreign = [name for name, value in keywords.items()
               if name not in family.options_type.__dataclass_fields__ and value is not None]
    if foreign:
        readers = {name: [f.label for f in FAMILIES.values() if name in f.options_type.__dataclass_fields__]
                   for name in foreign}
        unknown = [name for name, who in readers.items() if not who]
        if unknown:
            raise ConfigError(f"unknown setting(s) {', '.join(unknown)}")
        raise ConfigError(f"{family.label} does not read " + "; ".join(
            f"{name} (an option of {', '.join(who)}; flag {_flag(name)})" for name, who in readers.items()))
    given = {name: value for name, value in keywords.items() if name in family.options_type.__dataclass_fields__}
    if options is not None:
        carried = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)
                   if f.name in family.options_type.__dataclass_fields__}
        given = {**carried, **given}
    return family.options_type(**given)
