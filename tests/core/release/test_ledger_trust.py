"""The ledger at its edges, as an adversary would try them: one budget per source of rows whatever is
declared about them, no formal label on data marked public and a withdrawal that really meters again, one budget
across privacy units, no formal request on an undeclared domain, format-2 ledgers migrated or refused, and every
setting in a release's identity."""

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, load_parquet, source_key
from dphawkes_core.data.kernels import get_scenario
from dphawkes_core.data.row_key import data_fingerprint, events_fingerprint, partitioned_rows_key
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import ConfigError, DataError
from dphawkes_core.estimators import FAMILIES, FitConfig
from dphawkes_core.privacy.accounting import BudgetExceeded, Mechanism, compose_epsilon
from dphawkes_core.release.ledger import EVENT_ONLY_NOTE, PUBLIC_MARK_REASON, Budget, LedgerKey, grouped
from dphawkes_core.release.ledger_file import LedgerBook
from dphawkes_core.release.ledger_store import LedgerError
from dphawkes_core.release.session import PrivacySession, request_identity

DELTA = 1e-5
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def run_cli(capsys, *argv):
    from dphawkes_cli.main import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


# --- item 4: one key per source of rows -----------------------------------------------------------------------


def random_rows(rng, n=60) -> pd.DataFrame:
    """Rows with 3 sequences, dimensions 0..2 and times with at most 3 decimals on [0, 100)."""
    return pd.DataFrame({"sequence": rng.choice(["s0", "s1", "s2"], n), "time": np.round(rng.uniform(0, 100, n), 3),
                         "dimension": rng.integers(0, 3, n)})


def iso(seconds: float) -> str:
    return (EPOCH + timedelta(seconds=float(seconds))).isoformat().replace("+00:00", "Z")


def written(rows: pd.DataFrame, folder, kind: str, rng):
    """The rows as one file of ``kind`` (CSV, Parquet, datetime CSV), shuffled, or as a partitioned store."""
    rows = rows.sample(frac=1.0, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)
    if kind == "datetime":
        rows = rows.assign(time=[iso(t) for t in rows["time"]])
    if kind == "store":
        folder.mkdir()
        cuts = np.sort(rng.choice(np.arange(1, len(rows)), int(rng.integers(0, 4)), replace=False))
        for i, part in enumerate(np.split(np.arange(len(rows)), cuts)):
            pq.write_table(pa.Table.from_pandas(rows.iloc[part], preserve_index=False), folder / f"part{i}.parquet")
        return folder
    path = folder.with_suffix(".parquet" if kind == "parquet" else ".csv")
    if kind == "parquet":
        pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), path)
    else:
        rows.to_csv(path, index=False)
    return path


def random_declaration(rng, datetimes: bool) -> dict:
    """A declaration a release could make of the rows: dimensions (count, order, extra empty ones, a sub-domain),
    sequence keys (order, extra, a subset), a window (nudged), a time unit."""
    dims = rng.choice([None, "count", "names", "subset"])
    names = [str(j) for j in rng.permutation(3)] + [f"extra{k}" for k in range(int(rng.integers(0, 3)))]
    dimensions = {None: None, "count": tuple(str(j) for j in range(int(rng.integers(3, 6)))),
                  "names": tuple(names), "subset": tuple(names[: int(rng.integers(1, 3))])}[dims]
    keys = [str(k) for k in rng.permutation(["s0", "s1", "s2"])] + ["nobody"] * int(rng.integers(0, 2))
    sequences = None if rng.random() < 0.3 else tuple(keys[: int(rng.integers(2, len(keys) + 1))])
    end = 100 + float(rng.choice([0.0, 1e-6, 37.5]))
    start = float(rng.choice([0.0, 5.5])) if sequences is not None or rng.random() < 0.5 else None
    window = {"end_time": iso(end) if datetimes else repr(end),
              "start_time": None if start is None else iso(start) if datetimes else repr(start)}
    if datetimes and start is None:
        window["start_time"] = iso(0.0)
    return dict(domain=Domain(dimensions=dimensions, sequences=sequences), time_unit=rng.choice([None, "s", "min"]),
                **window)


def test_random_redeclarations_of_the_same_rows_give_one_key(tmp_path):
    """Property: whatever is declared (d, dimension order, extra empty dimensions or keys, a sub-domain, window,
    time unit), whichever format holds the rows (CSV, Parquet, datetimes, a store partitioned at random), the
    ledger key is the rows'; editing one row changes it."""
    rng = np.random.default_rng(27)
    loaded = 0
    for trial in range(12):
        rows = random_rows(rng)
        base = source_key(written(rows, tmp_path / f"base{trial}", "csv", rng))
        for kind in ("csv", "parquet", "datetime", "store"):
            path = written(rows, tmp_path / f"{kind}{trial}", kind, rng)
            if kind == "store":
                assert partitioned_rows_key(sorted(str(p) for p in path.glob("*.parquet"))) == base
                continue
            assert source_key(path) == base
            load = load_parquet if kind == "parquet" else load_csv
            for _ in range(3):
                try:
                    events = load(path, **random_declaration(rng, kind == "datetime"))
                except DataError as exc:  # e.g. a sub-domain without rows: nothing to release
                    assert "no events" in str(exc)
                    continue
                loaded += 1
                assert data_fingerprint(events) == base
        edits = (rows.drop(index=int(rng.integers(len(rows)))), pd.concat([rows, rows.iloc[[3]]]),
                 rows.assign(time=rows["time"].where(rows.index != 5, rows["time"] + 1e-3)),
                 rows.assign(dimension=rows["dimension"].where(rows.index != 7, (rows["dimension"] + 1) % 3)))
        for i, edited in enumerate(edits):
            assert source_key(written(edited, tmp_path / f"edit{trial}_{i}", "csv", rng)) != base
    assert loaded >= 100  # the property was checked on loaded declarations, not skipped


@pytest.fixture
def events_csv(tmp_path):
    from dphawkes_core.data.io import save_csv

    path = tmp_path / "events.csv"
    save_csv(simulate(get_scenario("paper-2d"), n_events=1500, seed=4), path)
    return path


def formal_fit(capsys, data, ledger, *declaration, epsilon=1.0, extra=()):
    return run_cli(capsys, "fit", data, "--bin-size", 0.5, "--support", 2, "--method", "ssp", "--epsilon", epsilon,
                   "--calibration", "formal", "--count-cap", 5, "--ledger", ledger, *declaration, *extra)


def test_releases_on_any_declaration_of_the_rows_charge_one_budget(capsys, tmp_path, events_csv):
    """The review's forks — a sub-domain, another dimension order, an extra empty dimension, a nudged end, another
    time unit — all charge the one budget of the rows, and the release that would take it over is refused."""
    ledger = tmp_path / "ledger.json"
    declarations = [("--dimensions", 2, "--end-time", 700), ("--dimensions", 1, "--end-time", 700),  # dimension 0
                    ("--dimensions", "1,0", "--end-time", 700),
                    ("--dimensions", 3, "--end-time", 700), ("--dimensions", 2, "--end-time", 700.000001),
                    ("--dimensions", 2, "--end-time", 700, "--time-unit", "min")]
    spent, statuses = [], []
    for declaration in declarations:
        status, out, err = formal_fit(capsys, events_csv, ledger, *declaration, extra=("--budget", 2.0))
        statuses.append(status)
        if status == 0:
            payload = json.loads(out)
            assert payload["formal_guarantee"] and not payload["ledger"]["replayed"]
            spent.append(payload["ledger"]["spent_epsilon"])
        else:
            assert "refused" in err and err.count("\n") == 1
    (data_set,) = LedgerBook(ledger).ledgers()
    mechanisms = data_set.entries[0].mechanisms
    count = len(declarations)
    fits = max(k for k in range(1, count + 1) if compose_epsilon(mechanisms * k, DELTA) <= 2.0)
    assert statuses == [0] * fits + [2] * (count - fits) and 1 < fits < count
    assert spent == pytest.approx([compose_epsilon(mechanisms * k, DELTA) for k in range(1, fits + 1)], rel=1e-9)
    assert len(data_set.metered) == fits


# --- items 1 and 10: data marked public ------------------------------------------------------------------------


def test_releases_on_data_marked_public_are_never_formal_and_the_cli_says_so(capsys, tmp_path, events_csv):
    ledger = tmp_path / "ledger.json"
    status, _, err = run_cli(capsys, "ledger", "public", ledger, events_csv, "--note", "the published catalogue")
    assert status == 0 and "marked public" in err and "from the CLI" in err
    assert run_cli(capsys, "ledger", "budget", ledger, events_csv, "--epsilon", 1)[0] == 0  # the owner's budget
    for epsilon in (1.0, 1.3, 1.7, 2.0, 2.4):  # the review's five releases: ε = 5.2 against a budget of 1
        status, out, err = formal_fit(capsys, events_csv, ledger, "--dimensions", 2, "--end-time", 700,
                                      epsilon=epsilon)
        payload = json.loads(out)
        assert status == 0 and not payload["formal_guarantee"] and PUBLIC_MARK_REASON in payload["formal_reasons"]
        assert not payload["ledger"]["metered"] and payload["ledger"]["public"]
        assert "marked public on" in err and "from the CLI (note: the published catalogue)" in err
    (data_set,) = LedgerBook(ledger).ledgers()
    assert data_set.metered == () and len(data_set.unmetered) == 5 and data_set.spent() == 0


def test_withdrawing_the_mark_meters_and_refuses_again(capsys, tmp_path, events_csv):
    """Undo through the CLI and through the Python API (``open(…, public=False)``): releases are formal, metered,
    and refused past the budget again."""
    ledger = tmp_path / "ledger.json"
    run_cli(capsys, "ledger", "public", ledger, events_csv)
    status, _, err = run_cli(capsys, "ledger", "public", ledger, events_csv, "--undo")
    assert status == 0 and "not marked public" in err
    assert run_cli(capsys, "ledger", "budget", ledger, events_csv, "--epsilon", 1.5)[0] == 0  # the owner's budget
    status, out, _ = formal_fit(capsys, events_csv, ledger, "--dimensions", 2, "--end-time", 700)
    assert status == 0 and json.loads(out)["formal_guarantee"] and json.loads(out)["ledger"]["metered"]
    status, _, err = formal_fit(capsys, events_csv, ledger, "--dimensions", 2, "--end-time", 700, epsilon=1.2)
    assert status == 2 and "refused" in err

    book = LedgerBook(tmp_path / "python.json")
    events = load_csv(events_csv, end_time="700", domain=Domain(dimensions=("0", "1")))
    session = PrivacySession.for_events(events, book, data_fingerprint(events))
    book.open(session.key, Budget(1.5, DELTA), public=True)
    assert not session.release(ssp(epsilon=1.0)).entry.formal
    book.open(session.key, public=False)
    assert not book.get(session.key).public
    answer = session.release(ssp(epsilon=1.1))
    assert answer.entry.formal and answer.ledger.spent() == pytest.approx(compose_epsilon(
        answer.entry.mechanisms, DELTA))
    with pytest.raises(BudgetExceeded):
        session.release(ssp(epsilon=1.2))


def test_the_mark_records_when_and_from_which_tool(tmp_path):
    book, key = LedgerBook(tmp_path / "l.json"), LedgerKey("rows-x")
    marked = book.open(key, public=True, tool="app", note="USGS catalogue")
    again = book.open(key, public=True, tool="cli")  # already marked: the first statement is kept
    assert marked.public_mark == again.public_mark and marked.public_mark.tool == "app"
    assert marked.public_mark.sentence().endswith("from the app (note: USGS catalogue)")
    assert book.open(key, public=False).public_mark is None and not book.get(key).public


def ssp(**changes) -> FitConfig:
    return FitConfig(**{**dict(method="ssp", bin_size=0.5, lags=4, epsilon=1.0, calibration="formal", count_cap=5),
                        **changes})


# --- item 5: one budget across privacy units --------------------------------------------------------------------


@pytest.fixture
def sequences_csv(tmp_path):
    rng = np.random.default_rng(5)
    frames = [pd.DataFrame({"sequence": s, "time": np.sort(rng.uniform(0, 50, 40)).round(4),
                            "dimension": rng.integers(0, 2, 40)}) for s in range(6)]
    path = tmp_path / "sequences.csv"
    pd.concat(frames).to_csv(path, index=False)
    return path


def test_both_unit_views_see_every_release_and_the_sequence_view_closes(capsys, tmp_path, sequences_csv):
    """An event-level release on several sequences (no per-person promise made yet) says it protects events only,
    and the sequence view then refuses (nothing drawn) rather than showing "spent 0"; a sequence-level release on
    other rows is charged in the event view at its own ε."""
    ledger = tmp_path / "ledger.json"
    declared = ("--dimensions", 2, "--sequences", 6, "--end-time", 50)
    status, out, err = formal_fit(capsys, sequences_csv, ledger, *declared, epsilon=0.5)
    payload = json.loads(out)
    assert status == 0 and payload["formal_guarantee"] and EVENT_ONLY_NOTE in err
    before = ledger.read_text()
    status, _, err = formal_fit(capsys, sequences_csv, ledger, *declared, epsilon=0.3,
                                extra=("--privacy-unit", "sequence", "--max-events", 40, "--count-cap", 3))
    assert status == 2 and "sequence-level budget of this data set is closed" in err and err.count("\n") == 1
    assert ledger.read_text() == before  # refused before anything was drawn or recorded
    shown = json.loads(run_cli(capsys, "ledger", "show", ledger)[1])["data_sets"][0]
    assert shown["sequence_view"]["closed"] and shown["sequence_view"]["remaining_epsilon"] == 0

    other = tmp_path / "other.json"
    status, out, _ = formal_fit(capsys, sequences_csv, other, *declared,
                                extra=("--privacy-unit", "sequence", "--max-events", 40, "--count-cap", 3))
    assert status == 0 and json.loads(out)["formal_guarantee"]
    (book,) = LedgerBook(other).ledgers()
    sequence_release = book.entries[0].mechanisms
    assert run_cli(capsys, "ledger", "budget", other, sequences_csv, "--epsilon", 1000)[0] == 0  # the owner's act
    status, out, _ = formal_fit(capsys, sequences_csv, other, *declared, epsilon=0.5,
                                extra=("--max-events", 40))  # 2M = 80 events per sequence
    both = sequence_release + LedgerBook(other).ledgers()[0].entries[1].mechanisms
    assert status == 0 and json.loads(out)["ledger"]["spent_epsilon"] == pytest.approx(
        compose_epsilon(both[:1] + grouped(both[1:], 2), DELTA), rel=1e-9)  # a swap: 2 capped events


# --- item 6: no formal request on an undeclared domain ------------------------------------------------------------


@pytest.mark.parametrize("declared, missing", [((), "--dimensions"), (("--dimensions", 2), "--sequences")])
def test_a_formal_request_through_a_ledger_on_an_undeclared_domain_is_refused(capsys, tmp_path, sequences_csv,
                                                                              declared, missing):
    ledger = tmp_path / "ledger.json"
    for extra in (("--ledger", ledger), ("--ledger", ledger, "--budget", 2)):
        status, out, err = run_cli(capsys, "fit", sequences_csv, "--bin-size", 0.5, "--support", 2, "--method",
                                   "ssp", "--epsilon", 1, "--calibration", "formal", "--count-cap", 5,
                                   "--end-time", 50, *declared, *extra)
        assert status == 2 and out == "" and err.count("\n") == 1 and missing in err and "declared domain" in err
    assert not ledger.exists()  # nothing drawn, nothing recorded


def test_a_formal_request_on_an_undeclared_partitioned_store_is_refused(capsys, tmp_path, sequences_csv):
    store = written(pd.read_csv(sequences_csv), tmp_path / "store", "store", np.random.default_rng(1))
    status, out, err = run_cli(capsys, "fit", store, "--bin-size", 0.5, "--lags", 4, "--method", "ssp", "--epsilon",
                               1, "--calibration", "formal", "--count-cap", 5, "--end-time", 50, "--dimensions", 2,
                               "--ledger", tmp_path / "l.json")
    assert status == 2 and out == "" and "--sequences" in err and err.count("\n") == 1


# --- item 8: format 2 ---------------------------------------------------------------------------------------------


def format2_file(path, legacy: str, unit: str = "event", public: bool = False, z: float = 2.0) -> None:
    """A ledger as format 2 wrote it: keyed by the declared events' fingerprint and the unit."""
    from dphawkes_core.release.ledger_file import document_checksum

    items = [{"fingerprint": legacy, "unit": unit, "label": "events.csv", "public": public,
              "budget": {"epsilon": 3.0, "delta": DELTA},
              "entries": [{"request": "old", "label": "old fit", "formal": True, "reasons": [],
                           "mechanisms": [{"kind": "gaussian", "parameter": z, "releases": 1, "label": ""}],
                           "result": {}, "created": "2026-01-01T00:00:00+00:00"}]}]
    items = json.loads(json.dumps(items, sort_keys=True))
    path.write_text(json.dumps({"format": "dphawkes-ledger", "version": 2, "checksum": document_checksum(items),
                                "ledgers": items}))


def test_a_format2_ledger_is_refused_in_one_line_that_says_how_to_migrate(capsys, tmp_path, events_csv):
    old = tmp_path / "old.json"
    format2_file(old, "f" * 64)
    with pytest.raises(LedgerError, match="ledger migrate"):
        LedgerBook(old).ledgers()
    status, out, err = formal_fit(capsys, events_csv, old, "--dimensions", 2, "--end-time", 700)
    assert status == 2 and out == "" and err.count("\n") == 1 and "dphawkes ledger migrate" in err
    assert json.loads(old.read_text())["version"] == 2  # never rewritten


def test_migrating_a_format2_ledger_keeps_its_spending_under_the_new_key(capsys, tmp_path, events_csv):
    """The old declaration's ledgers (both units) join the rows' ledger: what they spent still counts, once."""
    events = load_csv(events_csv, end_time="700", domain=Domain(dimensions=("0", "1")))
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    format2_file(old, events_fingerprint(events), z=4.0)
    declaration = ("--dimensions", 2, "--end-time", 700)
    status, _, err = run_cli(capsys, "ledger", "migrate", old, new, events_csv, "--dimensions", 3, "--end-time",
                             700)
    assert status == 2 and "as declared" in err and err.count("\n") == 1  # another declaration: nothing to move
    for _ in range(2):  # twice: migrated once
        status, _, err = run_cli(capsys, "ledger", "migrate", old, new, events_csv, *declaration)
        assert status == 0 and "moved 1 format-2 ledger" in err
    (data_set,) = LedgerBook(new).ledgers()
    old_spent = compose_epsilon([Mechanism("gaussian", 4.0)], DELTA)
    assert data_set.key.fingerprint == data_fingerprint(events) and len(data_set.entries) == 1
    assert data_set.spent() == pytest.approx(old_spent) and data_set.budget.epsilon == 3.0
    status, out, _ = formal_fit(capsys, events_csv, new, "--dimensions", "1,0", "--end-time", 700)
    assert status == 0 and json.loads(out)["ledger"]["spent_epsilon"] > old_spent  # composed with the old release


# --- item 10: every setting is part of a release's identity -----------------------------------------------------


BASE_OPTIONS = {"pgd": dict(bound=0.8), "cg": dict(radius=0.5), "pgd-clip": dict(bound=0.8, clip=1.0)}
SHARED_CHANGES = [dict(bin_size=0.25), dict(lags=5), dict(epsilon=1.5), dict(dp_delta=1e-6), dict(count_cap=6),
                  dict(count_cap=None), dict(count_cap="auto"), dict(count_cap="auto", count_cap_share=0.2),
                  dict(count_cap="auto", count_cap_max=32), dict(seed=3), dict(epsilon=None, sigma2=0.01),
                  dict(calibration="tight-paper"), dict(privacy_unit="sequence", max_events=50),
                  dict(privacy_unit="sequence", sequence_clip=2.0)]


def option_changes(family, rng) -> list[dict]:
    """Random other values of each option the family reads."""
    changes = []
    for setting in family.settings:
        if setting.kind == "choice":
            changes += [{setting.name: c} for c in setting.choices if c != setting.default]
        elif setting.kind == "bool":
            changes.append({setting.name: not setting.default})
        else:
            cast = int if setting.kind == "int" else float
            changes += [{setting.name: cast(v)} for v in rng.uniform(0.05, 3.0, 4) * (10 if cast is int else 1) + 1]
    return changes


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_setting_a_fit_reads_changes_its_release_identity(name):
    """Property: any change of a config that the family accepts (so reads) is another release request — the count
    cap, its automatic share and maximum, the unit's bounds and every family option included."""
    rng = np.random.default_rng(len(name))
    key = LedgerKey("rows-k")
    family = FAMILIES[name]
    base_settings = dict(method=name, bin_size=0.5, lags=4, count_cap=5, **BASE_OPTIONS.get(name, {}))
    if family.privacy.private:
        base_settings.update(epsilon=1.0, calibration="formal")
    base = FitConfig(**base_settings)
    accepted = 0
    for change in SHARED_CHANGES + option_changes(family, rng):
        try:
            other = FitConfig(**{**base_settings, **change})
        except ConfigError:
            continue  # a setting this family does not read is refused: it cannot change a charge
        if other == base:
            continue
        accepted += 1
        assert request_identity(key, other) != request_identity(key, base), change
        assert request_identity(key, other, "view") != request_identity(key, other), change
    assert accepted >= 6


def test_the_same_settings_on_another_declaration_are_another_release(tmp_path, events_csv):
    """A request identical in settings on another window of the same rows is not replayed from the first: it is a
    new release, charged to the same budget."""
    book = LedgerBook(tmp_path / "l.json")
    answers = []
    for end in ("700", "650"):
        events = load_csv(events_csv, end_time=end, domain=Domain(dimensions=("0", "1")))
        session = PrivacySession.for_events(events, book, data_fingerprint(events))
        answers.append(session.release(ssp()))
    assert not answers[1].replayed and answers[1].ledger.key == answers[0].ledger.key
    assert len(answers[1].ledger.metered) == 2
    assert answers[0].data_info.n_bins == 1400 and answers[1].data_info.n_bins == 1300  # each its own window


def test_a_file_and_a_partitioned_store_of_the_same_rows_charge_one_budget(capsys, tmp_path, sequences_csv):
    """The same rows released from a CSV file and from a store partitioned at random: one ledger, both charged."""
    ledger = tmp_path / "ledger.json"
    store = written(pd.read_csv(sequences_csv), tmp_path / "store", "store", np.random.default_rng(3))
    declared = ("--dimensions", 2, "--sequences", 6, "--end-time", 50)
    for data in (sequences_csv, store):
        status, out, _ = run_cli(capsys, "fit", data, "--bin-size", 0.5, "--lags", 4, "--method", "ssp",
                                 "--epsilon", 1, "--calibration", "formal", "--count-cap", 5, *declared,
                                 "--ledger", ledger)
        assert status == 0 and json.loads(out)["formal_guarantee"]
    (data_set,) = LedgerBook(ledger).ledgers()
    assert len(data_set.metered) == 2 and data_set.spent() == pytest.approx(
        compose_epsilon(data_set.mechanisms(), DELTA)) and data_set.spent() > 1.2


@pytest.mark.parametrize("budget", ["1e308", "1e5"])
def test_an_absurd_budget_is_one_line_exit_2_not_a_traceback(tmp_path, capsys, budget):
    """``--budget 1e308`` ended in a NaN traceback in the remaining budget; a budget above 10⁴ is refused."""
    from dphawkes_cli.main import main

    events = tmp_path / "events.csv"
    events.write_text("time,dimension\n0.5,0\n1.5,1\n2.5,0\n")
    code = main(["fit", str(events), "--bin-size", "1", "--lags", "1", "--method", "ssp", "--epsilon", "1",
                 "--calibration", "formal", "--count-cap", "2", "--end-time", "10", "--dimensions", "2",
                 "--ledger", str(tmp_path / "ledger.json"), "--budget", budget])
    err = capsys.readouterr().err
    assert code == 2 and "budget ε must be at most" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
