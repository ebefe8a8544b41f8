"""Data page: simulate, upload or open a data set; look at its events and bin counts."""

import dataclasses

import numpy as np
import streamlit as st

from dphawkes_app.caches import simulate_cached
from dphawkes_app.data.builder import FAMILIES, MAX_CUSTOM_DIM, build_scenario
from dphawkes_app.data.domain_input import declared, domain_section, sequence_keys, upload_with_domain
from dphawkes_app.figures.data import bin_heatmap, counting_process, event_raster
from dphawkes_app.guidance import count_noun, time_scale
from dphawkes_app.layout import dataset_caption, friendly_error, sidebar_dataset
from dphawkes_app.state import current_dataset, set_dataset
from dphawkes_app.words import ADMIN, read_words
from dphawkes_core.data.datasets import DATA_DIR_ENV, Dataset, default_data_dir, list_samples, load_sample
from dphawkes_core.data.io import MAX_FILE_BYTES
from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.data.simulate import MAX_SIMULATED_EVENTS
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators.cost import estimate_simulation_cost
from dphawkes_core.privacy.time_scale import nice_number
from dphawkes_core.statistics.binning import bin_sparse

MAX_HEATMAP_BINS = 1_000_000  # the heatmap's default Δ never makes more bins (they are summed for drawing anyway)

st.set_page_config(page_title="Data · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Data")


def custom_scenario():
    """Widgets of the custom builder; returns the scenario (or raises ConfigError)."""
    d = st.number_input("dimensions d", min_value=1, max_value=MAX_CUSTOM_DIM, value=2, step=1, key="cust_d")
    st.markdown("**Baselines η** (events per unit time without excitation)")
    cols = st.columns(int(d))
    baselines = [cols[i].number_input(f"η{i + 1}", min_value=0.0, value=0.2, step=0.05, format="%.4g",
                                      key=f"cust_eta_{i}") for i in range(int(d))]
    st.markdown("**Kernels h_ij**: how an event in dimension j raises the intensity of dimension i")
    families, params = [], []
    for i in range(int(d)):
        fam_row, par_row = [], []
        with st.expander(f"Kernels into dimension {i + 1}", expanded=d <= 2):
            for j in range(int(d)):
                c = st.columns(4)
                options = list(FAMILIES)
                fam = c[0].selectbox(f"h{i + 1},{j + 1}: from {j + 1}", options,
                                     index=options.index("exponential" if i == j else "zero"),
                                     key=f"cust_fam_{i}_{j}")
                values = {}
                for k, spec in enumerate(FAMILIES[fam]):
                    values[spec.name] = c[k + 1].number_input(
                        spec.label, min_value=spec.minimum, value=spec.default, format="%.4g",
                        key=f"cust_{fam}_{spec.name}_{i}_{j}")
                fam_row.append(fam)
                par_row.append(values)
        families.append(fam_row)
        params.append(par_row)
    return build_scenario(baselines, families, params)


def simulate_section(previous: Dataset) -> None:
    """Presets and the custom builder, with a live stationarity check (the size starts at ``previous``'s, the data
    set loaded before, when it is a simulation)."""
    preset = st.selectbox("Scenario", [*SCENARIOS, "custom"], key="sim_preset",
                          help="paper-2d and paper-4d are the processes of the paper's experiments")
    try:
        scenario = custom_scenario() if preset == "custom" else get_scenario(preset)
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    rho = scenario.spectral_radius()
    explosive = rho >= 1
    if explosive:
        st.error(f"Explosive: the spectral radius of the kernel-norm matrix is {rho:.3f} ≥ 1, so every event "
                 "triggers on average one or more new events and the count grows without bound. Lower the "
                 "kernel norms (α, height × width, …) until it is below 1.", icon=":material/block:")
    else:
        rates = scenario.stationary_rate()
        st.success(f"Stationary: spectral radius {rho:.3f} < 1; mean event rates "
                   + ", ".join(f"{r:.3g}" for r in rates) + " per unit time.", icon=":material/check_circle:")
    with st.expander("Kernel formulas"):
        st.table({f"into {i + 1}": [scenario.kernels[i][j].describe() for j in range(scenario.dim)]
                  for i in range(scenario.dim)})
    c = st.columns(3)
    mode = c[0].radio("Stop after", ["number of events", "horizon"], key="sim_size_mode")
    if mode == "number of events":
        loaded = previous.params.get("n_events") if previous.source == "simulated" else None
        n_events = int(c[1].number_input("events", min_value=1, max_value=MAX_SIMULATED_EVENTS,
                                         value=int(loaded or 1000), step=500, key="sim_events",
                                         help="starts at the size of the loaded simulation"))
        end_time, expected = None, float(n_events)
    else:
        end_time = float(c[1].number_input("horizon T", min_value=1e-3, value=1000.0, format="%.6g",
                                           key="sim_horizon"))
        n_events = None
        expected = float(np.sum(scenario.stationary_rate())) * end_time if not explosive else np.inf
    seed = int(c[2].number_input("seed", min_value=0, max_value=2**31 - 2, value=1, step=1, key="sim_seed"))
    cost = estimate_simulation_cost(expected, scenario.dim)
    if cost.level != "ok":
        (st.error if cost.refused else st.warning)(cost.reason.capitalize())
    if st.button("Simulate", type="primary", disabled=explosive or cost.refused, key="sim_go"):
        adopt(lambda: simulate_cached(repr(scenario), scenario, n_events, end_time, seed),
              lambda d: f"Simulated {count_noun(d.events.n_events, 'event')}.")


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


def window_section(events) -> None:
    """What was read, and whether the observation window was stated or read from the data."""
    st.markdown(f"**What was read:** {read_words(events)}")
    if not events.window_stated:
        st.warning("Window read from the data — not a formal guarantee: where the window ends (or starts) "
                   "depends on the events themselves, so one more event would change it. State the window "
                   "where you load the data.", icon=":material/warning:")


def plots_section(dataset):
    """Raster, counting process and bin-count heatmap of one sequence."""
    events = dataset.events
    for warning in events.warnings:
        st.warning(warning)
    seq = 0
    c = st.columns(2)
    if events.n_sequences > 1:
        seq = int(c[0].number_input("sequence", min_value=0, max_value=events.n_sequences - 1, value=0,
                                    key="plot_sequence"))
    longest = max(s.end_time for s in events.sequences)
    proposed = time_scale(events).bin_size
    if longest / proposed > MAX_HEATMAP_BINS:  # e.g. datetimes read in seconds: millions of bins
        proposed = nice_number(longest / MAX_HEATMAP_BINS)
    unit = f" ({events.time_unit})" if events.time_unit else ""
    bin_size = float(c[1].number_input(f"bin size Δ for the heatmap{unit}", min_value=1e-6, format="%.4g",
                                       value=proposed, key="plot_bin_size",
                                       help="default: about a quarter of the data's mean time between events "
                                            f"(at most {MAX_HEATMAP_BINS:,} bins)"))
    one = dataclasses.replace(events, sequences=(events.sequences[seq],), warnings=())
    if one.n_events == 0:
        st.info("This sequence has no events.")
        return
    st.plotly_chart(event_raster(one), key="raster")
    st.plotly_chart(counting_process(one), key="counting")
    try:
        binned = bin_sparse(one, bin_size)  # the non-empty bins: any number of bins can be drawn
    except DPHawkesError as exc:
        friendly_error(exc)
        return
    st.plotly_chart(bin_heatmap(binned, bin_size, one.names, time_unit=one.time_unit), key="heatmap")


SOURCES = {"Simulate": "Simulate", "Upload a CSV": "Upload a file (CSV or Parquet)", "Sample data": "Real data sets"}


def main() -> None:
    """The source chosen (simulate, upload, a real data set), then the loaded data set: its window, provenance and
    plots."""
    previous, _ = current_dataset()
    if "data_source" not in st.session_state:  # a new visit: the source of the loaded data
        st.session_state["data_source"] = {"upload": "Upload a CSV", "sample": "Sample data"}.get(previous.source,
                                                                                                 "Simulate")
    source = st.radio("Source", list(SOURCES), horizontal=True, key="data_source", format_func=SOURCES.get)
    if source == "Simulate":
        simulate_section(previous)
    elif source == "Upload a CSV":
        upload_section(previous)
    else:
        sample_section()

    dataset, _ = current_dataset()
    st.divider()
    st.markdown("Current data set: " + dataset_caption(dataset))
    window_section(dataset.events)
    if dataset.provenance and dataset.source == "sample":
        with st.expander("Provenance of the loaded data set"):
            st.markdown(dataset.provenance)
    plots_section(dataset)
    sidebar_dataset(dataset)


main()
