"""The Estimate page's proposal of a family: one rule from public facts (:mod:`dphawkes_core.estimators.proposal`) —
what the user declares about the kernels, the data size where it is public (on private data, the size the user
declares), whether the fit is private — never from the held-out score of the data."""

from __future__ import annotations

from dphawkes_core.estimators import get_family
from dphawkes_core.estimators.proposal import CTLS_FROM, DERIVED_FROM, KERNEL_SHAPES, UNKNOWN, propose_family

SIZES = {"unknown": None, "below": CTLS_FROM - 1, "above": CTLS_FROM, "far above": DERIVED_FROM}
SIZE_LABELS = {"unknown": "I don't say", "below": f"fewer than {CTLS_FROM:,}",
               "above": f"{CTLS_FROM:,} to {DERIVED_FROM:,}", "far above": f"{DERIVED_FROM:,} or more"}


def show_proposal(sb, events, private_data: bool, private_method: bool) -> None:
    """Two declarations (the kernels' shape; on private data the rough size) and the family the rule proposes, with
    why, under the method choice: a private one on private data or when a private method is chosen."""
    box = sb.expander("Which method? (a proposal from what you declare)")
    shape = box.radio("the kernels are", list(KERNEL_SHAPES), format_func=KERNEL_SHAPES.get, key="kernel_shape",
                      index=list(KERNEL_SHAPES).index(UNKNOWN),
                      help="what you know of how an event's effect runs in time; the proposal never reads the "
                           "data's own held-out score")
    if private_data:
        size = SIZES[box.radio("about how many events (your public statement, not read from the data)",
                               list(SIZES), format_func=SIZE_LABELS.get, key="declared_size", horizontal=True)]
    else:
        size = events.n_events
    proposal = propose_family(private_data or private_method, shape, size)
    family = get_family(proposal.method)
    extra = ""
    if proposal.options.get("exp_likelihood"):
        extra = " by maximum likelihood (σ² = 0, option 'maximum likelihood')"
    elif proposal.options.get("exp_gram") == "derived":
        extra = " in the differences basis with the Gram derived (options 'basis of the release' and 'the Gram')"
    box.caption(f"Proposed: **{family.label}**{extra} — {proposal.reason}. The measurements behind the rule are in "
                "the accuracy notes (\"Which family predicts: the proposal rule\").")
