"""The Data page's declared domain: the dimensions (and sequence keys) of uploaded and real data as public inputs.

A formal release needs the number of dimensions d, their names and the set of sequences *declared*, not read
from the data (:mod:`dphawkes_core.data.domain`): otherwise one event in a new dimension would change the output's
shape. The page proposes the values found in the data, labelled "read from the data", and declares them only
when the user confirms them as public; a real data set's ``labels.csv`` is its declared list of dimensions.
Rows outside a declared domain are dropped and counted, never refused.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.domain import Domain
from dphawkes_core.data.io import load_csv, load_parquet
from dphawkes_core.data.io import sequence_keys as file_sequence_keys
from dphawkes_core.errors import DataError

DECLARED_KEY = "declared_domain"  # {(source, name): {"dimensions": tuple, "sequences": tuple | None}}


def is_parquet(name: str) -> bool:
    return Path(name).suffix.lower() in (".parquet", ".pq")


def upload_with_domain(name: str, content: bytes, end_time=None, *, start_time=None, time_unit=None,
                       domain: Domain | None = None) -> Dataset:
    """:func:`~dphawkes_core.data.datasets.upload_dataset` with a declared domain (``None``: read from the data)."""
    if not content:
        raise DataError("the uploaded file is empty")
    load = load_parquet if is_parquet(name) else load_csv
    events = load(content, end_time=end_time, start_time=start_time, time_unit=time_unit, domain=domain)
    return Dataset(events=events, label=name, source="upload",
                   params={"file": name, "start_time": start_time, "end_time": end_time, "time_unit": time_unit})


def sequence_keys(name: str, content: bytes) -> tuple[str, ...] | None:
    """The sequence keys of an uploaded file in order of first appearance, each as a declared load reads its cell
    (``None`` without a sequence column or for an unreadable file)."""
    try:
        return file_sequence_keys(content, parquet=is_parquet(name))
    except DataError:
        return None


def declared(source: str, name: str) -> Domain | None:
    """The domain the user declared for this upload or data set in this session, if any."""
    entry = st.session_state.get(DECLARED_KEY, {}).get((source, name))
    if entry is None:
        return None
    return Domain(dimensions=entry["dimensions"], sequences=entry["sequences"])


def _declare(source: str, name: str, dimensions: tuple, sequences) -> None:
    st.session_state.setdefault(DECLARED_KEY, {})[(source, name)] = {"dimensions": dimensions,
                                                                      "sequences": sequences}


def _undeclare(source: str, name: str) -> None:
    st.session_state.get(DECLARED_KEY, {}).pop((source, name), None)


def parse_names(text: str) -> tuple[str, ...]:
    """Comma-separated dimension names, in index order (a lone number is a name here, not a count)."""
    names = tuple(name.strip() for name in text.split(","))
    if not text.strip() or any(not name for name in names):
        raise DataError("write the dimension names separated by commas, e.g. 0, 1 or login, purchase")
    return names


def domain_section(source: str, name: str, dataset: Dataset, keys: tuple[str, ...] | None = None,
                   from_metadata: bool = False) -> None:
    """What of the loaded data's domain is declared, and the form that declares what was read from the data.

    Parameters
    ----------
    source, name : str
        Which upload or data set (the declaration is kept per file for the session).
    dataset : Dataset
        The loaded data.
    keys : tuple of str, optional
        The sequence keys found in the data (several sequences).
    from_metadata : bool
        The dimensions come from the data set's ``labels.csv``.
    """
    events = dataset.events
    st.markdown("**Declared domain** — a formal release needs the dimensions"
                + (" and the sequences" if events.n_sequences > 1 else "")
                + " stated as public inputs, not read from the data: otherwise one event in a new dimension or "
                  "sequence would change the shape of the result.")
    if events.dimensions_declared and events.sequences_declared:
        where = "the data set's labels.csv" if from_metadata else "you"
        st.success(f"Declared by {where} (public): d = {events.dim} dimensions — {', '.join(events.names)}"
                   + (f"; {events.n_sequences:,} sequence keys" if events.n_sequences > 1 else "")
                   + (f". {events.outside_domain:,} row(s) outside it were dropped and counted."
                      if events.outside_domain else ". Rows outside it are dropped and counted, never refused."),
                   icon=":material/verified:")
        if not from_metadata and declared(source, name) is not None:
            st.button("Undeclare (read them from the data again)", key=f"{source}_undeclare",
                      on_click=_undeclare, args=(source, name))
        return
    c = st.columns([3, 2])
    text = c[0].text_input("dimensions (comma-separated names, in index order)",
                           value=", ".join(events.names), key=f"{source}_dims_{name}",
                           help="Proposed: the dimensions found in these data. Declare every dimension data of this "
                                "kind can have, chosen without looking at the data; an event in an undeclared "
                                "dimension is then dropped and counted.")
    c[0].caption(":material/warning: **Read from the data** until you declare them as public.")
    declare_keys = False
    if events.n_sequences > 1 and not events.sequences_declared:
        if keys is None:
            c[1].caption(f"{events.n_sequences:,} sequences read from the data; their keys could not be listed here — "
                         "declare them with the command line's `--sequences KEYFILE`.")
        else:
            declare_keys = c[1].checkbox(
                f"declare the {len(keys):,} sequence keys found as public",
                key=f"{source}_seqs",
                help="a declared key without rows becomes an empty sequence, a row with an "
                "undeclared key is dropped; with declared sequences the file's own "
                "start/end columns are not read (state the window above)",
            )
    if c[1].button("Declare as public", key=f"{source}_declare", type="primary"):
        try:
            names = parse_names(text)
        except DataError as exc:
            st.error(f"Not declared: {exc}.", icon=":material/warning:")
            return
        _declare(source, name, names, tuple(keys) if declare_keys and keys is not None else None)
        st.rerun()
