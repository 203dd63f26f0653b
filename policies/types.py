"""Typed values the policies exchange: slots, missing pieces, evidence views, conflicts and verdicts."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

Status = Literal["answered", "insufficient_evidence", "conflicting_evidence"]
"""The three outcomes of a question (``policies.decision.status.status_of`` picks one)."""

SlotKind = Literal["model", "amount", "duration", "date", "percentage", "clause", "quoted", "count"]

MissingKind = Literal[
    "uncovered_slot",
    "missing_scope",
    "truncated_unit",
    "orphan_row",
    "orphan_item",
    "unresolved_reference",
    "no_relevant_evidence",
    "budget_exhausted",
    "conflict",
    "access_restricted",
    "no_question_content",
    "ambiguous_subject",
]


@dataclass(frozen=True, slots=True)
class Slot:
    """Something the question names that the evidence must contain.

    ``value`` is the surface form in the question; ``norm`` is the normalised form used to
    match it (NFKC, lower case, no spaces); ``alternatives`` are other normalised forms that
    also count (e.g. "3年" and "三年").
    """

    kind: SlotKind
    value: str
    norm: str
    alternatives: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MissingPiece:
    """A typed gap in the evidence, with the detail a caller can show or search for."""

    kind: MissingKind
    detail: str
    value: str | None = None
    # for an uncovered slot: what kind of slot it is, "side" for a side of a comparison, "thing" for
    # a thing the question asks about that no readable document names (policies.question.named)
    slot_kind: SlotKind | Literal["side", "thing"] | None = None
    doc_id: str | None = None
    version: str | None = None
    start: int | None = None
    end: int | None = None


VerdictKind = Literal["conflict", "compatible", "superseded"]


@dataclass(frozen=True, slots=True)
class ValueMention:
    """A value for a slot as one evidence window states it, with its exact place."""

    evidence_id: str
    doc_id: str
    version: str
    value: str
    norm: str
    start: int
    end: int
    quote: str
    context_start: int | None = None  # the sentence that states the value (absolute offsets)
    context_end: int | None = None


@dataclass(frozen=True, slots=True)
class ConflictCandidate:
    """Two windows that give different values for the same slot of the question."""

    slot: str
    kind: str
    left: ValueMention
    right: ValueMention


@dataclass(frozen=True, slots=True)
class ConflictVerdict:
    """How one candidate was judged, by whom, and on which quotes."""

    candidate: ConflictCandidate
    verdict: VerdictKind
    adjudicator: Literal["llm", "rules"]
    reason: str
    scope: str | None = None
    quotes: tuple[str, ...] = ()
    superseded_by: str | None = None  # evidence_id of the side that wins a "superseded" verdict


@dataclass(frozen=True, slots=True)
class EvidenceView:
    """An evidence window as the conflict check sees it; ``text == doc_text[start:end]``."""

    evidence_id: str
    doc_id: str
    version: str
    is_current: bool
    section: tuple[str, ...]
    start: int
    end: int
    text: str
    title: str = ""  # the document's title: a scope its headings may not repeat ("Returns in Hong Kong")
    scope: str = ""  # what the document says of its own scope ("This article applies to ...")
    units: tuple[tuple[int, int, int], ...] = ()  # (ordinal, start, end) of the units it holds, when known
    lead: str = ""  # the evidence window's text before ``start`` (what the focus on statements left out)


@dataclass(frozen=True, slots=True)
class DroppedCandidate:
    """A conflict candidate a rule set aside before any adjudicator, and why (the trace keeps both)."""

    candidate: ConflictCandidate
    reason: str


def __getattr__(name: str) -> object:
    """Names renamed in 0.2.0, kept through 0.2.x with a DeprecationWarning (docs/versioning.md)."""
    if name == "Verdict":  # deprecated alias
        message = f"{__name__}.{name} is renamed ConflictVerdict; the old name goes in 0.3.0"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return ConflictVerdict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
