"""The bilingual sentence splitter: where Chinese and English sentences end, and where they do not."""

from __future__ import annotations

import pytest

from evidence_loop.tools.parse.sentences import MAX_SENTENCE_CHARS, split_sentences


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


CHINESE_CASES = [
    (
        "full stop, exclamation, question, semicolon",
        "真的吗？是的！先付款；再发货。",
        ["真的吗？", "是的！", "先付款；", "再发货。"],
    ),
    ("closing quote stays with its sentence", "他说：“好。”然后离开了。", ["他说：“好。”", "然后离开了。"]),
    (
        "closing bracket stays with its sentence",
        "（详见第3条。）其余照常。",
        ["（详见第3条。）", "其余照常。"],
    ),
    ("half-width marks in Chinese text", "你好!我是小明?好的;再见", ["你好!", "我是小明?", "好的;", "再见"]),
    ("a newline ends a Chinese line", "第一行没有句号\n第二行也没有", ["第一行没有句号", "第二行也没有"]),
    ("a blank line ends a sentence", "上一段\n\n下一段", ["上一段", "下一段"]),
    (
        "decimals and versions stay whole",
        "价格为3.5元。请升级到v2.1版本。",
        ["价格为3.5元。", "请升级到v2.1版本。"],
    ),
    ("an inline list number is not a sentence end", "说明：1.采样日期为9月。", ["说明：1.采样日期为9月。"]),
    ("a period between Chinese words ends", "操作完成.下一步请登录。", ["操作完成.", "下一步请登录。"]),
    (
        "a wide gap after Chinese text ends",
        "二、举办主场活动\u3000\u30002023年活动照常举办。",
        ["二、举办主场活动", "2023年活动照常举办。"],
    ),
    ("a single space inside Chinese does not end", "第六章 附 则", ["第六章 附 则"]),
    ("commas do not end a sentence", "打开设置，点击网络，选择Wi-Fi。", ["打开设置，点击网络，选择Wi-Fi。"]),
]

ENGLISH_CASES = [
    (
        "period before a capital",
        "Charge it fully. Then turn it on.",
        ["Charge it fully.", "Then turn it on."],
    ),
    ("e.g. is not an end", "See e.g. the manual. It helps.", ["See e.g. the manual.", "It helps."]),
    ("i.e. is not an end", "Use the i.e. fast option. Next.", ["Use the i.e. fast option.", "Next."]),
    ("etc. is not an end", "Pens, pads, etc. Are sold here.", ["Pens, pads, etc. Are sold here."]),
    (
        "titles are not ends",
        "Dr. Smith met Mr. Jones and Mrs. Brown.",
        ["Dr. Smith met Mr. Jones and Mrs. Brown."],
    ),
    (
        "No. before a number is not an end",
        "Ask for No. 5 please. Thanks.",
        ["Ask for No. 5 please.", "Thanks."],
    ),
    ("No. before a word is a sentence", "No. That is wrong.", ["No.", "That is wrong."]),
    (
        "vs. and approx. are not ends",
        "A vs. B costs approx. 5 dollars.",
        ["A vs. B costs approx. 5 dollars."],
    ),
    (
        "Inc. is not an end",
        "Made by Acme Inc. Products ship fast.",
        ["Made by Acme Inc. Products ship fast."],
    ),
    ("U.S. is not an end", "Sold in the U.S. Army stores.", ["Sold in the U.S. Army stores."]),
    ("decimals stay whole", "The value is 3.5 today. Next.", ["The value is 3.5 today.", "Next."]),
    (
        "version numbers stay whole",
        "Update to v2.1 or 1.2.3 now. Restart.",
        ["Update to v2.1 or 1.2.3 now.", "Restart."],
    ),
    (
        "URLs stay whole",
        "Visit https://example.com/a.b?c now. Thanks.",
        ["Visit https://example.com/a.b?c now.", "Thanks."],
    ),
    (
        "e-mail addresses stay whole",
        "Mail support@example.com today. Bye.",
        ["Mail support@example.com today.", "Bye."],
    ),
    (
        "model numbers stay whole",
        "SM-G973F and X200-Pro work. Others fail.",
        ["SM-G973F and X200-Pro work.", "Others fail."],
    ),
    (
        "an ellipsis inside a sentence",
        "Wait... what happened? Nothing.",
        ["Wait... what happened?", "Nothing."],
    ),
    ("a closing quote stays", 'He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("a lower-case start is not a new sentence", "Is it ready? yes it is.", ["Is it ready? yes it is."]),
    (
        "a digit start is a new sentence",
        "It shipped in 2019. 5 units sold.",
        ["It shipped in 2019.", "5 units sold."],
    ),
    (
        "a wrapped line is joined",
        "Hold the side key\nfor three seconds. Done.",
        ["Hold the side key\nfor three seconds.", "Done."],
    ),
    (
        "a title line before a capital ends",
        "Shipping\nOrders ship in 2 days.",
        ["Shipping", "Orders ship in 2 days."],
    ),
    ("English semicolons do not end", "Charge it; then use it.", ["Charge it; then use it."]),
]


@pytest.mark.parametrize(("case", "text", "expected"), CHINESE_CASES, ids=[c[0] for c in CHINESE_CASES])
def test_chinese_sentences_end_where_a_reader_expects(case: str, text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(("case", "text", "expected"), ENGLISH_CASES, ids=[c[0] for c in ENGLISH_CASES])
def test_english_sentences_end_where_a_reader_expects(case: str, text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_a_run_on_chinese_sentence_is_cut_after_a_comma_below_the_cap() -> None:
    clause = "如需预约部署服务管理员可以在电脑端操作"
    text = "，".join([clause] * 40) + "。"
    parts = sentences(text)
    assert len(parts) > 1
    assert all(len(part) <= MAX_SENTENCE_CHARS for part in parts)
    assert all(part.endswith("，") for part in parts[:-1])
    assert "".join(parts) == text


def test_a_run_on_text_without_commas_is_cut_at_the_cap() -> None:
    text = "字" * (2 * MAX_SENTENCE_CHARS + 10)
    assert [len(part) for part in sentences(text)] == [MAX_SENTENCE_CHARS, MAX_SENTENCE_CHARS, 10]


def test_sentences_never_carry_surrounding_whitespace() -> None:
    text = "  \u3000第一句。 \n Second one.\t"
    assert sentences(text) == ["第一句。", "Second one."]


def test_whitespace_only_text_has_no_sentences() -> None:
    assert split_sentences(" \n\u3000\xa0\t") == []
