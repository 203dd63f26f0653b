"""List items, tables and code blocks: one unit each, linked to the unit they need to be read."""

from __future__ import annotations

import pytest

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocFormat, DocumentInput, ParsedDocument, Unit


def parse(text: str, fmt: DocFormat = "markdown") -> ParsedDocument:
    return parse_document(DocumentInput("d", text, format=fmt, title="Doc"))


def kinds(parsed: ParsedDocument) -> list[tuple[str, str]]:
    return [(unit.kind, unit.text) for unit in parsed.units]


def linked(parsed: ParsedDocument, unit: Unit) -> str | None:
    return None if unit.link is None else parsed.units[unit.link].text


def links_of(parsed: ParsedDocument, kind: str) -> list[tuple[str, str | None]]:
    return [(u.text, linked(parsed, u)) for u in parsed.units if u.kind == kind]


# -- list items ----------------------------------------------------------------------------------

LIST_MARKER_CASES = [
    ("dash", "- one\n- two\n"),
    ("star", "* one\n* two\n"),
    ("plus", "+ one\n+ two\n"),
    ("number and dot", "1. one\n2. two\n"),
    ("number and bracket", "1) one\n2) two\n"),
    ("bracketed number", "(1) one\n(2) two\n"),
    ("circled number", "①打开设置\n②点击网络\n"),
    ("Chinese enumeration comma", "1、打开设置\n2、点击网络\n"),
]


@pytest.mark.parametrize(("case", "text"), LIST_MARKER_CASES, ids=[c[0] for c in LIST_MARKER_CASES])
def test_every_list_marker_makes_one_item_per_line(case: str, text: str) -> None:
    for fmt in ("text", "markdown"):
        parsed = parse(text, fmt)
        assert [u.kind for u in parsed.units] == ["list_item", "list_item"]
        assert [u.text for u in parsed.units] == text.strip().split("\n")


def test_list_items_link_to_the_sentence_that_introduces_them() -> None:
    parsed = parse("## Setup\n\nBefore you start. Do this:\n\n- Open Settings.\n- Tap Wi-Fi.\n")
    assert links_of(parsed, "list_item") == [("- Open Settings.", "Do this:"), ("- Tap Wi-Fi.", "Do this:")]


def test_a_list_that_opens_its_section_links_to_the_heading() -> None:
    parsed = parse("## Search for Settings\n\n- From Settings, tap Search.\n")
    assert links_of(parsed, "list_item") == [("- From Settings, tap Search.", "## Search for Settings")]


def test_a_list_that_opens_the_document_has_no_intro() -> None:
    assert links_of(parse("- first\n- second\n"), "list_item") == [("- first", None), ("- second", None)]


def test_a_sentence_in_an_earlier_section_is_not_an_intro() -> None:
    parsed = parse("Intro sentence.\n\n## Steps\n\n- first\n")
    assert links_of(parsed, "list_item") == [("- first", "## Steps")]


def test_each_list_links_to_its_own_intro() -> None:
    parsed = parse("First list:\n\n- a\n\nSecond list:\n\n- b\n")
    assert links_of(parsed, "list_item") == [("- a", "First list:"), ("- b", "Second list:")]


def test_continuation_lines_belong_to_their_item() -> None:
    parsed = parse("- Press and hold the\n  side key for three seconds.\n- Release it.\n", "text")
    assert [u.text for u in parsed.units] == [
        "- Press and hold the\n  side key for three seconds.",
        "- Release it.",
    ]


def test_an_indented_paragraph_after_a_blank_line_belongs_to_its_item() -> None:
    parsed = parse("1. Open the app.\n\n   It may take a minute.\n2. Sign in.\n")
    assert [u.text for u in parsed.units] == ["1. Open the app.\n\n   It may take a minute.", "2. Sign in."]


def test_a_nested_item_links_to_its_parent_item() -> None:
    parsed = parse("Options:\n\n- Advanced:\n  - Ringtone sync\n- Basic\n")
    assert links_of(parsed, "list_item") == [
        ("- Advanced:", "Options:"),
        ("- Ringtone sync", "- Advanced:"),
        ("- Basic", "Options:"),
    ]


def test_a_chinese_line_after_an_item_is_a_new_paragraph() -> None:
    parsed = parse("1、打开设置\n完成后重启设备。\n", "text")
    assert kinds(parsed) == [("list_item", "1、打开设置"), ("sentence", "完成后重启设备。")]


def test_a_very_long_item_is_split_into_list_item_sentences() -> None:
    sentence = "This sentence is part of a very long list item that keeps going for a while. "
    text = "Intro:\n\n- " + sentence * 6 + "\n"
    parsed = parse(text)
    items = [u for u in parsed.units if u.kind == "list_item"]
    assert len(items) == 6
    assert items[0].text.startswith("- This sentence")
    assert {linked(parsed, u) for u in items} == {"Intro:"}


# -- tables --------------------------------------------------------------------------------------

MD_TABLE = """Warranty periods:

| Model | Warranty |
|-------|---------:|
| LM-X200 | 1 year |
| LM-S10 | 3 years |

After the table.
"""


def test_a_markdown_table_header_includes_its_delimiter_row() -> None:
    parsed = parse(MD_TABLE)
    assert kinds(parsed)[1] == ("table_header", "| Model | Warranty |\n|-------|---------:|")


def test_markdown_table_rows_link_to_their_header() -> None:
    parsed = parse(MD_TABLE)
    header = "| Model | Warranty |\n|-------|---------:|"
    assert links_of(parsed, "table_row") == [
        ("| LM-X200 | 1 year |", header),
        ("| LM-S10 | 3 years |", header),
    ]


def test_a_blank_line_ends_a_markdown_table() -> None:
    assert kinds(parse(MD_TABLE))[-1] == ("sentence", "After the table.")


def test_pipes_in_plain_text_are_not_a_table() -> None:
    parsed = parse("a | b\n--|--\n1 | 2\n", "text")
    assert {u.kind for u in parsed.units} == {"sentence"}


HTML_TABLE = (
    "<table><thead><tr><th>Model</th><th>Warranty</th></tr></thead>"
    "<tbody><tr><td>LM-X200</td><td>1 year</td></tr><tr><td>LM-S10</td><td>3 years</td></tr></tbody></table>"
)


def test_html_table_rows_link_to_the_row_of_th_cells() -> None:
    parsed = parse(HTML_TABLE, "html")
    rows = [(u.text, linked(parsed, u)) for u in parsed.units[1:]]
    header = "| Model | Warranty |\n| --- | --- |"
    assert (parsed.units[0].kind, rows) == (
        "table_header",
        [("| LM-X200 | 1 year |", header), ("| LM-S10 | 3 years |", header)],
    )


def test_an_html_table_without_th_takes_its_first_row_as_header() -> None:
    parsed = parse("<table><tr><td>Name</td><td>Age</td></tr><tr><td>Li</td><td>30</td></tr></table>", "html")
    assert [(u.kind, u.link) for u in parsed.units] == [("table_header", None), ("table_row", 0)]


def test_each_html_table_has_its_own_header() -> None:
    table = "<table><tr><th>H</th></tr><tr><td>v</td></tr></table>"
    parsed = parse(table + "<p>Between.</p>" + table, "html")
    assert [u.link for u in parsed.units if u.kind == "table_row"] == [0, 3]


# -- code ----------------------------------------------------------------------------------------


def test_a_fenced_code_block_is_one_unit_with_its_fences() -> None:
    text = "Run:\n\n```python\nx = 1.5\n\nprint(x)  # 输出。\n```\n\nDone.\n"
    assert kinds(parse(text)) == [
        ("sentence", "Run:"),
        ("code", "```python\nx = 1.5\n\nprint(x)  # 输出。\n```"),
        ("sentence", "Done."),
    ]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert kinds(parse("```\ncode\n\n# not a heading\n")) == [("code", "```\ncode\n\n# not a heading")]


def test_an_indented_block_is_one_code_unit() -> None:
    text = "Example:\n\n    curl -X POST https://x.example/a.b\n\n    echo done.\n\nAfter.\n"
    assert kinds(parse(text)) == [
        ("sentence", "Example:"),
        ("code", "curl -X POST https://x.example/a.b\n\n    echo done."),
        ("sentence", "After."),
    ]


# -- raw HTML in Markdown ------------------------------------------------------------------------


def test_a_markdown_line_of_html_comments_or_tags_is_no_unit() -> None:
    text = "# Prices\n\n<!-- check with sales -->\nPlans start at $10.\n\n<div align='center'>\n\n<br>\n"
    assert kinds(parse(text)) == [("heading", "# Prices"), ("sentence", "Plans start at $10.")]


def test_a_markdown_comment_over_several_lines_is_no_unit() -> None:
    parsed = parse("Before.\n\n<!--\nTODO: new prices\n-->\n\nAfter.\n")
    assert kinds(parsed) == [("sentence", "Before."), ("sentence", "After.")]


def test_a_markdown_comment_line_between_items_does_not_join_them() -> None:
    assert kinds(parse("- one\n<!-- c -->\n- two\n")) == [("list_item", "- one"), ("list_item", "- two")]


def test_a_tag_inside_a_markdown_line_of_text_stays_in_its_unit() -> None:
    assert kinds(parse("Press <b>Power</b>.\n")) == [("sentence", "Press <b>Power</b>.")]


# HTML pages, their clean text and their furniture: tests/tools/test_parse_html.py
