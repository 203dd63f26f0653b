"""The decision: what is missing, whether a second recall can help, and the outcome status."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.missing import (
    missing_pieces,
    should_widen,
    widen,
    widened_query,
)
from evidence_loop.policies.decision.status import status_of
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.evidence.selection import pinned_for_references, select_evidence
from evidence_loop.policies.question.analysis import Question, analyse
from evidence_loop.policies.types import MissingPiece
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocFormat, DocumentInput, ParsedDocument
from evidence_loop.tools.windows import Window

COURSE_ZH = (
    "本节规定仅适用于尚未开课的常规班报名。学员可免费改期一次。"
    "已开课的学员须按另一份《在读学员改期规则》处理。\n"
)
ENROLLED_ZH = "在读学员如需改期，须在开课后7天内申请，且只能改期一次。\n"
WARRANTY_ZH = "LM-S10 整机保修期为3年。电池保修期为1年。\n"
RESCHEDULE = "常规班可以免费改期吗？"


def _doc(doc_id: str, text: str, title: str = "", fmt: DocFormat = "text") -> ParsedDocument:
    return parse_document(DocumentInput(doc_id, text, format=fmt, title=title))


def _item(question: Question, doc: ParsedDocument, *ordinals: int) -> Checked:
    window = Window(doc.doc_id, doc.version, ordinals or tuple(range(len(doc.units))))
    return Checked(window, doc, check_window(question, window, doc, 5.0, Policy()), 5.0)


def _kinds(pieces: list[MissingPiece]) -> list[str]:
    return [p.kind for p in pieces]


def test_no_evidence_at_all_is_no_relevant_evidence() -> None:
    assert _kinds(missing_pieces(analyse(RESCHEDULE), [], Policy())) == ["no_relevant_evidence"]


def test_evidence_covering_too_little_of_the_question_is_no_relevant_evidence_naming_the_lacking_terms() -> (
    None
):
    question = analyse("refund bank transfer fee")
    doc = _doc("en", "Refunds are paid within 7 days.\n")
    (piece,) = missing_pieces(question, [_item(question, doc)], Policy())
    assert (piece.kind, piece.value) == ("no_relevant_evidence", "bank fee transfer")


def test_complete_evidence_misses_nothing() -> None:
    question = analyse("LM-S10 的整机保修期是多久？")
    assert missing_pieces(question, [_item(question, _doc("w", WARRANTY_ZH), 0)], Policy()) == []


def test_an_uncovered_slot_is_named() -> None:
    question = analyse("LM-S20 的整机保修期是多久？")
    pieces = missing_pieces(question, [_item(question, _doc("w", WARRANTY_ZH), 0)], Policy())
    assert [(p.kind, p.value) for p in pieces] == [("uncovered_slot", "LM-S20")]


def test_a_look_alike_naming_the_slot_but_little_else_does_not_cover_it() -> None:
    question = analyse("LM-S20 的整机保修期和电池保修期分别是多久？")
    relevant = _item(question, _doc("w", WARRANTY_ZH))  # the asked warranties, for another model
    look_alike = _item(question, _doc("news", "LM-S20 新品发布会于上海举行。\n"))  # the model, nothing else
    assert relevant.check.coverage >= Policy().min_coverage > look_alike.check.coverage
    pieces = missing_pieces(question, [relevant, look_alike], Policy())
    assert [(p.kind, p.value) for p in pieces] == [("uncovered_slot", "LM-S20")]


def test_an_unresolved_reference_is_named_with_the_offsets_of_the_unit_that_makes_it() -> None:
    question, doc = analyse("已开课的学员怎么改期？"), _doc("course", COURSE_ZH)
    (piece,) = missing_pieces(question, [_item(question, doc)], Policy())
    unit = doc.units[2]
    assert (piece.kind, piece.value, piece.doc_id, piece.version, piece.start, piece.end) == (
        "unresolved_reference",
        "在读学员改期规则",
        "course",
        "1",
        unit.start,
        unit.end,
    )


def test_a_reference_is_resolved_by_another_window_whose_title_names_the_rule() -> None:
    question = analyse(RESCHEDULE)
    course = _item(question, _doc("course", COURSE_ZH))
    enrolled = _item(question, _doc("enrolled", ENROLLED_ZH, title="在读学员改期规则"))
    assert missing_pieces(question, [course, enrolled], Policy()) == []


def test_the_window_that_resolves_a_reference_is_pinned() -> None:
    question = analyse(RESCHEDULE)
    course = _item(question, _doc("course", COURSE_ZH))
    enrolled = _item(question, _doc("enrolled", ENROLLED_ZH, title="在读学员改期规则"))
    other = _item(question, _doc("w", WARRANTY_ZH, title="保修政策"))
    assert pinned_for_references([course], [course, other, enrolled], Policy()) == [enrolled]


def test_the_evidence_is_selected_again_with_the_resolving_window_beside_the_lead() -> None:
    question = analyse(RESCHEDULE)
    course = _item(question, _doc("course", COURSE_ZH))
    enrolled = _item(question, _doc("enrolled", ENROLLED_ZH, title="在读学员改期规则"))
    other = _item(question, _doc("w", WARRANTY_ZH, title="保修政策"))
    assert select_evidence(question, [course, other], [course, other, enrolled], Policy())[:2] == [
        course,
        enrolled,
    ]


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["uncovered_slot"], True),
        (["unresolved_reference"], True),
        (["no_relevant_evidence"], True),
        (["budget_exhausted", "unresolved_reference"], True),
        (["budget_exhausted"], False),
        ([], False),
    ],
)
def test_a_second_recall_is_tried_only_for_what_a_query_can_name(kinds: list[str], expected: bool) -> None:
    pieces = [MissingPiece(k, "detail") for k in kinds]  # type: ignore[arg-type]
    assert widen(pieces) is expected


@pytest.mark.parametrize(
    ("slot_kind", "expected"),
    [
        ("model", True),  # LM-S20: a name worth searching for
        ("clause", True),
        ("quoted", True),
        ("date", False),  # 2022年: the scope asked about; a search finds it said of something else
        ("amount", False),
        ("duration", False),
        ("percentage", False),
        ("count", False),
    ],
)
def test_only_a_named_slot_is_worth_a_second_recall(slot_kind: str, expected: bool) -> None:
    piece = MissingPiece("uncovered_slot", "d", value="v", slot_kind=slot_kind)  # type: ignore[arg-type]
    assert widen([piece]) is expected
    assert widened_query(analyse("q"), [piece]) == ("q v" if expected else "q")


def test_the_widened_query_adds_the_referenced_rule_and_the_uncovered_slot() -> None:
    missing = [
        MissingPiece("unresolved_reference", "d", value="在读学员改期规则"),
        MissingPiece("uncovered_slot", "d", value="LM-S20"),
        MissingPiece("budget_exhausted", "d", value="ignored"),
    ]
    assert widened_query(analyse(RESCHEDULE), missing) == f"{RESCHEDULE} 在读学员改期规则 LM-S20"


def test_the_widened_query_names_each_missing_value_once() -> None:
    missing = [MissingPiece("uncovered_slot", "d", value="LM-S20")] * 2
    assert widened_query(analyse("q"), missing) == "q LM-S20"


@pytest.mark.parametrize(
    ("missing", "conflict", "status"),
    [
        ([MissingPiece("uncovered_slot", "d")], True, "conflicting_evidence"),
        ([], True, "conflicting_evidence"),
        ([MissingPiece("uncovered_slot", "d")], False, "insufficient_evidence"),
        ([], False, "answered"),
    ],
)
def test_status_puts_a_conflict_first_then_anything_missing(
    missing: list[MissingPiece], conflict: bool, status: str
) -> None:
    assert status_of(missing, conflict) == status


def test_a_blocking_gap_in_reach_is_reported_as_itself_at_the_missing_unit() -> None:
    question = analyse("高级的价格")  # the row covers one of its two terms: relevant enough
    doc = _doc(
        "price", "| 套餐 | 价格 |\n| --- | --- |\n| 基础 | 100元 |\n| 高级 | 200元 |\n", fmt="markdown"
    )
    (piece,) = missing_pieces(question, [_item(question, doc, 2)], Policy())
    assert (piece.kind, piece.start, piece.end) == ("orphan_row", doc.units[0].start, doc.units[0].end)


def test_a_blocking_gap_whose_unit_does_not_fit_the_budget_is_reported_as_budget_exhausted() -> None:
    question = analyse("高级的价格")
    doc = _doc(
        "price", "| 套餐 | 价格 |\n| --- | --- |\n| 基础 | 100元 |\n| 高级 | 200元 |\n", fmt="markdown"
    )
    (piece,) = missing_pieces(question, [_item(question, doc, 2)], Policy(window_budget=12))
    assert (piece.kind, piece.start, piece.end) == ("budget_exhausted", doc.units[0].start, doc.units[0].end)


def test_a_gap_in_a_runner_up_window_blocks_nothing() -> None:
    question = analyse("高级的价格")
    doc = _doc(
        "price", "| 套餐 | 价格 |\n| --- | --- |\n| 基础 | 100元 |\n| 高级 | 200元 |\n", fmt="markdown"
    )
    lead = _item(question, doc, 2)
    assert missing_pieces(question, [lead, _item(question, doc, 2)], Policy(lead_windows=1)) == [
        missing_pieces(question, [lead], Policy(lead_windows=1))[0]
    ]


@pytest.mark.parametrize(
    ("mode", "recalls", "kinds", "widened"),
    [
        ("adaptive", 1, ["unresolved_reference"], True),
        ("adaptive", 2, ["unresolved_reference"], False),
        ("parent", 1, ["unresolved_reference"], False),
        ("adaptive", 1, ["budget_exhausted"], False),
    ],
)
def test_only_the_full_loop_widens_within_its_recall_budget(
    mode: str, recalls: int, kinds: list[str], widened: bool
) -> None:
    missing = [MissingPiece(k, "d", value="x") for k in kinds]  # type: ignore[arg-type]
    assert should_widen(missing, recalls, Policy(mode=mode)) is widened  # type: ignore[arg-type]
