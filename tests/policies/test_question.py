"""The question, analysed once: its slots, content and subject terms, the kinds of value it asks for."""

from __future__ import annotations

import pytest

from evidence_loop.policies.question.analysis import (
    analyse,
    asked_kinds,
    content_terms,
    contentless,
    subject_terms,
)

CONTENT_TERMS = [
    ("如何设置访客扫脸进门？", ("设置", "访客", "扫脸", "进门")),
    ("X200 保修几年", ("x200", "保修")),
    ("保修期是多久", ("保修期",)),
    ("美金提现记录在哪里看？", ("美金", "提现", "记录", "看")),
    ("群直播有哪几种模式？", ("群", "直播", "模式")),
    ("How do I reset the sound?", ("reset", "sound")),
    ("Please explain how to adjust HDMI black level", ("adjust", "hdmi", "black", "level")),
    ("退款退款怎么退款", ("退款",)),
    ("What does Remote Support mean?", ("remot", "support")),
    ("I don't know about Ambient Mode. Can you explain briefly?", ("ambient", "mode")),
    ("What types of things can I do in Ambient Mode?", ("ambient", "mode")),
]


@pytest.mark.parametrize(("question", "expected"), CONTENT_TERMS, ids=[q for q, _ in CONTENT_TERMS])
def test_content_terms_are_index_tokens_without_question_words(
    question: str, expected: tuple[str, ...]
) -> None:
    assert content_terms(question) == expected


def test_content_terms_of_a_bare_question_are_empty() -> None:
    assert content_terms("为什么？怎么办？") == ()


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("退款多久到账？", {"percentage", "amount", "duration", "date", "count"}),
        ("When was GPT-3 released?", {"date", "count"}),
        ("Who acquired Instagram?", {"named"}),
        ("是否支持开具发票？", {"polarity"}),
        ("如何申请退款？", set()),
        (
            "Minecraft是什么类型的游戏？",
            {"percentage", "amount", "duration", "date", "count", "named", "polarity"},
        ),
    ],
)
def test_a_question_asks_for_the_kinds_of_value_its_words_name(question: str, kinds: set[str]) -> None:
    assert asked_kinds(question) == kinds


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
def test_asks_are_the_numeric_kinds_a_question_names(question: str, kinds: set[str]) -> None:
    assert analyse(question).asks == frozenset(kinds)


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
    assert analyse(question).factoid is factoid


def test_own_numbers_are_the_numbers_the_question_writes() -> None:
    assert analyse("2020年美网 1,000 人").own_numbers == {"2020", "1000"}


SUBJECT_TERMS = [
    ("2018年中国城镇新增就业了多少人", {"2018", "中国", "城镇", "新增", "就业"}),
    ("Who won the 2021 Presidents Cup?", {"2021", "presid", "cup", "won"}),
    ("小米的创始人是谁？", {"小米", "创始人"}),
    (
        "群直播的模式",
        {"直播", "模式"},
    ),  # one CJK character ("群") is in too many texts to tell subjects apart
]


@pytest.mark.parametrize(("question", "expected"), SUBJECT_TERMS, ids=[q for q, _ in SUBJECT_TERMS])
def test_subject_terms_are_the_words_compared_texts_must_share(question: str, expected: set[str]) -> None:
    assert subject_terms(question) == expected


def test_the_identifiers_are_the_slots_that_name_a_code() -> None:
    question = analyse("LM-X200 在2021年的保修期是多久？")
    assert [s.norm for s in question.slots] == ["lm-x200", "2021年"]
    assert [s.norm for s in question.identifiers] == ["lm-x200"]


@pytest.mark.parametrize(
    ("text", "names_nothing"),
    [
        ("?", True),
        ("the", True),
        ("a", True),
        ("???", True),
        ("What is it?", True),
        ("How long?", True),
        ("Hello, thanks!", True),
        ("请问？", True),
        ("是什么？", True),
        ("你好", True),
        ("多久？", True),
        ("refund?", False),
        ("LM-S10", False),
        ("2024?", False),
        ("保修", False),
        ("退货多久？", False),
        ("How long is the warranty?", False),
    ],
)
def test_a_question_names_nothing_when_no_content_word_is_left_in_either_language(
    text: str, names_nothing: bool
) -> None:
    assert contentless(analyse(text)) is names_nothing
