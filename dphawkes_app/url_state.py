"""What a shared link (the page URL) says about the data, and which of its settings were ignored.

A link names its data source with ``data=``:

* a preset scenario simulated on the fly — ``data=paper-4d&n=2000&dseed=3`` (or ``T=500`` for a horizon);
* a real data set of the data directory — ``data=sample&name=japan_quakes_zones`` (with ``start``/``end``
  when the observation window was stated);
* data a link cannot carry — ``data=upload&file=…`` (an uploaded file) or ``data=custom`` (a process
  built on the Data page). Opening such a link shows a default and says why.

Pure functions of plain dicts of strings (no Streamlit): the app passes ``st.query_params``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.kernels import SCENARIOS

DATA_KEYS = ("data", "n", "T", "dseed", "name", "start", "end", "file")


@dataclass(frozen=True)
class DataLink:
    """The data source a link names.

    Attributes
    ----------
    scenario : str, optional
        Preset scenario to simulate (with ``n_events`` or ``end_time`` and ``seed``).
    n_events, end_time, seed : optional
        The simulation's size and seed.
    sample : str, optional
        Name of a real data set in the data directory.
    start, end : str, optional
        Its stated observation window, as written in the link (numbers or dates).
    problem : str
        Why the link's data cannot be shown ("" when they can, or when the link names no data).
    """

    scenario: str | None = None
    n_events: int | None = None
    end_time: float | None = None
    seed: int = 1
    sample: str | None = None
    start: str | None = None
    end: str | None = None
    problem: str = ""


def data_params(dataset: Dataset) -> dict[str, str]:
    """The URL parameters that name ``dataset``'s source (see the module docstring)."""
    p = dataset.params
    if dataset.source == "simulated":
        if p.get("scenario") not in SCENARIOS:
            return {"data": "custom"}
        size = {"n": str(p["n_events"])} if p.get("n_events") is not None else {"T": f"{p['end_time']:g}"}
        return {"data": p["scenario"], **size, "dseed": str(p.get("seed", 1))}
    if dataset.source == "sample":
        window = {key: str(p[field]) for key, field in (("start", "start_time"), ("end", "end_time"))
                  if p.get(field) is not None}
        return {"data": "sample", "name": str(p.get("sample", dataset.label)), **window}
    return {"data": "upload", "file": str(p.get("file", dataset.label))}


def parse_data_params(params: Mapping[str, str], samples: tuple[str, ...] | list[str]) -> DataLink | None:
    """Read the data source of a link; ``None`` when the link names none.

    Parameters
    ----------
    params : mapping of str to str
        The URL's query parameters.
    samples : sequence of str
        Names of the real data sets available here.

    Returns
    -------
    DataLink or None
        With ``problem`` set when the data cannot be reproduced (an upload, a custom process, an unknown
        data set, an unreadable size or seed).
    """
    kind = params.get("data")
    if kind is None:
        return None
    if kind == "upload":
        file = params.get("file")
        return DataLink(problem=f"this link was made with an uploaded file{f' (“{file}”)' if file else ''}, and "
                                "uploaded files are not stored in links")
    if kind == "custom":
        return DataLink(problem="this link was made with a process built on the Data page, whose kernels are not "
                                "stored in links")
    if kind == "sample":
        name = params.get("name", "")
        if name not in samples:
            return DataLink(problem=f"this link names the data set “{name}”, which is not in this app's data directory")
        return DataLink(sample=name, start=params.get("start"), end=params.get("end"))
    if kind not in SCENARIOS:
        return DataLink(problem=f"this link names the data “{kind}”, which this app does not know")
    try:
        seed = int(params.get("dseed", 1))
        n_events = int(params["n"]) if "n" in params else None
        end_time = float(params["T"]) if "T" in params and n_events is None else None
    except ValueError:
        bad = ", ".join(f"{k}={params[k]}" for k in ("n", "T", "dseed") if k in params)
        return DataLink(problem=f"this link's simulation settings ({bad}) are not numbers")
    if n_events is None and end_time is None:
        n_events = 1000
    if (
        (n_events is not None and n_events < 1)
        or (end_time is not None and not (math.isfinite(end_time) and end_time > 0))
        or seed < 0
    ):
        return DataLink(problem="this link's simulation settings are out of range")
    return DataLink(scenario=kind, n_events=n_events, end_time=end_time, seed=seed)


def fallback_note(problem: str, fallback_label: str) -> str:
    """One line: why the link's data are not shown, and what is shown instead."""
    return f"{problem[:1].upper()}{problem[1:]}; showing {fallback_label} instead."


def ignored_params(link: Mapping[str, str], values: Mapping[str, object]) -> list[str]:
    """Settings of a link that a page could not use, as ``key=value`` strings.

    Parameters
    ----------
    link : mapping of str to str
        The URL's query parameters when the page started (before its widgets read them).
    values : mapping
        The value each widget took, by its key (the URL parameter's name); keys of widgets the page did
        not draw are absent and never reported.

    Returns
    -------
    list of str
        Every ``key=value`` of ``link`` whose widget shows another value (a value out of range, not a
        number, or not one of the choices is dropped by the widget).
    """
    return [f"{key}={text}" for key, text in link.items() if key in values and not _same(text, values[key])]


def _same(text: str, value) -> bool:
    if isinstance(value, bool):  # a checkbox writes true/false
        return text.lower() == str(value).lower()
    if not isinstance(value, (int, float)):
        return str(value) == text
    try:
        return math.isclose(float(text), float(value), rel_tol=1e-9, abs_tol=0.0)
    except ValueError:
        return False


def ignored_note(ignored: list[str]) -> str | None:
    """One line naming the ignored link settings, or ``None``."""
    if not ignored:
        return None
    what = "setting" if len(ignored) == 1 else "settings"
    return (f"Ignored the link's {what} {', '.join(ignored)}: not a valid value here (out of range, not a number "
            "or not one of the choices); the default is used instead.")
