"""Streamlit glue for the privacy budget: the current data set's ledger, its display, and metered releases.

The accounting is :mod:`dphawkes_core.release.ledger`; this module only reads the ledger (the file, or the team's
database, that ``DPHAWKES_LEDGER`` names), shows the remaining budget, and sends the pages' fits on private data
through it — on a shared deployment through a store that refuses a visitor the owner's settings
(:mod:`.owner`).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.row_key import data_fingerprint, events_fingerprint
from dphawkes_core.release.ledger import PUBLIC_MARK_REASON, DataLedger, LedgerKey, is_metered
from dphawkes_core.release.ledger_address import default_ledger_address, open_ledger
from dphawkes_core.release.ledger_store import LedgerError, LedgerStore

from .owner import ReadOnlySettings, may_change_settings

BUDGET_PAGE = "pages/6_Privacy_budget.py"
SEQUENCE_VIEW_TEXT = ("closed — an event-level release on these data protects single events only, so what the "
                      "releases reveal about one whole sequence is unbounded and sequence-level releases are refused")
EXPERIMENTS_REFUSED = ("Sweeps and audits are experiments for simulated or public data: on private data their "
                       "results (errors against the raw data, thousands of seeded runs) are not private releases, "
                       "and settings tuned on them would be taken from the data. They are refused here — run "
                       "them on a simulation, or, if these data are published, mark them public on the *Privacy "
                       "budget* page.")


@dataclass(frozen=True)
class BudgetState:
    """The current data set's ledger as this run of a page sees it.

    Attributes
    ----------
    book : LedgerStore
        The app's ledger (a file or a database; settings read-only for a visitor of a shared deployment).
    key : LedgerKey
        The data set (event-level unit).
    simulated : bool
        Simulated data are public (no budget) and other data private, unless the ledger says otherwise.
    ledger : DataLedger or None
        What the file holds for the data set (``None``: nothing yet).
    error : str
        Why the file could not be read (then releases on private data stop).
    """

    book: LedgerStore
    key: LedgerKey
    simulated: bool
    ledger: DataLedger | None = None
    error: str = ""

    @property
    def metered(self) -> bool:
        """Releases on this data set spend its budget (private data: real or uploaded unless marked public, or a
        simulation marked private)."""
        return is_metered(self.simulated, self.ledger)

    @property
    def private(self) -> bool:
        """The data are treated as private: metered, or an unreadable ledger on data not simulated."""
        return self.metered or (bool(self.error) and not self.simulated)

    def current(self) -> DataLedger:
        """The stored ledger, or the empty one (default budget) a first release would create."""
        return self.ledger or DataLedger(self.key)


@st.cache_data(show_spinner=False, max_entries=8)
def _ledger_key(dataset_fp: str, _dataset: Dataset, unit: str = "event") -> LedgerKey:
    return LedgerKey(data_fingerprint(_dataset.events), unit)


def rows_key(dataset: Dataset, dataset_fp: str) -> str:
    """The key of the data set's rows (its ledger's, whatever is declared about them)."""
    return _ledger_key(dataset_fp, dataset).fingerprint


@st.cache_data(show_spinner=False, max_entries=8)
def release_view(dataset_fp: str, _dataset: Dataset) -> str:
    """What was declared about the rows, as a release's identity holds it: the loaded events' fingerprint, as the
    CLI's (so the same release asked from the CLI and the app is one release)."""
    return events_fingerprint(_dataset.events)


def budget_state(dataset: Dataset, dataset_fp: str, unit: str = "event") -> BudgetState:
    """Read the current data set's ledger for the privacy ``unit`` from the app's ledger (a damaged file or an
    unreachable database is an ``error``)."""
    key, simulated = _ledger_key(dataset_fp, dataset, unit), dataset.source == "simulated"
    book = open_ledger(default_ledger_address())
    if not may_change_settings():
        book = ReadOnlySettings(book)
    try:
        return BudgetState(book, key, simulated, book.get(key))
    except LedgerError as exc:
        return BudgetState(book, key, simulated, error=str(exc))


def show_budget(state: BudgetState, details: bool = True) -> None:
    """One box: the remaining budget of private data, "public — no budget" for a simulation, or the file's
    error; ``details`` points to the Privacy budget page."""
    if state.error:
        what = ("simulated data are treated as public meanwhile" if state.simulated
                else "private releases on this data set are stopped until it is repaired")
        st.error(f"{state.error[:1].upper()}{state.error[1:]} — {what}.", icon=":material/error:")
        return
    if not state.metered:
        mark = state.ledger.public_mark if state.ledger is not None else None
        st.caption(":material/public: **" + ("Simulated data" if state.simulated and mark is None else
                                             "Marked public (published data)")
                   + ": public — no budget.** Nothing is metered"
                   + (f": {PUBLIC_MARK_REASON} ({mark.sentence()})" if mark is not None else "")
                   + ("; change it on the *Privacy budget* page." if details else "."))
        return
    if state.ledger is None and state.book.shared:
        st.warning("**No budget yet:** the team's ledger holds no budget for these data, so a private release on "
                   "them is refused until the data owner sets one (`dphawkes ledger budget LEDGER DATA --epsilon E`).",
                   icon=":material/account_balance_wallet:")
        return
    ledger = state.current()
    st.info(f"**Privacy budget of this data set:** composed ε spent **{ledger.spent():.3g}** of "
            f"{ledger.budget.epsilon:.3g} (δ = {ledger.budget.delta:.0e}) {releases_text(len(ledger.metered))}; "
            f"remaining: one more release of ε ≤ **{ledger.remaining():.3g}**."
            + (f" ({ledger.key.unit}-level view: {SEQUENCE_VIEW_TEXT})" if ledger.closed else "")
            + both_views(ledger)
            + (" Details and the budget setting: *Privacy budget* page." if details else ""),
            icon=":material/account_balance_wallet:")


def releases_text(count: int) -> str:
    """How many formal releases the spent ε composes: ``"no release yet"``, ``"in one release"``,
    ``"in 3 releases"``."""
    if count == 0:
        return "— no release yet"
    return "in one release" if count == 1 else f"in {count:,} releases"


def both_views(ledger: DataLedger) -> str:
    """Every release on the rows, whatever its unit, and the budget as the other unit sees it (one sentence; empty
    before the first release)."""
    if not ledger.metered:
        return ""
    units = [e.unit for e in ledger.metered]
    other = ledger.view("sequence" if ledger.key.unit == "event" else "event")
    seen = "closed (an event-level release without a cap bounds nothing per sequence)" if other.closed else \
        f"spent {other.spent():.3g} of {other.budget.epsilon:.3g}"
    return (f" These rows' releases, counted in both views: {units.count('event')} event-level and "
            f"{units.count('sequence')} sequence-level; seen per {other.key.unit}: {seen}.")


def refuse_experiments(state: BudgetState) -> bool:
    """On private data, say that sweeps and audits are refused and return True (the page then stops them)."""
    if not (state.metered or (state.error and not state.simulated)):
        return False
    st.info(EXPERIMENTS_REFUSED, icon=":material/block:")
    return True


SIMULATED_COPY_MAX_EVENTS = 50_000


def simulated_copy_scenario(dataset: Dataset):
    """A simulated process with the data's shape: the first known scenario with the same number of dimensions
    (``None`` when there is none)."""
    from dphawkes_core.data.kernels import SCENARIOS, get_scenario

    return next((get_scenario(name) for name in SCENARIOS if get_scenario(name).dim == dataset.events.dim), None)


def offer_simulated_copy(dataset: Dataset, key: str, what: str = "Run it on a simulation instead") -> None:
    """The one-click way on from a refusal on private data: load a public simulation with the same number of
    dimensions and (up to 50,000) events — no budget — and rerun the page on it."""
    from .caches import simulate_cached
    from .guidance import count_noun
    from .state import set_dataset

    scenario = simulated_copy_scenario(dataset)
    if scenario is None:
        from dphawkes_core.data.kernels import get_scenario

        scenario = get_scenario("paper-2d")
    n_events = int(min(max(dataset.events.n_events, 1000), SIMULATED_COPY_MAX_EVENTS))

    def load():
        set_dataset(simulate_cached(repr(scenario), scenario, n_events, None, 1))

    st.button(f"{what}: simulate {count_noun(n_events, 'event')} of {scenario.name} (d = {scenario.dim}; public, "
              "no budget)", key=key, on_click=load, type="primary", icon=":material/science:")
