"""``dphawkes ledger show | budget | public | person | migrate | copy | init``, the ``--ledger``/``--budget``/``--plan``
release of ``fit`` and the looks ``select`` and ``score`` record: scripted releases on the same source share one
budget. A ledger is a JSON file or a PostgreSQL database (``postgresql://…``,
:mod:`dphawkes_core.release.ledger_address`); the owner's acts (``ledger budget``, ``ledger public``) set what the
analysts' (``fit``) spend within: ``fit --budget`` sets only the first budget of a new data set in a ledger file, never
changes one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dphawkes_core.privacy.accounting import DEFAULT_BUDGET_EPSILON

from .inputs import OneLineParser, UsageError, add_window_options, load_events_file, positive_float, write_json
from .stores import is_partitioned, partition_window

if TYPE_CHECKING:
    from dphawkes_core.estimators import FitConfig


LEDGER_WORDS = "a JSON file (created if missing) or a PostgreSQL URL postgresql://[user@]host/database (no password)"


def add_ledger_options(fitp) -> None:
    """``--ledger`` and ``--budget``: scripted releases on the same data share one budget."""
    fitp.add_argument("--ledger", help=f"privacy ledger, {LEDGER_WORDS}: the fit is recorded, an identical earlier "
                                       "release is replayed, one past the budget is refused")
    fitp.add_argument("--budget", type=positive_float,
                      help=f"total ε of a data set new to a ledger file (default {DEFAULT_BUDGET_EPSILON:g}); an "
                           "existing budget, and any budget in a database, is the data owner's: `dphawkes ledger "
                           "budget` (needs --ledger)")
    fitp.add_argument("--plan", action="store_true",
                      help="print what the release would spend and whether it would be refused (JSON), drawing and "
                           "recording nothing (needs --ledger)")


def add_look_option(parser, what: str) -> None:
    """``--ledger`` of a command that looks at the rows without privacy (``select``, ``score``): the look is
    recorded for the source, and every later release on it names it."""
    parser.add_argument("--ledger", help=f"privacy ledger (a file or a postgresql:// URL): record that {what} looked "
                                         "at these rows without "
                                         "privacy, so that every later release on them says its settings may have "
                                         "been read from the data")


def record_look(args, events, what: str) -> None:
    """Record ``what`` as a non-private look at the source of ``events`` in ``--ledger`` (when given), and say so."""
    if not getattr(args, "ledger", None):
        return
    from dphawkes_core.data.row_key import data_fingerprint
    from dphawkes_core.release.ledger import LedgerKey
    from dphawkes_core.release.session import record_look as record

    record(_store(args.ledger), LedgerKey(data_fingerprint(events)), what, "cli")
    print(f"ledger: recorded in {args.ledger} that {what} looked at these rows without privacy: later releases on "
          "them name it", file=sys.stderr)


def add_ledger_parser(sub) -> None:
    """``dphawkes ledger show | budget | public | person | migrate | copy | init``."""
    ledger = sub.add_parser("ledger", help="inspect a privacy ledger; its owner's settings; copies between stores")
    actions = ledger.add_subparsers(dest="action", required=True, parser_class=OneLineParser)
    show = actions.add_parser("show", help="budget, composed and naively summed ε, releases and the changes of the "
                                           "settings per data set (JSON)")
    show.add_argument("path", help="the ledger: a file (from fit --ledger) or a postgresql:// URL")
    show.add_argument("--json", default="-", help="output JSON file (default: stdout)")
    show.set_defaults(func=_cmd_ledger_show)
    budget = actions.add_parser("budget", help="the data owner's act: set a data set's total ε (recorded with who "
                                               "and when; never below what was spent)")
    budget.add_argument("path", help="the ledger: a file or a postgresql:// URL (the owner's role)")
    budget.add_argument("data", help="the data set: an event file or a partitioned store (its rows are its key)")
    budget.add_argument("--epsilon", type=positive_float, required=True, help="the data set's total ε")
    budget.add_argument("--delta", type=positive_float,
                        help="the δ every release is composed at (default: the stored one, or 1e-05 for a new "
                             "data set)")
    budget.add_argument("--label", help="the data set's name in the ledger (default: the file's name, for a new one)")
    budget.set_defaults(func=_cmd_ledger_budget)
    public = actions.add_parser("public", help="the data owner's act: mark a data set public (already published: "
                                               "nothing metered, nothing formal), or withdraw the mark with --undo")
    public.add_argument("path", help="the ledger: a file or a postgresql:// URL (the owner's role)")
    public.add_argument("data", help="the data set: an event file or a partitioned store (its rows are its key)")
    public.add_argument("--note", help="why the data are public (kept with the mark)")
    public.add_argument("--undo", action="store_true", help="withdraw the mark: releases are metered again")
    public.set_defaults(func=_cmd_ledger_public)
    person = actions.add_parser("person", help="declare that one sequence is one person (recorded: from then on an "
                                               "event-level release needs a cap --max-events)")
    person.add_argument("path", help="the ledger: a file or a postgresql:// URL")
    person.add_argument("data", help="the data set: an event file or a partitioned store (its rows are its key)")
    person.add_argument("--note", help="why (kept with the declaration)")
    person.set_defaults(func=_cmd_ledger_person)
    migrate = actions.add_parser("migrate", help="move a format-2 ledger's budgets of one data set into a ledger of "
                                                 "the current format (once per data set and declaration its fits "
                                                 "used)")
    migrate.add_argument("old", help="the format-2 ledger file (only read)")
    migrate.add_argument("new", help="the ledger to write: a file of the current format (created if missing) or a "
                                     "postgresql:// URL")
    migrate.add_argument("data", help="the data set of those fits: an event file or a partitioned store")
    add_window_options(migrate)
    migrate.set_defaults(func=_cmd_ledger_migrate)
    copy = actions.add_parser("copy", help="copy every data set's ledger from one store to another (a file, a "
                                           "postgresql:// URL): every entry once, however often it is run")
    copy.add_argument("source", help="the ledger to copy from (only read)")
    copy.add_argument("target", help="the ledger to copy into (the owner's role for a database)")
    copy.set_defaults(func=_cmd_ledger_copy)
    init = actions.add_parser("init", help="create the ledger in a PostgreSQL database, as the data owner's role "
                                           "(which owns its tables), and give analysts' roles the right to record "
                                           "releases within the budgets")
    init.add_argument("path", help="postgresql://OWNER@host/database (no password: PGPASSWORD or ~/.pgpass)")
    init.add_argument("--analyst", action="append", default=[], metavar="ROLE",
                      help="a role (existing) that may read the ledger and record releases, looks and declarations "
                           "through its functions, nothing else; repeat for several")
    init.set_defaults(func=_cmd_ledger_init)


def _store(address: str):
    """The ledger at ``address`` (a file or a database)."""
    from dphawkes_core.release.ledger_address import open_ledger

    return open_ledger(address)


def _format(store) -> int | str:
    """The format a ledger's summary names: the file's version, or the database schema's."""
    if store.shared:
        from dphawkes_core.release.ledger_postgres import SCHEMA_VERSION

        return f"postgresql-{SCHEMA_VERSION}"
    from dphawkes_core.release.ledger_file import FILE_VERSION

    return FILE_VERSION


def ledger_fit(args, fingerprint: str, config: FitConfig, session, scale_share: float | None = None,
               choices=()) -> tuple:
    """The fit as a release of the data set's privacy session ``session(book, key)`` on the ``--ledger`` file and
    the key of the source's rows ``fingerprint``: replayed with its stored selections when already paid
    for (nothing drawn), refused (exit 2) past the budget before anything is drawn; prints one line on what the
    ledger did, and the public mark of data marked public. Returns the result, its data info, a summary of the
    ledger and the release's formal status (only a session's release can be formal)."""
    from dphawkes_core.privacy.time_scale import TIME_SCALE
    from dphawkes_core.release.ledger import LedgerKey, PromiseRefused

    book, key = _store(args.ledger), LedgerKey(fingerprint, config.privacy_unit)
    known = book.get(key)
    budget = _asked_budget(args, book, known)
    if known is None and not book.shared:  # a new data set in a ledger file: its first budget
        book.open(key, budget, label=Path(args.events_csv).name, tool="cli")
    try:
        answer = (session(book, key).release(config) if scale_share is None
                  else session(book, key).release_scaled(config, scale_share, choices=choices or (TIME_SCALE,)))
    except PromiseRefused as exc:
        raise PromiseRefused(f"{exc} (--max-events M, or --privacy-unit sequence)") from None
    ledger = answer.ledger
    summary = {"path": book.address, "format": _format(book), "replayed": answer.replayed,
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


def _asked_budget(args, store, known):
    """The budget a ``fit`` sets: ``--budget`` (at ``--dp-delta``) or the default, for a data set new to a ledger
    file; nothing otherwise. A ``--budget`` that would change a data set's budget, or set one in a database, is refused
    (exit 2): those are the data owner's (``dphawkes ledger budget``)."""
    from dphawkes_core.release.ledger import Budget

    if known is not None:
        if args.budget is not None and args.budget != known.budget.epsilon:
            raise UsageError(f"--budget sets only the first budget of a data set new to a ledger file: this one's is "
                             f"ε = {known.budget.epsilon:g} (δ = {known.budget.delta:.0e}), and only its data owner "
                             f"changes it (dphawkes ledger budget {args.ledger} DATA --epsilon E); nothing was drawn")
        return None
    if store.shared:
        if args.budget is not None:
            raise UsageError("--budget: in a ledger database only the data owner sets budgets (dphawkes ledger "
                             f"budget {args.ledger} DATA --epsilon E, as the owner's role); nothing was drawn")
        return None
    return Budget(args.budget, args.dp_delta) if args.budget is not None else Budget(delta=args.dp_delta)


def ledger_plan(args, fingerprint: str, config: FitConfig, session, scale_share: float | None = None,
                choices=()) -> int:
    """``fit --plan``: what the release would spend and whether it would be refused, from public numbers only — as
    JSON (``plan``) and one line on stderr; nothing is drawn and the ledger is only read (not created)."""
    from dphawkes_core.privacy.time_scale import TIME_SCALE
    from dphawkes_core.release.ledger import LedgerKey

    book, key = _store(args.ledger), LedgerKey(fingerprint, config.privacy_unit)
    known = book.get(key)
    budget = _asked_budget(args, book, known)
    if known is None and book.shared:
        raise UsageError(book.no_budget_message().replace("refused before any draw", "it would be refused before "
                                                          "any draw") + "; nothing was drawn or recorded")
    plan = session(book, key).preview([config], scale_share, choices or (TIME_SCALE,), budget)
    ledger = plan.ledger
    if not plan.formal:
        said = f"not a formal release ({'; '.join(plan.status.reasons)}): it would spend nothing"
    elif plan.refusal:
        said = f"it would be refused before any draw: {plan.refusal}"
    else:
        said = (f"it would spend ε = {plan.epsilon:.4g} (δ = {ledger.budget.delta:.0e}, {key.unit}-level view): the "
                f"composed ε goes from {ledger.spent():.4g} to {plan.after:.4g} of {ledger.budget.epsilon:.4g}")
    print(f"plan: {said}; nothing was drawn or recorded", file=sys.stderr)
    write_json({"plan": plan.to_dict(), "drawn": False, "recorded": False, "ledger": book.address}, args.json)
    return 0


def _cmd_ledger_show(args) -> int:
    from dphawkes_core.release.ledger_address import is_database_address

    if not is_database_address(args.path) and not Path(args.path).is_file():
        raise UsageError(f"no ledger file at {args.path}")
    store = _store(args.path)
    write_json({"path": store.address, "format": _format(store),
                "data_sets": [ledger.summary() for ledger in store.ledgers()]}, args.json)
    return 0


def _cmd_ledger_budget(args) -> int:
    """``dphawkes ledger budget LEDGER DATA --epsilon E [--delta D] [--label NAME]``: the data owner sets the data
    set's total ε (a new data set is registered with it); recorded with who and when."""
    from dphawkes_core.release.ledger import DEFAULT_BUDGET_DELTA, Budget

    store, key = _store(args.path), _ledger_key(args.data)
    known = store.get(key)
    delta = args.delta or (known.budget.delta if known is not None else DEFAULT_BUDGET_DELTA)
    ledger = store.open(key, Budget(args.epsilon, delta), label=args.label or ("" if known else Path(args.data).name),
                        tool="cli")
    change = ledger.changes[-1].sentence() if ledger.changes else "unchanged"
    print(f"ledger: {args.data}: budget ε = {ledger.budget.epsilon:.4g} (δ = {ledger.budget.delta:.0e}), composed ε "
          f"spent {ledger.spent():.4g}, remaining: one release of ε ≤ {ledger.remaining():.4g}"
          + ("" if known is not None and known.budget == ledger.budget else f"; recorded: {change}"), file=sys.stderr)
    return 0


def _cmd_ledger_copy(args) -> int:
    """``dphawkes ledger copy SOURCE TARGET``: every data set's ledger of SOURCE joined to TARGET's, every entry
    once (one transaction per data set); SOURCE is only read."""
    from dphawkes_core.release.ledger_address import is_database_address
    from dphawkes_core.release.ledger_copy import copy_ledgers

    if not is_database_address(args.source) and not Path(args.source).is_file():
        raise UsageError(f"no ledger file at {args.source}")
    if args.source == args.target or (not is_database_address(args.source) and not is_database_address(args.target)
                                      and Path(args.source).resolve() == Path(args.target).resolve()):
        raise UsageError("copy a ledger into another one: SOURCE and TARGET are the same")
    source, target = _store(args.source), _store(args.target)
    copied = copy_ledgers(source, target)
    for item in copied:
        ledger = item.ledger
        print(f"ledger: {ledger.label or ledger.key.fingerprint[:12]}: {item.added} of {item.copied} entries new in "
              f"{target.address} ({item.copied - item.added} held already); composed ε spent {ledger.spent():.4g} of "
              f"{ledger.budget.epsilon:.4g}" + (" — over the budget: no release on it is allowed any more"
                                                if ledger.spent() > ledger.budget.epsilon else ""), file=sys.stderr)
    print(f"ledger: copied {len(copied)} data set(s) from {source.address} into {target.address}", file=sys.stderr)
    return 0


def _cmd_ledger_init(args) -> int:
    """``dphawkes ledger init postgresql://OWNER@host/db --analyst ROLE …``: the ledger's schema in the database,
    owned by the connected role, and the analysts' rights."""
    from dphawkes_core.release.ledger_address import is_database_address

    if not is_database_address(args.path):
        raise UsageError("ledger init creates a ledger in a PostgreSQL database: give a postgresql:// URL (a ledger "
                         "file is created by its first write)")
    store = _store(args.path)
    store.initialise(args.analyst)
    print(f"ledger: {store.address} holds the dphawkes ledger, owned by the connected role; "
          + (f"analysts' roles: {', '.join(args.analyst)}" if args.analyst else "no analyst role given yet "
             "(run again with --analyst ROLE)") + "; register each data set with `dphawkes ledger budget`",
          file=sys.stderr)
    return 0


def _source_key(path: str) -> str:
    """The ledger key of an event file or partitioned store: its rows, whatever is declared about them."""
    if is_partitioned(path):
        from dphawkes_core.data.row_key import partitioned_rows_key
        from dphawkes_core.statistics.partitioned import partition_paths

        return partitioned_rows_key(partition_paths(path))
    from dphawkes_core.data.io import source_key

    return source_key(path)


def _format2_key(args) -> str:
    """The key a format-2 ledger gave the data as declared by the window and domain options."""
    if is_partitioned(args.data):
        from dphawkes_core.statistics.partitioned import partition_paths, partitioned_fingerprint

        paths = partition_paths(args.data)
        return partitioned_fingerprint(paths, partition_window(args, paths)[1])
    from dphawkes_core.data.row_key import events_fingerprint

    return events_fingerprint(load_events_file(args.data, end_time=args.end_time, start_time=args.start_time,
                                               time_unit=args.time_unit, dimensions=args.dimensions,
                                               sequences=args.sequences))


def _cmd_ledger_migrate(args) -> int:
    """``dphawkes ledger migrate OLD NEW DATA [declaration]``: the format-2 ledgers of DATA as declared join the
    source's ledger in NEW (the current format, 4); OLD is only read."""
    from dphawkes_core.release.ledger_address import is_database_address
    from dphawkes_core.release.ledger_migration import migrate_format2

    if not is_database_address(args.new) and Path(args.new).resolve() == Path(args.old).resolve():
        raise UsageError("write the migrated ledger to a new file (NEW), not over the format-2 one")
    book, key = _store(args.new), _ledger_key(args.data)
    moved, left = migrate_format2(args.old, book, key.fingerprint, _format2_key(args), label=Path(args.data).name)
    if not moved:
        raise UsageError(f"no format-2 ledger in {args.old} is for {args.data} as declared: give the --dimensions, "
                         "--sequences, --start-time, --end-time and --time-unit its fits used")
    merged = book.get(key)
    print(f"ledger: moved {len(moved)} format-2 ledger(s) of {args.data} into {args.new}: composed ε spent "
          f"{merged.spent():.4g} of {merged.budget.epsilon:.4g}; {len(left)} format-2 ledger(s) of other data or "
          "declarations are still to migrate" + "".join(f"\n  {item.label or item.key.fingerprint[:12]} ("
                                                        f"{item.key.unit} unit, {_releases(len(item.metered))})"
                                                        for item in left), file=sys.stderr)
    return 0


def _ledger_key(path: str):
    from dphawkes_core.release.ledger import LedgerKey

    return LedgerKey(_source_key(path))


def _cmd_ledger_public(args) -> int:
    """``dphawkes ledger public LEDGER DATA [--note TEXT] [--undo]``: mark a source public (already published),
    or withdraw the mark."""
    ledger = _store(args.path).open(_ledger_key(args.data), label=Path(args.data).name, public=not args.undo,
                                    tool="cli", note=args.note or "")
    print(f"ledger: {args.data}: " + (ledger.public_mark.sentence() + "; releases on these data are not metered "
                                      "and not formal" if ledger.public else
                                      "not marked public: every release on these data is metered"), file=sys.stderr)
    return 0


def _cmd_ledger_person(args) -> int:
    """``dphawkes ledger person LEDGER DATA [--note TEXT]``: one sequence is one person's, recorded for the source;
    from then on an event-level release with no cap M is refused before any draw."""
    from dphawkes_core.release.ledger import PersonPromise, utc_now

    ledger = _store(args.path).promise_person(_ledger_key(args.data), PersonPromise(utc_now(), "cli",
                                                                                    args.note or ""))
    print(f"ledger: {args.data}: {ledger.promise}; from now on an event-level release on these rows needs a cap "
          "--max-events M (or --privacy-unit sequence)", file=sys.stderr)
    return 0


def _releases(count: int) -> str:
    return "no formal release" if count == 0 else "one formal release" if count == 1 else f"{count} formal releases"
