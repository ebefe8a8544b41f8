"""``dphawkes audit``: an empirical lower bound on ε for a private method on a simulated scenario."""

from __future__ import annotations

import dataclasses
import sys

from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.estimators import FAMILIES, FitConfig, get_family
from dphawkes_core.evaluation.metrics import constraint_scale
from dphawkes_core.privacy.calibration import CALIBRATIONS
from dphawkes_core.privacy.report import formal_status
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import set_blas_threads

from .inputs import UsageError, cap_or_auto, open_unit_fraction, positive_float, positive_int, write_json


def add_audit_parser(sub) -> None:
    """``dphawkes audit``: empirical lower bound on ε for a mechanism on a simulated scenario."""
    aud = sub.add_parser("audit", help="empirically audit a private method's ε claim on a simulated scenario")
    aud.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    aud.add_argument("--events", type=positive_int, default=1000, help="events to simulate (default 1000)")
    aud.add_argument("--data-seed", type=int, default=1, help="simulation seed (default 1)")
    aud.add_argument("--bin-size", type=positive_float, required=True, help="bin size Δ")
    aud.add_argument("--support", type=positive_float,
                     help="kernel support s (p = ⌈s/Δ⌉); needed unless --worst-case (there: the family's "
                          "worst-case p, else 3)")
    aud.add_argument("--method", choices=[name for name, f in FAMILIES.items() if f.privacy.private], default="pgd")
    aud.add_argument("--bound", type=positive_float, help="B (pgd, pgd-clip; default ||H_true||_F)")
    aud.add_argument("--radius", type=positive_float, help="r (cg; default ||ΔH_true||_*)")
    aud.add_argument("--clip", type=positive_float, help="G (pgd-clip; default 1)")
    aud.add_argument("--iters", type=positive_int, help="K (default 100)")
    aud.add_argument("--epsilon", type=positive_float, default=1.0, help="claimed ε (default 1)")
    aud.add_argument("--dp-delta", type=positive_float, default=1e-5, help="δ (default 1e-5)")
    aud.add_argument("--calibration", choices=CALIBRATIONS, default="formal")
    aud.add_argument("--count-cap", type=cap_or_auto,
                     help="public cap C (default: the data's largest bin count), or 'auto' (ssp): audit the "
                          "whole mechanism that chooses C privately")
    aud.add_argument("--trials", type=positive_int, default=2000, help="runs per data set (default 2000)")
    aud.add_argument("--confidence", type=open_unit_fraction,
                     help="confidence (default 0.95; 0.999 with --worst-case, where a correct mechanism sits at "
                          "its bound and is refuted with probability up to (1 − confidence)/2)")
    aud.add_argument("--broken", action="store_true", help="divide the noise std by --broken-factor (a bug to catch)")
    aud.add_argument("--broken-factor", type=positive_float, default=1e6, help="(default 1e6)")
    aud.add_argument("--seed", type=int, default=0, help="audit seed (neighbour search and noise seeds)")
    aud.add_argument("--json", default="-", help="output JSON file (default: stdout)")
    aud.add_argument("--worst-case", action="store_true",
                     help="audit the worst-case pair built from the public bounds (counts at C) instead of the "
                          "data, with the family's worst-case public settings (K, B/r/G, step, p) unless given")
    aud.add_argument("--worst-case-dim", type=positive_int, metavar="D",
                     help="d of the worst-case pair (default: the family's worst case, else the data's d)")
    aud.set_defaults(func=cmd_audit)


def _audit_settings(args, family, scenario) -> tuple[int, dict, list]:
    """The audited lags p, the family's options and which of them came from the family's worst case: with
    ``--worst-case`` the public settings under which the family's bound shows (one release, tiny constraint),
    else the options given over the oracle's B and r from the scenario's true kernels."""
    from dphawkes_experiments.audit_events import worst_case_lags

    given = family.own_options({name: getattr(args, name) for name in ("iters", "clip", "bound", "radius")})
    if args.worst_case:
        lags = lags_from_support(args.support, args.bin_size) if args.support is not None else worst_case_lags(family)
        worst = family.audit_hints.worst_case_options
        from_family = sorted(set(worst) - set(given)) + (["lags"] if args.support is None else [])
        return lags, {**worst, **given}, from_family
    lags = lags_from_support(args.support, args.bin_size)
    oracle_bound, oracle_radius = constraint_scale(scenario.true_H(args.bin_size, lags), args.bin_size)
    return lags, family.own_options({"iters": 100, "clip": 1.0, "bound": oracle_bound, "radius": oracle_radius,
                                     **given}), []


def _say_worst_case(args, family, result, cap: int, lags: int, options: dict, from_family: list) -> None:
    """One line on stderr describing the worst-case pair the audit used."""
    info = result.extra
    settings = ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                         for name, value in sorted({**options, "lags": lags}.items()))
    if family.fits_event_times:  # the family's adversarial events, not counts at C
        print(f"worst-case events: the family's adversarial pair for d = {info['worst_case_dim']}, B = {lags}, "
              f"C = {cap}, w = {args.bin_size:g} ({info['worst_case_events']} events in D', one more than in D; "
              f"the release moves by {info['worst_case_reached']:.3f} of the claimed sensitivity); {family.label} "
              f"with {settings} ({', '.join(from_family) or 'none'} from the audit's worst case; options given "
              "override them)", file=sys.stderr)
    else:
        print(f"worst-case pair: every count at C = {cap} in {info['worst_case_dim']} dimension(s) × "
              f"{info['worst_case_bins']} bins, one event fewer in D; {family.label} with {settings} "
              f"({', '.join(from_family) or 'none'} from the family's worst case; options given override them)"
              + ("; releases observed at the family's worst-case state U, not from U = 0"
                 if info.get("released_at_state") is not None else ""), file=sys.stderr)


def cmd_audit(args) -> int:
    """Simulate the scenario, audit the method's ε claim on it and write the audit's JSON."""
    from dphawkes_core.data.simulate import simulate
    from dphawkes_experiments.audit import AuditConfig, default_count_cap, run_audit

    family = get_family(args.method)
    if args.support is None and not args.worst_case:
        raise UsageError("--support is needed (p = ⌈s/Δ⌉) unless --worst-case")
    if args.worst_case_dim is not None and not args.worst_case:
        raise UsageError("--worst-case-dim sets the worst-case pair: add --worst-case")
    scenario = get_scenario(args.scenario)
    events = simulate(scenario, n_events=args.events, seed=args.data_seed)
    cap = args.count_cap if args.count_cap is not None else default_count_cap(events, args.bin_size)
    lags, options, from_family = _audit_settings(args, family, scenario)
    config = FitConfig(
        method=args.method, bin_size=args.bin_size, lags=lags, epsilon=args.epsilon, dp_delta=args.dp_delta,
        calibration=args.calibration, count_cap=cap, **options,
    )
    confidence = args.confidence if args.confidence is not None else (0.999 if args.worst_case else 0.95)
    audit = AuditConfig(config, trials=args.trials, confidence=confidence,
                        broken_factor=args.broken_factor if args.broken else None, seed=args.seed,
                        neighbours="worst-case" if args.worst_case else "natural", worst_case_dim=args.worst_case_dim)
    set_blas_threads()
    result = run_audit(events, audit, progress=lambda done, total: print(
        f"\r{done}/{total} trials", end="", file=sys.stderr, flush=True))
    print(file=sys.stderr)
    if args.worst_case:
        _say_worst_case(args, family, result, cap, lags, options, from_family)
    print(result.verdict(), file=sys.stderr)
    payload = result.to_dict()
    payload.update(scenario=args.scenario, events=events.n_events, data_seed=args.data_seed,
                   bin_size=args.bin_size, lags=lags, **dataclasses.asdict(config.options),
                   count_cap_default=args.count_cap is None,
                   noise="seeded: an experiment, not a private release")
    if args.worst_case:
        payload.update(worst_case_settings_from_family=from_family)
    # whether the audited settings, run with fresh noise, would be a formal release (C from the data is not)
    payload.update(formal_status(config.calibration, seed=None, window_stated=events.window_stated,
                                 data_derived=("C",) if args.count_cap is None else ()).to_dict())
    write_json(payload, args.json)
    return 0
