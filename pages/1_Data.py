"""Data page: simulate, upload or open a data set; look at its events and bin counts.

The page is a frame: each source is one section (:mod:`dphawkes_app.data.simulate`, :mod:`dphawkes_app.data.load`)
and the loaded data set is drawn by :mod:`dphawkes_app.data.view`."""

import streamlit as st

from dphawkes_app.data.load import sample_section, upload_section
from dphawkes_app.data.simulate import simulate_section
from dphawkes_app.data.view import plots_section, window_section
from dphawkes_app.layout import dataset_caption, sidebar_dataset
from dphawkes_app.state import current_dataset

st.set_page_config(page_title="Data · dphawkes", page_icon=":material/lock:", layout="wide")
st.title("Data")

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
