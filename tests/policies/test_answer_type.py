"""The answer-type signal: does a passage state the kind of value the question asks for."""

from __future__ import annotations

import pytest

from policies.answer_type import asked_values, is_factoid, own_numbers, stated_values, states, window_states
from policies.completeness import check_window
from policies.config import Policy
from policies.question import analyse
from tools.parse import parse_document
from tools.types import DocumentInput, Hit, ParsedDocument
from tools.windows import Window


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("2020年美网开始时间", {"date"}),
        ("When was the tournament held?", {"date"}),
        ("微软花了多少钱收购动视暴雪", {"percentage", "amount", "duration", "date", "count"}),
        ("How many days does a refund take?", {"percentage", "amount", "duration", "date", "count"}),
        ("如何设置考勤组？", set()),  # a how-to asks for a procedure
        ("什么是极速打卡？", set()),  # "what" alone may ask for anything
        ("谁获得了冠军？", set()),  # a name is no numeric kind
    ],
)
def test_asked_values_are_the_numeric_kinds_a_question_names(question: str, kinds: set[str]) -> None:
    assert asked_values(question) == frozenset(kinds)


@pytest.mark.parametrize(
    ("question", "factoid"),
    [
        ("2020年美网开始时间", True),
        ("谁刺杀了林肯？", True),
        ("How many days does a refund take?", True),
        ("如何设置考勤组？", False),  # a procedure
        ("可以关掉蓝牙打卡吗？", False),  # a yes/no
        ("什么是极速打卡？", False),  # may ask for anything
    ],
)
def test_a_factoid_question_asks_for_a_number_a_date_or_a_name(question: str, factoid: bool) -> None:
    assert is_factoid(question) is factoid


def test_own_numbers_are_the_numbers_the_question_writes() -> None:
    assert own_numbers("2020年美网 1,000 人") == {"2020", "1000"}


@pytest.mark.parametrize(
    ("text", "asked", "expected"),
    [
        ("2020年美网将于8月31日在纽约开赛。", {"date"}, True),
        ("The tournament was held on August 31, 2020 in New York.", {"date"}, True),
        ("Aug 23, 2020 ...", {"date"}, False),  # a date line states nothing
        ("2020年美网在纽约举行。", {"date"}, False),  # only the question's own year
        ("该公司全年收入为3亿元。", {"date"}, False),  # an amount does not answer "when"
        ("该公司全年收入为3亿元。", {"amount"}, True),
        ("退款将在7个工作日内退回原账户。", {"duration"}, True),
        ("退款将退回原支付账户。", {"duration"}, False),
    ],
)
def test_a_unit_states_a_value_of_an_asked_kind(text: str, asked: set[str], expected: bool) -> None:
    assert states(frozenset(asked), frozenset({"2020"}), text) is expected  # type: ignore[arg-type]


def test_a_date_line_in_front_of_a_statement_does_not_count_as_stated() -> None:
    values = stated_values("Aug 23, 2020 ... 比赛在纽约举行，球员们陆续抵达。")
    assert all(digits != {"23", "2020"} for _, digits in values)


def test_a_value_counts_only_in_or_beside_a_unit_about_the_question() -> None:
    texts = ["比赛于8月31日开始。", "场馆位于纽约。", "门票已经售罄。"]
    kinds, own = frozenset({"date"}), frozenset[str]()
    assert window_states(kinds, own, texts, is_about=lambda t: t == texts[1])  # type: ignore[arg-type]
    assert not window_states(kinds, own, texts, is_about=lambda t: t == texts[2])  # type: ignore[arg-type]


def _doc(text: str) -> ParsedDocument:
    return parse_document(DocumentInput("d", text, format="text", title="T"))


def _check(question: str, text: str) -> float:
    doc = _doc(text)
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
