"""``dphawkes fit``: one fit of an event file or a partitioned store, optionally released through a ledger."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.estimators import FAMILIES, FitConfig, FitResult, fit, fit_stats, get_family, method_names
from dphawkes_core.privacy.calibration import CALIBRATIONS
from dphawkes_core.privacy.count_cap import AUTO_CAP_SHARE
from dphawkes_core.privacy.formal_words import would_be_sentence
from dphawkes_core.privacy.report import FormalStatus
from dphawkes_core.privacy.sequence import PRIVACY_UNITS
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import set_blas_threads

from .inputs import (
    UsageError,
    add_family_options,
    add_window_options,
    cap_or_auto,
    clip_or_auto,
    given_options,
    load_events_file,
    nonnegative_float,
    open_unit_fraction,
    positive_float,
    positive_int,
    width_or_auto,
    write_json,
)
from .ledger import add_ledger_options, ledger_fit, ledger_plan, record_look
from .score import add_heldout, add_holdout_options, holdout_split, wants_holdout
from .stores import is_partitioned, partition_window, window_number
from .time_scale import (
    AUTO,
    AUTO_SCALE_SHARE,
    DECAY_MULTIPLES,
    DECAYS_AUTO_HELP,
    auto_choices,
    auto_time_scale,
    chosen_config,
)

if TYPE_CHECKING:  # the CSV loader (pandas), export and simulation load where a command uses them,
    from dphawkes_core.data.io import Events  # so that `dphawkes fit --help` starts fast (benchmarks/bench_startup.py)


def add_fit_parser(sub, families=None, **parser_options) -> None:
    """``dphawkes fit EVENTS``: the data, the method and its settings, privacy, and the outputs; the options of every
    registered family, or of ``families`` (:func:`add_narrow_parser`)."""
    families = list(FAMILIES.values()) if families is None else list(families)
    fitp = sub.add_parser("fit", help="fit a Hawkes model to an event CSV", **parser_options)
    fitp.add_argument("events_csv", help="CSV or .parquet with columns time,dimension[,sequence][,start,end]; "
                                         "or a directory or quoted glob of Parquet partitions ('events/*.parquet')")
    fitp.add_argument("--dask", metavar="ADDRESS",
                      help="compute the statistics of the partitions on Dask: 'local' or tcp://HOST:PORT")
    fitp.add_argument("--bin-size", type=width_or_auto, required=True,
                      help="bin size Δ, or 'auto': Δ and s from the count of events (a formal fit: a noisy count "
                           "bought with --time-scale-share of ε inside the --ledger release)")
    fitp.add_argument("--time-scale-share", type=open_unit_fraction, default=AUTO_SCALE_SHARE,
                      help=f"share of ε spent by --bin-size auto and --decays auto together: one noisy count serves "
                           f"both (default {AUTO_SCALE_SHARE:g})")
    lag = fitp.add_mutually_exclusive_group()
    lag.add_argument("--support", type=positive_float, help="kernel support s (p = ⌈s/Δ⌉)")
    lag.add_argument("--lags", type=positive_int, help="number of lags p")
    fitp.add_argument("--method", choices=method_names(), default="cls",
                      help="; ".join(f"{f.name}: {f.summary}" for f in families))
    privacy = fitp.add_mutually_exclusive_group()
    privacy.add_argument("--epsilon", type=positive_float, help="target ε (noise calibrated to it)")
    privacy.add_argument("--sigma2", type=nonnegative_float, help="noise variance σ² (ε is reported)")
    fitp.add_argument("--dp-delta", type=positive_float, default=1e-5, help="δ (default 1e-5)")
    fitp.add_argument("--calibration", choices=CALIBRATIONS,
                      help="paper: data-dependent, NOT formal; formal: needs --count-cap; tight-paper (default: "
                           "paper, formal for a method that has only the formal one)")
    fitp.add_argument("--count-cap", type=cap_or_auto,
                      help="public cap C on each bin count (clips the data), or 'auto' (ssp with --epsilon): "
                           "spend --count-cap-share of ε on a private choice of C")
    fitp.add_argument("--count-cap-share", type=open_unit_fraction, default=AUTO_CAP_SHARE,
                      help=f"share of ε spent by --count-cap auto (default {AUTO_CAP_SHARE:g})")
    add_window_options(fitp)
    fitp.add_argument("--scenario", choices=sorted(SCENARIOS), help="compare with this scenario's true kernels")
    fitp.add_argument("--seed", type=int,
                      help="noise seed: reproducible noise, NOT a private release (default: OS entropy)")
    fitp.add_argument("--json", default="-", help="output JSON file (default: stdout)")
    fitp.add_argument("--average-width", type=positive_float, metavar="W",
                      help="also export the kernels averaged over lags into bins of width W (a multiple of Δ; "
                           "post-processing, no privacy cost): fit at a fine Δ, average to W (docs/accuracy.md)")
    add_holdout_options(fitp)
    add_family_options(fitp, families, auto={"decays": DECAYS_AUTO_HELP})
    _add_unit_options(fitp, families)
    add_ledger_options(fitp)
    fitp.set_defaults(func=cmd_fit, option_families=tuple(f.name for f in families))


def add_narrow_parser(sub, argv: list[str]) -> bool:
    """``fit`` with the options of one family only, the method ``argv`` names (``--method``; the default ``cls``
    when it names none), so that a fit imports that family's module and not every other one (``docs/load.md``).
    No abbreviations: a line this parser cannot read exactly as it is goes to the full parser
    (:func:`~dphawkes_cli.main.parse_arguments`). False when ``argv`` names no registered method."""
    method = _named_method(argv)
    if method not in method_names():
        return False
    add_fit_parser(sub, [get_family(method)], allow_abbrev=False)
    return True


def _named_method(argv: list[str]) -> str | None:
    """The value of the last ``--method`` of ``argv`` (as argparse keeps the last), ``cls`` (its default) when
    there is none; None when the line ends at ``--method``."""
    method = "cls"
    for i, word in enumerate(argv):
        if word == "--method":
            method = argv[i + 1] if i + 1 < len(argv) else None
        elif word.startswith("--method="):
            method = word.partition("=")[2]
    return method


def _add_unit_options(fitp, families) -> None:
    """The privacy unit and its public bounds."""
    fitp.add_argument(
        "--privacy-unit",
        choices=PRIVACY_UNITS,
        default="event",
        help="what the guarantee protects: event (one event, the paper's unit) or sequence (one "
        "whole sequence = one person, replaced; "
        + ", ".join(f.name for f in families if f.privacy.private and "sequence" in f.privacy.units)
        + ", with --sequence-clip and/or --max-events)",
    )
    fitp.add_argument("--sequence-clip", type=clip_or_auto,
                      help="public G for --privacy-unit sequence: each sequence's statistics scaled to norm <= G "
                           "(default: the G that --max-events guarantees never clips), or 'auto': spend 5%% of "
                           "ε on a private choice of G below that one")
    fitp.add_argument("--max-events", type=positive_int,
                      help="public M, enforced: each sequence keeps its first M events (by time). Sequence unit: "
                           "it bounds G. Event unit: the release's ε is then per capped event, charged as 2 per raw "
                           "event and 2M per sequence, so the sequence-level budget stays open (docs/privacy.md)")


def result_payload(result: FitResult, config: FitConfig, data_info: dict, names, truth=None, status=None) -> dict:
    """The app's export payload (:func:`~dphawkes_core.release.export.fit_payload`) with the headline numbers
    also at the top level for scripts: data diagnostics, error metrics and the privacy report."""
    from dphawkes_core.release.export import fit_payload

    payload = fit_payload(result, config, data_info, names, truth=truth, status=status)
    payload.update(bin_size=result.bin_size, lags=result.lags, dim=result.dim, **data_info)
    payload.update(payload.get("metrics", {}))
    if result.privacy is not None:
        payload.update(payload["privacy"])
        payload.update(count_cap=data_info.get("count_cap", config.count_cap),  # the C used (auto: chosen privately)
                       **dataclasses.asdict(config.options))  # the options the method read
    return payload


def fit_config(args) -> FitConfig:
    if args.bin_size == AUTO:  # Δ and p are chosen later (time_scale.py): a placeholder until then
        return fit_config(argparse.Namespace(**{**vars(args), "bin_size": 1.0, "lags": 1}))
    if getattr(args, "decays", None) == AUTO:  # the decays likewise: their public multiples until then
        return fit_config(argparse.Namespace(**{**vars(args), "decays": DECAY_MULTIPLES}))
    if args.lags is None and args.support is None:
        raise UsageError("one of the arguments --support --lags is required")
    lags = args.lags if args.lags is not None else lags_from_support(args.support, args.bin_size)
    family = get_family(args.method)
    if family.privacy.private and args.epsilon is None and args.sigma2 is None:
        raise UsageError(f"method {args.method} needs --epsilon (with --dp-delta) or --sigma2 (0: no noise)")
    calibration = args.calibration or ("formal" if family.formal_only else "paper")
    return FitConfig(
        method=args.method, bin_size=args.bin_size, lags=lags, epsilon=args.epsilon, dp_delta=args.dp_delta,
        sigma2=args.sigma2, calibration=calibration, count_cap=args.count_cap, seed=args.seed,
        count_cap_share=args.count_cap_share, privacy_unit=args.privacy_unit, sequence_clip=args.sequence_clip,
        max_events=args.max_events, **given_options(args, [get_family(name) for name in args.option_families]),
    )


def _claims_formal(config: FitConfig) -> bool:
    """The fit adds noise under the formal calibration (σ² = 0 adds none: the exact non-private fit, no claim)."""
    return config.family.privacy.private and config.calibration == "formal" and config.sigma2 != 0


def _check_window(config: FitConfig, events: Events) -> None:
    """A formal fit needs a public observation window: without one (``--end-time``, and ``--start-time``
    for datetimes) exit 2 and say why."""
    if _claims_formal(config) and not events.window_stated:
        raise UsageError("the formal calibration needs a declared observation window: pass --end-time (and "
                         "--start-time for dates) or a key file (--sequences KEYFILE with sequence,start,end "
                         "columns); start/end columns of the data and the data themselves never declare it")


def _check_declared(config: FitConfig, args, public_info: dict) -> None:
    """A formal fit asked through a ledger (``--ledger`` or ``--budget``) on an undeclared domain is refused before
    anything is drawn, in one line naming what to declare: it would otherwise run and be recorded "not metered"."""
    if not (_claims_formal(config) and (args.ledger or args.budget is not None)):
        return
    missing = [what for what, key in (("the dimensions (--dimensions N|NAMES, or a labels.csv beside the data)",
                                       "dimensions_declared"),
                                      ("the sequences (--sequences N|KEYFILE)", "sequences_declared"))
               if not public_info.get(key, False)]
    if missing:
        raise UsageError(f"a formal release through --ledger needs a declared domain: declare {' and '.join(missing)}"
                         "; nothing was drawn")


def cmd_fit(args) -> int:
    config = fit_config(args)
    if args.average_width is not None and args.bin_size != AUTO:  # a bad width fails before the fit, not after
        from dphawkes_core.evaluation.lag_average import block_for_width

        block_for_width(args.average_width, config.bin_size, config.lags)
    if args.budget is not None and not args.ledger:
        raise UsageError("--budget sets the total ε of a ledger: give --ledger PATH too")
    if args.plan and not args.ledger:
        raise UsageError("--plan previews a release through a ledger: give --ledger PATH (nothing is drawn or "
                         "recorded)")
    if args.dask or is_partitioned(args.events_csv):
        if auto_choices(args):
            raise UsageError("--bin-size auto and --decays auto read the events in this process: not for a "
                             "partitioned fit")
        return _cmd_fit_partitioned(args, config)
    events = load_events_file(args.events_csv, end_time=args.end_time, start_time=args.start_time,
                              time_unit=args.time_unit, dimensions=args.dimensions, sequences=args.sequences)
    split = holdout_split(args, events) if wants_holdout(args) else None
    if split is not None:  # fit on the training part; the test part is scored below
        events = split.train
    _check_window(config, events)
    from dphawkes_core.statistics.info import domain_info

    public_info = {"window_stated": events.window_stated, **domain_info(events)}
    _check_declared(config, args, public_info)
    set_blas_threads()  # one BLAS thread: see dphawkes_core/threads.py
    scale_share, choices = None, auto_choices(args)
    if choices:
        config, scale_share = auto_time_scale(args, config, events, _claims_formal(config), choices)
    if args.ledger:
        from dphawkes_core.data.row_key import data_fingerprint
        from dphawkes_core.release.session import PrivacySession

        def session(book, key):
            return PrivacySession.for_events(events, book, key.fingerprint, key.unit)

        if args.plan:
            return ledger_plan(args, data_fingerprint(events), config, session, scale_share, choices)
        result, info, ledger, status = ledger_fit(args, data_fingerprint(events), config, session, scale_share,
                                                  choices)
        if scale_share is not None:
            config = chosen_config(config, ledger["time_scale"])
    else:
        (result, info), ledger, status = fit(events, config), None, None
    payload = result_payload(result, config, info, events.names, _scenario_truth(args, events.dim, config), status)
    _add_lag_average(payload, result, args)
    add_heldout(payload, result, split, args)
    if split is not None:  # the score read the test events: later releases on these rows name it
        record_look(args, events, "dphawkes fit --holdout-start/--train-fraction (a held-out score on the test part)")
    if ledger is not None:
        payload["ledger"] = ledger
    print(f"read: {events.describe()}", file=sys.stderr)
    for warning in events.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if chosen := result.info.get("chosen_in_release"):  # a choice the family made inside the release
        print(f"note: {chosen}", file=sys.stderr)
    if gram_note := result.info.get("gram_note"):  # a derived Gram on windows too short for it
        print(f"note: {gram_note}", file=sys.stderr)
    if config.seed is not None and config.family.privacy.private:
        print("warning: --seed makes the noise reproducible: not a private release (formal_guarantee false)",
              file=sys.stderr)
    if config.family.privacy.private and not args.ledger:
        status = FormalStatus(payload["formal_guarantee"], tuple(payload["formal_reasons"]))
        print(f"note: no --ledger: {would_be_sentence(status, 'cli')}. formal_settings "
              f"{str(payload['formal_settings']).lower()}", file=sys.stderr)
    write_json(payload, args.json)
    return 0


def _scenario_truth(args, dim: int, config: FitConfig):
    """``H`` of ``--scenario`` on the fit's lag grid (for the error metrics), or None without one."""
    if not args.scenario:
        return None
    scenario = get_scenario(args.scenario)
    if scenario.dim != dim:
        raise UsageError(f"scenario {args.scenario} has {scenario.dim} dimensions, the data {dim}")
    return scenario.true_H(config.bin_size, config.lags)


def _cmd_fit_partitioned(args, config: FitConfig) -> int:
    """``fit 'events/*.parquet' [--dask local|tcp://HOST:PORT]``: statistics per partition, reduced, then fitted
    (:mod:`dphawkes_core.statistics.partitioned`); on a Dask cluster with ``--dask``, else in this process."""
    import contextlib

    from dphawkes_core.data.row_key import partitioned_rows_key
    from dphawkes_core.estimators import prepare_partitioned
    from dphawkes_core.statistics.partitioned import partition_paths, partitioned_fingerprint
    from dphawkes_experiments.sweep import dask_executor

    if args.time_unit or config.privacy_unit != "event":
        raise UsageError("--time-unit and --privacy-unit sequence are not available for a partitioned fit")
    if wants_holdout(args):
        raise UsageError("a held-out score reads the events in this process: not for a partitioned fit")
    start, end = (None if v is None else window_number(v) for v in (args.start_time, args.end_time))
    if _claims_formal(config) and end is None:
        raise UsageError("the formal calibration needs a public observation window: pass --end-time "
                         "(otherwise the window is read from the data)")
    paths = partition_paths(args.events_csv)
    set_blas_threads()  # one BLAS thread: see dphawkes_core/threads.py
    ledger = status = None
    with dask_executor(args.dask) if args.dask else contextlib.nullcontext() as executor:
        declared, window = partition_window(args, paths, executor)
        public_info = {"window_stated": window.stated, **window.domain_info()}
        _check_declared(config, args, public_info)
        if args.ledger:
            from dphawkes_core.release.session import PrivacySession

            view = partitioned_fingerprint(paths, window, executor)

            def session(book, key):
                return PrivacySession(lambda c: prepare_partitioned(paths, c, window, executor), book, key,
                                      public_info, view, len(window.ends))

            if args.plan:
                return ledger_plan(args, partitioned_rows_key(paths, executor), config, session)
            result, info, ledger, status = ledger_fit(args, partitioned_rows_key(paths, executor), config, session)
        else:
            stats, info = prepare_partitioned(paths, config, window, executor)
            result = fit_stats(stats, config)
    names = declared if declared is not None and len(declared) == result.dim else tuple(
        str(j) for j in range(result.dim))
    payload = result_payload(result, config, info, names, _scenario_truth(args, result.dim, config), status)
    _add_lag_average(payload, result, args)
    if ledger is not None:
        payload["ledger"] = ledger
    write_json(payload, args.json)
    return 0


def _add_lag_average(payload: dict, result: FitResult, args) -> None:
    """``--average-width W``: the fit's kernels averaged over lags into bins of width W (post-processing: as
    private as the fit) and, with ``--scenario``, the grid-free kernel errors, also at the top level."""
    if args.average_width is None:
        return
    from dphawkes_core.evaluation.lag_average import add_lag_average, average_fit

    add_lag_average(payload, result, average_fit(result, args.average_width),
                    get_scenario(args.scenario) if args.scenario else None)
    payload.update(payload.get("metrics", {}))
