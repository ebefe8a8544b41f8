"""Named starting points of the app: data and fit settings chosen together, each saying what it shows.

A :class:`Preset` is a simulated data set (scenario, number of events, seed), the
:class:`~dphawkes_core.estimators.FitConfig` of its fit (the shared settings and the options of its own
family only) and ``public``: the public settings B, r, G and K stated once for every family, so that the
same fit can be repeated with any other method (:mod:`dphawkes_experiments.compare`). Each family reads
from them the options it has (:meth:`~dphawkes_core.estimators.Family.own_options`). The noise seed is
never part of a preset.

The default, ``works``, is a regime where a formal ε = 1 estimate is useful, fitted by the formal estimator
measured best there (``benchmarks/preset_choice.py``: the exact-time ctls, grid-free error 0.14 against
DP-SSP's best 0.25 over 5 simulations × 3 noise draws); ``fig1`` and ``fig3`` are
the paper's kernel figures as published (settings from :data:`dphawkes_experiments.reproduce.FIGURES`);
``small`` is the ``works`` fit on too few events. ``tests/app/test_presets.py`` checks each sentence's claim.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dphawkes_core.data.datasets import Dataset, simulate_dataset
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.estimators import Family, FitConfig, get_family
from dphawkes_core.estimators.settings import defaults
from dphawkes_core.evaluation.metrics import constraint_scale
from dphawkes_core.privacy.count_cap import AUTO, AUTO_CAP_SHARE
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_experiments.reproduce import FIGURES, KERNEL_BIN_SIZE, SUPPORT

DEFAULT_PRESET = "works"
WORKS_EVENTS = 50_000
SMALL_EVENTS = 1_000
WORKS_BIN_SIZE = 0.5
WORKS_SUPPORT = 4.0
# a public fixed cap for the sweeps and a fixed-C fit (50,000 events of paper-2d: a few bins reach 6)
WORKS_COUNT_CAP = 5
# B, r, G and K = 200 of "Privacy that works", public choices for the families that read them (formal DP-PGD and
# DP-CG stay at the all-zero error whatever K)
WORKS_PUBLIC = MappingProxyType({"bound": 1.0, "radius": 0.5, "clip": 1.0, "iters": 200})
SHARED_LABELS = {"method": "method", "bin_size": "Δ", "lags": "p", "epsilon": "ε", "dp_delta": "δ", "sigma2": "σ²",
                 "calibration": "calibration", "count_cap": "C", "privacy_unit": "the privacy unit",
                 "max_events": "M (events per sequence)", "sequence_clip": "G (clip per sequence)"}
OPTION_LABELS = {"bound": "B", "radius": "r", "iters": "K", "clip": "G", "ridge": "ridge λ",
                 "stabiliser": "stabiliser"}  # short names of options; any other option is named by its setting
PRIVACY_FIELDS = ("epsilon", "sigma2", "dp_delta", "calibration")
UNIT_FIELDS = ("privacy_unit", "max_events", "sequence_clip")  # the privacy unit and its public bounds


@dataclass(frozen=True)
class Preset:
    """A simulated data set and the fit settings that go with it.

    Attributes
    ----------
    key : str
        Short name, also the URL value (``?preset=works``).
    title : str
        Name shown to the user.
    summary : str
        One sentence: what the preset shows.
    scenario : str
        Name of the simulated process (:data:`dphawkes_core.data.kernels.SCENARIOS`).
    n_events : int
        Number of simulated events.
    data_seed : int
        Simulation seed.
    support : float
        Kernel support s (``config.lags = ⌈s/Δ⌉``).
    config : FitConfig
        The fit: the shared settings and the options of its family (seed left at its default).
    public : mapping
        Public settings for every family (B, r, G, K), each read by the families that have it.
    """

    key: str
    title: str
    summary: str
    scenario: str
    n_events: int
    data_seed: int
    support: float
    config: FitConfig
    public: Mapping = dataclasses.field(default_factory=lambda: MappingProxyType({}))

    def dataset(self) -> Dataset:
        """Simulate the preset's data (with their ground truth)."""
        return simulate_dataset(get_scenario(self.scenario), n_events=self.n_events, seed=self.data_seed)

    def matches_data(self, params: Mapping) -> bool:
        """True when ``params`` (a :class:`Dataset`'s ``params``) describe this preset's simulation."""
        return (params.get("scenario") == self.scenario and params.get("n_events") == self.n_events
                and params.get("end_time") is None and params.get("seed") == self.data_seed)

    def options_for(self, family: Family | str) -> dict:
        """The options the preset gives ``family`` (a family or its name): its config's options for the preset's
        own family; else the family's defaults with the public settings it reads."""
        family = get_family(family) if isinstance(family, str) else family
        if family.name == self.config.method:
            return dataclasses.asdict(self.config.options)
        return {**defaults(family.settings), **family.own_options(dict(self.public))}

    def changed_settings(self, config: FitConfig) -> tuple[str, ...]:
        """Labels of the settings of ``config`` that differ from the preset's (seed excluded).

        Only what the chosen family reads is compared (B does not matter to DP-SSP): the shared settings,
        the privacy settings of a private family (with the privacy unit and its bounds M and G), and the
        family's options against those the preset gives it (:meth:`options_for`). An automatic C that became a
        public one (or back) is a change of "C".
        """
        family = config.family
        shared = ["method", "bin_size", "lags", "count_cap",
                  *(PRIVACY_FIELDS + UNIT_FIELDS if family.privacy.private else ())]
        changed = [SHARED_LABELS[n] for n in shared if getattr(config, n) != getattr(self.config, n)]
        given = self.options_for(family)
        changed += [OPTION_LABELS.get(s.name, s.label_text()) for s in family.settings
                    if getattr(config, s.name) != given.get(s.name)]
        return tuple(changed)


WORKS_METHOD = "ctls"  # measured better than DP-SSP at the preset's size (benchmarks/preset_choice.py)
# grid-free kernel error, median of 5 simulations × 3 noise draws, formal ε = 1, C chosen privately:
WORKS_MEASURED = MappingProxyType({"events": WORKS_EVENTS, "ctls": 0.135, "ctls_bin_size": 0.5, "ssp": 0.247,
                                   "ssp_bin_size": 0.25})
SMALL_MEASURED = MappingProxyType({"events": SMALL_EVENTS, "ctls": 0.744, "ssp": 0.698, "bin_size": 0.5})


def _works_config() -> FitConfig:
    """The ``works`` fit: the exact-time estimator (ctls) at w = Δ = 0.5, formal ε = 1 with a privately chosen C
    (the other families' B, r, G, K: :data:`WORKS_PUBLIC`)."""
    return FitConfig(method=WORKS_METHOD, bin_size=WORKS_BIN_SIZE,
                     lags=lags_from_support(WORKS_SUPPORT, WORKS_BIN_SIZE), count_cap=AUTO, epsilon=1.0,
                     dp_delta=1e-5, calibration="formal")


def _paper_figure(figure: str, title: str, summary: str, sigma2: float) -> Preset:
    """A kernel figure of the paper as :mod:`dphawkes_experiments.reproduce` runs it, at one σ² of the figure.

    The constraint the figure does not use is set the way the paper's other figures set it: B = 0.2
    (Figures 1–2) for DP-PGD, the truth's ``||ΔH||_*`` (the oracle of Figures 3–4) for DP-CG.
    """
    cfg = FIGURES[figure]
    scenario = get_scenario(cfg["scenario"])
    lags = lags_from_support(SUPPORT, KERNEL_BIN_SIZE)
    oracle_radius = constraint_scale(scenario.true_H(KERNEL_BIN_SIZE, lags), KERNEL_BIN_SIZE)[1]
    public = MappingProxyType({"bound": FIGURES["1"]["bound"], "radius": oracle_radius, "clip": 1.0,
                               "iters": cfg["iters"]})
    family = get_family(cfg["method"])
    config = FitConfig(method=family.name, bin_size=KERNEL_BIN_SIZE, lags=lags, sigma2=sigma2, calibration="paper",
                       **family.own_options(dict(public)))
    return Preset(figure_key(figure), title, summary, cfg["scenario"], cfg["n_events"], 1, SUPPORT, config, public)


def figure_key(figure: str) -> str:
    """Preset key of one of the paper's kernel figures (``"1"`` → ``"fig1"``)."""
    return f"fig{figure}"


@functools.cache
def presets() -> dict[str, Preset]:
    """Every preset by key, the default first."""
    works = Preset(
        DEFAULT_PRESET, "Privacy that works",
        f"{WORKS_EVENTS:,} simulated events of the paper's 2-d process, fitted on the exact event times with a "
        f"formal ε = 1 guarantee ({AUTO_CAP_SHARE:.0%} of it chooses the count cap C) — the formal estimator measured "
        f"best here (kernel error {WORKS_MEASURED['ctls']:.2f} against DP-SSP's best {WORKS_MEASURED['ssp']:.2f}): "
        "the private kernels lie close to the truth, far below the all-zero estimate's error.",
        "paper-2d", WORKS_EVENTS, 1, WORKS_SUPPORT, _works_config(), WORKS_PUBLIC)
    fig1 = _paper_figure(
        "1", "Paper, Figure 1 as published",
        f"The paper's Figure 1: {FIGURES['1']['n_events']:,} events of the 2-d process, Δ = {KERNEL_BIN_SIZE:g}, "
        f"DP-PGD with B = {FIGURES['1']['bound']:g}, K = {FIGURES['1']['iters']} and σ² = 0.01 given directly — "
        "its ε comes from the paper's calibration, which is not a formal guarantee.", sigma2=0.01)
    fig3 = _paper_figure(
        "3",
        "Paper, Figure 3 as published",
        f"The paper's Figure 3: {FIGURES['3']['n_events']:,} events of the 4-d process, Δ = {KERNEL_BIN_SIZE:g}, "
        f"DP-CG with K = {FIGURES['3']['iters']}, the oracle radius r (the nuclear norm of the true ΔH) "
        "and the 'excessive' σ² = 10 — again an ε from the paper's calibration, not a formal guarantee.",
        sigma2=10.0,
    )
    small = Preset(
        "small", "Small data: why DP needs data",
        f"The 'Privacy that works' fit on only {SMALL_EVENTS:,} events: the same formal ε = 1 guarantee now costs "
        "accuracy — the private error is more than twice what 50,000 events give and trails the non-private "
        f"fit's; DP-SSP does about as well here ({SMALL_MEASURED['ssp']:.2f} against {SMALL_MEASURED['ctls']:.2f}). "
        "'How much data does ε need?' shows the whole curve.",
        "paper-2d", SMALL_EVENTS, 1, WORKS_SUPPORT, _works_config(), WORKS_PUBLIC)
    return {p.key: p for p in (works, fig1, fig3, small)}


def get_preset(key: str) -> Preset:
    """The preset named ``key``; unknown keys give the default (a stale URL must still open)."""
    return presets().get(key, presets()[DEFAULT_PRESET])


def preset_for(params: Mapping, preferred: str | None = None) -> Preset | None:
    """The preset whose data ``params`` describe, ``preferred`` first; ``None`` for other data."""
    ordered = sorted(presets().values(), key=lambda p: p.key != preferred)
    return next((p for p in ordered if p.matches_data(params)), None)

