"""Data sets the app and CLI work on: simulated scenarios, uploads and the real data directory.

The real data live outside the repository (default ``../shared/data`` next to the repo, override with
the ``DPHAWKES_DATA_DIR`` environment variable); each sub-folder holds ``events.csv``, optionally
``labels.csv``, and a ``PROVENANCE.md`` shown to the user. The windows and time units that the
provenance notes document are in :data:`DOCUMENTED_WINDOWS`, proposed to the user as the stated window.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import Events, load_csv, load_labels, load_parquet
from dphawkes_core.data.kernels import Scenario, get_scenario
from dphawkes_core.data.simulate import simulate
from dphawkes_core.errors import DataError

DATA_DIR_ENV = "DPHAWKES_DATA_DIR"
REPO_ROOT = Path(__file__).resolve().parents[2]  # dphawkes_core/data/datasets.py -> the repository


@dataclass(frozen=True)
class Dataset:
    """Events plus where they came from.

    Attributes
    ----------
    events : Events
        The data.
    label : str
        Short name shown to the user.
    source : str
        ``simulated``, ``upload`` or ``sample``.
    scenario : Scenario or None
        The true process when the data were simulated (enables error metrics).
    provenance : str
        Markdown text describing the data's origin and licence.
    params : dict
        How the data were made (scenario name, number of events, seed, file name), for export.
    """

    events: Events
    label: str
    source: str
    scenario: Scenario | None = None
    provenance: str = ""
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DocumentedWindow:
    """The observation window and time unit a data set's PROVENANCE.md documents.

    Attributes
    ----------
    time_unit : str
        Unit of the numeric ``time`` column (label only: the numbers are used as they are).
    start, end : str
        Window bounds on that axis; ``""`` when the provenance documents none.
    note : str
        Where the window comes from, in the provenance's words.
    """

    time_unit: str
    start: str = "0"
    end: str = ""
    note: str = ""


DOCUMENTED_WINDOWS = {
    "japan_quakes_zones": DocumentedWindow(
        "d", "0", "3652", "days since 2005-01-01 UTC; the source does not state the query window, [0, 3652) "
        "(2005-01-01 to 2015-01-01) is the provenance's reasonable assumption"),
    "mat_quakes_magnitude": DocumentedWindow(
        "d", "0", "17532", "days since 1976-01-01 UTC; the provenance's natural window [0, 17532) is "
        "1976-01-01 to 2024-01-01"),
    "email_dyad": DocumentedWindow(
        "h", "0", "", "hours since the employee's start date; no window end is documented"),
    "nyc_taxi": DocumentedWindow(
        "h", "0", "", "hours since each sequence's first event; no window end is documented"),
}


def default_data_dir() -> Path:
    """The real-data directory: ``$DPHAWKES_DATA_DIR`` or ``<repo>/../shared/data``."""
    configured = os.environ.get(DATA_DIR_ENV)
    return Path(configured).expanduser() if configured else (REPO_ROOT.parent / "shared" / "data")


@dataclass(frozen=True)
class SampleInfo:
    """A real data set found in the data directory."""

    name: str
    events_path: Path
    provenance: str

    @property
    def documented_window(self) -> DocumentedWindow | None:
        """The window its provenance documents, if it is one of the known data sets."""
        return DOCUMENTED_WINDOWS.get(self.name)


def list_samples(data_dir: str | os.PathLike | None = None) -> list[SampleInfo]:
    """Every sub-folder of ``data_dir`` that holds an ``events.csv`` (sorted by name)."""
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        events_path = folder / "events.csv"
        if events_path.is_file():
            prov = folder / "PROVENANCE.md"
            text = prov.read_text(errors="replace") if prov.is_file() else "(no PROVENANCE.md)"
            found.append(SampleInfo(folder.name, events_path, text))
    return found


def load_sample(info: SampleInfo, end_time: float | str | None = None,
                start_time: float | str | None = None, domain: Domain | None = None) -> Dataset:
    """Load a real data set with its declared dimensions, provenance and documented time unit: the one loader of
    real data (the Data page, a link to any page, the CLI's paper reproduction), so that a shared link loads
    what the Data page loads.

    Parameters
    ----------
    info : SampleInfo
        The data set.
    end_time, start_time : float or str, optional
        The observation window to state (e.g. the documented one); without an end the window is read
        from the data.
    domain : Domain, optional
        The declared domain; by default the data set's ``labels.csv`` (its own list of dimensions, public
        metadata) when it has one, else none (the dimensions are then read from the data).

    Returns
    -------
    Dataset
        The data, labelled with the data set's name and provenance.
    """
    names = load_labels(info.events_path.with_name("labels.csv"))
    if domain is None and names is not None:
        domain = Domain(dimensions=names)
    events = load_csv(info.events_path, end_time=end_time, names=names, start_time=start_time, domain=domain)
    documented = info.documented_window
    if documented is not None:
        events = dataclasses.replace(events, time_unit=documented.time_unit)
    return Dataset(
        events=events,
        label=info.name,
        source="sample",
        provenance=info.provenance,
        params={"sample": info.name, "path": str(info.events_path), "start_time": start_time, "end_time": end_time},
    )


def simulate_dataset(scenario: Scenario, n_events: int | None = None, end_time: float | None = None,
                     seed: int = 0) -> Dataset:
    """Simulate a scenario into a :class:`Dataset` that carries its ground truth."""
    events = simulate(scenario, n_events=n_events, end_time=end_time, seed=seed)
    size = f"{n_events} events" if n_events is not None else f"horizon {end_time:g}"
    return Dataset(
        events=events,
        label=f"{scenario.name}, {size}, seed {seed}",
        source="simulated",
        scenario=scenario,
        params={"scenario": scenario.name, "n_events": n_events, "end_time": end_time, "seed": seed},
    )


def default_dataset() -> Dataset:
    """The paper's setting: ``paper-2d`` with 1000 events (seed 1)."""
    return simulate_dataset(get_scenario("paper-2d"), n_events=1000, seed=1)


def upload_dataset(name: str, content: bytes, end_time: float | str | None = None, *,
                   start_time: float | str | None = None, time_unit: str | None = None) -> Dataset:
    """Validate an uploaded CSV or Parquet file (by its name's suffix).

    Raises :class:`DataError` with a plain-words message; the window and unit are those of
    :func:`~dphawkes_core.data.io.load_csv`.
    """
    if not content:
        raise DataError("the uploaded file is empty")
    load = load_parquet if Path(name).suffix.lower() in (".parquet", ".pq") else load_csv
    events = load(content, end_time=end_time, start_time=start_time, time_unit=time_unit)
    return Dataset(events=events, label=name, source="upload",
                   params={"file": name, "start_time": start_time, "end_time": end_time, "time_unit": time_unit})
