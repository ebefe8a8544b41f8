"""What a family declares about each of its options, once: the metadata the CLI and the app build their
controls from, and the checks the family's options run when they are made.

A :class:`Setting` names one option (its keyword in :class:`~dphawkes_core.estimators.config.FitConfig`,
its label, its kind and range, its default and whether it is a public bound a formal guarantee rests on).
A family's options are a frozen dataclass whose fields are exactly its settings; :func:`check_options`
validates them against the declaration, so every entry point (CLI, app, experiments) gets the same checks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dphawkes_core.data.baseline_bins import BASELINE_FLOOR_SHARE, BaselineBins
from dphawkes_core.errors import ConfigError
from dphawkes_core.validation import is_number, is_whole

KINDS = ("float", "int", "choice", "bool", "floats")


@dataclass(frozen=True)
class Setting:
    """One option of an estimator family.

    Attributes
    ----------
    name : str
        The option's keyword (``FitConfig(method=…, <name>=…)``) and field of the family's options.
    label : str
        Short label for a control (may contain LaTeX for the app).
    kind : {"float", "int", "choice", "bool", "floats"}
        ``floats``: a non-empty tuple of distinct numbers in the range, given as a tuple, a list or text
        ``"0.7,1.5,3"`` (:meth:`normalise`).
    default : Any
        The value when the option is not given (``None`` only where ``optional``).
    help : str
        One sentence: what it does.
    minimum, maximum : float, optional
        Inclusive range of a number (``minimum_exclusive``: the minimum itself is refused).
    minimum_exclusive : bool
    choices : tuple of str
        The allowed values of a ``choice``.
    optional : bool
        ``None`` is allowed and means :attr:`none_means`.
    none_means : str
        What ``None`` stands for (shown beside the control).
    public_bound : bool
        A public bound the formal sensitivity rests on (B, r, G): must be stated, never read from the data.
    cli_flag : str, optional
        The command-line flag (default ``--`` + the name with dashes).
    cli_negates : bool
        For a ``bool`` whose default is true: the flag is present to turn it off (``--ssp-allow-negative``).
    step : float, optional
        Increment of the app's number input.
    primary : bool
        Shown among the method's main controls (the app puts the others under "more options"); public bounds
        are always primary.
    added_later : bool
        Added after ledgers were written with the family: at its default it is left out of a release request's
        identity (:func:`~dphawkes_core.release.session.request_identity`), so the entries of those ledgers still
        replay. Only for an option whose default reproduces what the family did before it existed, or that only
        post-processes the same release (the baseline floor): a replay returns the release as it was recorded.
    """

    name: str
    label: str
    kind: str
    default: Any
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    minimum_exclusive: bool = False
    choices: tuple = ()
    optional: bool = False
    none_means: str = ""
    public_bound: bool = False
    cli_flag: str | None = None
    cli_negates: bool = False
    step: float | None = None
    primary: bool = False
    added_later: bool = False

    def __post_init__(self):
        if self.public_bound:
            object.__setattr__(self, "primary", True)
        if self.kind not in KINDS:
            raise ValueError(f"setting {self.name}: unknown kind {self.kind!r}")
        if self.kind == "choice" and self.default not in self.choices:
            raise ValueError(f"setting {self.name}: default {self.default!r} not among {self.choices}")

    @property
    def flag(self) -> str:
        """The command-line flag."""
        return self.cli_flag or "--" + self.name.replace("_", "-")

    def normalise(self, value):
        """The value in its one stored form: a ``floats`` option as a tuple of floats (from a tuple, a list — a
        JSON round trip — or comma-separated text); anything else unchanged (:meth:`check` judges it)."""
        if self.kind != "floats" or value is None:
            return value
        items = value.split(",") if isinstance(value, str) else value
        try:
            return tuple(float(item) for item in items)
        except (TypeError, ValueError):
            return value

    def check(self, value, family_label: str) -> None:
        """Raise :class:`ConfigError` (one line naming the family and the option) unless ``value`` fits."""
        if value is None:
            if self.optional:
                return
            raise ConfigError(f"{family_label} needs {self.label_text()}")
        ok = {
            "float": lambda v: is_number(v) and self._in_range(v),
            "int": lambda v: is_whole(v) and self._in_range(v),
            "choice": lambda v: v in self.choices,
            "bool": lambda v: isinstance(v, bool),
            "floats": lambda v: (isinstance(v, tuple) and len(v) > 0 and len(set(v)) == len(v)
                                 and all(is_number(x) and self._in_range(x) for x in v)),
        }[self.kind](value)
        if not ok:
            raise ConfigError(f"{family_label}: {self.label_text()} must be {self.requirement()}, got {value!r}")

    def label_text(self) -> str:
        """The label without LaTeX markup (for messages)."""
        return self.label.replace("$", "").replace("\\lVert", "‖").replace("\\rVert", "‖").replace("_F", "_F")

    def requirement(self) -> str:
        """What a valid value is, in words."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "bool":
            return "true or false"
        what = {"int": "a whole number", "floats": "distinct comma-separated numbers, each"}.get(self.kind, "a number")
        if self.minimum is not None:
            what += f" {'>' if self.minimum_exclusive else '>='} {self.minimum:g}"
        if self.maximum is not None:
            what += f" and <= {self.maximum:g}"
        return what

    def _in_range(self, value) -> bool:
        if self.minimum is not None and (value < self.minimum or self.minimum_exclusive and value == self.minimum):
            return False
        return self.maximum is None or value <= self.maximum


def check_options(options, settings: tuple[Setting, ...], family_label: str) -> None:
    """Check every field of a family's ``options`` against its :class:`Setting` (called by the options'
    ``__post_init__``, so options that exist are valid)."""
    names = [f.name for f in dataclasses.fields(options)]
    if names != [s.name for s in settings]:
        raise ValueError(f"{type(options).__name__}'s fields {names} differ from its settings")
    for setting in settings:
        setting.check(getattr(options, setting.name), family_label)


def defaults(settings: tuple[Setting, ...]) -> dict:
    """``{name: default}`` of the settings."""
    return {s.name: s.default for s in settings}


def options_class(name: str, settings: tuple[Setting, ...], family_label: str, module: str, cross_check=None) -> type:
    """A family's options: a frozen dataclass whose fields are ``settings`` (defaults included), checked
    against them when made, then by ``cross_check(options)`` for rules that tie options together.

    Parameters
    ----------
    name : str
        Class name (e.g. ``PGDOptions``); assign the class to that name in ``module`` so it pickles.
    settings : tuple of Setting
        The declaration, the one source of the fields, defaults, ranges and labels.
    family_label : str
        Display name of the family, for messages.
    module : str
        ``__name__`` of the family's module.
    cross_check : callable, optional
        ``cross_check(options)`` raising :class:`ConfigError`.
    """

    def __post_init__(self):
        for setting in settings:
            object.__setattr__(self, setting.name, setting.normalise(getattr(self, setting.name)))
        check_options(self, settings, family_label)
        if cross_check is not None:
            cross_check(self)

    fields = [(s.name, Any, dataclasses.field(default=s.default)) for s in settings]
    cls = dataclasses.make_dataclass(name, fields, frozen=True,
                                     namespace={"__post_init__": __post_init__, "settings": settings})
    cls.__module__ = module
    return cls


# ---- settings that several families share (the noisy gradient ones: DP-PGD, DP-CG, clipped DP-PGD) ----

STEP_RULES = ("theorem", "constant")
ITERATIONS = Setting("iters", "iterations K", "int", 1000, "number of noisy gradient steps", minimum=1,
                     maximum=10**7, step=100, primary=True)

# ---- settings that the families with a non-negative estimate share (ssp, ctls, exp, mle) ----

BASELINE_FLOOR = Setting(
    "baseline_floor", "baseline floor (share of the mean rate)", "float", BASELINE_FLOOR_SHARE,
    "every baseline is at least this share of its dimension's mean rate (its released count over the window), so "
    "that with kernels >= 0 no event has probability 0; post-processing of released numbers, no privacy cost (0: "
    "none)", minimum=0.0, maximum=1.0, step=0.05, added_later=True)

# ---- the baseline that follows the clock (mle, exp): dphawkes_core.data.baseline_bins ----

BASELINE_PERIOD = Setting(
    "baseline_period", "baseline period P", "float", None,
    "the baseline is constant on K equal parts of a period of this length on the data's time axis (24 for the day "
    "in hours, 168 the week)", minimum=0.0, minimum_exclusive=True, optional=True,
    none_means="no period: the K parts are equal bins of each sequence's window", added_later=True)
BASELINE_BINS = Setting(
    "baseline_bins", "baseline parts K", "int", 1,
    "the number of parts the baseline is constant on (of the period, or of each window without one); 1: a constant "
    "baseline (whatever the period)", minimum=1, maximum=1000, added_later=True)


def baseline_bins_of(config) -> BaselineBins:
    """The :class:`~dphawkes_core.data.baseline_bins.BaselineBins` a config asks for (constant for a family without
    the options)."""
    if not config.family.reads("baseline_bins"):
        return BaselineBins()
    return BaselineBins(int(config.baseline_bins), config.baseline_period)
