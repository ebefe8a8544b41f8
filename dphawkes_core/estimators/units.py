"""The privacy unit of a fit — what its guarantee protects — as one type that carries its own parameters.

* :class:`EventUnit`: one event added or removed (the paper's unit); optionally an enforced public cap M on events
  per sequence (each sequence keeps its first M events), which also bounds what the release reveals about one
  whole sequence (:func:`~dphawkes_core.privacy.sequence.capped_event_group`).
* :class:`SequenceUnit`: one sequence (one person) replaced whole; its public cap M on events per sequence,
  its clip norm G (a number, ``"auto"`` for a private choice, or ``None`` for the G that M guarantees) and
  the share of ε an automatic G spends (:mod:`~dphawkes_core.privacy.sequence`).

A family lists the units it supports (:attr:`~dphawkes_core.estimators.family.PrivacyTags.units`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dphawkes_core.errors import ConfigError
from dphawkes_core.privacy.count_cap import AUTO
from dphawkes_core.privacy.sequence import AUTO_CLIP_SHARE, UNIT_LABELS
from dphawkes_core.validation import check_positive_whole, check_share, is_number


@dataclass(frozen=True)
class EventUnit:
    """One event added or removed: neighbouring count series differ by one in one bin of one dimension.

    Attributes
    ----------
    max_events : int, optional
        M: an enforced cap — each sequence keeps its first M events (by time, ties by dimension) before the
        statistics. The release is then calibrated for one event of the capped data; one raw event costs a group
        of 2 of those and one whole sequence a group of 2M (:func:`~dphawkes_core.privacy.sequence.capped_event_group`).
    """

    max_events: int | None = None
    name: ClassVar[str] = "event"

    def __post_init__(self):
        if self.max_events is not None:
            check_positive_whole(self.max_events, "the cap M on events per sequence")

    @property
    def label(self) -> str:
        return UNIT_LABELS[self.name]

    def to_dict(self) -> dict:
        """The unit as the flat keywords of a config (M only when a cap is enforced)."""
        return {"privacy_unit": self.name} | ({"max_events": self.max_events} if self.max_events is not None else {})


@dataclass(frozen=True)
class SequenceUnit:
    """One sequence replaced whole, with its public bounds.

    Attributes
    ----------
    max_events : int, optional
        M: each sequence keeps its first M events.
    clip : float or "auto", optional
        G: each sequence's contribution scaled to L2 norm at most G; ``"auto"``: chosen privately with
        ``clip_share`` of ε below the G that M guarantees; ``None``: that G.
    clip_share : float
        Share of ε an automatic G spends.
    """

    max_events: int | None = None
    clip: float | str | None = None
    clip_share: float = AUTO_CLIP_SHARE
    name: ClassVar[str] = "sequence"

    def __post_init__(self):
        if self.clip is not None and self.clip != AUTO and not (is_number(self.clip) and self.clip > 0):
            raise ConfigError(f"the clip norm G must be a positive number or 'auto', got {self.clip!r}")
        if self.max_events is not None:
            check_positive_whole(self.max_events, "the cap M on events per sequence")
        if self.clip is None and self.max_events is None:
            raise ConfigError("the sequence unit needs a public clip norm G or a public cap M on events per sequence")
        if self.clip == AUTO:
            if self.max_events is None:
                raise ConfigError("an automatic clip norm G needs a public cap M on events per sequence (the top "
                                  "of its grid)")
            check_share(self.clip_share, "the clip norm G")

    @property
    def label(self) -> str:
        return UNIT_LABELS[self.name]

    def to_dict(self) -> dict:
        """The unit as the flat keywords of a config (the share only when G is chosen privately)."""
        flat = {"privacy_unit": self.name, "sequence_clip": self.clip, "max_events": self.max_events}
        if self.clip == AUTO:
            flat["sequence_clip_share"] = self.clip_share
        return flat


PRIVACY_UNIT_TYPES = {EventUnit.name: EventUnit, SequenceUnit.name: SequenceUnit}


def make_unit(privacy_unit: str = "event", sequence_clip=None, max_events=None,
              sequence_clip_share: float | None = None) -> EventUnit | SequenceUnit:
    """The unit named ``privacy_unit`` from a config's flat keywords (the clip G belongs to the sequence unit alone:
    given with the event unit it is refused; M is either unit's cap)."""
    if privacy_unit not in PRIVACY_UNIT_TYPES:
        raise ConfigError(f"unknown privacy unit {privacy_unit!r}; choose one of {', '.join(PRIVACY_UNIT_TYPES)}")
    if privacy_unit == EventUnit.name:
        if sequence_clip is not None:
            raise ConfigError("the clip G on each sequence's statistics and its share belong to the sequence unit")
        return EventUnit(max_events=max_events)
    share = AUTO_CLIP_SHARE if sequence_clip_share is None else sequence_clip_share
    if sequence_clip != AUTO and share != AUTO_CLIP_SHARE:
        raise ConfigError("the share of ε of an automatic clip norm goes with sequence_clip='auto'")
    return SequenceUnit(max_events=max_events, clip=sequence_clip, clip_share=share)
