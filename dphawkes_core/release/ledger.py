"""Privacy ledger: every release on a data set, composed exactly, against a budget that refuses overruns.

One ledger per data set and privacy unit (:class:`LedgerKey`: a fingerprint of the events and their
window, and ``"event"`` — the paper's unit — or, later, ``"sequence"``). Each formal release (a fit, an
entry of the comparison table, the share of ε a fit spends choosing its own count cap) is an
:class:`Entry` holding its mechanisms (:class:`Mechanism`: Gaussian noise multiplier σ/S and number of
releases, discrete Gaussian likewise, or Laplace, or a pure ε-DP step) and the released estimate. The total is
composed exactly — Gaussian mechanisms compose to one Gaussian with ``μ = sqrt(Σ releases_i / z_i²)``
(Gaussian DP, Dong, Roth & Su 2019) whose (ε, δ) is the analytic Gaussian mechanism of ``dp_accounting``;
Laplace and pure steps join them through ``dp_accounting``'s privacy loss distributions — never by summing ε.
A discrete Gaussian release (an unseeded lagged DP-SSP, :mod:`~dphawkes_core.privacy.noise`) is not μ-GDP: a ledger
holding one composes every mechanism in zCDP (ρ adds up) and converts once (:func:`_zcdp_composed`), an upper
bound on the exact composition.

A :class:`Budget` (total ε at the ledger's δ) refuses a release that would take the composed total
above it (:class:`BudgetExceeded`, one line with what remains). The same release request (same data,
same settings, so the same noise distribution) is answered again from the ledger without drawing new
noise: re-rendering a page costs nothing, and averaging re-runs gains nothing.

Fits that are not formal releases (a seeded fit, the paper calibration, a window or setting read from
the data, the non-private CLS) are recorded but not metered: they carry no guarantee to compose, and
the ledger says so (:meth:`DataLedger.unmetered`).

The ledger is a :class:`LedgerBook`: one JSON file (with a checksum) holding every data set's ledger,
locked while a release is decided and replaced atomically, so it survives restarts and is shared by
scripted releases. A file that cannot be read, parsed or verified raises :class:`LedgerError` — it is
never reset. The file holds a hash of the raw data: keep it with the data, do not publish it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import fcntl
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from dphawkes_core.privacy.accounting import (MECHANISM_KINDS, BudgetExceeded, Mechanism, compose_epsilon, gaussian_mechanism,
                         mechanisms_of)
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig
from dphawkes_core.privacy.sequence import PRIVACY_UNITS

if TYPE_CHECKING:
    from dphawkes_core.data.io import Events

__all__ = [  # the ledger's API, with the mechanisms and composition of :mod:`.accounting` it records
    "DEFAULT_BUDGET_DELTA", "DEFAULT_BUDGET_EPSILON", "LEDGER_ENV", "MECHANISM_KINDS", "Budget", "BudgetExceeded",
    "DataLedger", "Entry", "LedgerBook", "LedgerError", "LedgerKey", "Mechanism", "Release", "compose_epsilon",
    "data_fingerprint", "default_ledger_path", "gaussian_mechanism", "is_metered", "mechanisms_of",
    "release_label", "release_request",
]

DEFAULT_BUDGET_EPSILON = 5.0
DEFAULT_BUDGET_DELTA = 1e-5
LEDGER_ENV = "DPHAWKES_LEDGER"
FILE_FORMAT = "dphawkes-ledger"
FILE_VERSION = 2  # 2: release identities from FitConfig.to_dict, data info stored with each release


class LedgerError(DPHawkesError):
    """The ledger file cannot be read, parsed or verified (it is reported, never reset)."""


def default_ledger_path() -> Path:
    """The app's ledger file: ``$DPHAWKES_LEDGER`` or ``~/.dphawkes/ledger.json``."""
    configured = os.environ.get(LEDGER_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".dphawkes" / "ledger.json"


def data_fingerprint(events: Events) -> str:
    """SHA-256 of the event times and windows of every sequence (dimension names are labels, not data)."""
    digest = hashlib.sha256()
    digest.update(np.int64(events.dim).tobytes())
    for seq in events.sequences:
        digest.update(np.float64([seq.start_time, seq.end_time]).tobytes())
        for times in seq.times:
            digest.update(np.int64(len(times)).tobytes())
            digest.update(np.ascontiguousarray(times, dtype=np.float64).tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class LedgerKey:
    """Which ledger: the data (fingerprint) and the privacy unit the releases protect."""

    fingerprint: str
    unit: str = "event"

    def __post_init__(self):
        if self.unit not in PRIVACY_UNITS:
            raise DPHawkesError(f"unknown privacy unit {self.unit!r}; choose one of {', '.join(PRIVACY_UNITS)}")

    @property
    def id(self) -> str:
        """``unit:fingerprint``, the key in the ledger file."""
        return f"{self.unit}:{self.fingerprint}"


# --- budget, entries and one data set's ledger ---------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """The total (ε, δ) a data set may spend; every release is composed at this δ."""

    epsilon: float = DEFAULT_BUDGET_EPSILON
    delta: float = DEFAULT_BUDGET_DELTA

    def __post_init__(self):
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise DPHawkesError(f"the budget ε must be a positive number, got {self.epsilon!r}")
        if not 0 < self.delta < 1:
            raise DPHawkesError(f"the budget δ must be in (0, 1), got {self.delta!r}")


@dataclass(frozen=True)
class Entry:
    """One release recorded in a ledger.

    Attributes
    ----------
    request : str
        Identity of the release request (:func:`release_request`): the same request is answered from here.
    label : str
        What was released, in words.
    formal : bool
        True when the release carries the formal guarantee: only these are metered.
    reasons : tuple of str
        Why it is not formal (empty when formal).
    mechanisms : tuple of Mechanism
        What it spent (empty for a non-private method).
    result : dict
        The released estimate as stored (:meth:`FitResult.to_record`).
    created : str
        UTC time of the release (ISO 8601).
    """

    request: str
    label: str
    formal: bool
    reasons: tuple[str, ...]
    mechanisms: tuple[Mechanism, ...]
    result: dict = field(default_factory=dict, compare=False)
    created: str = ""

    def epsilon(self, delta: float) -> float:
        """ε of this release alone at ``delta``."""
        return compose_epsilon(self.mechanisms, delta)


@dataclass(frozen=True)
class DataLedger:
    """The ledger of one data set: its budget, whether it is public, and every release (a snapshot).

    Attributes
    ----------
    key : LedgerKey
    budget : Budget
    label : str
        The data set's name, for display.
    public : bool
        True for data marked public (e.g. a simulation used for teaching): nothing is metered.
    entries : tuple of Entry
        In release order.
    """

    key: LedgerKey
    budget: Budget = Budget()
    label: str = ""
    public: bool = False
    entries: tuple[Entry, ...] = ()

    @property
    def metered(self) -> tuple[Entry, ...]:
        """The formal releases: the ones the budget counts."""
        return tuple(e for e in self.entries if e.formal)

    @property
    def unmetered(self) -> tuple[Entry, ...]:
        """Outputs shown without a formal guarantee (seeded, paper calibration, non-private…)."""
        return tuple(e for e in self.entries if not e.formal)

    def mechanisms(self) -> tuple[Mechanism, ...]:
        """Every mechanism of every metered release."""
        return tuple(m for e in self.metered for m in e.mechanisms)

    def spent(self) -> float:
        """Composed ε of every metered release at the budget's δ."""
        return compose_epsilon(self.mechanisms(), self.budget.delta)

    def naive_sum(self) -> float:
        """Σ of each release's ε alone (what summing would claim; its δ would add up too)."""
        return float(sum(e.epsilon(self.budget.delta) for e in self.metered))


    def find(self, request: str) -> Entry | None:
        """The entry of an earlier identical release request, if any."""
        return next((e for e in self.entries if e.request == request), None)

    def cost(self, mechanisms) -> tuple[float, float]:
        """``(ε of these mechanisms alone, composed ε of the ledger with them)`` at the budget's δ."""
        mechanisms = tuple(mechanisms)
        return (compose_epsilon(mechanisms, self.budget.delta),
                compose_epsilon(self.mechanisms() + mechanisms, self.budget.delta))

    def history(self) -> tuple[tuple[Entry, float, float, float], ...]:
        """Per metered release: ``(entry, its ε alone, composed ε so far, naive sum so far)``."""
        rows, past, naive = [], (), 0.0
        for entry in self.metered:
            past += entry.mechanisms
            alone = entry.epsilon(self.budget.delta)
            naive += alone
            rows.append((entry, alone, compose_epsilon(past, self.budget.delta), naive))
        return tuple(rows)

    def check(self, mechanisms) -> None:
        """Raise :class:`BudgetExceeded` if adding ``mechanisms`` would take the composed ε over budget."""
        if self.public:
            return
        alone, after = self.cost(mechanisms)
        if after > self.budget.epsilon:
            raise BudgetExceeded(
                f"refused: this release (ε = {alone:.3g} alone) would bring the composed ε of this data set to "
                f"{after:.3g}, over its budget ε = {self.budget.epsilon:.3g} (δ = {self.budget.delta:.0e}); "
                f"spent {self.spent():.3g}, remaining: one release of ε ≤ {self.remaining():.3g}")

    def remaining(self) -> float:
        """The remaining budget: the largest ε (alone, at the budget's δ) of one more Gaussian release that
        still fits. It exceeds ``budget − spent`` because releases compose sub-additively.

        Gaussian ledgers in closed form (``μ_next² = μ_budget² − μ_spent²``); with other mechanisms, by
        bisection on the new release's μ through :func:`compose_epsilon`.
        """
        from dp_accounting.gaussian_mechanism import get_epsilon_gaussian, get_sigma_gaussian

        past, delta = self.mechanisms(), self.budget.delta
        if compose_epsilon(past, delta) >= self.budget.epsilon:
            return 0.0
        mu_budget = 1.0 / get_sigma_gaussian(self.budget.epsilon, delta)
        if all(m.kind == "gaussian" for m in past):
            mu_next_sq = mu_budget**2 - sum(m.releases / m.parameter**2 for m in past)
            return float(get_epsilon_gaussian(1.0 / math.sqrt(mu_next_sq), delta)) if mu_next_sq > 0 else 0.0
        low, high = 0.0, mu_budget
        for _ in range(20):
            mid = (low + high) / 2
            fits = compose_epsilon(past + (Mechanism("gaussian", 1.0 / mid),), delta) <= self.budget.epsilon
            low, high = (mid, high) if fits else (low, mid)
        return float(get_epsilon_gaussian(1.0 / low, delta)) if low > 0 else 0.0

    def summary(self) -> dict:
        """Plain dict for ``dphawkes ledger show`` and the app (without the stored estimates)."""
        delta = self.budget.delta
        return {
            "fingerprint": self.key.fingerprint, "privacy_unit": self.key.unit, "label": self.label,
            "public": self.public, "budget_epsilon": self.budget.epsilon, "delta": delta,
            "spent_epsilon": self.spent(), "naive_sum_epsilon": self.naive_sum(),
            "remaining_epsilon": self.remaining(), "metered_releases": len(self.metered),
            "unmetered_outputs": len(self.unmetered),
            "entries": [{"created": e.created, "label": e.label, "formal": e.formal, "reasons": list(e.reasons),
                         "epsilon_alone": e.epsilon(delta) if e.formal else None,
                         "mechanisms": [dataclasses.asdict(m) for m in e.mechanisms], "request": e.request}
                        for e in self.entries],
        }


def is_metered(simulated: bool, ledger: DataLedger | None) -> bool:
    """Whether releases on a data set spend a budget: as its ledger says when it has one (the user marked it
    public or private); otherwise simulated data are public (no budget) and any other data private."""
    return not ledger.public if ledger is not None else not simulated


@dataclass(frozen=True)
class Release:
    """The answer to a release request: the stored entry, and whether it was replayed from the ledger."""

    entry: Entry
    replayed: bool
    ledger: DataLedger


# --- the file ------------------------------------------------------------------------------------------------


class LedgerBook:
    """Every data set's ledger in one JSON file (locked during a release, replaced atomically).

    Parameters
    ----------
    path : str or Path
        The ledger file; created on the first write. An existing file that cannot be read, parsed or
        verified raises :class:`LedgerError` on every access: it is never overwritten.
    """

    def __init__(self, path):
        self.path = Path(path).expanduser()

    def ledgers(self) -> tuple[DataLedger, ...]:
        """Every data set's ledger in the file."""
        return tuple(self._load().values())

    def get(self, key: LedgerKey) -> DataLedger | None:
        """The ledger of ``key``, or ``None`` when nothing was recorded for it."""
        return self._load().get(key.id)

    def open(self, key: LedgerKey, budget: Budget | None = None, label: str = "",
             public: bool | None = None) -> DataLedger:
        """The ledger of ``key``, created (default budget unless given) when new; a given ``budget`` or
        ``public`` replaces the stored one (a budget below what is already spent is refused)."""
        with self._locked() as ledgers:
            ledger = ledgers.get(key.id) or DataLedger(key, budget or Budget(), label)
            if budget is not None and budget != ledger.budget:
                spent = dataclasses.replace(ledger, budget=budget).spent()
                if spent > budget.epsilon:
                    raise BudgetExceeded(f"refused: a budget of ε = {budget.epsilon:.3g} is below the ε already "
                                         f"spent on this data set ({spent:.3g} at δ = {budget.delta:.0e})")
                ledger = dataclasses.replace(ledger, budget=budget)
            if public is not None:
                ledger = dataclasses.replace(ledger, public=public)
            ledger = dataclasses.replace(ledger, label=label or ledger.label)
            ledgers[key.id] = ledger
        return ledger

    def release(self, key: LedgerKey, request: str, run: Callable[[], dict], *, label: str, formal: bool,
                reasons=(), mechanisms=(), recorded: Callable[[], tuple] | None = None) -> Release:
        """Answer a release request: replay it if already paid for, refuse it if over budget, else run it.

        Parameters
        ----------
        key : LedgerKey
        request : str
            :func:`release_request` of the data and settings.
        run : callable
            Draws the release and returns it as a JSON-able dict (called only when neither replayed nor refused).
        label, formal, reasons, mechanisms :
            As in :class:`Entry`; ``mechanisms`` must be what ``run`` will spend (the budget is checked on them).
        recorded : callable, optional
            The mechanisms to record, asked after ``run`` (the same cost, with the values chosen during the
            release: :class:`~dphawkes_core.release.session.PrivacySession`); default ``mechanisms``.

        Raises
        ------
        BudgetExceeded
            When the release is formal and would exceed the budget (nothing is run or recorded).
        """
        with self._locked() as ledgers:
            ledger = ledgers.get(key.id) or DataLedger(key)
            earlier = ledger.find(request)
            if earlier is not None:
                return Release(earlier, True, ledger)
            if formal:
                ledger.check(mechanisms)
            result = run()
            spent = tuple(recorded()) if recorded is not None else tuple(mechanisms)
            entry = Entry(request, label, bool(formal), tuple(reasons), spent, result, _now())
            ledger = dataclasses.replace(ledger, entries=ledger.entries + (entry,))
            ledgers[key.id] = ledger
        return Release(entry, False, ledger)

    # storage

    @contextlib.contextmanager
    def _locked(self):
        """Exclusive lock on ``<path>.lock``; yields the ledgers (mutable dict) and writes them back."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = open(self.path.with_name(self.path.name + ".lock"), "a")
        except OSError as exc:
            raise LedgerError(f"cannot open the ledger {self.path}: {exc.strerror or exc}") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            ledgers = self._load()
            before = dict(ledgers)
            yield ledgers
            if ledgers != before:
                self._write(ledgers)

    def _load(self) -> dict[str, DataLedger]:
        if not self.path.exists():
            return {}
        where = f"the ledger file {self.path}"
        try:
            document = json.loads(self.path.read_text())
        except OSError as exc:
            raise LedgerError(f"cannot read {where}: {exc.strerror or exc}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise LedgerError(f"{where} is corrupted (not JSON: {exc}); it was not reset — restore it from a "
                              "backup, or move it away to start a new ledger") from None
        if isinstance(document, dict) and document.get("format") == FILE_FORMAT and document.get("version") == 1:
            raise LedgerError(f"{where} was written by an earlier dphawkes (ledger format 1), whose release "
                              "identities differ: it is not opened, so that no release is charged as new and no data "
                              "set starts a fresh budget by accident — keep using it with that version, or start a "
                              "new ledger file and carry the spent ε over with a smaller --budget")
        try:
            if document.get("format") != FILE_FORMAT or document.get("version") != FILE_VERSION:
                raise ValueError(f"not a {FILE_FORMAT} version {FILE_VERSION} file")
            if document.get("checksum") != _checksum(document["ledgers"]):
                raise ValueError("its checksum does not match its content (edited or damaged)")
            ledgers = [_ledger_from_dict(item) for item in document["ledgers"]]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LedgerError(f"{where} is corrupted ({exc}); it was not reset — restore it from a backup, "
                              "or move it away to start a new ledger") from None
        return {ledger.key.id: ledger for ledger in ledgers}

    def _write(self, ledgers: dict[str, DataLedger]) -> None:
        items = [_ledger_to_dict(ledger) for ledger in ledgers.values()]
        items = json.loads(_dumps(items))  # the form the checksum is read back in
        document = {"format": FILE_FORMAT, "version": FILE_VERSION, "checksum": _checksum(items), "ledgers": items}
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(temporary, "w") as handle:
                handle.write(_dumps(document, indent=1) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except OSError as exc:
            raise LedgerError(f"cannot write the ledger {self.path}: {exc.strerror or exc}") from None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _dumps(value, indent=None) -> str:
    """JSON with numpy values as plain numbers (non-finite floats kept, so a stored result reads back as is)."""
    return json.dumps(value, indent=indent, sort_keys=True,
                      default=lambda o: o.tolist() if isinstance(o, (np.ndarray, np.generic)) else str(o))


def _checksum(items) -> str:
    return hashlib.sha256(_dumps(items).encode()).hexdigest()


def _ledger_to_dict(ledger: DataLedger) -> dict:
    return {"fingerprint": ledger.key.fingerprint, "unit": ledger.key.unit, "label": ledger.label,
            "public": ledger.public, "budget": dataclasses.asdict(ledger.budget),
            "entries": [dataclasses.asdict(e) for e in ledger.entries]}


def _ledger_from_dict(item: dict) -> DataLedger:
    entries = tuple(Entry(e["request"], e["label"], bool(e["formal"]), tuple(e["reasons"]),
                          tuple(Mechanism(**m) for m in e["mechanisms"]), dict(e["result"]), e["created"])
                    for e in item["entries"])
    return DataLedger(LedgerKey(item["fingerprint"], item["unit"]), Budget(**item["budget"]), item["label"],
                      bool(item["public"]), entries)


# --- fits through a ledger -----------------------------------------------------------------------------------


def release_request(key: LedgerKey, config: FitConfig) -> str:
    """Identity of a release request: the data, the unit and every setting the fit reads (so the noise
    distribution): :meth:`~dphawkes_core.estimators.FitConfig.to_dict`, where an option the family does not
    read cannot appear (it is refused)."""
    settings = _dumps(sorted(config.to_dict().items()))
    return hashlib.sha256(f"{key.id}\n{settings}".encode()).hexdigest()


def release_label(config: FitConfig) -> str:
    """One line naming a fit's release: method, privacy target, Δ, p."""
    privacy = (f"ε = {config.epsilon:g}" if config.sigma2 is None and config.epsilon is not None
               else f"σ² = {config.sigma2:g}" if config.sigma2 is not None else "no noise")
    return f"{config.family.label}, {privacy}, Δ = {config.bin_size:g}, p = {config.lags}"
