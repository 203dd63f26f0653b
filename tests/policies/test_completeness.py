"""The completeness check: typed gaps at a window's edges, references, and the scores they feed."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Gap
from evidence_loop.policies.evidence.completeness import check_window, window_gaps
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocFormat, DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import Window

COURSE_ZH = """# 改期规则

## 常规班

本节规定仅适用于尚未开课的常规班报名。学员可免费改期一次。已开课的学员须按另一份《在读学员改期规则》处理。

## 价格

| 套餐 | 价格 |
| --- | --- |
| 基础 | 100元 |
| 高级 | 200元 |

办理退款需要以下材料：

- 身份证
- 订单号

该规则自2024年起执行。
"""
# 0 # 改期规则 | 1 ## 常规班 | 2 scope | 3 rule | 4 reference | 5 ## 价格 | 6 header | 7, 8 rows
# 9 list intro | 10, 11 items | 12 "该规则…"

REFUND_EN = """# Refunds

This policy applies only to online orders. Refunds are paid within 7 days. This is done by the bank.
See the Refund Policy for details. Shipping is free. Custom items are not covered.
"""
# 0 heading | 1 scope | 2 | 3 "This is…" | 4 reference | 5 | 6 exception

PLAIN_ZH = "退款说明\n\n退款将退回原支付账户，\n通常在7个工作日内到账。定制商品除外。\n"
# 0 title | 1 cut sentence | 2 | 3 exception


def _parse(text: str, fmt: DocFormat = "markdown") -> ParsedDocument:
    return parse_document(DocumentInput("d", text, format=fmt, title="T"))


@pytest.fixture(scope="module")
def course() -> ParsedDocument:
    return _parse(COURSE_ZH)


@pytest.fixture(scope="module")
def refund() -> ParsedDocument:
    return _parse(REFUND_EN)


@pytest.fixture(scope="module")
def plain() -> ParsedDocument:
    return _parse(PLAIN_ZH, "text")


def _w(*ordinals: int) -> Window:
    return Window("d", "1", tuple(ordinals))


def _kinds(gaps: tuple[Gap, ...]) -> list[tuple[str, str, int | None]]:
    return [(g.kind, g.direction, g.target) for g in gaps]


def test_the_fixtures_parse_into_the_units_the_tests_name(
    course: ParsedDocument, refund: ParsedDocument, plain: ParsedDocument
) -> None:
    assert [u.kind for u in course.units][5:12] == [
        "heading", "table_header", "table_row", "table_row", "sentence", "list_item", "list_item",
    ]  # fmt: skip
    assert refund.units[4].text == "See the Refund Policy for details."
    assert plain.units[1].text == "退款将退回原支付账户，"


def test_a_scope_sentence_just_before_the_window_gives_a_left_missing_scope_gap(
    course: ParsedDocument,
) -> None:
    assert ("missing_scope", "left", 2) in _kinds(window_gaps(course, _w(3)))


def test_a_scope_sentence_just_before_the_window_is_one_gap_not_two(course: ParsedDocument) -> None:
    assert [g.target for g in window_gaps(course, _w(3))].count(2) == 1


def test_an_english_scope_sentence_just_before_the_window_gives_a_left_gap(refund: ParsedDocument) -> None:
    assert ("missing_scope", "left", 1) in _kinds(window_gaps(refund, _w(2)))


def test_a_window_opening_with_gai_gives_a_left_gap(course: ParsedDocument) -> None:
    assert _kinds(window_gaps(course, _w(12)))[0] == ("missing_scope", "left", 11)


def test_a_window_opening_with_this_gives_a_left_gap(refund: ParsedDocument) -> None:
    assert ("missing_scope", "left", 2) in _kinds(window_gaps(refund, _w(3)))


def test_a_section_heading_before_the_window_is_not_a_left_gap(course: ParsedDocument) -> None:
    assert [g for g in window_gaps(course, _w(2)) if g.direction == "left"] == []


def test_the_sections_scope_sentence_further_up_is_an_anchor_gap(refund: ParsedDocument) -> None:
    assert ("missing_scope", "anchor", 1) in _kinds(window_gaps(refund, _w(3)))


def test_a_table_row_without_its_header_is_an_orphan_row_anchored_at_the_header(
    course: ParsedDocument,
) -> None:
    assert _kinds(window_gaps(course, _w(8))) == [("orphan_row", "anchor", 6)]


def test_a_table_row_with_its_header_has_no_gap(course: ParsedDocument) -> None:
    assert window_gaps(course, _w(6, 7, 8)) == ()


def test_two_rows_of_one_table_give_one_orphan_row_gap(course: ParsedDocument) -> None:
    assert _kinds(window_gaps(course, _w(7, 8))) == [("orphan_row", "anchor", 6)]


def test_a_list_item_without_its_intro_is_an_orphan_item_anchored_at_the_intro(
    course: ParsedDocument,
) -> None:
    assert _kinds(window_gaps(course, _w(10))) == [("orphan_item", "anchor", 9)]


def test_a_list_intro_without_its_list_is_truncated_to_the_right(course: ParsedDocument) -> None:
    assert _kinds(window_gaps(course, _w(9))) == [("truncated_unit", "right", 10)]


def test_a_cut_last_sentence_gives_a_truncated_unit_gap_to_the_right(plain: ParsedDocument) -> None:
    assert _kinds(window_gaps(plain, _w(1))) == [("truncated_unit", "right", 2)]


def test_an_exception_right_after_gives_a_right_gap(plain: ParsedDocument) -> None:
    assert _kinds(window_gaps(plain, _w(1, 2))) == [("missing_scope", "right", 3)]


def test_an_english_exception_right_after_gives_a_right_gap(refund: ParsedDocument) -> None:
    assert ("missing_scope", "right", 6) in _kinds(window_gaps(refund, _w(5)))


def test_a_rule_reference_right_after_gives_a_right_gap(course: ParsedDocument) -> None:
    assert ("missing_scope", "right", 4) in _kinds(window_gaps(course, _w(2, 3)))


def test_a_next_sections_heading_is_no_right_gap(course: ParsedDocument) -> None:
    assert window_gaps(course, _w(1, 2, 3, 4)) == ()


def test_closing_a_left_scope_gap_raises_the_score(course: ParsedDocument) -> None:
    question, policy = analyse("常规班可以免费改期吗？"), Policy()
    before = check_window(question, _w(3), course, 5.0, policy)
    after = check_window(question, _w(2, 3), course, 5.0, policy)
    assert (after.score > before.score, after.boundary > before.boundary) == (True, True)


def test_closing_an_orphan_row_gap_raises_the_boundary_to_full(course: ParsedDocument) -> None:
    question, policy = analyse("高级套餐多少钱？"), Policy()
    before = check_window(question, _w(8), course, 5.0, policy)
    after = check_window(question, _w(6, 8), course, 5.0, policy)
    assert (before.boundary, after.boundary) == (1.0 - policy.gap_penalty, 1.0)
    assert after.score > before.score


def test_slot_coverage_is_one_when_the_window_names_the_asked_model() -> None:
    doc = _parse("LM-S10 整机保修期为3年。LM-S20 保修期为2年。\n", "text")
    check = check_window(analyse("LM-S10 的保修期是多久？"), _w(0), doc, 5.0, Policy())
    assert (check.slot_coverage, check.uncovered) == (1.0, ())


def test_slot_coverage_is_zero_and_the_slot_named_when_the_model_is_absent() -> None:
    doc = _parse("LM-S10 整机保修期为3年。LM-S20 保修期为2年。\n", "text")
    check = check_window(analyse("LM-S10 的保修期是多久？"), _w(1), doc, 5.0, Policy())
    assert (check.slot_coverage, [s.value for s in check.uncovered]) == (0.0, ["LM-S10"])


def test_slot_coverage_is_one_when_the_question_has_no_slots(refund: ParsedDocument) -> None:
    assert check_window(analyse("refund bank"), _w(2), refund, 5.0, Policy()).slot_coverage == 1.0


def test_term_coverage_is_the_share_of_question_terms_the_window_holds(refund: ParsedDocument) -> None:
    question = analyse("refund bank")  # terms: refund, bank
    half = check_window(question, _w(2), refund, 5.0, Policy()).coverage
    full = check_window(question, _w(2, 3), refund, 5.0, Policy()).coverage
    assert (half, full) == (0.5, 1.0)


def test_relevance_comes_from_the_windows_best_seed(refund: ParsedDocument) -> None:
    seeded = Window("d", "1", (2,), (Hit(refund.units[2], 5.0, 0),))
    question = analyse("refund")
    assert check_window(question, seeded, refund, 5.0, Policy()).relevance == 0.5
    assert check_window(question, _w(2), refund, 5.0, Policy()).relevance == 0.0


def test_the_score_is_the_weighted_sum_of_the_four_signals(course: ParsedDocument) -> None:
    policy = Policy()
    c = check_window(analyse("高级套餐多少钱？"), _w(8), course, 5.0, policy)
    expected = (
        policy.w_relevance * c.relevance
        + policy.w_coverage * c.coverage
        + policy.w_slots * c.slot_coverage
        + policy.w_boundary * c.boundary
    )
    assert c.score == round(expected, 6)


def _check(question: str, text: str) -> float:
    doc = _parse(text, "text")
    window = Window("d", "1", tuple(range(len(doc.units))), (Hit(doc.units[0], 5.0, 0),))
    return check_window(analyse(question), window, doc, 5.0, Policy()).score


def test_a_window_stating_the_asked_date_outscores_one_that_does_not() -> None:
    stating = _check("美网开始时间", "美网开始时间定于8月31日，地点在纽约。")
    silent = _check("美网开始时间", "美网开始时间尚未公布，地点在纽约。")
    assert stating - silent == pytest.approx(Policy().answer_type_penalty)


def test_a_how_to_question_is_scored_without_the_answer_type() -> None:
    with_value = _check("如何设置美网提醒", "设置美网提醒：打开应用，在8月31日前点击提醒。")
    without = _check("如何设置美网提醒", "设置美网提醒：打开应用，在比赛开始前点击提醒。")
    assert with_value == pytest.approx(without)


def test_a_policy_recorded_before_the_answer_type_rules_replays_without_them() -> None:
    recorded = Policy().as_dict()
    del recorded["answer_type_penalty"], recorded["fill_chars"]
    assert Policy.from_dict(recorded).answer_type_penalty == 0.0
    assert Policy.from_dict(recorded).fill_chars == 0
    assert Policy.from_dict(Policy().as_dict()) == Policy()
