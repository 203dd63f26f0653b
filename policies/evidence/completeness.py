"""The completeness check: signals for one window, combined into a score and typed gaps.

A gap says what is missing at a window's edge and where the unit that would close it lies
(``direction`` left/right of the window, or an ``anchor`` above it: a header row, a list intro,
a section's scope sentence). Sliding (policies/evidence/sliding.py) follows the gaps; the decision
(policies/decision/missing.py) turns what remains into missing pieces.
"""

from __future__ import annotations

from dataclasses import replace

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.boundary import (
    exception_clause,
    is_cut_sentence,
    opens_dangling,
    scope_condition,
)
from evidence_loop.policies.evidence.checked import Gap, WindowCheck
from evidence_loop.policies.evidence.coverage import covered_terms, term_share, uncovered_slots
from evidence_loop.policies.evidence.references import referenced_rule, window_references
from evidence_loop.policies.evidence.relevance import lexical_relevance
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.values import window_states
from evidence_loop.policies.types import MissingKind
from evidence_loop.tools.types import ParsedDocument, Unit
from evidence_loop.tools.windows import Window, neighbour, units_of


def _left_gaps(doc: ParsedDocument, window: Window) -> list[Gap]:
    """A scope or condition stated just before the window, or an opening that needs what came before."""
    first = doc.units[window.first]
    before = neighbour(doc, window.first, -1)
    gaps: list[Gap] = []
    if before is not None and before.kind != "heading" and scope_condition(before.text):
        gaps.append(Gap("missing_scope", "left", before.ordinal, "a scope or condition stated just before"))
    elif before is not None and opens_dangling(first.text):
        gaps.append(Gap("missing_scope", "left", before.ordinal, "the window opens by pointing back"))
    return gaps


def _right_gaps(doc: ParsedDocument, window: Window) -> list[Gap]:
    """A cut sentence, a list announced but not included, or an exception or reference right after."""
    last = doc.units[window.last]
    after = neighbour(doc, window.last, +1)
    if after is None:
        return []
    if is_cut_sentence(last.text, last.kind):
        return [Gap("truncated_unit", "right", after.ordinal, "the last sentence is cut")]
    if after.kind == "list_item" and after.link == last.ordinal:
        return [Gap("truncated_unit", "right", after.ordinal, "the list the window announces")]
    if after.kind != "heading" and (exception_clause(after.text) or referenced_rule(after.text)):
        return [Gap("missing_scope", "right", after.ordinal, "an exception or reference right after")]
    return []


def _anchor_gaps(doc: ParsedDocument, window: Window) -> list[Gap]:
    """Header rows and list intros the window's rows and items depend on, and the section's scope sentence."""
    inside = set(window.ordinals)
    gaps: list[Gap] = []
    for unit in units_of(window, doc):
        if unit.link is None or unit.link in inside:
            continue
        kind: MissingKind = "orphan_row" if unit.kind == "table_row" else "orphan_item"
        what = "its table's header row" if kind == "orphan_row" else "the sentence that introduces its list"
        gaps.append(Gap(kind, "anchor", unit.link, f"a {unit.kind.replace('_', ' ')} without {what}"))
        inside.add(unit.link)
    scope = _section_scope_unit(doc, doc.units[window.first])
    # The scope sentence right before the window is already the left gap; count it once.
    if scope is not None and scope.ordinal not in inside and scope.ordinal < window.first - 1:
        gaps.append(Gap("missing_scope", "anchor", scope.ordinal, "the section's scope sentence"))
    return gaps


def _section_scope_unit(doc: ParsedDocument, unit: Unit) -> Unit | None:
    """The first sentence of the unit's section when it states a scope (walks left, stays in the section)."""
    first: Unit | None = None
    ordinal = unit.ordinal
    while ordinal >= 0 and doc.units[ordinal].section_id == unit.section_id:
        if doc.units[ordinal].kind == "sentence":
            first = doc.units[ordinal]
        ordinal -= 1
    return first if first is not None and scope_condition(first.text) else None


def window_gaps(doc: ParsedDocument, window: Window) -> tuple[Gap, ...]:
    """Every boundary gap of a window, left first, then anchors, then right."""
    return (*_left_gaps(doc, window), *_anchor_gaps(doc, window), *_right_gaps(doc, window))


def check_window(
    question: Question, window: Window, doc: ParsedDocument, best_score: float, policy: Policy
) -> WindowCheck:
    """Score a window: relevance (lexical and semantic), term coverage, slot coverage and boundary
    completeness, less a penalty when the question asks for a value (a date, an amount) that the
    window does not state."""
    units = units_of(window, doc)
    texts = [u.text for u in units]
    cosine = question.cosines.best(units) if question.cosines is not None else None
    semantic = question.cosines.similarities.relative(cosine) if question.cosines and cosine else 0.0
    seed_best = max((h.score for h in window.seeds), default=0.0)
    relevance = lexical_relevance(seed_best, best_score, policy.relevance_half_score)
    coverage = term_share(question.terms, texts, question.weights)
    missing_slots = uncovered_slots(question.slots, texts)
    slot_cov = 1.0 - len(missing_slots) / len(question.slots) if question.slots else 1.0
    gaps = window_gaps(doc, window)
    boundary = max(0.0, 1.0 - policy.gap_penalty * len(gaps))
    score = (
        policy.w_relevance * relevance
        + policy.w_coverage * coverage
        + policy.w_slots * slot_cov
        + policy.w_boundary * boundary
        + policy.w_semantic * semantic
    )
    if question.asks and not window_states(
        question.asks, question.own_numbers, texts, lambda t: bool(covered_terms(question.terms, (t,)))
    ):
        score -= policy.answer_type_penalty
    refs = window_references(doc, window, policy.deferring_references)
    return WindowCheck(
        relevance,
        coverage,
        slot_cov,
        boundary,
        round(score, 6),
        gaps,
        missing_slots,
        refs,
        round(cosine or 0.0, 6),
        round(semantic, 6),
    )


def with_rerank(check: WindowCheck, rerank: float, policy: Policy) -> WindowCheck:
    """The check with a cross-encoder's 0..1 relevance of its window in the score (expand first,
    rerank after); a score given before is replaced, not added twice."""
    base = check.score - policy.w_rerank * (check.rerank or 0.0)
    return replace(check, score=round(base + policy.w_rerank * rerank, 6), rerank=round(rerank, 6))
