"""The Data page's loading sources: an uploaded file and the real data sets of the data directory, each with its
observation window; a data set made here becomes the session's current one (:func:`adopt`)."""

import streamlit as st

from dphawkes_app.data.domain_input import declared, domain_section, sequence_keys, upload_with_domain
from dphawkes_app.layout import friendly_error
from dphawkes_app.state import current_dataset, set_dataset
from dphawkes_app.words import ADMIN
from dphawkes_core.data.datasets import DATA_DIR_ENV, default_data_dir, list_samples, load_sample
from dphawkes_core.data.io import MAX_FILE_BYTES
from dphawkes_core.errors import DPHawkesError


def adopt(make_dataset, success_message) -> None:
    """Make a data set and make it current; on a problem show it and keep the current one."""
    try:
        dataset = make_dataset()
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    set_dataset(dataset)
    st.success(success_message(dataset))


TIME_UNITS = {"as in the file (datetimes in seconds)": None, "seconds (s)": "s", "minutes (min)": "min",
              "hours (h)": "h", "days (d)": "d"}


def window_inputs(prefix: str, start: str = "", end: str = "") -> tuple[str | None, str | None]:
    """Start and end of the observation window (numbers or ISO-8601 datetimes; blank = from the data)."""
    c = st.columns(2)
    start = c[0].text_input("window start", value=start, key=f"{prefix}_start",
                            help="A number on the time column's axis or an ISO-8601 datetime. Blank: 0 for "
                                 "numbers, the first event for datetimes (read from the data).")
    end = c[1].text_input("window end", value=end, key=f"{prefix}_end",
                          help="Blank: the last event (read from the data). Events outside the window are "
                               "dropped and counted.")
    return start.strip() or None, end.strip() or None


def upload_section(previous):
    """CSV or Parquet upload with its window and time unit; a rejected file leaves the previous data set loaded."""
    st.markdown("Columns: `time,dimension`, optionally `sequence` (several independent sequences) and "
                "`start`/`end` (one window per sequence, for exploration: read from the data, never a stated window). "
                "`time` holds numbers or ISO-8601 datetimes; "
                "`dimension` holds integers 0…d−1, or labels (then every value is a label).")
    limit_mb = st.get_option("server.maxUploadSize")
    st.markdown(f"**Uploads are limited to {limit_mb}\u00a0MB per file** (the server's setting; the fit's memory "
                "follows the number of events, about 10 million fit in under a GB). Bigger data go through the "
                "command line — ask whoever runs this app (below).")
    with st.expander(f"{ADMIN}: bigger files and the command line"):
        st.markdown(f"The command line reads CSV or Parquet files itself (for exploration up to "
                    f"{MAX_FILE_BYTES // 2**20} MiB per file, with no limit once the domain is declared; Parquet "
                    "holds the same events in far fewer bytes) and a folder or glob of Parquet partitions piece by "
                    "piece, on this machine or a Dask cluster, for instance:")
        st.code("dphawkes fit 'events/*.parquet' --bin-size 0.1 --support 5 --start-time … --end-time … --dask local",
                language="bash")
    st.markdown("**Observation window** — state it to make the window public (the formal guarantee needs "
                "that); leave it blank to read it from the data.")
    start, end = window_inputs("upload")
    unit = TIME_UNITS[st.selectbox("time unit", list(TIME_UNITS), key="upload_unit",
                                   help="Convert the time axis: numbers are then read as seconds (e.g. Unix "
                                        "time), datetimes as seconds since the window start. 'As in the file' keeps "
                                        "numbers as they are and reads datetimes in seconds: choose hours or days for "
                                        "data spread over weeks.")]
    file = st.file_uploader("Event file (CSV or Parquet)", type=["csv", "txt", "parquet"], key="upload_csv")
    if file is None:
        return
    domain = declared("upload", file.file_id)
    marker = (file.file_id, file.name, file.size, start, end, unit, domain)
    if st.session_state.get("upload_marker") != marker:
        st.session_state["upload_marker"] = marker
        try:
            dataset = upload_with_domain(file.name, file.getvalue(), end_time=end, start_time=start, time_unit=unit,
                                         domain=domain)
        except DPHawkesError as exc:
            st.session_state["upload_error"] = str(exc)
        else:
            st.session_state["upload_error"] = None
            set_dataset(dataset)
    error = st.session_state.get("upload_error")
    if error:
        st.error(f"“{file.name}” was rejected: {error}. The previous data set ({previous.label}) is still loaded.",
                 icon=":material/warning:")
        return
    st.success(f"Loaded “{file.name}”.")
    current, _ = current_dataset()
    if current.source == "upload" and current.label == file.name:
        keys = sequence_keys(file.name, file.getvalue()) if current.events.n_sequences > 1 else None
        domain_section("upload", file.file_id, current, keys)


@st.cache_data(show_spinner="Loading the data set…", max_entries=4)
def _load_sample(name: str, path: str, mtime: float, start: str | None, end: str | None, domain, _info):
    return load_sample(_info, end_time=end, start_time=start, domain=domain)


def sample_section():
    """Real data sets from the data directory, each with its provenance."""
    data_dir = default_data_dir()
    samples = list_samples(data_dir)
    with st.expander(f"{ADMIN}: where these data sets come from"):
        st.caption("The data directory, set by an environment variable when the app starts; each data set is a "
                   "folder in it with its events and its provenance:")
        st.code(f"{DATA_DIR_ENV}={data_dir}", language="bash")
    if not samples:
        st.info("No real data sets are installed with this copy of the app: ask whoever runs it to add some.")
        return
    names = [s.name for s in samples]
    name = st.selectbox("Data set", names, key="sample_name")
    info = samples[names.index(name)]
    documented = info.documented_window
    if documented is not None:
        st.markdown(f"**Observation window** — proposed from the provenance ({documented.note}); time unit "
                    f"**{documented.time_unit}**. Clear the end to read the window from the data instead.")
        start, end = window_inputs(f"sample_{info.name}", documented.start, documented.end)
    else:
        st.markdown("**Observation window** — the provenance documents none: state it, or leave it blank to "
                    "read it from the data.")
        start, end = window_inputs(f"sample_{info.name}")
    labels = info.events_path.with_name("labels.csv").is_file()
    st.caption("Dimensions: declared by the data set's labels.csv (public metadata)." if labels else
               "No labels.csv: the dimensions are read from the data until you declare them below, after loading.")

    def load():
        return _load_sample(info.name, str(info.events_path), info.events_path.stat().st_mtime, start, end,
                            declared("sample", info.name), info)

    if st.button("Load this data set", type="primary", key="sample_go"):
        adopt(load, lambda d: f"Loaded {info.name}.")
    with st.expander("Provenance (where the data come from, how they were made)"):
        st.markdown(info.provenance)
    current, _ = current_dataset()
    if current.source == "sample" and current.label == info.name:
        if declared("sample", info.name) is not None and not current.events.dimensions_declared:
            adopt(load, lambda d: f"Reloaded {info.name} with the declared domain.")  # the declaration just made
            current, _ = current_dataset()
        domain_section("sample", info.name, current, from_metadata=labels)

