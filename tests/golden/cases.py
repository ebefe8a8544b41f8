"""The golden cases: named, seeded runs of the ``dphawkes`` CLI and snapshots of the app's pages.

Each case is a :class:`Case` whose ``run(tmp_dir)`` returns a JSON-able dict; ``record.py`` stores it as
``outputs/<name>.json`` and ``test_golden.py`` reruns it and compares. Cases speak only of argv lists (with
the placeholders below) and page names: where the code lives is ``harness.py``'s business.

Argv placeholders: ``{p2}`` / ``{p4}`` the repo's sample data (paper-2d, 1000 events; paper-4d, 4000
events), ``{seq}`` a 6-sequence file of paper-2d simulations, ``{sim}`` a fresh ``dphawkes simulate`` file
(paper-2d, 800 events, seed 5), ``{parts}`` a glob of 3 Parquet partitions of ``{p2}``, ``{tmp}`` the
case's temporary directory.

Every private fit passes ``--seed`` (a seeded fit is deterministic; an unseeded one draws OS entropy), and
the app's Estimate page gets a noise seed. The two unseeded releases (a metered release must be unseeded)
record only what does not depend on the noise: ``ledger_metered_replay_and_refusal`` masks the estimate and
records that the replay returns the same numbers; ``app_budget_metered_release`` snapshots only the Privacy
budget page (its ε accounting), not the Estimate page that made the release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import harness


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Path], dict]
    doc: str = ""


# ---- argv placeholders -----------------------------------------------------------------------------------

def _parts(tmp: Path) -> str:
    """The 2-d sample split by time into 3 Parquet partitions; returns the quoted-glob pattern."""
    folder = tmp / "parts"
    if not folder.exists():
        folder.mkdir()
        frame = pd.read_csv(harness.sample_data("paper-2d_1000events_seed1.csv"))
        for i, chunk in enumerate((frame.iloc[:300], frame.iloc[300:650], frame.iloc[650:])):
            chunk.to_parquet(folder / f"part-{i}.parquet", index=False)
    return str(folder / "*.parquet")


PLACEHOLDERS = {
    "{p2}": lambda tmp: harness.sample_data("paper-2d_1000events_seed1.csv"),
    "{p4}": lambda tmp: harness.sample_data("paper-4d_4000events_seed1.csv"),
    "{seq}": lambda tmp: harness.sequence_csv(tmp, "paper-2d", sequences=6, events=150, seed=10),
    "{sim}": lambda tmp: harness.simulate_csv(tmp, "paper-2d", events=800, seed=5),
    "{parts}": _parts,
    "{tmp}": lambda tmp: str(tmp),
}


def resolve(argv: str, tmp: Path) -> list[str]:
    """Split ``argv`` on whitespace and replace the placeholders (a token may contain one)."""
    tokens = []
    for token in argv.split():
        for name, make in PLACEHOLDERS.items():
            if name in token:
                token = token.replace(name, make(tmp))
        tokens.append(token)
    return tokens


def cli(name: str, argv: str, doc: str = "") -> Case:
    """A case of one ``dphawkes`` invocation."""
    return Case(name, lambda tmp: harness.run_cli(resolve(argv, tmp), tmp), doc)


def cli_steps(name: str, *argvs: str, doc: str = "") -> Case:
    """A case of several invocations in one temporary directory (a ledger file shared between them)."""
    def run(tmp):
        return {f"step{i}": harness.run_cli(resolve(argv, tmp), tmp) for i, argv in enumerate(argvs)}
    return Case(name, run, doc)


def app(name: str, page: str, *actions, doc: str = "", **query) -> Case:
    """A case of one app page under AppTest (after ``actions``: see :func:`harness.app_snapshot`)."""
    return Case(name, lambda tmp: harness.app_snapshot(page, tmp, actions=actions, query=query or None), doc)


# ---- the unseeded ledger release -------------------------------------------------------------------------

FRESH_NOISE = ("kernels", "kernel_functions", "baseline", "loss_history")
FRESH_NOISE_INFO = ("baseline_floor",)  # the solver's numbers read from the noisy release (its baseline floor)


def _ledger_metered(tmp: Path) -> dict:
    """A formal (unseeded, hence metered) DP-SSP fit through a ledger with budget ε = 1.2, its replay, a
    second release that the budget refuses (exit 2), and ``ledger show``. The first fit's noise is fresh: its
    estimate is masked, and the replay must return exactly the same estimate."""
    fit = ("fit {p2} --bin-size 0.5 --support 4 --method ssp --epsilon 1 --calibration formal --count-cap 5 "
           "--end-time 1500 --dimensions 2 --ledger {tmp}/ledger.json")  # a declared domain: formal, so metered
    first = harness.run_cli(resolve(fit + " --budget 1.2", tmp), tmp)
    replay = harness.run_cli(resolve(fit, tmp), tmp)
    refused = harness.run_cli(resolve(fit.replace("--epsilon 1", "--epsilon 0.9"), tmp), tmp)
    shown = harness.run_cli(resolve("ledger show {tmp}/ledger.json", tmp), tmp)
    same = all(first["output"][k] == replay["output"][k] for k in FRESH_NOISE) and all(
        first["output"]["solver_info"][k] == replay["output"]["solver_info"][k] for k in FRESH_NOISE_INFO)
    for step in (first, replay):
        for k in FRESH_NOISE:
            step["output"][k] = "<fresh noise>"
        for k in FRESH_NOISE_INFO:
            step["output"]["solver_info"][k] = "<fresh noise>"
    for data_set in shown["output"]["data_sets"]:
        for entry in data_set["entries"]:
            entry.pop("request")  # a hash of the settings: stable, but recorded in the fits' outputs anyway
    return {"first": first, "replay": replay, "replay_same_estimate": same, "refused": refused, "show": shown}


# ---- the cases -------------------------------------------------------------------------------------------

P2 = "fit {p2} --bin-size 0.5 --support 4"
P2F = P2 + " --end-time 1500 --calibration formal"
P4 = "fit {p4} --bin-size 0.5 --support 2"
SEQ = "fit {seq} --bin-size 0.5 --lags 4 --end-time 600 --method ssp --epsilon 1 --calibration formal --count-cap 3"
SWEEP = "sweep --scenario paper-2d --events 400 --workers 1 --support 3"
AUDIT = "audit --scenario paper-2d --events 400 --bin-size 0.5 --support 3 --trials 200 --seed 7"

CASES: list[Case] = [
    # -- fit: the paper's methods and calibrations
    cli("fit_cls_2d", P2 + " --method cls --scenario paper-2d"),
    cli("fit_cls_2d_lags", "fit {p2} --bin-size 0.25 --lags 10 --method cls --scenario paper-2d"),
    cli("fit_pgd_sigma2", P2 + " --method pgd --bound 0.6 --iters 200 --sigma2 0.01 --seed 1 --scenario paper-2d"),
    cli("fit_pgd_paper_eps", P2 + " --method pgd --bound 0.6 --iters 200 --epsilon 1 --seed 2 --scenario paper-2d"),
    cli("fit_pgd_tight_paper", P2 + " --method pgd --bound 0.6 --iters 200 --epsilon 2 --calibration tight-paper "
                                    "--seed 3 --scenario paper-2d"),
    cli("fit_pgd_formal", P2F + " --method pgd --bound 0.6 --iters 200 --epsilon 1 --count-cap 3 --seed 4 "
                                "--scenario paper-2d"),
    cli("fit_pgd_constant_step", P2 + " --method pgd --bound 0.6 --iters 100 --sigma2 0.001 --step constant "
                                      "--step-size 0.05 --seed 5"),
    cli("fit_cg_paper", P2 + " --method cg --radius 0.5 --iters 50 --epsilon 1 --seed 6 --scenario paper-2d"),
    cli("fit_cg_formal_classic", P2F + " --method cg --radius 0.5 --iters 50 --epsilon 1 --count-cap 3 "
                                       "--fw-step classic --seed 7 --scenario paper-2d"),
    cli("fit_pgd_clip_formal", P2F + " --method pgd-clip --clip 1 --bound 0.6 --iters 100 --epsilon 1 --seed 8 "
                                     "--scenario paper-2d"),
    # -- fit: DP-SSP and its options
    cli("fit_ssp_lagged", P2F + " --method ssp --epsilon 1 --count-cap 5 --seed 9 --scenario paper-2d"),
    cli("fit_ssp_full_release", P2F + " --method ssp --epsilon 1 --count-cap 5 --ssp-release full --seed 9 "
                                      "--scenario paper-2d"),
    cli("fit_ssp_ridge_psd", P2F + " --method ssp --epsilon 1 --count-cap 5 --ridge 0.5 --stabiliser psd "
                                   "--seed 10 --scenario paper-2d"),
    cli("fit_ssp_negative_unsmoothed", P2F + " --method ssp --epsilon 1 --count-cap 5 --ssp-allow-negative "
                                             "--ssp-smoothing 0 --seed 11 --scenario paper-2d"),
    cli("fit_ssp_smoothing3_sigma2", P2F + " --method ssp --sigma2 0.001 --count-cap 4 --ssp-smoothing 3 "
                                           "--seed 12"),
    cli("fit_ssp_count_cap_auto", P2F + " --method ssp --epsilon 1 --count-cap auto --seed 13 --scenario paper-2d"),
    cli("fit_ssp_count_cap_auto_share", P2F + " --method ssp --epsilon 2 --count-cap auto --count-cap-share 0.2 "
                                              "--seed 14"),
    # -- fit: lag averaging, windows and units, other inputs
    cli("fit_cls_average_width", "fit {p2} --bin-size 0.25 --support 4 --method cls --average-width 1 "
                                 "--scenario paper-2d"),
    cli("fit_ssp_average_width", P2F + " --method ssp --epsilon 1 --count-cap 5 --average-width 1 --seed 15 "
                                       "--scenario paper-2d"),
    cli("fit_cls_window_time_unit", "fit {p2} --bin-size 0.1 --support 0.5 --time-unit min --start-time 60 "
                                    "--end-time 1440 --method cls"),
    cli("fit_cls_4d", P4 + " --method cls --scenario paper-4d"),
    cli("fit_ssp_4d_formal", P4 + " --end-time 276 --calibration formal --method ssp --epsilon 1 --count-cap 4 "
                                  "--seed 16 --scenario paper-4d"),
    cli("fit_cg_4d", P4 + " --method cg --radius 1 --iters 30 --sigma2 0.01 --seed 17 --scenario paper-4d"),
    cli("fit_pgd_simulated", "fit {sim} --bin-size 0.5 --support 4 --method pgd --bound 0.6 --iters 100 "
                             "--sigma2 0.1 --seed 18 --scenario paper-2d"),
    cli("fit_partitioned_ssp_auto", "fit {parts} --bin-size 0.5 --support 4 --end-time 1500 --calibration formal "
                                    "--method ssp --epsilon 1 --count-cap auto --seed 19"),
    cli("simulate_4d_horizon", "simulate --scenario paper-4d --horizon 100 --seed 3"),
    # -- fit: the sequence unit
    cli("fit_seq_max_events", SEQ + " --privacy-unit sequence --max-events 40 --seed 20"),
    cli("fit_seq_clip_g", SEQ + " --privacy-unit sequence --sequence-clip 5 --seed 21"),
    cli("fit_seq_clip_auto", SEQ + " --privacy-unit sequence --sequence-clip auto --max-events 40 --seed 22"),
    cli("fit_seq_full_release", SEQ + " --privacy-unit sequence --max-events 40 --ssp-release full --seed 23"),
    cli("fit_seq_event_unit", SEQ + " --seed 24"),
    # -- fit: ledger and refusals
    cli_steps("ledger_seeded_fit_and_replay",
              P2F + " --method ssp --epsilon 1 --count-cap 5 --seed 25 --dimensions 2 --ledger {tmp}/ledger.json "
                    "--budget 3",
              P2F + " --method ssp --epsilon 1 --count-cap 5 --seed 25 --dimensions 2 --ledger {tmp}/ledger.json",
              "ledger show {tmp}/ledger.json"),
    Case("ledger_metered_replay_and_refusal", _ledger_metered, _ledger_metered.__doc__),
    cli("fit_error_formal_without_window", P2 + " --method ssp --epsilon 1 --calibration formal --count-cap 5"),
    # -- the command line's options (flags and choices named by --help)
    cli_steps("cli_help", "--help", "simulate --help", "fit --help", "sweep --help", "audit --help",
              "ledger show --help"),
    # -- sweep
    cli("sweep_pgd_sigma2", SWEEP + " --bin-size 0.5 1 --sigma2 0 0.1 --method pgd --bound 0.6 --iters 50 --runs 2"),
    cli("sweep_formal_epsilon", SWEEP + " --bin-size 0.5 --epsilon 1 4 --method cls ssp pgd-clip --calibration formal "
                                        "--count-cap 4 --clip 1 --bound 0.6 --iters 30 --runs 2 --seed 3"),
    cli("sweep_cg_default_radius", SWEEP + " --bin-size 0.5 --sigma2 0.01 --method cg --iters 30 --runs 1 --seed 5"),
    cli("sweep_data_prediction", "sweep --data {p2} --bin-size 0.5 --support 3 --sigma2 0 0.01 --method pgd "
                                 "--bound 0.6 --iters 50 --runs 2 --workers 1"),
    # -- audit
    cli("audit_pgd_formal", AUDIT + " --method pgd --iters 10 --epsilon 1 --count-cap 5"),
    cli("audit_ssp_broken", AUDIT + " --method ssp --epsilon 1 --count-cap 5 --broken"),
    cli("audit_cg_paper", AUDIT + " --method cg --iters 10 --epsilon 2 --calibration paper"),
    cli("audit_pgd_worst_case", "audit --scenario paper-2d --bin-size 1 --support 3 --method pgd --iters 1 "
                                "--bound 0.001 --epsilon 4 --count-cap 3 --worst-case --trials 200 --seed 1"),
    # -- the app, every page in its default state (the Estimate page with a noise seed)
    app("app_home", "home"),
    app("app_data", "data"),
    app("app_estimate_seeded", "estimate", ("number_input", "seed", 0), ("toggle", "cmp_on", True),
        doc="the default preset with noise seed 0 (the default draws fresh noise), the comparison turned on"),
    app("app_privacy_utility", "privacy_utility"),
    app("app_reproduce", "reproduce"),
    app("app_audit", "audit"),
    app("app_budget", "budget"),
    # -- the app, after a few clicks (small, seeded settings)
    app("app_data_simulate", "data", ("number_input", "sim_events", 600), ("number_input", "sim_seed", 4),
        ("button", "sim_go")),
    app("app_estimate_pgd_seeded", "estimate", ("selectbox", "method", "DP-PGD"), ("number_input", "K", 50),
        ("number_input", "seed", 3), ("toggle", "cmp_on", True)),
    app("app_privacy_utility_run", "privacy_utility", ("number_input", "pu_events", 300),
        ("number_input", "pu_runs", 1), ("text_input", "pu_levels_epsilon", "1"), ("number_input", "pu_iters", 20),
        ("button", "pu_run")),
    app("app_budget_metered_release", "home", ("switch_page", "budget"), ("toggle", "meter_data", True),
        ("switch_page", "estimate"), ("switch_page", "budget"),
        doc="the default data marked private, the Estimate page's default (unseeded, formal) fit metered, and the "
            "budget page's account of it: the numbers of the ledger do not depend on the noise"),
    app("app_audit_run", "audit", ("number_input", "au_dt", 2.0), ("number_input", "au_K", 5),
        ("number_input", "au_trials", 100), ("button", "au_run")),
]

BY_NAME = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"
