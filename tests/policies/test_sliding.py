"""Directional sliding: moves follow gaps and missing terms; a parent step only when the section fits."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import WindowCheck
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.evidence.sliding import (
    Move,
    coverage_moves,
    gap_moves,
    keep,
    keep_parent,
    parent_move,
)
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, ParsedDocument
from evidence_loop.tools.windows import Window

COURSE_ZH = """# 改期规则

## 常规班

本节规定仅适用于尚未开课的常规班报名。学员可免费改期一次。改期需提前3天申请。

## 价格

| 套餐 | 价格 |
| --- | --- |
| 基础 | 100元 |
| 高级 | 200元 |
"""
# 0 # 改期规则 | 1 ## 常规班 | 2 scope | 3 rule | 4 notice | 5 ## 价格 | 6 header | 7, 8 rows

MANUAL_EN = """# Warranty

The LM-S10 has a three year warranty. Batteries are covered for one year. Repairs take five days.
"""
# 0 heading | 1 warranty | 2 batteries | 3 repairs


@pytest.fixture(scope="module")
def course() -> ParsedDocument:
    return parse_document(DocumentInput("d", COURSE_ZH, format="markdown", title="T"))


@pytest.fixture(scope="module")
def manual() -> ParsedDocument:
    return parse_document(DocumentInput("d", MANUAL_EN, format="markdown", title="T"))


def _w(*ordinals: int) -> Window:
    return Window("d", "1", tuple(ordinals))


def _check(question: str, window: Window, doc: ParsedDocument, policy: Policy | None = None) -> WindowCheck:
    return check_window(analyse(question), window, doc, 5.0, policy or Policy())


def _scored(score: float) -> WindowCheck:
    return WindowCheck(1.0, 1.0, 1.0, 1.0, score, (), (), ())


def _moves(moves: list[Move]) -> list[tuple[str, tuple[int, ...]]]:
    return [(m.move, m.ordinals) for m in moves]


def test_a_left_scope_gap_gives_a_left_move_to_the_scope_sentence(course: ParsedDocument) -> None:
    check = _check("常规班能改期吗？", _w(3), course)
    assert ("left", (2,)) in _moves(gap_moves(course, check))


def test_an_orphan_row_gives_an_anchor_move_to_the_header_row(course: ParsedDocument) -> None:
    moves = gap_moves(course, _check("高级套餐多少钱？", _w(8), course))
    assert [(m.move, m.ordinals, m.unit_kind) for m in moves] == [("anchor", (6,), "table_header")]


def test_a_gap_move_says_which_gap_it_closes(course: ParsedDocument) -> None:
    (move,) = gap_moves(course, _check("高级套餐多少钱？", _w(8), course))
    assert move.reason.startswith("orphan_row: ")


def test_a_window_without_gaps_has_no_gap_moves(course: ParsedDocument) -> None:
    assert gap_moves(course, _check("高级套餐多少钱？", _w(6, 7, 8), course)) == []


def test_a_neighbour_holding_a_missing_term_pulls_the_window_right(manual: ParsedDocument) -> None:
    check = _check("How long do repairs take for batteries?", _w(2), manual)
    assert _moves(
        coverage_moves(analyse("How long do repairs take for batteries?"), _w(2), manual, check)
    ) == [("right", (3,))]


def test_a_neighbour_holding_a_missing_term_pulls_the_window_left(manual: ParsedDocument) -> None:
    question = "battery warranty"
    moves = coverage_moves(analyse(question), _w(2), manual, _check(question, _w(2), manual))
    assert _moves(moves) == [("left", (1,))]


def test_a_neighbour_holding_a_missing_slot_pulls_the_window(manual: ParsedDocument) -> None:
    question = "Are LM-S10 batteries covered?"
    moves = coverage_moves(analyse(question), _w(2), manual, _check(question, _w(2), manual))
    assert _moves(moves) == [("left", (1,))]


def test_a_coverage_move_names_the_terms_it_brings(manual: ParsedDocument) -> None:
    question = "battery repairs"
    (move,) = coverage_moves(analyse(question), _w(2), manual, _check(question, _w(2), manual))
    assert move.reason == "covers repair"


def test_a_fully_covered_window_has_no_coverage_moves(manual: ParsedDocument) -> None:
    question = "battery covered"
    assert coverage_moves(analyse(question), _w(2), manual, _check(question, _w(2), manual)) == []


def test_coverage_moves_stop_at_the_section_boundary(course: ParsedDocument) -> None:
    question = "改期 价格"  # 价格 lives in the next section only
    check = _check(question, _w(4), course)
    assert coverage_moves(analyse(question), _w(4), course, check) == []


def test_the_parent_move_offers_the_whole_section_when_it_fits(course: ParsedDocument) -> None:
    move = parent_move(_w(3), course, Policy(window_budget=900))
    assert move is not None and (move.move, move.ordinals) == ("parent", (1, 2, 3, 4))


def test_there_is_no_parent_move_when_the_section_exceeds_the_budget(course: ParsedDocument) -> None:
    assert parent_move(_w(3), course, Policy(window_budget=20)) is None


def test_there_is_no_parent_move_when_the_window_already_holds_the_section(course: ParsedDocument) -> None:
    assert parent_move(_w(1, 2, 3, 4), course, Policy()) is None


def test_the_parent_move_climbs_to_the_section_holding_a_window_that_spans_two(
    course: ParsedDocument,
) -> None:
    move = parent_move(_w(4, 5), course, Policy(window_budget=900))
    assert move is not None and move.ordinals == tuple(range(len(course.units)))


@pytest.mark.parametrize(
    ("before", "after", "kept"), [(0.5, 0.6, True), (0.5, 0.5, False), (0.5, 0.4, False)]
)
def test_a_move_is_kept_only_when_the_score_rises(before: float, after: float, kept: bool) -> None:
    assert keep(_scored(before), _scored(after)) is kept


@pytest.mark.parametrize(("before", "after", "kept"), [(0.5, 0.6, True), (0.5, 0.5, True), (0.5, 0.4, False)])
def test_a_parent_step_within_the_free_size_is_kept_unless_it_lowers_the_score(
    before: float, after: float, kept: bool
) -> None:
    policy = Policy(parent_free_chars=500)
    assert keep_parent(_scored(before), _scored(after), policy, 500) is kept


@pytest.mark.parametrize(
    ("before", "after", "kept"), [(0.5, 0.6, True), (0.5, 0.5, False), (0.5, 0.4, False)]
)
def test_a_parent_step_above_the_free_size_is_kept_only_when_the_score_rises(
    before: float, after: float, kept: bool
) -> None:
    policy = Policy(parent_free_chars=500)
    assert keep_parent(_scored(before), _scored(after), policy, 501) is kept
