"""Streamlit glue for the privacy budget: the current data set's ledger, its display, and metered releases.

The accounting is :mod:`dphawkes_core.ledger`; this module only reads the ledger file, shows the
remaining budget, and sends the pages' fits on private data through it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from dphawkes_experiments.compare import compare_methods
from dphawkes_core.datasets import Dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.ledger import (DataLedger, LedgerBook, LedgerError, LedgerKey, data_fingerprint,
                                  default_ledger_path, is_metered)
from dphawkes_core.session import ledger_fitter, metered_fit
from .common import config_items, fit_cached, friendly_error

BUDGET_PAGE = "pages/6_Privacy_budget.py"
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
    book : LedgerBook
        The app's ledger file.
    key : LedgerKey
        The data set (event-level unit).
    simulated : bool
        Simulated data are public (no budget) and other data private, unless the ledger says otherwise.
    ledger : DataLedger or None
        What the file holds for the data set (``None``: nothing yet).
    error : str
        Why the file could not be read (then releases on private data stop).
    """

    book: LedgerBook
    key: LedgerKey
    simulated: bool
    ledger: DataLedger | None = None
    error: str = ""

    @property
    def metered(self) -> bool:
        """Releases on this data set spend its budget (private data: real or uploaded unless marked public, or a
        simulation marked private)."""
        return is_metered(self.simulated, self.ledger)

    def current(self) -> DataLedger:
        """The stored ledger, or the empty one (default budget) a first release would create."""
        return self.ledger or DataLedger(self.key)


@st.cache_data(show_spinner=False, max_entries=8)
def _ledger_key(dataset_fp: str, _dataset: Dataset) -> LedgerKey:
    return LedgerKey(data_fingerprint(_dataset.events))


def budget_state(dataset: Dataset, dataset_fp: str) -> BudgetState:
    """Read the current data set's ledger from the app's ledger file (a damaged file is an ``error``)."""
    book, key = LedgerBook(default_ledger_path()), _ledger_key(dataset_fp, dataset)
    simulated = dataset.source == "simulated"
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
        st.error(f"{state.error[:1].upper()}{state.error[1:]} — {what}.", icon="⚠️")
        return
    if not state.metered:
        st.caption(":material/public: **" + ("Simulated data" if state.simulated else "Marked public (published data)")
                   + ": public — no budget.** Nothing is metered"
                   + ("; change it on the *Privacy budget* page." if details else "."))
        return
    ledger = state.current()
    st.info(f"**Privacy budget of this data set:** composed ε spent **{ledger.spent():.3g}** of "
            f"{ledger.budget.epsilon:.3g} (δ = {ledger.budget.delta:.0e}) over {len(ledger.metered)} release(s); "
            f"remaining: one more release of ε ≤ **{ledger.remaining():.3g}**."
            + (" Details and the budget setting: *Privacy budget* page." if details else ""),
            icon=":material/account_balance_wallet:")


def refuse_experiments(state: BudgetState) -> bool:
    """On private data, say that sweeps and audits are refused and return True (the page then stops them)."""
    if not (state.metered or (state.error and not state.simulated)):
        return False
    st.info(EXPERIMENTS_REFUSED, icon=":material/block:")
    return True


def release_fit(state: BudgetState, dataset_fp: str, stats, config, data_info: dict):
    """The fit to show: cached on public data; on private data a release through the ledger — shown again
    from the ledger when already paid for, refused past the budget. ``None`` when nothing is shown."""
    if not state.metered:
        return fit_cached(dataset_fp, stats, config_items(config))
    if state.error:
        return None
    try:  # a sequence-level fit goes to the data set's sequence-level ledger
        metered = metered_fit(state.book, replace(state.key, unit=config.privacy_unit), stats, config, data_info)
    except DPHawkesError as exc:
        friendly_error(exc)
        return None
    if metered.entry.formal and not metered.replayed:
        st.rerun()  # draw the page again: the release now comes from the ledger and the budget box is current
    st.caption(":material/replay: Shown again from the ledger: already paid for — no new noise, no privacy spent."
               if metered.entry.formal else "Not metered: " + "; ".join(metered.entry.reasons) +
               " — the ledger lists it apart from the formal releases.")
    return metered.result


def metered_comparison(state: BudgetState, stats, data_info: dict, config, epsilon: float, reference, public,
                       methods, include_slow: bool):
    """The comparison table's other methods on private data: every formal one is a release, so they run
    only when the user asks (each is then replayed from the ledger on later renders). ``None`` when not asked."""
    if state.error:
        return None
    if not st.toggle("Compare with the other methods (each formal one is a release that spends ε)", key="cmp_release"):
        st.caption("Off on private data: each method's fit would be another release on the budget.")
        return None
    key = replace(state.key, unit=config.privacy_unit)
    return compare_methods(stats, data_info, config, epsilon, reference, public, methods, include_slow,
                           fitter=ledger_fitter(state.book, key, data_info), released=True)
