"""Directional sliding: which move to try next, and whether a move is kept.

The signals point the way: a gap names the unit that would close it; an uncovered question term
or slot in a neighbouring unit pulls the window towards it. A parent-section step (small-to-big)
is offered when the whole section fits the window budget. A move is kept only when the
completeness score rises; the controller stops at the budget, at a boundary, or when no move helps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import WindowCheck
from evidence_loop.policies.evidence.coverage import covered_terms, uncovered_slots
from evidence_loop.policies.question.analysis import Question
from evidence_loop.tools.types import ParsedDocument
from evidence_loop.tools.windows import Window, neighbour, section_chars, section_ordinals

MoveKind = Literal["left", "right", "anchor", "parent"]


@dataclass(frozen=True, slots=True)
class Move:
    """A proposed growth of a window."""

    move: MoveKind
    ordinals: tuple[int, ...]
    unit_kind: str
    reason: str


def gap_moves(doc: ParsedDocument, check: WindowCheck) -> list[Move]:
    """One move per gap that a unit of this document can close."""
    moves: list[Move] = []
    for gap in check.gaps:
        if gap.target is None or gap.direction == "none":
            continue
        move: MoveKind = gap.direction
        unit = doc.units[gap.target]
        moves.append(Move(move, (gap.target,), unit.kind, f"{gap.kind}: {gap.detail}"))
    return moves


def coverage_moves(question: Question, window: Window, doc: ParsedDocument, check: WindowCheck) -> list[Move]:
    """Neighbours that hold a question term or slot the window still lacks."""
    if check.coverage >= 1.0 and not check.uncovered:
        return []
    texts = [doc.units[o].text for o in window.ordinals]
    missing_terms = set(question.terms) - covered_terms(question.terms, texts)
    moves: list[Move] = []
    for move, edge, step in (("right", window.last, 1), ("left", window.first, -1)):
        unit = neighbour(doc, edge, step)
        if unit is None:
            continue
        terms = covered_terms(tuple(missing_terms), (unit.text,))
        slots = len(check.uncovered) - len(uncovered_slots(check.uncovered, (unit.text,)))
        if terms or slots:
            reason = "covers " + ", ".join(sorted(terms)) if terms else "covers a question slot"
            moves.append(Move(move, (unit.ordinal,), unit.kind, reason))  # type: ignore[arg-type]
    return moves


def parent_move(window: Window, doc: ParsedDocument, policy: Policy) -> Move | None:
    """Small-to-big: the innermost section holding the window, when it fits the budget and adds something."""
    section_id = doc.units[window.first].section_id
    while True:
        ordinals = section_ordinals(doc, section_id)
        if set(window.ordinals) <= set(ordinals):
            break
        parent = doc.sections[section_id].parent_id
        if parent is None:
            return None
        section_id = parent
    if section_chars(doc, section_id) > policy.window_budget or set(ordinals) <= set(window.ordinals):
        return None
    title = doc.sections[section_id].title or doc.title
    return Move("parent", ordinals, "section", f"whole section '{title}' fits the budget")


def keep(before: WindowCheck, after: WindowCheck) -> bool:
    """A move is kept only when the completeness score rises."""
    return after.score > before.score


def keep_parent(before: WindowCheck, after: WindowCheck, policy: Policy, chars: int) -> bool:
    """A parent step is kept when it raises the score; a section of at most ``parent_free_chars``
    also when it does not lower it (reading a short section whole costs little and loses nothing)."""
    if chars <= policy.parent_free_chars:
        return after.score >= before.score
    return after.score > before.score
