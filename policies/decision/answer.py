"""The extractive answer: which units of the evidence state it, in document order.

Every selected unit is quoted whole, so every sentence of the answer has exact offsets. A sentence
a document addresses to an AI system (``policies.evidence.directives``) is never quoted, whatever it says.
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import sides_of, sides_to_cover
from evidence_loop.policies.evidence.coverage import covered_terms, uncovered_slots
from evidence_loop.policies.evidence.directives import addressed_to_model
from evidence_loop.policies.question.analysis import Question
from evidence_loop.tools.types import Unit
from evidence_loop.tools.windows import units_of

ANSWER_KINDS = frozenset({"sentence", "list_item", "table_row", "code"})


def _unit_value(question: Question, unit: Unit, seeds: frozenset[int]) -> tuple[int, int, int]:
    slots = len(question.slots) - len(uncovered_slots(question.slots, (unit.text,)))
    terms = len(covered_terms(question.terms, (unit.text,)))
    return (slots, terms, int(unit.ordinal in seeds))


Pick = tuple[int, Unit, tuple[int, int, int]]


def _side_units(
    question: Question,
    items: Sequence[Checked],
    ranked: Sequence[Pick],
    chosen: Sequence[Pick],
    policy: Policy,
) -> list[Pick]:
    """For a comparison, the best unit of a window speaking for each side the ``chosen`` units do not
    quote: an answer about two plans cites both (beyond ``max_answer_sentences`` if need be)."""
    sides = sides_to_cover(question, policy)
    added: list[Pick] = []
    for side in sides:
        holders = {i for i, item in enumerate(items) if side in sides_of(sides, item)}
        if any(p[0] in holders for p in (*chosen, *added)):
            continue
        best = next((p for p in ranked if p[0] in holders), None)
        if best is not None:
            added.append(best)
    return added


def answer_units(question: Question, items: Sequence[Checked], policy: Policy) -> list[tuple[int, Unit]]:
    """(evidence index, unit) pairs: each window's best unit, then more units that add slots, capped;
    for a comparison, a unit for each side."""
    picked: list[Pick] = []
    for index, item in enumerate(items):
        seeds = frozenset(h.unit.ordinal for h in item.window.seeds)
        units = [
            u
            for u in units_of(item.window, item.doc)
            if u.kind in ANSWER_KINDS
            and not (policy.screen_directives and addressed_to_model(u.text, policy.screen_hidden))
        ]
        scored = [(u, _unit_value(question, u, seeds)) for u in units]
        scored = [(u, v) for u, v in scored if v[0] or v[1] or v[2]]
        scored.sort(key=lambda uv: (-uv[1][0], -uv[1][1], -uv[1][2], uv[0].ordinal))
        for unit, value in scored[: policy.answer_units_per_window]:
            picked.append((index, unit, value))
    picked.sort(key=lambda p: (-p[2][0], -p[2][1], -p[2][2], p[0], p[1].ordinal))
    ranked = list(picked)
    if picked:
        # A unit from a weaker window joins only when it says about as much of the question as the best one.
        top, share = picked[0][2], policy.answer_join_share
        picked = [
            p for p in picked if p[0] == picked[0][0] or (p[2][0] >= top[0] and p[2][1] >= top[1] * share)
        ]
    chosen = picked[: policy.max_answer_sentences]
    chosen += _side_units(question, items, ranked, chosen, policy)
    chosen.sort(key=lambda p: (p[0], p[1].ordinal))
    return [(index, unit) for index, unit, _ in chosen]
