"""Data sets the app and CLI work on: simulated scenarios, uploads and the real data directory.

The real data live outside the repository (default ``../shared/data`` next to the repo, override with
the ``DPHAWKES_DATA_DIR`` environment variable); each sub-folder holds ``events.csv``, optionally
``labels.csv``, and a ``PROVENANCE.md`` shown to the user.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DataError
from .events import Events, load_csv, load_labels
from .kernels import Scenario, get_scenario
from .simulate import simulate

DATA_DIR_ENV = "DPHAWKES_DATA_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent


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


def load_sample(info: SampleInfo, end_time: float | None = None) -> Dataset:
    """Load a real data set with its dimension labels and provenance."""
    names = load_labels(info.events_path.with_name("labels.csv"))
    events = load_csv(info.events_path, end_time=end_time, names=names)
    return Dataset(
        events=events,
        label=info.name,
        source="sample",
        provenance=info.provenance,
        params={"sample": info.name, "path": str(info.events_path), "end_time": end_time},
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


def upload_dataset(name: str, content: bytes, end_time: float | None = None) -> Dataset:
    """Validate an uploaded CSV; raises :class:`DataError` with a plain-words message."""
    if not content:
        raise DataError("the uploaded file is empty")
    events = load_csv(content, end_time=end_time)
    return Dataset(events=events, label=name, source="upload", params={"file": name, "end_time": end_time})
