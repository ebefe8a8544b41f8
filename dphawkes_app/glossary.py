"""The app's words in plain language, reachable from every page: :func:`glossary_sidebar` puts them in the
sidebar, each explained without its own name, with the formula behind a "details" switch."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Term:
    """One word of the app.

    Attributes
    ----------
    name : str
        The word as the pages write it.
    plain : str
        What it means, in words that do not use the word itself.
    formula : str
        The definition in symbols (Markdown), shown only on request.
    """

    name: str
    plain: str
    formula: str


GLOSSARY = (
    Term("ε (epsilon)",
         "How much one output may reveal about any one person or event: seeing it, anyone's odds that the event "
         "is in the data move by at most the factor e to this power. Smaller means more private and noisier.",
         "For neighbouring data D, D′ and every set S of outputs: P[M(D′) ∈ S] ≤ e^ε · P[M(D) ∈ S] + δ."),
    Term("δ (delta)",
         "The small probability with which that promise may fail (a rare output that moves the odds more). "
         "Keep it far below one over the number of people, e.g. 10⁻⁵.",
         "The additive term of the inequality above; for Gaussian noise, δ = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) "
         "with μ = sensitivity / noise std."),
    Term("σ² (noise variance)",
         "How much random noise is added before anything is released: the spread of the Gaussian draws. "
         "More of it buys a smaller ε and costs accuracy.",
         "Each noisy quantity is released as value + N(0, σ²); the noise multiplier is σ / sensitivity."),
    Term("sensitivity",
         "The most one person or event can move what is computed before the noise: the noise is scaled to it, "
         "so it must be bounded from public facts, never read off the private data.",
         "Δf = max over neighbours D, D′ of ‖f(D) − f(D′)‖₂."),
    Term("count cap",
         "A public limit C on how many events one bin may hold: larger counts are cut to it, which bounds what "
         "one event can change (and so the noise needed).",
         "Each bin count x is used as min(x, C); the fitted statistics' sensitivity grows with C."),
    Term("privacy unit",
         "Whose presence the guarantee hides: a single event, or a whole sequence (everything one person did). "
         "Protecting a sequence needs a public limit on how much one sequence holds, and more noise.",
         "Neighbours differ by one event (event unit) or by one whole sequence (sequence unit); a sequence of k "
         "events costs at most k times the event-level ε without a cap on k."),
    Term("kernel",
         "How strongly, and for how long, an event in one dimension raises the rate of later events in another: "
         "the excitation curve the app estimates.",
         "λᵢ(t) = ηᵢ + Σⱼ Σ_{tⱼₖ < t} hᵢⱼ(t − tⱼₖ); h is drawn in steps of width Δ up to the support s."),
    Term("baseline",
         "The rate of events that nothing before them triggered: the background each dimension has on its own.",
         "ηᵢ in λᵢ(t) = ηᵢ + Σⱼ Σₖ hᵢⱼ(t − tⱼₖ), in events per time unit."),
    Term("held-out score",
         "How well a fit predicts events it never saw: it is fitted on the early part of the window and judged on "
         "the late part, per event, against a plain constant-rate model (above 0: the fit predicts better).",
         "(log-likelihood of the fit − that of the best constant-rate Poisson model) on the held-out part, divided "
         "by its number of events; with a block-bootstrap standard error."),
)


def glossary_sidebar() -> None:
    """The glossary in the sidebar (an expander, closed), each term's formula behind a "details" switch."""
    with st.sidebar.expander("Glossary: the words of this app", icon=":material/menu_book:"):
        formulas = st.toggle("details: the formulas", key="glossary_formulas")
        for term in GLOSSARY:
            st.markdown(f"**{term.name}**: {term.plain}")
            if formulas:
                st.caption(term.formula)
