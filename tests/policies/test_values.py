"""The value layer: numbers in every script, the canonical form of a value, statements, what a text states."""

from __future__ import annotations

import pytest

from evidence_loop.policies.question.values import (
    canonical,
    cn_to_int,
    int_to_cn,
    month_number,
    number_kind,
    sentences,
    stated_values,
    statements,
    states,
    to_int,
    window_states,
)

# (written, value): every script the one number parser reads; None where it reads no whole number
NUMBERS = [
    ("十", 10),
    ("十五", 15),
    ("二十四", 24),
    ("一百零五", 105),
    ("两", 2),
    ("两千", 2000),
    ("一千零一", 1001),
    ("二〇二一", 2021),  # digits read positionally when a zero is among them
    ("一万二千", 12000),
    ("三万五千", 35000),
    ("十万", 100000),
    ("三五", None),  # a range: "three to five"
    ("五个", None),
    ("", None),
    ("12", 12),
    ("1,299", 1299),
    (" 7 ", 7),
    ("three", 3),
    ("Twelve", 12),
    ("thirteen", None),  # English words are read up to twelve
    ("3.5", None),  # a decimal is no whole number
]


@pytest.mark.parametrize(("written", "value"), NUMBERS)
def test_a_whole_number_reads_from_digits_chinese_numerals_or_words(written: str, value: int | None) -> None:
    assert to_int(written) == value


def test_chinese_numerals_alone_read_only_in_chinese() -> None:
    assert (cn_to_int("十五"), cn_to_int("15"), cn_to_int("three")) == (15, None, None)


def test_every_number_below_ten_thousand_writes_in_chinese_and_reads_back() -> None:
    assert [int_to_cn(v) for v in (10, 15, 105, 1001)] == ["十", "十五", "一百零五", "一千零一"]
    assert all(cn_to_int(int_to_cn(v) or "") == v for v in range(1, 10000))


@pytest.mark.parametrize("value", [0, -3, 10000, 12000])
def test_chinese_numerals_are_written_only_below_ten_thousand(value: int) -> None:
    assert int_to_cn(value) is None


@pytest.mark.parametrize(
    ("month", "value"), [("3", 3), ("March", 3), ("mar.", 3), ("sept", 9), ("13", None), ("Smarch", None)]
)
def test_a_month_reads_from_digits_or_an_english_name(month: str, value: int | None) -> None:
    assert month_number(month) == value


SAME_VALUE = [
    (["七", "十"], ["70"]),
    (["oct", "19"], ["october", "19"]),
    (["1,000"], ["1000"]),
    (["2.30"], ["2.3"]),
    (["一", "千", "三", "百", "六", "十", "一", "万"], ["1361", "万"]),  # 万 stays a unit atom
    (["二", "〇", "二", "一", "年"], ["2021", "年"]),
    (["在", "男", "子", "3"], ["男", "子", "三"]),  # particles are left out
]


@pytest.mark.parametrize(("left", "right"), SAME_VALUE)
def test_one_value_written_two_ways_has_one_canonical_form(left: list[str], right: list[str]) -> None:
    assert canonical(left) == canonical(right)


def test_a_range_of_chinese_digits_is_kept_as_written() -> None:
    assert canonical(["三", "五", "年"]) == "三五|年"


def test_sentences_keep_abbreviations_whole_and_offsets_absolute() -> None:
    text = "WhatsApp Inc. of Mountain View was acquired. It grew fast… 第二句。"
    found = sentences(text, offset=10)
    assert [text[s.start - 10 : s.end - 10] for s in found] == [
        "WhatsApp Inc. of Mountain View was acquired.",
        "It grew fast…",
        "第二句。",
    ]


def test_statements_keep_a_table_rows_cells_together() -> None:
    text = "| 高级 | 200元 |\n| 基础 | 100元 |"
    assert [text[s:e] for s, e in statements(text)] == ["| 高级 | 200元 |", "| 基础 | 100元 |"]


KINDS = [
    (["15", "%"], [], "percentage"),
    (["$", "3.2"], [], "amount"),
    (["200", "元"], [], "amount"),
    (["30"], ["days"], "duration"),
    (["7", "个"], ["工", "作", "日"], "duration"),
    (["8", "月", "31", "日"], [], "date"),
    (["aug", "23", ",", "2020"], [], "date"),
    (["2020"], [], "date"),  # a bare year
    (["70", "个"], [], "count"),
    (["2020", "人"], [], "count"),  # a year-like number with a unit is a count
]


@pytest.mark.parametrize(("norms", "following", "kind"), KINDS)
def test_a_number_is_of_the_kind_its_unit_names(norms: list[str], following: list[str], kind: str) -> None:
    assert number_kind(norms, following) == kind


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
