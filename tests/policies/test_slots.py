"""Slots: what a question names that the evidence must contain, and how it is matched."""

from __future__ import annotations

import pytest

from evidence_loop.policies.question.slots import extract_slots, slot_in_text
from evidence_loop.policies.types import Slot


def kinds_and_norms(question: str) -> list[tuple[str, str]]:
    return [(s.kind, s.norm) for s in extract_slots(question)]


EXTRACTED = [
    # models and part numbers
    ("X200-Pro 保修几年？", [("model", "x200-pro")]),
    ("SM-G973F 支持无线充电吗", [("model", "sm-g973f")]),
    ("iPhone 14 的电池容量", [("model", "iphone14")]),
    ("A12 芯片是什么", [("model", "a12")]),
    ("MU5735航班坠毁地点在哪里", [("model", "mu5735")]),
    ("Anynet+ (HDMI-CEC) 怎么用", [("model", "hdmi-cec")]),
    ("TRADE_NOT_EXIST 错误怎么办", [("model", "trade_not_exist")]),
    ("What is the premiere date of Grey's Anatomy Season 17?", [("model", "season17")]),
    ("北京地铁19号线一期有多少个车站", [("model", "19号线")]),
    # amounts
    ("会员费299元可以退吗", [("amount", "299元")]),
    ("¥299 的套餐包含什么", [("amount", "¥299")]),
    ("Is it $49.99 per month?", [("amount", "$49.99")]),
    ("Does it cost 49.99 USD?", [("amount", "49.99usd")]),
    # durations
    ("保修3年吗", [("duration", "3年")]),
    ("保修三年吗", [("duration", "三年")]),
    ("30天内可以退款吗", [("duration", "30天")]),
    ("Can I return it within 30 days?", [("duration", "30days")]),
    ("Is shipping 2 weeks?", [("duration", "2weeks")]),
    ("24小时内能到账吗", [("duration", "24小时")]),
    ("试用期3个月", [("duration", "3个月")]),
    ("Why my settings are lost after every 5 minutes?", [("duration", "5minutes")]),
    # dates
    ("2021年3月5日发布的版本", [("date", "2021年3月5日")]),
    ("2021-03-05 的公告", [("date", "2021-03-05")]),
    ("What was released on March 5, 2021?", [("date", "march5,2021")]),
    ("2022年6月我国网民规模有多少人？", [("date", "2022年6月")]),
    ("2022年高考报名人数", [("date", "2022年")]),
    ("Who won in 2021?", [("date", "2021")]),
    ("2021-2022赛季欧冠冠军", [("date", "2021"), ("date", "2022")]),
    ("美团2022年第一季度营收是多少？", [("date", "2022年"), ("date", "第一季度")]),
    ("When did the Golden Globe Awards 2020 take place?", [("date", "2020")]),
    # percentages
    ("折扣是15%吗", [("percentage", "15%")]),
    ("手续费是百分之十五吗", [("percentage", "百分之十五")]),
    # counts and quantities
    ("最多改期5次", [("count", "5次")]),
    ("Can I retry 3 times?", [("count", "3times")]),
    ("可以改期15次吗", [("count", "15次")]),
    ("可以改期十五次吗", [("count", "十五次")]),
    ("如何一次性导出4种考勤报表？", [("count", "4种")]),
    ("北京冬奥会男子1500米速度滑冰金牌", [("count", "1500米")]),
    ("Which actor won Best Actor at the 93rd Academy Awards Ceremony?", [("count", "93rd")]),
    # clause and section ids
    ("第3条怎么理解", [("clause", "第3条")]),
    ("第三条怎么理解", [("clause", "第三条")]),
    ("What does section 3.2 say?", [("clause", "section3.2")]),
    ("What does §4 say?", [("clause", "§4")]),
    ("What does 3.2.1 cover?", [("clause", "3.2.1")]),
    # quoted names
    ("“会员日”有什么优惠", [("quoted", "会员日")]),
    ('How do I use "Smart View"?', [("quoted", "smartview")]),
    ("《用户协议》在哪里看", [("quoted", "用户协议")]),
    ("「会员日」是哪天", [("quoted", "会员日")]),
    ("印度第三艘“歼敌者”级核潜艇下水的时间", [("count", "第三艘"), ("quoted", "歼敌者")]),
]


@pytest.mark.parametrize(("question", "expected"), EXTRACTED, ids=[q for q, _ in EXTRACTED])
def test_extract_slots_finds_what_the_question_names(question: str, expected: list[tuple[str, str]]) -> None:
    assert kinds_and_norms(question) == expected


NO_SLOTS = [
    "如何设置访客扫脸进门？",
    "钉钉如何添加好友？",
    "How do I reset the sound?",
    "发起一次审批需要多久",  # "一次" is "once", not a count the evidence must repeat
    "如何一次性导出考勤报表",
    "有一个问题想咨询",
    "保修几年",
    "10·29索马里首都汽车炸弹爆炸死亡人数",
    "两个企业可以合并为一个吗？",  # small counts in Chinese numerals are ordinary words
    "六项基本日常生活活动定义",
    "原有的400号码可以更换吗？",
    "苏联解体在哪一年",  # "哪一年" asks which year
    "每一天可以打几次卡",
]


@pytest.mark.parametrize("question", NO_SLOTS)
def test_extract_slots_finds_nothing_in_plain_questions(question: str) -> None:
    assert extract_slots(question) == ()


def test_a_capitalised_word_before_a_duration_is_not_a_model() -> None:
    assert kinds_and_norms("Within 30 days, can I return it?") == [("duration", "30days")]


def test_slots_come_in_order_of_appearance() -> None:
    assert kinds_and_norms("2021年买的X200，保修3年，花了299元") == [
        ("date", "2021年"),
        ("model", "x200"),
        ("duration", "3年"),
        ("amount", "299元"),
    ]


def test_a_repeated_value_is_one_slot_even_when_spelled_differently() -> None:
    assert kinds_and_norms("X200 和 X200 哪个好，保修3年还是三年") == [("model", "x200"), ("duration", "3年")]


def test_a_slot_keeps_its_surface_value() -> None:
    assert extract_slots("Can I return it within 30 days?")[0].value == "30 days"


def test_full_width_digits_are_read_as_digits() -> None:
    assert kinds_and_norms("保修３年吗") == [("duration", "3年")]


ALTERNATIVES = [
    ("保修三年吗", "3年"),
    ("保修3年吗", "三年"),
    ("保修3年吗", "3years"),
    ("warranty of 3 years", "3-year"),
    ("warranty of 3 years", "三年"),
    ("两个月内", "2个月"),
    ("30天内可以退款吗", "三十天"),
    ("30天内可以退款吗", "30days"),
    ("折扣是15%吗", "百分之十五"),
    ("手续费是百分之十五吗", "15%"),
    ("第3条", "第三条"),
    ("第三条", "第3条"),
    ("会员费299元", "¥299"),
    ("Is it $49.99?", "49.99usd"),
    ("Is it $49.99?", "49.99美元"),
    ("$1,299 plan", "$1299"),
    ("2021-03-05 的公告", "2021年3月5日"),
    ("released on March 5, 2021", "2021-03-05"),
    ("最多改期5次", "五次"),
    ("最多改期5次", "5times"),
    ("保修两年吗", "2年"),
    ("GPT4发布时间", "gpt-4"),
    ("X-200 好吗", "x200"),
    ("What was the revenue in Q2?", "secondquarter"),
    ("What was the revenue in Q2?", "第二季度"),
    ("一季度营收", "q1"),
    ("section 3.2", "§3.2"),
    ("§4", "section4"),
    ("2022年高考", "2022"),
]


@pytest.mark.parametrize(
    ("question", "alternative"), ALTERNATIVES, ids=[f"{q}->{a}" for q, a in ALTERNATIVES]
)
def test_alternatives_spell_the_same_value_differently(question: str, alternative: str) -> None:
    assert alternative in extract_slots(question)[0].alternatives


UNSAFE_ALTERNATIVES = [
    ("30天内可以退款吗", "30日"),  # "3月30日" is a date
    ("保修两年吗", "二年"),  # "二年级" is a school year; a cardinal 2 is "两"
    ("3个月", "3月"),  # "3月" is March
]


@pytest.mark.parametrize(("question", "alternative"), UNSAFE_ALTERNATIVES)
def test_alternatives_leave_out_ambiguous_spellings(question: str, alternative: str) -> None:
    slot = extract_slots(question)[0]
    assert alternative not in (slot.norm, *slot.alternatives)


MATCHES = [
    # (question holding one slot, evidence text, expected)
    ("保修3年吗", "保修期为3年。", True),
    ("保修3年吗", "保修期为13年。", False),
    ("保修3年吗", "保修期为1.3年。", False),
    ("保修三年吗", "保修期3年", True),
    ("保修3年吗", "保修期三年", True),
    ("保修三年吗", "保修期十三年", False),
    ("收费70元吗", "收费70元。", True),
    ("收费70元吗", "收费170元。", False),
    ("X200 好吗", "X2000 上市", False),
    ("X200 好吗", "X200-Pro 上市", True),
    ("X200 好吗", "X200 Pro 上市", True),
    ("X200 好吗", "X200Pro 上市", False),  # a bare model matches a variant only after a hyphen or space
    ("X200 好吗", "SM-X200 上市", True),
    ("Is the $49 plan", "costs $49.99", False),
    ("iPhone 14 好吗", "iphone14 电池", True),
    ("iPhone 14 好吗", "iPhone 140", False),
    ('"Smart View"', "Open smart view on the phone", True),
    ('"Smart View"', "Open Smart Viewer", False),
    ("within 30 days", "30天内退款", True),
    ("2022年高考", "2022-06-07 开考", True),
    ("2021-03-05", "于2021年3月5日发布", True),
    ("March 5, 2021", "on March 5 2021 we shipped", True),
    ("section 3.2", "3.2 Refunds", True),
    ("section 3.2", "3.21 Refunds", False),
    ("保修两年吗", "保修期2年", True),
    ("保修2年吗", "保修期两年", True),
    ("最多改期2次吗", "支持二次开发", False),
    ("GPT4发布时间", "GPT-4 于3月发布", True),
    ("When was Xenoblade Chronicles 2 released?", "Xenoblade Chronicles™ 2 launched", True),
    ("第三条", "根据第3条", True),
    ("第三条", "根据第13条", False),
    ("折扣15%", "优惠百分之十五", True),
    ("折扣15%", "优惠115%", False),
]


@pytest.mark.parametrize(("question", "text", "expected"), MATCHES, ids=[f"{q}|{t}" for q, t, _ in MATCHES])
def test_slot_in_text_matches_on_number_and_code_boundaries(question: str, text: str, expected: bool) -> None:
    assert slot_in_text(extract_slots(question)[0], text) is expected


def test_slot_in_text_ignores_case_width_and_spacing() -> None:
    assert slot_in_text(Slot("model", "SM-G973F", "sm-g973f"), "型号 ＳＭ－Ｇ９７３Ｆ 支持")
