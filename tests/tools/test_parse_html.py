"""HTML pages as the store keeps them: the main content's clean text, its units cut from it exactly,
and nothing of the page's furniture, markup, scripts or styles."""

from __future__ import annotations

import pytest

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.parse.html import html_title
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.types import DocumentInput, ParsedDocument, Unit
from tests.html_pages import CONTENT, FURNITURE, MARKUP_RE, div_page, furnished_page, table_page


def parse(text: str, title: str = "") -> ParsedDocument:
    return parse_document(DocumentInput("page", text, format="html", title=title))


def linked(parsed: ParsedDocument, unit: Unit) -> str | None:
    return None if unit.link is None else parsed.units[unit.link].text


def test_no_unit_of_a_furnished_page_holds_markup_or_entities() -> None:
    parsed = parse(furnished_page())
    assert [u.text for u in parsed.units if MARKUP_RE.search(u.text)] == []


@pytest.mark.parametrize("furniture", FURNITURE)
def test_no_unit_of_a_furnished_page_holds_its_furniture_scripts_or_styles(furniture: str) -> None:
    parsed = parse(furnished_page())
    assert [u.text for u in parsed.units if furniture in u.text] == []


@pytest.mark.parametrize("content", CONTENT)
def test_the_article_of_a_furnished_page_is_kept_as_a_reader_sees_it(content: str) -> None:
    assert content in parse(furnished_page()).text


def test_offsets_are_exact_on_the_stored_clean_text() -> None:
    parsed = parse(furnished_page())
    assert all(parsed.text[u.start : u.end] == u.text for u in parsed.units)
    assert MARKUP_RE.search(parsed.text) is None and parsed.format == "text"


def test_a_table_row_is_read_with_its_header() -> None:
    parsed = parse(furnished_page())
    row = next(u for u in parsed.units if u.kind == "table_row")
    header = "| Plan | Price per month | Users |\n| --- | --- | --- |"
    assert (row.text, linked(parsed, row)) == ("| Starter | $10 | 5 |", header)


def test_an_ordered_list_is_read_as_numbered_items_linked_to_their_intro() -> None:
    parsed = parse(furnished_page())
    steps = [(u.text[:12], linked(parsed, u)) for u in parsed.units if u.kind == "list_item"][:3]
    intro = "To reset your password:"
    assert steps == [("1. Open the ", intro), ("2. Enter the", intro), ("3. Open the ", intro)]


def test_an_ordered_list_keeps_its_own_numbering() -> None:
    parsed = parse("<ol start='4'><li>Four</li><li value='9'>Nine</li><li>Ten</li></ol>")
    assert [u.text for u in parsed.units] == ["4. Four", "9. Nine", "10. Ten"]


def test_a_nested_list_follows_its_item_one_level_deeper() -> None:
    parsed = parse("<p>Not covered:</p><ul><li>Drops<ul><li>Liquid</li></ul></li><li>Wear</li></ul>")
    items = [(u.text, linked(parsed, u)) for u in parsed.units if u.kind == "list_item"]
    assert items == [("- Drops", "Not covered:"), ("- Liquid", "- Drops"), ("- Wear", "Not covered:")]
    assert "\n  - Liquid\n" in parsed.text


def test_the_headings_open_sections_as_before() -> None:
    parsed = parse(furnished_page())
    assert [s.path for s in parsed.sections[1:]] == [
        ("Reset your password",),
        ("Reset your password", "Steps"),
        ("Reset your password", "Plans"),
        ("Reset your password", "Plans", "Using the API"),
    ]


def test_the_title_is_the_pages_h1() -> None:
    assert html_title(furnished_page()) == "Reset your password"


def test_without_an_h1_the_title_tag_is_the_title_without_the_sites_name() -> None:
    page = (
        "<html><head><title>Change your plan | Acme Help Centre</title></head><body><p>Hi.</p></body></html>"
    )
    assert html_title(page) == "Change your plan"


def test_a_file_is_titled_by_the_same_reading(tmp_path: pytest.TempPathFactory) -> None:
    folder = tmp_path / "kb"  # type: ignore[operator]
    folder.mkdir()
    (folder / "delivery.html").write_text(div_page(), "utf-8")
    assert [d.title for d in collect([folder]).documents] == ["Delivery times"]


def test_the_title_tag_is_never_a_unit() -> None:
    page = "<head><title>Change your plan | Acme</title></head><body><p>Plans change monthly.</p></body>"
    assert [u.text for u in parse(page).units] == ["Plans change monthly."]


def test_an_article_in_divs_without_main_or_article_keeps_its_body_and_drops_the_furniture() -> None:
    parsed = parse(div_page())
    assert [u.text for u in parsed.units] == [
        "Delivery times",
        "Orders placed before 2 pm ship the same day.",
        "Standard delivery takes 3 to 5 working days.",
    ]


def test_a_page_that_is_only_a_table_keeps_it() -> None:
    parsed = parse(table_page())
    assert [u.kind for u in parsed.units] == ["table_header", "table_row", "table_row"]


def test_a_page_whose_main_content_reads_as_furniture_keeps_its_text() -> None:
    page = "<body><main><div class='sidebar'><p>Refunds take 5 days.</p></div></main></body>"
    assert [u.text for u in parse(page).units] == ["Refunds take 5 days."]


def test_the_main_element_is_read_and_the_rest_of_the_page_is_not() -> None:
    page = "<body><div>Top banner text</div><main><p>Refunds take 5 days.</p></main><div>Other</div></body>"
    assert [u.text for u in parse(page).units] == ["Refunds take 5 days."]


def test_an_aside_inside_the_article_is_content() -> None:
    page = "<article><p>Refunds take 5 days.</p><aside class='note'><p>Gift cards are final.</p></aside>"
    assert [u.text for u in parse(page).units] == ["Refunds take 5 days.", "Gift cards are final."]


def test_rows_before_the_th_row_of_a_table_are_sentences() -> None:
    parsed = parse("<table><tr><td>Prices</td></tr><tr><th>Item</th></tr><tr><td>Pen</td></tr></table>")
    assert [(u.kind, u.text, u.link) for u in parsed.units] == [
        ("sentence", "Prices", None),
        ("table_header", "| Item |\n| --- |", None),
        ("table_row", "| Pen |", 1),
    ]


def test_a_pipe_inside_a_cell_is_escaped() -> None:
    parsed = parse("<table><tr><th>Key</th></tr><tr><td>a|b</td></tr></table>")
    assert parsed.units[1].text == "| a\\|b |"


def test_a_layout_table_is_read_as_its_cells_content() -> None:
    page = "<table><tr><td><h2>Refunds</h2><p>Refunds take 5 days.</p></td></tr></table>"
    assert [(u.kind, u.text) for u in parse(page).units] == [
        ("heading", "Refunds"),
        ("sentence", "Refunds take 5 days."),
    ]


def test_a_pre_block_is_one_code_unit_as_written() -> None:
    parsed = parse("<p>Run:</p><pre><code>x = 1\n\ny = 2. Z = 3.</code></pre>")
    assert [(u.kind, u.text) for u in parsed.units] == [
        ("sentence", "Run:"),
        ("code", "x = 1\n\ny = 2. Z = 3."),
    ]


def test_inline_elements_are_read_as_their_text() -> None:
    parsed = parse("<p>Press <b>Power</b>. Then tap <a href='x.html'>Restart</a>.</p>")
    assert [u.text for u in parsed.units] == ["Press Power.", "Then tap Restart."]


def test_paragraphs_inside_an_item_do_not_split_it() -> None:
    parsed = parse("<ul><li><p>First part.</p><p>Second part.</p></li></ul>")
    assert [(u.kind, u.text) for u in parsed.units] == [("list_item", "- First part. Second part.")]


def test_a_br_ends_a_sentence_and_nbsp_is_a_space() -> None:
    parsed = parse("<p>Line one<br>Line two&nbsp;</p><p>&nbsp;</p>")
    assert [u.text for u in parsed.units] == ["Line one", "Line two"]


def test_entities_are_decoded() -> None:
    parsed = parse("<p>Fish &amp; chips&#x3002;Next.</p>")
    assert [u.text for u in parsed.units] == ["Fish & chips。", "Next."]


def test_a_page_with_no_text_has_no_units() -> None:
    assert (
        parse("<html><head><title>Empty | Acme</title><script>x()</script></head><body></body></html>").units
        == ()
    )


def test_a_page_that_declares_its_encoding_reads() -> None:
    page = '<?xml version="1.0" encoding="iso-8859-1"?><html><body><p>Café opens at 9.</p></body></html>'
    assert [u.text for u in parse(page).units] == ["Café opens at 9."]


def test_a_chinese_page_keeps_its_article_and_drops_its_furniture() -> None:
    page = (
        "<html><head><title>退款说明 - 帮助中心</title></head><body>"
        "<div class='breadcrumb'>首页 &gt; 售后</div><main><h1>退款说明</h1>"
        "<p>退款将在3个工作日内原路退回。</p><div class='feedback'>这篇文章有帮助吗？</div></main>"
        "<footer>&copy; 2026 某公司</footer></body></html>"
    )
    assert [u.text for u in parse(page).units] == ["退款说明", "退款将在3个工作日内原路退回。"]


def test_an_aria_label_that_mentions_a_furniture_word_keeps_its_content() -> None:
    page = "<main><ol aria-label='Steps to search your inbox'><li>Open Mail.</li></ol></main>"
    assert [u.text for u in parse(page).units] == ["1. Open Mail."]


def test_a_related_article_card_does_not_take_the_place_of_a_div_article() -> None:
    page = (
        "<body><div class='content'><h1>Refunds</h1><p>Refunds are paid within 5 working days.</p>"
        "<p>Gift cards are final and cannot be refunded.</p></div>"
        "<div class='cards'><article><a href='/a/9'>Exchanges</a></article></div></body>"
    )
    assert [u.text for u in parse(page).units][:2] == [
        "Refunds",
        "Refunds are paid within 5 working days.",
    ]
