"""Releases recorded under a sensitivity bound later found short, re-costed when their ledger is read (issue 40.5).

A family's bounds carry a version (:attr:`Family.bound_version <dphawkes_core.estimators.family.Family.bound_version>`),
recorded on every noisy release a ledger charges (:attr:`Mechanism.bound
<dphawkes_core.privacy.accounting.Mechanism.bound>`: ``exp/3``); a ledger written before bounds carried a version
holds none, and its noisy releases (:data:`~dphawkes_core.privacy.report.RELEASE_LABELS`) are read as version 1 of
their entry's family. The noise σ a release drew is what it was, so when its family says how far the bound of its
version was short at the release's settings (:meth:`Family.bound_correction
<dphawkes_core.estimators.family.Family.bound_correction>`: a factor ``S_now/S_recorded``), the release is charged at
its true noise multiplier ``z·S_recorded/S_now`` (:func:`~dphawkes_core.privacy.accounting.grouped` by that factor:
every sensitivity times it) and the difference is spent.

:func:`recost_entry` is a pure function of an entry (and the ledger's δ, for its note): the mechanisms are corrected
and stamped with the family's current bound; the entry's label says it was re-costed, a reason says why, by how much
and what it was first charged; its result keeps the mechanisms as recorded (``result["recost"]``) and its privacy
report is re-stated at the corrected sensitivity. Re-costing a re-costed entry changes nothing (its mechanisms carry
the current bound), nor an entry recorded under the current bound, nor one whose family finds its bound held (only
its mechanisms are stamped, checked). Every :class:`~dphawkes_core.release.ledger.DataLedger` applies it to its
entries when it is made (``docs/privacy.md``, "Releases made under a bound found short"), so whichever store read
the ledger, its spent ε, its budget checks and its summary are those of the corrected mechanisms.
"""

from __future__ import annotations

import dataclasses

from dphawkes_core.privacy.accounting import Mechanism, compose_epsilon, grouped
from dphawkes_core.privacy.report import RELEASE_LABELS, PrivacyReport

RECOST_KEY = "recost"  # where an entry's result keeps what it was first charged
RECOSTED_LABEL = " — re-costed: its sensitivity bound was found short"


def recost_entries(entries: tuple, delta: float) -> tuple:
    """``entries`` each re-costed (:func:`recost_entry`); the very same tuple when none changes."""
    recosted = tuple(recost_entry(entry, delta) for entry in entries)
    return entries if all(new is old for new, old in zip(recosted, entries, strict=True)) else recosted


def recost_entry(entry, delta: float):
    """``entry`` (a :class:`~dphawkes_core.release.ledger.Entry`) at its families' current bounds: itself when every
    noisy release of it was charged under the current bound (or it is not formal); otherwise a copy with each noisy
    release charged under an older version stamped with the current one and, where the family finds the old bound
    short, charged at the corrected sensitivity (the note computed at ``delta``)."""
    if not entry.formal or not entry.mechanisms:
        return entry
    mechanisms, corrections = list(entry.mechanisms), []
    for index, mechanism in enumerate(entry.mechanisms):
        family, version = _charged_under(mechanism, entry)
        if family is None or version >= family.bound_version:
            continue
        correction = family.bound_correction(version, entry.unit, entry.result)
        stamped = dataclasses.replace(mechanism, bound=family.bound)
        if correction is not None:
            stamped = grouped((stamped,), correction.factor)[0]
            corrections.append({"mechanism": index, "bound_recorded": mechanism.bound or f"{family.name}/{version}",
                                "bound": family.bound, "factor": correction.factor, "why": correction.why})
        mechanisms[index] = stamped
    if all(new is old for new, old in zip(mechanisms, entry.mechanisms, strict=True)):
        return entry
    if not corrections:
        return dataclasses.replace(entry, mechanisms=tuple(mechanisms))  # checked: the bound held
    return _recosted(entry, tuple(mechanisms), corrections, delta)


def _recosted(entry, mechanisms: tuple, corrections: list, delta: float):
    """``entry`` charged at ``mechanisms``: its label, a reason, its result's record and privacy report say so."""
    before, after = compose_epsilon(entry.mechanisms, delta), compose_epsilon(mechanisms, delta)
    pairs = [(entry.mechanisms[c["mechanism"]], mechanisms[c["mechanism"]]) for c in corrections]
    multipliers = "; ".join(f"{old.label or 'noise'}: noise multiplier {old.parameter:.4g} → {new.parameter:.4g}"
                            for old, new in pairs)
    reason = (f"re-costed when its ledger was read: {'; '.join(dict.fromkeys(c['why'] for c in corrections))}. The "
              f"noise it drew is unchanged, so it is charged at the corrected bound ({multipliers}): ε = {after:.4g} "
              f"alone instead of the {before:.4g} it was first charged (δ = {delta:.0e}), the difference added to "
              "the data set's spent ε")
    result = dict(entry.result)
    earlier = result.get(RECOST_KEY) or {}
    result[RECOST_KEY] = {
        "recorded_mechanisms": earlier.get("recorded_mechanisms",
                                           [dataclasses.asdict(m) for m in entry.mechanisms]),
        "corrections": list(earlier.get("corrections", [])) + corrections,
    }
    report = _corrected_report(result.get("privacy"), corrections, entry.mechanisms)
    if report is not None:
        result["privacy"] = report
    label = entry.label if entry.label.endswith(RECOSTED_LABEL) else entry.label + RECOSTED_LABEL
    return dataclasses.replace(entry, mechanisms=mechanisms, label=label, reasons=entry.reasons + (reason,),
                               result=result)


def _corrected_report(record, corrections: list, recorded: tuple) -> dict | None:
    """The stored privacy report re-stated at the corrected sensitivity of its noisy release (the last mechanism
    of a report, :meth:`~dphawkes_core.privacy.report.PrivacyReport.mechanisms`); ``None`` without one."""
    if not isinstance(record, dict) or record.get("sensitivity") is None:
        return None
    factors = [c["factor"] for c in corrections if recorded[c["mechanism"]].label in RELEASE_LABELS]
    if not factors:
        return None
    return PrivacyReport.from_record(record).at_larger_sensitivity(max(factors)).to_record()


def _charged_under(mechanism: Mechanism, entry) -> tuple:
    """``(family, version)`` of the bound ``mechanism`` was charged under: its stamp, or — for a noisy release of a
    ledger written before bounds carried a version — version 1 of the entry's family; ``(None, 0)`` for a step that
    is no family's bound (a count, a selection) or a family not registered here."""
    from dphawkes_core.estimators.registry import FAMILIES  # the families say what their bounds were

    if mechanism.bound:
        name, _, version = mechanism.bound.rpartition("/")
        family = FAMILIES.get(name)
        return (family, int(version)) if family is not None and version.isdigit() else (None, 0)
    if mechanism.label not in RELEASE_LABELS:
        return None, 0
    method = entry.result.get("method") if isinstance(entry.result, dict) else None
    family = FAMILIES.get(method) if method else next(
        (f for f in FAMILIES.values() if entry.label.startswith(f"{f.label}, ")), None)
    return family, 1
