"""What the Data page shows of the loaded data set: what was read, its window, and its plots."""

import dataclasses

import streamlit as st

from dphawkes_app.figures.data import bin_heatmap, counting_process, event_raster
from dphawkes_app.guidance import time_scale
from dphawkes_app.layout import friendly_error
from dphawkes_app.words import read_words
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.privacy.time_scale import nice_number
from dphawkes_core.statistics.binning import bin_sparse

MAX_HEATMAP_BINS = 1_000_000  # the heatmap's default Δ never makes more bins (they are summed for drawing anyway)


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
