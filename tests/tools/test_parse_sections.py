"""Headings of every kind build the section tree: paths, parents, spans, and which section a unit is in."""

from __future__ import annotations

import pytest

from evidence_loop.tools.errors import UnsupportedFormatError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocFormat, DocumentInput, ParsedDocument


def parse(text: str, fmt: DocFormat = "text", title: str = "Doc") -> ParsedDocument:
    return parse_document(DocumentInput("d", text, format=fmt, title=title))


def paths(parsed: ParsedDocument) -> list[tuple[str, ...]]:
    return [section.path for section in parsed.sections]


def heading_texts(parsed: ParsedDocument) -> list[str]:
    return [unit.text for unit in parsed.units if unit.kind == "heading"]


TREE_CASES = [
    (
        "markdown ATX levels",
        "markdown",
        "# A\n\ntext.\n\n## B\n\n### C\n\n## D\n\n# E\n",
        [(), ("A",), ("A", "B"), ("A", "B", "C"), ("A", "D"), ("E",)],
    ),
    (
        "markdown setext headings",
        "markdown",
        "Guide\n=====\n\nIntro.\n\nSetup\n-----\n\nSteps.\n",
        [(), ("Guide",), ("Guide", "Setup")],
    ),
    (
        "numbered headings 1. / 1.1 / 2.",
        "text",
        "1. Introduction\nThis is text.\n1.1 Scope\nMore text.\n1.2 Terms\nText.\n2. Methods\nText.\n",
        [
            (),
            ("1. Introduction",),
            ("1. Introduction", "1.1 Scope"),
            ("1. Introduction", "1.2 Terms"),
            ("2. Methods",),
        ],
    ),
    (
        "three-level numbers",
        "text",
        "1.1 Scope\n文本。\n1.1.1 Devices\n文本。\n1.2 Terms\n文本。\n",
        [(), ("1.1 Scope",), ("1.1 Scope", "1.1.1 Devices"), ("1.2 Terms",)],
    ),
    (
        "chapter, section and article",
        "text",
        "第一章 总则\n第一节 目的\n第一条 适用范围\n正文。\n第二条 定义\n正文。\n"
        "第二节 原则\n正文。\n第二章 细则\n正文。\n",
        [
            (),
            ("第一章 总则",),
            ("第一章 总则", "第一节 目的"),
            ("第一章 总则", "第一节 目的", "第一条 适用范围"),
            ("第一章 总则", "第一节 目的", "第二条 定义"),
            ("第一章 总则", "第二节 原则"),
            ("第二章 细则",),
        ],
    ),
    (
        "一、 above （一）",
        "text",
        "一、考勤\n（一）打卡\n员工应按时打卡。\n（二）补卡\n每月可补卡3次。\n二、请假\n请提前申请。\n",
        [(), ("一、考勤",), ("一、考勤", "（一）打卡"), ("一、考勤", "（二）补卡"), ("二、请假",)],
    ),
    (
        "a new numbering scheme nests under the open heading",
        "text",
        "一、总则\n1. 适用范围\n内容。\n2. 定义\n内容。\n二、细则\n内容。\n",
        [(), ("一、总则",), ("一、总则", "1. 适用范围"), ("一、总则", "2. 定义"), ("二、细则",)],
    ),
    (
        "Chinese articles under a markdown heading",
        "markdown",
        "# 用户协议\n\n第一条 总则\n\n正文。\n\n第二条 附则\n\n正文。\n\n# 隐私政策\n\n正文。\n",
        [(), ("用户协议",), ("用户协议", "第一条 总则"), ("用户协议", "第二条 附则"), ("隐私政策",)],
    ),
    (
        "html h1-h6",
        "html",
        "<h1>A</h1><p>x.</p><h2>B</h2><h3>C</h3><p>y.</p><h2>D</h2><h1>E</h1>",
        [(), ("A",), ("A", "B"), ("A", "B", "C"), ("A", "D"), ("E",)],
    ),
]


@pytest.mark.parametrize(("case", "fmt", "text", "expected"), TREE_CASES, ids=[c[0] for c in TREE_CASES])
def test_headings_build_the_section_tree(
    case: str, fmt: DocFormat, text: str, expected: list[tuple[str, ...]]
) -> None:
    assert paths(parse(text, fmt)) == expected


def test_the_root_section_is_the_whole_document_under_its_title() -> None:
    text = "# A\n\nBody.\n"
    root = parse(text, "markdown", title="My doc").sections[0]
    assert (root.section_id, root.parent_id, root.level, root.title, root.start, root.end, root.path) == (
        0,
        None,
        0,
        "My doc",
        0,
        len(text),
        (),
    )


def test_a_section_spans_its_heading_and_body_up_to_the_next_heading_of_its_level() -> None:
    text = "# A\n\nOne.\n\n## B\n\nTwo.\n\n# C\n\nThree.\n"
    parsed = parse(text, "markdown")
    spans = {s.title: text[s.start : s.end] for s in parsed.sections[1:]}
    assert spans == {"A": "# A\n\nOne.\n\n## B\n\nTwo.", "B": "## B\n\nTwo.", "C": "# C\n\nThree."}


def test_levels_and_parents_follow_the_tree() -> None:
    parsed = parse("# A\n\n## B\n\n### C\n", "markdown")
    assert [(s.level, s.parent_id) for s in parsed.sections] == [(0, None), (1, 0), (2, 1), (3, 2)]


def test_an_html_section_starts_at_its_heading_in_the_clean_text() -> None:
    parsed = parse("<p>Intro.</p>\n<h2 class='x'>Prices</h2><p>Ten.</p>", "html")
    section = parsed.sections[1]
    assert parsed.text[section.start : section.end] == "Prices\n\nTen."


def test_every_unit_belongs_to_the_innermost_section_around_it() -> None:
    parsed = parse("前言。\n一、总则\n总则正文。\n（一）目的\n目的正文。\n二、细则\n细则正文。\n")
    by_text = {unit.text: parsed.sections[unit.section_id].title for unit in parsed.units}
    assert by_text == {
        "前言。": "Doc",
        "一、总则": "一、总则",
        "总则正文。": "一、总则",
        "（一）目的": "（一）目的",
        "目的正文。": "（一）目的",
        "二、细则": "二、细则",
        "细则正文。": "二、细则",
    }


def test_a_markdown_heading_unit_is_the_whole_line_with_its_markers() -> None:
    parsed = parse("## Wi-Fi ##\n\nText.\n", "markdown")
    assert (heading_texts(parsed), parsed.sections[1].title) == (["## Wi-Fi ##"], "Wi-Fi")


def test_an_article_marker_before_its_body_is_the_heading_and_the_body_a_sentence() -> None:
    parsed = parse("第一条　为了规范管理，根据有关规定，制定本办法。\n第二条　本办法适用于全体员工。\n")
    assert [(u.kind, u.text) for u in parsed.units] == [
        ("heading", "第一条"),
        ("sentence", "为了规范管理，根据有关规定，制定本办法。"),
        ("heading", "第二条"),
        ("sentence", "本办法适用于全体员工。"),
    ]


NOT_HEADING_CASES = [
    ("a numbered step with sentence punctuation", "Steps:\n\n1. Press the power button for 3 seconds.\n"),
    ("consecutive numbered lines form a list", "1. Open\n2. Tap\n3. Save\n"),
    ("numbered lines after a colon form a list", "Do this:\n1. Open Settings\n"),
    ("consecutive 一、 lines form a list", "支持以下功能\n一、考勤\n二、审批\n"),
    ("一、 with a sentence is a list item", "一、打开手机钉钉，点击工作台。\n"),
    ("a decimal opening a sentence", "3.5 million people came to the fair.\n"),
    ("a lower-case title", "1.2 kg is the weight\n"),
    ("a long numbered line", "2.1 " + "Word " * 20 + "\n"),
    ("an article reference inside a line", "根据第三条规定，不予退款。\n"),
]


@pytest.mark.parametrize(("case", "text"), NOT_HEADING_CASES, ids=[c[0] for c in NOT_HEADING_CASES])
def test_lines_that_only_look_numbered_are_not_headings(case: str, text: str) -> None:
    parsed = parse(text)
    assert (len(parsed.sections), heading_texts(parsed)) == (1, [])


def test_hash_lines_are_headings_only_in_markdown() -> None:
    assert heading_texts(parse("# Not a heading\n", "text")) == []


def test_an_unknown_format_is_refused() -> None:
    doc = DocumentInput("d", "x", format="pdf")  # type: ignore[arg-type]
    with pytest.raises(UnsupportedFormatError):
        parse_document(doc)
