"""The Estimate page's fits: live on public data, released on request on private data.

*Public data* (a simulation, or data marked published): everything re-runs live as the widgets move. An
unseeded fit is a fresh noise draw kept in this session only (:func:`live_fit`): no cache shared between
sessions pins one draw for everyone; "draw the noise again" asks for a new one and :func:`noise_band` shows
several at once. Nothing is a release (no ledger): the settings are labelled by whether they *would* be a
formal release on private data (:attr:`~dphawkes_core.privacy.report.FormalStatus.settings_formal`).

*Private data* (uploads and real data sets, unless marked public): every estimate goes through a
:class:`~dphawkes_core.release.session.PrivacySession` and nothing is computed by opening the page or moving a widget.
:func:`private_fit` shows an earlier release of the same settings from the ledger (free, and says so), or the
settings' predicted cost — planned from public numbers, nothing drawn — and a "Release (spends ε = …)" button;
only the click releases. The page then reruns so the budget box is current, and the one message of that rerun
says what the release spent. A refused release (over the budget) draws and spends nothing, and the last
estimate on these data stays on the page.

A private selection (an automatic C or G) is drawn inside the release by the session, never from a cache:
:func:`app_session` computes cached statistics only for public settings.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from dphawkes_core.data.datasets import Dataset
from dphawkes_core.errors import DPHawkesError
from dphawkes_core.estimators import FitConfig, FitResult, fit_stats, prepare_stats, release_status
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.report import FormalStatus
from dphawkes_core.release.ledger import BudgetExceeded, DataLedger, Entry, compose_epsilon, group_factor
from dphawkes_core.release.plan import Plan
from dphawkes_core.release.session import PrivacySession, SessionAnswer

from ..budget import BudgetState, release_view, releases_text
from ..caches import config_items, fit_cached, selected_stats, stats_cached
from ..layout import friendly_error
from ..ledger_rows import ledger_label
from ..words import epsilon_text
from .plan_view import plan_button

FLASH_KEY = "release_flash"  # what the last click released, said once on the rerun that shows it
LAST_KEY = "last_release"  # per data set and unit: the settings of the last estimate shown on private data
DRAWS_KEY = "noise_draws"  # this session's fresh-noise fits on public data
DRAW_KEY = "noise_draw"  # this session's draw number ("draw the noise again" adds one)
MAX_DRAWS_KEPT = 8  # per session: a fit, its statistics when they hold a fresh selection, and bands
BAND_QUANTILES = (0.05, 0.95)
PLANNING = ("Planning this release from public numbers — computing, once for these settings, the statistics its "
            "noise is set for…")


@dataclass(frozen=True)
class Shown:
    """The estimate a page shows, and how it came about.

    Attributes
    ----------
    result : FitResult
    config : FitConfig
        Its settings (on private data, those of the release shown, which may differ from the sidebar's).
    data_info : mapping
        What its statistics were computed from (a private selection included).
    stats : SufficientStats
        Public statistics at the C (and G) of the estimate — no private selection is drawn for them: the
        references (non-private fit, σ² = 0, the comparison) are computed on these.
    status : FormalStatus
        On private data, the status the release was recorded with; on public data, the status of a fit that
        was not released (``settings_formal`` says whether the settings would be formal).
    origin : str
        ``live`` (public data), ``released`` (a release made by the last click), ``replayed`` (an earlier release
        of the same settings, free) or ``last`` (an earlier release of other settings, kept on the page).
    entry : Entry or None
        The ledger entry on private data.
    """

    result: FitResult
    config: FitConfig
    data_info: Mapping
    stats: object
    status: FormalStatus
    origin: str
    entry: Entry | None = None

    @property
    def private_data(self) -> bool:
        return self.origin != "live"


# --- public data: live fits with fresh noise per session -----------------------------------------------------


def draw_number() -> int:
    """This session's draw number: part of every unseeded fit's key, so "draw the noise again" gives new noise."""
    return int(st.session_state.get(DRAW_KEY, 0))


def noise_key(config: FitConfig) -> tuple | None:
    """For a cache shared by every session: ``None`` for a deterministic fit, else this session's nonce and draw
    number (so an unseeded fit is never served to another session)."""
    if not fresh(config):
        return None
    if "noise_nonce" not in st.session_state:
        import secrets

        st.session_state["noise_nonce"] = secrets.token_hex(8)
    return st.session_state["noise_nonce"], draw_number()


def draw_again() -> None:
    """Button callback: the next fits draw fresh noise."""
    st.session_state[DRAW_KEY] = draw_number() + 1


def _kept(key, make):
    """This session's value of ``key`` (a fresh-noise fit), made by ``make()`` the first time."""
    store: OrderedDict = st.session_state.setdefault(DRAWS_KEY, OrderedDict())
    if key in store:
        store.move_to_end(key)
        return store[key]
    value = store[key] = make()
    while len(store) > MAX_DRAWS_KEPT:
        store.popitem(last=False)
    return value


def fresh(config: FitConfig) -> bool:
    """An unseeded private fit: its noise (and any automatic selection's) is a fresh draw."""
    return config.family.privacy.private and config.seed is None


def public_stats(fingerprint: str, events, config: FitConfig, data_info: Mapping | None = None):
    """``(stats, data_info)`` of ``config`` with its automatic C or G replaced by the value ``data_info`` says was
    chosen (public once released, or on public data): deterministic, so cached for every session."""
    chosen = data_info or {}
    public = config.with_selection(count_cap=chosen.get("count_cap"), sequence_clip=chosen.get("sequence_clip"))
    if AUTO in (public.count_cap, public.sequence_clip):  # never draw a private selection outside a release
        raise DPHawkesError("this release was recorded without the C or G it chose, so its references cannot be "
                            "computed without drawing the selection again")
    return stats_cached(fingerprint, events, config_items(public.statistics_key()))


def live_fit(fingerprint: str, events, config: FitConfig) -> Shown:
    """A fit on public data: deterministic ones (seeded, non-private) from the shared cache; an unseeded one is
    this session's draw number :func:`draw_number` of its settings (statistics with an automatic selection are
    drawn afresh too)."""
    if not fresh(config):
        stats, info = stats_cached(fingerprint, events, config_items(config.statistics_key()))
        result = fit_cached(fingerprint, stats, config_items(config))
    else:
        def make():
            if config.count_cap == AUTO or config.sequence_clip == AUTO:
                stats, info = selected_stats(fingerprint, events, config)  # a fresh selection, like a release
            else:
                stats, info = stats_cached(fingerprint, events, config_items(config.statistics_key()))
            return fit_stats(stats, config), stats, info

        result, stats, info = _kept(("fit", fingerprint, config_items(config), draw_number()), make)
    return Shown(result, config, info, stats, release_status(config, info), "live")


def noise_band(fingerprint: str, shown: Shown, draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, kernels)`` over ``draws`` fresh noise draws of the shown settings on their statistics (the
    selection of C or G as shown): the 5–95 % band of every kernel value and baseline, and the draws' kernels
    stacked ``(draws, d, d, p)``. Kept in this session; a new draw number gives a new band."""
    config = replace(shown.config, seed=None) if shown.config.family.privacy.private else shown.config

    def make():
        fits = [fit_stats(shown.stats, _public_selection(config, shown.data_info)) for _ in range(draws)]
        H = np.stack([f.H for f in fits])
        return (np.quantile(H, BAND_QUANTILES[0], axis=0), np.quantile(H, BAND_QUANTILES[1], axis=0),
                np.stack([f.kernels for f in fits]))

    return _kept(("band", fingerprint, config_items(config), draw_number(), draws), make)


def _public_selection(config: FitConfig, data_info: Mapping) -> FitConfig:
    """``config`` with an automatic C or G replaced by the chosen value (the statistics already hold it)."""
    return config.with_selection(count_cap=data_info.get("count_cap"), sequence_clip=data_info.get("sequence_clip"))


def band_of(H_low: np.ndarray, H_high: np.ndarray, dim: int, lags: int):
    """Kernel ``(d, d, p)`` and baseline ``(d,)`` parts of a band on ``H`` (the layout of :class:`FitResult`)."""
    def kernels(H):
        return H[:, : dim * lags].reshape(dim, lags, dim).transpose(0, 2, 1)

    return (kernels(H_low), kernels(H_high)), (H_low[:, -1], H_high[:, -1])


# --- private data: a privacy session, releases on request ----------------------------------------------------


def app_session(state: BudgetState, dataset: Dataset, fingerprint: str, unit: str) -> PrivacySession:
    """The privacy session of the current data set for ``unit``'s ledger (the core's one constructor, as the CLI's).
    Statistics of public settings come from the shared cache (deterministic); with an automatic C or G the session
    computes them inside the release, so the private selection's noise is drawn there — and only there."""
    events = dataset.events

    def prepare(config: FitConfig):
        if config.count_cap == AUTO or config.sequence_clip == AUTO:
            return prepare_stats(events, config)
        return stats_cached(fingerprint, events, config_items(config.statistics_key()))

    return PrivacySession.for_events(events, state.book, state.key.fingerprint, unit, prepare=prepare,
                                     view=release_view(fingerprint, dataset))


@dataclass(frozen=True)
class Asked:
    """What the sidebar asks to release: ``config``, with Δ and s as set (``scale_share`` None) or chosen inside
    the release with that share of ε (:meth:`~dphawkes_core.release.session.PrivacySession.release_scaled`, the
    command line's ``--bin-size auto``)."""

    config: FitConfig
    scale_share: float | None = None

    def replay(self, session: PrivacySession) -> SessionAnswer | None:
        if self.scale_share is None:
            return session.replay(self.config)
        return session.replay_scaled(self.config, self.scale_share)

    def release(self, session: PrivacySession) -> SessionAnswer:
        if self.scale_share is None:
            return session.release(self.config)
        return session.release_scaled(self.config, self.scale_share)

    def request(self, session: PrivacySession) -> str:
        if self.scale_share is None:
            return session.request(self.config)
        return session.scaled_request(self.config, self.scale_share)


def released_message(answer: SessionAnswer, count: int = 1) -> str:
    """What a new release did, in one sentence (ε spent, composed total, what remains)."""
    ledger = answer.ledger
    if not answer.entry.formal:
        return ("**Shown, not released:** this is not a formal release (" + "; ".join(answer.entry.reasons) +
                "), so nothing was spent; the ledger lists it apart from the formal releases. It carries no "
                "guarantee: for your eyes only.")
    what = "This estimate is a new formal (ε, δ)-DP release" if count == 1 else \
        f"The {count} other methods are new formal (ε, δ)-DP releases"
    entry, delta = answer.entry, ledger.budget.delta
    charged = entry.mechanisms_in(ledger.key.unit)
    spent = entry.epsilon(delta) if charged is None else compose_epsilon(charged, delta)
    return (f"**Released.** {what}: it spent ε = {spent:.3g}"
            f"{own_epsilon_note(entry.epsilon(delta), entry.group(ledger.key.unit))} "
            f"(δ = {delta:.0e}). The data set has now spent ε = {ledger.spent():.3g} of its budget "
            f"{ledger.budget.epsilon:.3g} {releases_text(len(ledger.metered))}; remaining: one more release of "
            f"ε ≤ {ledger.remaining():.3g}." + "".join(f" *{note[:1].upper()}{note[1:]}.*" for note in answer.notes))


def own_epsilon_note(own: float, group: float) -> str:
    """Why the ε charged differs from the release's own ε (a capped event-level release: one raw event moves up to
    ``group`` kept events); empty when they are the same."""
    if group == 1 or not math.isfinite(group):
        return ""
    return (f" — its own ε = {own:.3g} is per kept event, and one raw event can move {group:g} kept events under "
            "the cap M, so the ledger charges that group")


def replayed_message(entry: Entry, ledger: DataLedger) -> str:
    """An earlier release shown again: free, and when it was made."""
    when = entry.created[:16].replace("T", " ") + " UTC" if entry.created else "earlier"
    if entry.formal:
        return (f"**Shown again from the ledger — free.** These settings were released on {when} (ε = "
                f"{entry.epsilon(ledger.budget.delta):.3g}); asking again shows the stored estimate: no new noise, "
                "nothing spent.")
    return (f"**Shown again from the ledger** (computed on {when}; not a formal release: "
            + "; ".join(entry.reasons) + "). Nothing was spent.")


def _flash(text: str, requests: tuple) -> None:
    st.session_state[FLASH_KEY] = {"text": text, "requests": requests}


def _take_flash(request: str) -> str | None:
    flash = st.session_state.get(FLASH_KEY)
    if flash and request in flash["requests"]:
        del st.session_state[FLASH_KEY]
        return flash["text"]
    return None


def _last_key(fingerprint: str, unit: str) -> tuple:
    return (fingerprint, unit)


def private_fit(state: BudgetState, dataset: Dataset, fingerprint: str, config: FitConfig,
                scale_share: float | None = None) -> Shown | None:
    """The estimate to show on private data for the sidebar's ``config``, or ``None`` (nothing released yet).

    An earlier release of ``config`` is shown from the ledger (free); otherwise the plan and the Release button,
    and below them the last estimate shown on these data, if any. ``scale_share``: Δ and s are chosen inside the
    release with that share of ε (the plan says so before the button; nothing read from the data is shown first).
    """
    if state.error:
        return None
    asked = Asked(config, scale_share)
    session = app_session(state, dataset, fingerprint, config.privacy_unit)
    try:
        answer = asked.replay(session)
    except DPHawkesError as exc:
        friendly_error(exc)
        return None
    lasts = st.session_state.setdefault(LAST_KEY, {})
    if answer is not None:
        text = _take_flash(asked.request(session))
        if text is not None:
            (st.success if answer.entry.formal else st.info)(text, icon=":material/task_alt:")
        else:
            st.info(replayed_message(answer.entry, answer.ledger), icon=":material/replay:")
        lasts[_last_key(fingerprint, config.privacy_unit)] = asked
        return _shown(answer, config, dataset, fingerprint, "released" if text else "replayed")
    try:
        with st.spinner(PLANNING, show_time=True):  # the statistics of new settings can take seconds: say so
            plan = session.preview([config], scale_share)
    except DPHawkesError as exc:
        friendly_error(exc)
        return _last(session, dataset, fingerprint, asked)
    if scale_share is not None:
        st.caption(scale_plan_sentence(config, scale_share, plan))
    clicked = _release_controls(plan, key="release", what="this estimate")
    if clicked:
        try:
            if not plan.ledger.label:
                state.book.open(session.key, label=ledger_label(dataset))  # the budget page names the data set
            answer = asked.release(session)
        except BudgetExceeded as exc:
            st.error(f"**Refused** — nothing was drawn and nothing spent: {exc}.", icon=":material/block:")
            return _last(session, dataset, fingerprint, asked)
        except DPHawkesError as exc:
            friendly_error(exc)
            return _last(session, dataset, fingerprint, asked)
        lasts[_last_key(fingerprint, config.privacy_unit)] = asked
        _flash(released_message(answer), (asked.request(session),))
        st.rerun()  # draw the page again: the budget box is current and the release is shown from the ledger
    return _last(session, dataset, fingerprint, asked)


def scale_plan_sentence(config: FitConfig, share: float, plan: Plan) -> str:
    """What a private choice of Δ and s spends, said before the Release button: its share of ε, the count's noise
    and the ε left to the fit (from public numbers: nothing is read from the data)."""
    count = plan.mechanisms[0] if plan.mechanisms else None
    noise = f" (noise std {count.parameter:.3g} events)" if count is not None else ""
    return (f"**Δ and s chosen inside this release:** {share:.0%} of ε = {config.epsilon:.3g} buys a noisy count of "
            f"the events{noise}; Δ and s are read from it (about ¼ and 10× the mean time between events) and the "
            "fit gets the rest of ε. The total is the ε above. The chosen Δ and s are shown with the estimate, "
            "after the release; the sidebar's Δ and s are not used.")


def _release_controls(plan: Plan, key: str, what: str, count: int = 1) -> bool:
    """The plan in words and the button; True when clicked (and allowed)."""
    ledger = plan.ledger
    scope = "" if ledger.key.unit == "event" else f" ({ledger.key.unit}-level view)"
    if plan.formal:
        several = (f" ({plan.formal_count} formal releases together; shown beside them without a guarantee, spending "
                   f"nothing: {', '.join(plan.informal)})" if plan.informal else
                   f" ({plan.formal_count} formal releases together)" if plan.formal_count > 1 else "")
        group = group_factor(ledger.key.unit, plan.max_events, ledger.key.unit) if ledger.key.unit == "event" else 1
        own = own_epsilon_note(compose_epsilon(plan.mechanisms, ledger.budget.delta), group)
        st.info(f"**Not released yet.** Releasing {what} spends ε = **{epsilon_text(plan.epsilon)}**{own} (δ = "
                f"{ledger.budget.delta:.0e}){several}: the data set's composed ε{scope} goes from "
                f"{epsilon_text(ledger.spent())} to {epsilon_text(plan.after)} of its budget "
                f"{ledger.budget.epsilon:.3g}; remaining after it: one more release of ε ≤ "
                f"{epsilon_text(plan.remaining_after)}. Nothing is spent until you press the button.",
                icon=":material/lock:")
        return plan_button(plan, key, count)
    reasons = "; ".join(plan.informal) if count > 1 else "; ".join(plan.status.reasons)
    st.warning(f"**Not a formal release:** {reasons}. Showing {what} spends nothing, but it carries no guarantee: "
               "the ledger lists it apart from the formal releases, and it is for your eyes only.",
               icon=":material/visibility:")
    return st.button("Show it (not a formal release — spends nothing)", key=key)


def _shown(answer: SessionAnswer, config: FitConfig, dataset: Dataset, fingerprint: str, origin: str) -> Shown:
    if answer.time_scale is not None:  # the settings the release fitted: Δ and s chosen inside it (public now)
        config = config.with_changes(**answer.time_scale.config_changes())
    info = answer.data_info
    stats, public_info = public_stats(fingerprint, dataset.events, config, info)
    return Shown(answer.result, config, info if info is not None else public_info, stats, answer.status, origin,
                 answer.entry)


def _last(session: PrivacySession, dataset: Dataset, fingerprint: str, asked: Asked) -> Shown | None:
    """The last estimate shown on these data (another release's settings), replayed from the ledger — free."""
    earlier = st.session_state.get(LAST_KEY, {}).get(_last_key(fingerprint, asked.config.privacy_unit))
    if earlier is None or earlier == asked:
        return None
    answer = earlier.replay(session)
    if answer is None:
        return None
    st.caption(f":material/history: **Below: your last estimate on these data** — {answer.entry.label} "
               f"(shown again from the ledger, free). It is not the sidebar's settings, which are not released yet.")
    return _shown(answer, earlier.config, dataset, fingerprint, "last")


# --- the comparison's other methods on private data ----------------------------------------------------------


class NotReleased(DPHawkesError):
    """A comparison row whose release was not asked for yet."""


def replay_fitter(session: PrivacySession, pending: list):
    """``fitter(stats, config)`` for :func:`~dphawkes_experiments.compare.compare_methods` that only replays: a
    method not released yet is added to ``pending`` and its row says so."""
    def fitter(stats, config):
        answer = session.replay(config)
        if answer is None:
            pending.append(config)
            raise NotReleased("not released yet — see the button below the table")
        return answer.result

    return fitter


def release_fitter(session: PrivacySession, answers: list):
    """``fitter(stats, config)`` that releases through ``session`` (each formal method spends its ε)."""
    def fitter(stats, config):
        answer = session.release(config)
        answers.append(answer)
        return answer.result

    return fitter


def comparison_release(session: PrivacySession, pending: list, label: str) -> bool:
    """Below the comparison on private data: the plan of releasing the ``pending`` methods together and their
    button. True when clicked (the caller then releases them with :func:`release_fitter`)."""
    if not pending:
        return False
    try:
        plan = session.preview(pending)
    except DPHawkesError as exc:
        friendly_error(exc)
        return False
    return _release_controls(plan, key="cmp_release_go", what=label, count=len(pending))


def after_comparison_release(session: PrivacySession, answers: list) -> None:
    """Say what the comparison's releases spent (on the rerun that shows them) and rerun."""
    formal = [a for a in answers if a.entry.formal and not a.replayed]
    if answers:
        last = answers[-1]
        text = released_message(replace(last, entry=_combined(formal, last)), len(formal)) if formal else \
            "**Shown:** the other methods are not formal releases here; nothing was spent."
        _flash(text, ("comparison",))
        st.rerun()


def _combined(answers: list, last: SessionAnswer) -> Entry:
    """One entry standing for several releases (their mechanisms together), for the message."""
    mechanisms = tuple(m for a in answers for m in a.entry.mechanisms)
    return Entry("several", "several", True, (), mechanisms)


def comparison_flash() -> None:
    """The message of the comparison's last releases, once."""
    text = _take_flash("comparison")
    if text:
        st.success(text, icon=":material/task_alt:")
