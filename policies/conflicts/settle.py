"""Candidates a rule settles unread, before any adjudicator: one passage stating both values (two scopes
of one source), one document in two versions (the current one wins), and a statement that says from
which date it applies ("From 1 March 2026", "自2026年3月1日起"), which supersedes one dated earlier or
not at all (``Policy.conflict_scopes``).
"""

from __future__ import annotations

import re

from evidence_loop.policies.lexicon import EFFECTIVE_AFTER_ZH, EFFECTIVE_BEFORE_EN, EFFECTIVE_BEFORE_ZH
from evidence_loop.policies.question.places import alternation
from evidence_loop.policies.question.slots import extract_slots
from evidence_loop.policies.types import ConflictCandidate, ConflictVerdict, EvidenceView, Slot, ValueMention

_SORTABLE_RE = re.compile(r"[0-9]{4}-[0-9]{2}(?:-[0-9]{2})?")
_BEFORE_EN_RE = re.compile(rf"\b(?:{alternation(EFFECTIVE_BEFORE_EN)})\s+(?:the\s+)?$", re.IGNORECASE)
_BEFORE_ZH_RE = re.compile(rf"(?:{alternation(EFFECTIVE_BEFORE_ZH)})\s*$")
_AFTER_ZH_RE = re.compile(rf"^\s*(?:{alternation(EFFECTIVE_AFTER_ZH)})")
_DATED_RE = re.compile(
    rf"\b(?:{alternation(EFFECTIVE_BEFORE_EN)})\b|{alternation(EFFECTIVE_BEFORE_ZH)}", re.IGNORECASE
)


def statement_of(side: ValueMention, view: EvidenceView) -> tuple[str, int]:
    """The statement that gives the value (the window when unknown), and its offset in the window."""
    start = side.context_start if side.context_start is not None else view.start
    end = side.context_end if side.context_end is not None else view.end
    return view.text[start - view.start : end - view.start], start - view.start


def settle_by_rule(
    candidate: ConflictCandidate, left: EvidenceView, right: EvidenceView
) -> ConflictVerdict | None:
    """The verdict a rule gives unread: one passage stating both values, or one document in two versions."""
    if left.evidence_id == right.evidence_id:
        return ConflictVerdict(
            candidate,
            "compatible",
            "rules",
            "one passage states both values; read as two scopes of the same source",
            scope=f"both within {left.evidence_id}",
        )
    if left.doc_id == right.doc_id and left.version != right.version and left.is_current != right.is_current:
        current, older = (left, right) if left.is_current else (right, left)
        return ConflictVerdict(
            candidate,
            "superseded",
            "rules",
            f"version {current.version} of {current.doc_id} is current; version {older.version} is older",
            superseded_by=current.evidence_id,
        )
    return None


def effective_date(side: ValueMention, view: EvidenceView) -> str | None:
    """The date (YYYY-MM or YYYY-MM-DD) from which the side's statement says it applies, if it says one
    (the value itself is no such date: "将于2013年11月15日发售" gives the date asked)."""
    text, offset = statement_of(side, view)
    if not _DATED_RE.search(text):
        return None  # no word a date of effect comes with: no slot to read
    value = (side.start - view.start - offset, side.end - view.start - offset)
    for slot in extract_slots(text):
        at = text.find(slot.value)
        if at < value[1] and at + len(slot.value) > value[0]:
            continue
        if dated_from(text, slot):
            sortable = [form for form in (slot.norm, *slot.alternatives) if _SORTABLE_RE.fullmatch(form)]
            if sortable:
                return max(sortable, key=len)
    return None


def dated_from(text: str, slot: Slot) -> bool:
    """True when ``slot`` is a date ``text`` says it applies from ("From 1 March 2026", "自…起")."""
    at = text.find(slot.value)
    if slot.kind != "date" or at < 0:
        return False
    before, after = text[max(0, at - 24) : at], text[at + len(slot.value) :]
    return bool(_BEFORE_EN_RE.search(before) or (_BEFORE_ZH_RE.search(before) and _AFTER_ZH_RE.match(after)))


def settle_by_date(
    candidate: ConflictCandidate, left: EvidenceView, right: EvidenceView
) -> ConflictVerdict | None:
    """Superseded when one side says it applies from a date and the other from an earlier one or none."""
    dates = (effective_date(candidate.left, left), effective_date(candidate.right, right))
    if dates[0] == dates[1] or (dates[0] and dates[1] and len(dates[0]) != len(dates[1])):
        return None
    newer = 0 if (dates[1] is None or (dates[0] is not None and dates[0] > dates[1])) else 1
    winner = (left, right)[newer]
    return ConflictVerdict(
        candidate,
        "superseded",
        "rules",
        f"{winner.evidence_id} says it applies from {dates[newer]}; the other states no later date",
        superseded_by=winner.evidence_id,
    )
