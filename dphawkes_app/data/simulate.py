"""The Data page's simulation source: the presets and the custom builder, with a live stationarity check."""

import numpy as np
import streamlit as st

from dphawkes_app.caches import simulate_cached
from dphawkes_app.data.builder import FAMILIES, MAX_CUSTOM_DIM, build_scenario
from dphawkes_app.data.load import adopt
from dphawkes_app.guidance import count_noun
from dphawkes_app.layout import friendly_error
from dphawkes_core.data.datasets import Dataset
from dphawkes_core.data.kernels import SCENARIOS, get_scenario
from dphawkes_core.data.simulate import MAX_SIMULATED_EVENTS
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators.cost import estimate_simulation_cost


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

