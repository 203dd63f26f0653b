"""Which pieces are missing and whether to widen the search (the status: ``policies.decision.status``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.judge import JudgeVerdict
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import side_query, sides_to_cover, uncovered_sides
from evidence_loop.policies.evidence.coverage import covered_terms, uncovered_slots
from evidence_loop.policies.evidence.references import defers, referring_unit, unresolved_references
from evidence_loop.policies.question.analysis import Question, contentless
from evidence_loop.policies.question.named import AbsentThing, states_measure
from evidence_loop.policies.question.slots import compact
from evidence_loop.policies.types import MissingPiece, Slot, SlotKind
from evidence_loop.tools.windows import char_count, units_of, with_units

BLOCKING_GAPS = frozenset({"missing_scope", "orphan_row", "orphan_item", "truncated_unit"})
NO_CONTENT = (
    "the question names nothing to look for; ask about a product, a service, a rule or a task, e.g. "
    "'How long is the warranty of the LM-S10?' / 问题里没有可查的内容：请写明要问的产品、服务、规则或操作，"
    "例如「LM-S10 的保修期是多久？」"
)


def _texts(items: Sequence[Checked]) -> list[str]:
    return [u.text for c in items for u in units_of(c.window, c.doc)]


def _relevance_pieces(
    question: Question, items: Sequence[Checked], policy: Policy, verdict: JudgeVerdict | None
) -> list[MissingPiece]:
    """Nothing found, or evidence that does not answer: the judge's call when it sits, else too
    few of the question's words covered."""
    if not items:
        return [MissingPiece("no_relevant_evidence", "nothing in the readable corpus matches the question")]
    lacking = sorted(set(question.terms) - covered_terms(question.terms, _texts(items)))
    if verdict is not None:
        if verdict.answer:
            return []
        needed = 1.0 / (1.0 + math.exp(-verdict.threshold))
        detail = (
            f"the passages found are near the question but do not clearly answer it (the judge "
            f"gives {verdict.probability:.2f}; the operating point needs {needed:.2f})"
        )
        return [
            *_absent_pieces(question, policy),
            MissingPiece("no_relevant_evidence", detail, value=" ".join(lacking) or None),
        ]
    if max(c.check.coverage for c in items) >= policy.min_coverage:
        return []
    detail = "no passage covers enough of the question; not found: " + ", ".join(lacking)
    return [MissingPiece("no_relevant_evidence", detail, value=" ".join(lacking) or None)]


def _absent_pieces(question: Question, policy: Policy, names_only: bool = False) -> list[MissingPiece]:
    """The things the question asks about that no readable document names, when the policy looks
    for them (``policies.question.named``): what a refusal names first. ``names_only``: the names
    among them (a capitalised or upper-case English word: "IFTTT", "Premium", "UK"; with
    ``Policy.refuse_absent_places`` a place in any case or language: "canada", "加拿大"), which refuse
    whatever the judge says, as a model number does (``Policy.refuse_absent_names``)."""
    if not policy.absent_things:
        return []
    sides = [compact(side.name) for side in question.sides]  # a compared side has its own pieces
    things = [
        t
        for t in question.absent
        if not names_only
        or (t.place and policy.refuse_absent_places)
        or (t.proper and t.phrase.isascii() and not any(compact(t.phrase) in s for s in sides))
    ]
    return [
        MissingPiece("uncovered_slot", _absent_detail(t), value=t.phrase, slot_kind="thing") for t in things
    ]


def _absent_detail(thing: AbsentThing) -> str:
    """The operator's line for a thing no readable document names."""
    if thing.place:
        return (
            f"no readable document names the place '{thing.phrase}' in any spelling, nor a region holding it"
        )
    return f"no readable document names '{thing.phrase}' (not found: {', '.join(thing.absent)})"


def _measure_pieces(question: Question, lead: Sequence[Checked], policy: Policy) -> list[MissingPiece]:
    """A physical measure the question asks for ("how much does it weigh", "尺寸") that no lead window
    states in one of its units: the attribute is never stated (``Policy.value_signal``)."""
    if not policy.value_signal or question.physical is None:
        return []
    if states_measure(question.physical, _texts(lead)):
        return []
    detail = f"no passage found states the {question.physical} asked for (a value in one of its units)"
    return [MissingPiece("uncovered_slot", detail, value=question.physical, slot_kind="thing")]


def _slot_pieces(question: Question, items: Sequence[Checked], policy: Policy) -> list[MissingPiece]:
    """Slots the evidence lacks, judged on one window: the one that covers the question best.

    A model number in one passage and the asked rule in another do not make an answer together; nor
    does a passage that names the slot but little else of the question (a look-alike found by
    widening on the slot): only windows relevant on their own are judged, when there are any.
    """
    relevant = [c for c in items if c.check.coverage >= policy.min_coverage] or list(items)
    best = max(relevant, key=lambda c: (c.check.slot_coverage, c.check.coverage))
    texts = [u.text for u in units_of(best.window, best.doc)]
    return [
        MissingPiece(
            "uncovered_slot",
            f"no evidence mentions the {s.kind} '{s.value}'",
            value=s.value,
            slot_kind=s.kind,
        )
        for s in uncovered_slots(_unsided(question, policy), texts)
    ]


def _unsided(question: Question, policy: Policy) -> tuple[Slot, ...]:
    """The question's slots less those naming a side of its comparison: each side has its own
    evidence (``_side_pieces``), and no one window need hold both models compared."""
    names = [compact(side.name) for side in sides_to_cover(question, policy)]
    return tuple(s for s in question.slots if not any(s.norm in name for name in names))


def _side_pieces(question: Question, items: Sequence[Checked], policy: Policy) -> list[MissingPiece]:
    """The sides of a comparison no evidence speaks for: one side found is half an answer."""
    return [
        MissingPiece(
            "uncovered_slot",
            f"no evidence speaks for '{s.name}', one side of the comparison",
            value=s.name,
            slot_kind="side",
        )
        for s in uncovered_sides(sides_to_cover(question, policy), items)
    ]


def _reference_pieces(
    question: Question, items: Sequence[Checked], policy: Policy, deferred: bool = True
) -> list[MissingPiece]:
    """The references the evidence leaves unresolved: with ``Policy.deferring_references``, those
    the answering unit defers to (``deferred``) or those it does not (the notes of an answer)."""
    pieces = []
    for name, item in unresolved_references(items, policy):
        share, defer_share = policy.statement_term_share, policy.reference_defer_share
        deferring = defers(question, name, item, items, share, defer_share)
        if policy.deferring_references and deferring != deferred:
            continue
        unit = referring_unit(name, item)
        pieces.append(
            MissingPiece(
                "unresolved_reference",
                f"the evidence refers to '{name}', which the readable corpus does not contain",
                value=name,
                doc_id=item.window.doc_id,
                version=item.window.version,
                start=unit.start,
                end=unit.end,
            )
        )
    return pieces


def _gap_pieces(items: Sequence[Checked], policy: Policy) -> list[MissingPiece]:
    """Blocking gaps left in the evidence, at the unit that would close each.

    ``budget_exhausted`` when that unit does not fit the window budget; otherwise the gap's own kind
    (a cut sentence, a missing scope, an orphan row or item): the unit was in reach but reading it
    made the window no more complete (it is cut too), or the mode does not slide.
    """
    pieces = []
    for item in items:
        for gap in item.check.gaps:
            if gap.kind in BLOCKING_GAPS and gap.target is not None:
                unit = item.doc.units[gap.target]
                fits = char_count(with_units(item.window, (gap.target,)), item.doc) <= policy.window_budget
                kind, why = (
                    (gap.kind, "is still open")
                    if fits
                    else ("budget_exhausted", "did not fit the window budget")
                )
                pieces.append(
                    MissingPiece(
                        kind,
                        f"{gap.kind}: {gap.detail} {why}",
                        doc_id=item.window.doc_id,
                        version=item.window.version,
                        start=unit.start,
                        end=unit.end,
                    )
                )
    return pieces


def missing_pieces(
    question: Question, items: Sequence[Checked], policy: Policy, verdict: JudgeVerdict | None = None
) -> list[MissingPiece]:
    """Everything that keeps the evidence from being sufficient; empty means answerable.

    ``verdict`` is the sufficiency judge's (policies.decision.judge) when it sat on this evidence. A question
    that names nothing (``policies.question.analysis.contentless``) lacks its subject, whatever was found."""
    if policy.refuse_contentless and contentless(question):
        return [MissingPiece("no_question_content", NO_CONTENT)]
    if policy.refuse_absent_names and (names := _absent_pieces(question, policy, names_only=True)):
        return names
    pieces = _relevance_pieces(question, items, policy, verdict)
    if pieces:
        return [*pieces, *_side_pieces(question, items, policy)]
    # runners-up are extra reading; only the lead windows must be whole
    lead = items[: policy.lead_windows]
    return [
        *_measure_pieces(question, lead, policy),
        *_slot_pieces(question, items, policy),
        *_side_pieces(question, items, policy),
        *_reference_pieces(question, lead, policy),
        *_gap_pieces(lead, policy),
    ]


def answer_notes(question: Question, items: Sequence[Checked], policy: Policy) -> list[MissingPiece]:
    """What an answer may note beside it: the references of its lead windows the corpus lacks that
    the answering unit does not defer to (``Policy.deferring_references``; none without it)."""
    if not policy.deferring_references:
        return []
    return _reference_pieces(question, items[: policy.lead_windows], policy, deferred=False)


# Uncovered slots worth a second recall: names (a model number, a clause id, a quoted title). A
# missing value (a year, an amount, a duration, a percentage, a count) is the scope the question
# asks about; searching for the bare value finds passages that mention it about something else.
SEARCHABLE_SLOTS: frozenset[SlotKind] = frozenset({"model", "clause", "quoted"})


def searchable(piece: MissingPiece) -> bool:
    """A missing piece a query can name: a referenced rule, a named slot, a side of a comparison,
    or the question's own terms."""
    if piece.kind == "uncovered_slot":
        return piece.slot_kind is None or piece.slot_kind in SEARCHABLE_SLOTS or piece.slot_kind == "side"
    return piece.kind in {"unresolved_reference", "no_relevant_evidence"}


def widen(missing: Sequence[MissingPiece]) -> bool:
    """A second recall can only help with things a query can name."""
    return any(searchable(p) for p in missing)


def should_widen(missing: Sequence[MissingPiece], recalls: int, policy: Policy) -> bool:
    """One more, wider recall: only when the preset widens, within the recall budget, for nameable gaps."""
    return policy.preset.widens and recalls < policy.max_recalls and widen(missing)


def widened_query(question: Question, missing: Sequence[MissingPiece]) -> str:
    """The question plus the names of what is missing: referenced rules, uncovered slots. For a
    comparison's missing side, the question without the names of the sides already found: the
    missing side's name and the question's other words lead the recall."""
    sides = {p.value for p in missing if p.slot_kind == "side" and p.value}
    text = side_query(question.text, question.sides, sides) if sides else question.text
    extra = [
        p.value
        for p in missing
        if p.value
        and p.slot_kind != "side"
        and p.kind in {"unresolved_reference", "uncovered_slot"}
        and searchable(p)
    ]
    return " ".join([text, *dict.fromkeys(extra)])
