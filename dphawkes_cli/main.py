"""Command-line interface: ``dphawkes simulate | fit | sweep | score | audit | ledger`` over the same core the app uses.

Bad input exits with status 2 and one line on stderr; results are JSON (or CSV) for scripts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FAMILIES, FitConfig, FitResult, fit, fit_stats, get_family, method_names
from dphawkes_core.evaluation.lag_average import add_lag_average, average_fit, block_for_width
from dphawkes_core.evaluation.metrics import constraint_scale
from dphawkes_core.privacy.calibration import CALIBRATIONS, FormalStatus, formal_status
from dphawkes_core.privacy.count_cap import AUTO_CAP_SHARE
from dphawkes_core.privacy.formal_words import would_be_sentence
from dphawkes_core.privacy.sequence import PRIVACY_UNITS
from dphawkes_core.release.ledger import DEFAULT_BUDGET_EPSILON
from dphawkes_core.statistics.binning import lags_from_support
from dphawkes_core.threads import set_blas_threads

from .inputs import (
    OneLineParser,
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
from .score import add_heldout, add_holdout_options, add_score_parser, holdout_split, wants_holdout
from .select import add_select_parser
from .sweep import add_sweep_parser
from .time_scale import AUTO, AUTO_SCALE_SHARE, auto_time_scale, chosen_config, observed_time

if TYPE_CHECKING:  # the CSV loader (pandas), export and simulation load where a command uses them,
    from dphawkes_core.data.io import Events  # so that `dphawkes fit --help` starts fast (benchmarks/bench_startup.py)


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


def _cmd_simulate(args) -> int:
    from dphawkes_core.data.io import save_csv
    from dphawkes_core.data.simulate import simulate

    scenario = get_scenario(args.scenario)
    events = simulate(scenario, n_events=args.events, end_time=args.horizon, seed=args.seed)
    save_csv(events, args.out)
    print(f"wrote {events.n_events} events on [0, {events.end_time:.6g}] to {args.out}", file=sys.stderr)
    return 0


def _fit_config(args) -> FitConfig:
    if args.bin_size == AUTO:  # Δ and p are chosen later (time_scale.py): a placeholder until then
        return _fit_config(argparse.Namespace(**{**vars(args), "bin_size": 1.0, "lags": 1}))
    if args.lags is None and args.support is None:
        raise UsageError("one of the arguments --support --lags is required")
    lags = args.lags if args.lags is not None else lags_from_support(args.support, args.bin_size)
    family = get_family(args.method)
    if family.private and args.epsilon is None and args.sigma2 is None:
        raise UsageError(f"method {args.method} needs --epsilon (with --dp-delta) or --sigma2 (0: no noise)")
    calibration = args.calibration or ("formal" if family.formal_only else "paper")
    return FitConfig(
        method=args.method, bin_size=args.bin_size, lags=lags, epsilon=args.epsilon, dp_delta=args.dp_delta,
        sigma2=args.sigma2, calibration=calibration, count_cap=args.count_cap, seed=args.seed,
        count_cap_share=args.count_cap_share, privacy_unit=args.privacy_unit, sequence_clip=args.sequence_clip,
        max_events=args.max_events, **given_options(args, FAMILIES.values()),
    )


def _claims_formal(config: FitConfig) -> bool:
    """The fit adds noise under the formal calibration (σ² = 0 adds none: the exact non-private fit, no claim)."""
    return config.family.private and config.calibration == "formal" and config.sigma2 != 0


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


def _cmd_fit(args) -> int:
    config = _fit_config(args)
    if args.average_width is not None and args.bin_size != AUTO:  # a bad width fails before the fit, not after
        block_for_width(args.average_width, config.bin_size, config.lags)
    if args.budget is not None and not args.ledger:
        raise UsageError("--budget sets the total ε of a ledger: give --ledger PATH too")
    if args.dask or _is_partitioned(args.events_csv):
        if args.bin_size == AUTO:
            raise UsageError("--bin-size auto reads the events in this process: not for a partitioned fit")
        return _cmd_fit_partitioned(args, config)
    events = load_events_file(args.events_csv, end_time=args.end_time, start_time=args.start_time,
                              time_unit=args.time_unit, dimensions=args.dimensions, sequences=args.sequences)
    split = holdout_split(args, events) if wants_holdout(args) else None
    if split is not None:  # fit on the training part; the test part is scored below
        events = split.train
    _check_window(config, events)
    from dphawkes_core.estimators.binned import domain_info

    public_info = {"window_stated": events.window_stated, **domain_info(events)}
    _check_declared(config, args, public_info)
    set_blas_threads()  # one BLAS thread: see dphawkes_core/threads.py
    scale_share = None
    if args.bin_size == AUTO:
        config, scale_share = auto_time_scale(args, config, events, _claims_formal(config))
    if args.ledger:
        from dphawkes_core.estimators import prepare_stats
        from dphawkes_core.estimators.binned import domain_info
        from dphawkes_core.release.ledger import data_fingerprint, events_fingerprint
        from dphawkes_core.release.session import PrivacySession

        result, info, ledger, status = _ledger_fit(
            args, data_fingerprint(events), config, lambda book, key: PrivacySession(
                lambda c: prepare_stats(events, c), book, key, public_info, events_fingerprint(events),
                events.n_sequences, count=lambda: (events.n_events, observed_time(events))), scale_share)
        if scale_share is not None:
            config = chosen_config(config, ledger["time_scale"])
    else:
        (result, info), ledger, status = fit(events, config), None, None
    payload = result_payload(result, config, info, events.names, _scenario_truth(args, events.dim, config), status)
    _add_lag_average(payload, result, args)
    add_heldout(payload, result, split, args)
    if ledger is not None:
        payload["ledger"] = ledger
    print(f"read: {events.describe()}", file=sys.stderr)
    for warning in events.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if config.seed is not None and config.family.private:
        print("warning: --seed makes the noise reproducible: not a private release (formal_guarantee false)",
              file=sys.stderr)
    if config.family.private and not args.ledger:
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


def _is_partitioned(path: str) -> bool:
    """A glob pattern or a directory names Parquet partitions (a map-reduce fit)."""
    return any(ch in path for ch in "*?[") or Path(path).is_dir()


def _cmd_fit_partitioned(args, config: FitConfig) -> int:
    """``fit 'events/*.parquet' [--dask local|tcp://HOST:PORT]``: statistics per partition, reduced, then fitted
    (:mod:`dphawkes_core.statistics.partitioned`); on a Dask cluster with ``--dask``, else in this process."""
    import contextlib

    from dphawkes_core.estimators import prepare_partitioned
    from dphawkes_core.statistics.partitioned import (
        partition_paths,
        partitioned_fingerprint,
        partitioned_rows_key,
    )
    from dphawkes_experiments.sweep import dask_executor

    if args.time_unit or config.privacy_unit != "event":
        raise UsageError("--time-unit and --privacy-unit sequence are not available for a partitioned fit")
    if wants_holdout(args):
        raise UsageError("a held-out score reads the events in this process: not for a partitioned fit")
    start, end = (None if v is None else _window_number(v) for v in (args.start_time, args.end_time))
    if _claims_formal(config) and end is None:
        raise UsageError("the formal calibration needs a public observation window: pass --end-time "
                         "(otherwise the window is read from the data)")
    paths = partition_paths(args.events_csv)
    set_blas_threads()  # one BLAS thread: see dphawkes_core/threads.py
    ledger = status = None
    with dask_executor(args.dask) if args.dask else contextlib.nullcontext() as executor:
        declared, window = _partition_window(args, paths, executor)
        public_info = {"window_stated": window.stated, **window.domain_info()}
        _check_declared(config, args, public_info)
        if args.ledger:
            from dphawkes_core.release.session import PrivacySession

            view = partitioned_fingerprint(paths, window, executor)
            result, info, ledger, status = _ledger_fit(
                args, partitioned_rows_key(paths, executor), config, lambda book, key: PrivacySession(
                    lambda c: prepare_partitioned(paths, c, window, executor), book, key, public_info, view,
                    len(window.ends)))
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


def _partition_window(args, paths, executor=None) -> tuple:
    """The declared dimension names (``--dimensions`` or a ``labels.csv`` beside the partitions, else ``None``) and
    the :class:`~dphawkes_core.statistics.partitioned.Window` of a partitioned store as the window and domain options
    declare it."""
    from dphawkes_core.data.domain import parse_dimensions, read_sequences
    from dphawkes_core.data.io import load_labels
    from dphawkes_core.statistics.partitioned import partitioned_window

    start, end = (None if v is None else _window_number(v) for v in (args.start_time, args.end_time))
    declared = parse_dimensions(args.dimensions) if args.dimensions else load_labels(
        Path(paths[0]).with_name("labels.csv"))
    keys = read_sequences(args.sequences)[0] if args.sequences else None
    return declared, partitioned_window(paths, executor, start, end, declared, keys)


def _add_lag_average(payload: dict, result: FitResult, args) -> None:
    """``--average-width W``: the fit's kernels averaged over lags into bins of width W (post-processing: as
    private as the fit) and, with ``--scenario``, the grid-free kernel errors, also at the top level."""
    if args.average_width is None:
        return
    add_lag_average(payload, result, average_fit(result, args.average_width),
                    get_scenario(args.scenario) if args.scenario else None)
    payload.update(payload.get("metrics", {}))


def _window_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"a partitioned fit reads numeric times: the window bound {text!r} must be a number") \
            from None


def _ledger_fit(args, fingerprint: str, config: FitConfig, session, scale_share: float | None = None) -> tuple:
    """The fit as a release of the data set's privacy session ``session(book, key)`` on the ``--ledger`` file and
    the key of the source's rows ``fingerprint``: replayed with its stored selections when already paid
    for (nothing drawn), refused (exit 2) past the budget before anything is drawn; prints one line on what the
    ledger did, and the public mark of data marked public. Returns the result, its data info, a summary of the
    ledger and the release's formal status (only a session's release can be formal)."""
    from dphawkes_core.release.ledger import FILE_VERSION, Budget, LedgerBook, LedgerKey

    book, key = LedgerBook(args.ledger), LedgerKey(fingerprint, config.privacy_unit)
    known = book.get(key)
    delta = known.budget.delta if known is not None else args.dp_delta
    budget = Budget(args.budget, delta) if args.budget is not None else None if known else Budget(delta=delta)
    book.open(key, budget, label=Path(args.events_csv).name)
    answer = (session(book, key).release(config) if scale_share is None
              else session(book, key).release_scaled(config, scale_share))
    ledger = answer.ledger
    summary = {"path": str(book.path), "format": FILE_VERSION, "replayed": answer.replayed,
               "metered": answer.entry.formal,
               "privacy_unit": key.unit, "budget_epsilon": ledger.budget.epsilon, "delta": ledger.budget.delta,
               "spent_epsilon": ledger.spent(), "remaining_epsilon": ledger.remaining(), "public": ledger.public,
               "notes": list(answer.notes), "sequence_view": ledger.summary()["sequence_view"],
               **({"time_scale": answer.time_scale.to_dict()} if answer.time_scale else {})}
    what = (
        "replayed from the ledger with its stored selections: nothing drawn, no new privacy spent"
        if answer.replayed
        else "recorded"
        if answer.entry.formal
        else "recorded, not metered (not a formal release)"
    )
    print(f"ledger: {what}; composed ε spent {summary['spent_epsilon']:.4g} of {ledger.budget.epsilon:.4g} "
          f"(δ = {ledger.budget.delta:.0e}, {key.unit}-level view), remaining: one release of ε ≤ "
          f"{summary['remaining_epsilon']:.4g}", file=sys.stderr)
    for note in answer.notes:
        print(f"ledger: {note}", file=sys.stderr)
    return answer.result, answer.data_info, summary, answer.status


def _cmd_ledger_show(args) -> int:
    from dphawkes_core.release.ledger import FILE_VERSION, LedgerBook

    if not Path(args.path).is_file():
        raise UsageError(f"no ledger file at {args.path}")
    ledgers = LedgerBook(args.path).ledgers()
    write_json({"path": args.path, "format": FILE_VERSION, "data_sets": [ledger.summary() for ledger in ledgers]},
                args.json)
    return 0


def _source_key(path: str) -> str:
    """The ledger key of an event file or partitioned store: its rows, whatever is declared about them."""
    if _is_partitioned(path):
        from dphawkes_core.statistics.partitioned import partition_paths, partitioned_rows_key

        return partitioned_rows_key(partition_paths(path))
    from dphawkes_core.data.io import source_key

    return source_key(path)


def _format2_key(args) -> str:
    """The key a format-2 ledger gave the data as declared by the window and domain options."""
    if _is_partitioned(args.data):
        from dphawkes_core.statistics.partitioned import partition_paths, partitioned_fingerprint

        paths = partition_paths(args.data)
        return partitioned_fingerprint(paths, _partition_window(args, paths)[1])
    from dphawkes_core.release.ledger import events_fingerprint

    return events_fingerprint(load_events_file(args.data, end_time=args.end_time, start_time=args.start_time,
                                               time_unit=args.time_unit, dimensions=args.dimensions,
                                               sequences=args.sequences))


def _cmd_ledger_migrate(args) -> int:
    """``dphawkes ledger migrate OLD NEW DATA [declaration]``: the format-2 ledgers of DATA as declared join the
    source's ledger in NEW (format 3); OLD is only read."""
    from dphawkes_core.release.ledger import LedgerBook, migrate_format2

    if Path(args.new).resolve() == Path(args.old).resolve():
        raise UsageError("write the migrated ledger to a new file (NEW), not over the format-2 one")
    book, key = LedgerBook(args.new), _ledger_key(args.data)
    moved, left = migrate_format2(args.old, book, key.fingerprint, _format2_key(args), label=Path(args.data).name)
    if not moved:
        raise UsageError(f"no format-2 ledger in {args.old} is for {args.data} as declared: give the --dimensions, "
                         "--sequences, --start-time, --end-time and --time-unit its fits used")
    merged = book.get(key)
    print(f"ledger: moved {len(moved)} format-2 ledger(s) of {args.data} into {args.new}: composed ε spent "
          f"{merged.spent():.4g} of {merged.budget.epsilon:.4g}; {len(left)} format-2 ledger(s) of other data or "
          "declarations are still to migrate" + "".join(f"\n  {item.label or item.key.fingerprint[:12]} ("
                                                        f"{item.key.unit} unit, {len(item.metered)} formal release(s))"
                                                        for item in left), file=sys.stderr)
    return 0


def _ledger_key(path: str):
    from dphawkes_core.release.ledger import LedgerKey

    return LedgerKey(_source_key(path))


def _cmd_ledger_public(args) -> int:
    """``dphawkes ledger public LEDGER DATA [--note TEXT] [--undo]``: mark a source public (already published),
    or withdraw the mark."""
    from dphawkes_core.release.ledger import LedgerBook

    ledger = LedgerBook(args.path).open(_ledger_key(args.data), label=Path(args.data).name, public=not args.undo,
                                        tool="cli", note=args.note or "")
    print(f"ledger: {args.data}: " + (ledger.public_mark.sentence() + "; releases on these data are not metered "
                                      "and not formal" if ledger.public else
                                      "not marked public: every release on these data is metered"), file=sys.stderr)
    return 0


def _add_ledger_options(fitp) -> None:
    """``--ledger`` and ``--budget``: scripted releases on the same data share one budget."""
    fitp.add_argument("--ledger", help="privacy ledger file (JSON, created if missing): the fit is recorded, an "
                                       "identical earlier release is replayed, one past the budget is refused")
    fitp.add_argument("--budget", type=positive_float,
                      help=f"total ε of this data set's ledger (default {DEFAULT_BUDGET_EPSILON:g} for a new ledger; "
                           "needs --ledger)")


def _add_ledger_parser(sub) -> None:
    """``dphawkes ledger show PATH``: every data set's budget, composed ε and releases, as JSON."""
    ledger = sub.add_parser("ledger", help="inspect a privacy ledger file")
    actions = ledger.add_subparsers(dest="action", required=True, parser_class=OneLineParser)
    show = actions.add_parser("show", help="budget, composed and naively summed ε, and releases per data set (JSON)")
    show.add_argument("path", help="the ledger file (from fit --ledger)")
    show.add_argument("--json", default="-", help="output JSON file (default: stdout)")
    show.set_defaults(func=_cmd_ledger_show)
    public = actions.add_parser("public", help="mark a data set public (already published: nothing metered, "
                                               "nothing formal), or withdraw the mark with --undo")
    public.add_argument("path", help="the ledger file")
    public.add_argument("data", help="the data set: an event file or a partitioned store (its rows are its key)")
    public.add_argument("--note", help="why the data are public (kept with the mark)")
    public.add_argument("--undo", action="store_true", help="withdraw the mark: releases are metered again")
    public.set_defaults(func=_cmd_ledger_public)
    migrate = actions.add_parser("migrate", help="move a format-2 ledger's budgets of one data set into a format-3 "
                                                 "file (once per data set and declaration its fits used)")
    migrate.add_argument("old", help="the format-2 ledger file (only read)")
    migrate.add_argument("new", help="the format-3 ledger file to write (created if missing)")
    migrate.add_argument("data", help="the data set of those fits: an event file or a partitioned store")
    add_window_options(migrate)
    migrate.set_defaults(func=_cmd_ledger_migrate)


def build_parser() -> argparse.ArgumentParser:
    """The ``dphawkes`` argument parser."""
    parser = OneLineParser(prog="dphawkes", description="Differentially private Hawkes process estimation.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    sim = sub.add_parser("simulate", help="simulate a named scenario to a CSV file")
    sim.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    size = sim.add_mutually_exclusive_group(required=True)
    size.add_argument("--events", type=positive_int, help="stop after this many events")
    size.add_argument("--horizon", type=positive_float, help="simulate on [0, HORIZON]")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--out", required=True, help="output CSV (time,dimension)")
    sim.set_defaults(func=_cmd_simulate)

    fitp = sub.add_parser("fit", help="fit a Hawkes model to an event CSV")
    fitp.add_argument("events_csv", help="CSV or .parquet with columns time,dimension[,sequence][,start,end]; "
                                         "or a directory or quoted glob of Parquet partitions ('events/*.parquet')")
    fitp.add_argument("--dask", metavar="ADDRESS",
                      help="compute the statistics of the partitions on Dask: 'local' or tcp://HOST:PORT")
    fitp.add_argument("--bin-size", type=width_or_auto, required=True,
                      help="bin size Δ, or 'auto': Δ and s from the count of events (a formal fit: a noisy count "
                           "bought with --time-scale-share of ε inside the --ledger release)")
    fitp.add_argument("--time-scale-share", type=open_unit_fraction, default=AUTO_SCALE_SHARE,
                      help=f"share of ε spent by --bin-size auto (default {AUTO_SCALE_SHARE:g})")
    lag = fitp.add_mutually_exclusive_group()
    lag.add_argument("--support", type=positive_float, help="kernel support s (p = ⌈s/Δ⌉)")
    lag.add_argument("--lags", type=positive_int, help="number of lags p")
    fitp.add_argument("--method", choices=method_names(), default="cls",
                      help="; ".join(f"{f.name}: {f.summary}" for f in FAMILIES.values()))
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
    add_family_options(fitp, FAMILIES.values())
    _add_unit_options(fitp)
    _add_ledger_options(fitp)
    fitp.set_defaults(func=_cmd_fit)

    add_sweep_parser(sub)
    add_score_parser(sub)
    add_select_parser(sub)
    _add_audit_parser(sub)
    _add_ledger_parser(sub)
    return parser


def _add_unit_options(fitp) -> None:
    """The privacy unit and its public bounds."""
    fitp.add_argument(
        "--privacy-unit",
        choices=PRIVACY_UNITS,
        default="event",
        help="what the guarantee protects: event (one event, the paper's unit) or sequence (one "
        "whole sequence = one person, replaced; ssp and ctls, with --sequence-clip and/or --max-events)",
    )
    fitp.add_argument("--sequence-clip", type=clip_or_auto,
                      help="public G for --privacy-unit sequence: each sequence's statistics scaled to norm <= G "
                           "(default: the G that --max-events guarantees never clips), or 'auto': spend 5%% of "
                           "ε on a private choice of G below that one")
    fitp.add_argument("--max-events", type=positive_int,
                      help="public M, enforced: each sequence keeps its first M events (by time). Sequence unit: "
                           "it bounds G. Event unit: the release's ε is then per capped event, charged as 2 per raw "
                           "event and 2M per sequence, so the sequence-level budget stays open (docs/privacy.md)")


def _add_audit_parser(sub) -> None:
    """``dphawkes audit``: empirical lower bound on ε for a mechanism on a simulated scenario."""
    aud = sub.add_parser("audit", help="empirically audit a private method's ε claim on a simulated scenario")
    aud.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    aud.add_argument("--events", type=positive_int, default=1000, help="events to simulate (default 1000)")
    aud.add_argument("--data-seed", type=int, default=1, help="simulation seed (default 1)")
    aud.add_argument("--bin-size", type=positive_float, required=True, help="bin size Δ")
    aud.add_argument("--support", type=positive_float,
                     help="kernel support s (p = ⌈s/Δ⌉); needed unless --worst-case (there: the family's "
                          "worst-case p, else 3)")
    aud.add_argument("--method", choices=[name for name, f in FAMILIES.items() if f.private], default="pgd")
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
    aud.set_defaults(func=_cmd_audit)


def _cmd_audit(args) -> int:
    from dphawkes_core.data.simulate import simulate
    from dphawkes_experiments.audit import AuditConfig, default_count_cap, run_audit
    from dphawkes_experiments.audit_events import worst_case_lags

    family = get_family(args.method)
    if args.support is None and not args.worst_case:
        raise UsageError("--support is needed (p = ⌈s/Δ⌉) unless --worst-case")
    if args.worst_case_dim is not None and not args.worst_case:
        raise UsageError("--worst-case-dim sets the worst-case pair: add --worst-case")
    scenario = get_scenario(args.scenario)
    events = simulate(scenario, n_events=args.events, seed=args.data_seed)
    cap = args.count_cap if args.count_cap is not None else default_count_cap(events, args.bin_size)
    given = family.own_options({name: getattr(args, name) for name in ("iters", "clip", "bound", "radius")})
    if args.worst_case:  # the public settings under which the family's bound shows (one release, tiny constraint)
        lags = lags_from_support(args.support, args.bin_size) if args.support is not None else worst_case_lags(family)
        worst = family.audit_hints.worst_case_options
        options = {**worst, **given}
        from_family = sorted(set(worst) - set(given)) + (["lags"] if args.support is None else [])
    else:
        lags = lags_from_support(args.support, args.bin_size)
        oracle_bound, oracle_radius = constraint_scale(scenario.true_H(args.bin_size, lags), args.bin_size)
        options = family.own_options({"iters": 100, "clip": 1.0, "bound": oracle_bound, "radius": oracle_radius,
                                      **given})
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
        info = result.extra
        settings = ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                             for name, value in sorted({**options, "lags": lags}.items()))
    if args.worst_case and family.fits_event_times:  # the family's adversarial events, not counts at C
        print(f"worst-case events: the family's adversarial pair for d = {info['worst_case_dim']}, B = {lags}, "
              f"C = {cap}, w = {args.bin_size:g} ({info['worst_case_events']} events in D', one more than in D; "
              f"the release moves by {info['worst_case_reached']:.3f} of the claimed sensitivity); {family.label} "
              f"with {settings} ({', '.join(from_family) or 'none'} from the audit's worst case; options given "
              "override them)", file=sys.stderr)
    elif args.worst_case:
        print(f"worst-case pair: every count at C = {cap} in {info['worst_case_dim']} dimension(s) × "
              f"{info['worst_case_bins']} bins, one event fewer in D; {family.label} with {settings} "
              f"({', '.join(from_family) or 'none'} from the family's worst case; options given override them)"
              + ("; releases observed at the family's worst-case state U, not from U = 0"
                 if info.get("released_at_state") is not None else ""), file=sys.stderr)
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dphawkes`` console script; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except DPHawkesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, MemoryError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
