"""What the answer quotes on a small help centre a new user tried (issue 31): never a page's dateline
unless asked when the page was updated; for a yes/no question about a place, the sentence naming the
place or a region holding it, alone."""

from __future__ import annotations

from dataclasses import replace

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.answer import answer_units
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.question.shape import shape_of
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, ParsedDocument
from evidence_loop.tools.windows import Window

RETURNS = """# Returns and refunds

Last updated: 3 November 2026

You can return any unopened item within 30 days of delivery. Opened items can be returned within 14 days if
they are faulty.

## How to start a return

1. Sign in and open **Orders**.
2. Choose the order and tap **Return item**.
3. Print the label and drop the parcel at any post office.
"""
SHIPPING_ZH = """# 配送说明

标准配送一般 3-5 个工作日送达，偏远地区可能需要 7 个工作日。

订单满 199 元免运费，不满 199 元收取 12 元运费。

港澳台地区暂不支持配送。
"""
OPENED = "hey can i send back smth i opened?? it broke after a week"


def _whole(text: str) -> Checked:
    doc: ParsedDocument = parse_document(
        DocumentInput("page", text, format="markdown", title=text.splitlines()[0][2:])
    )
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, 1.0, (), (), ())
    return Checked(Window(doc.doc_id, doc.version, tuple(range(len(doc.units)))), doc, check, 1.0)


def _quoted(question: str, text: str, policy: Policy | None = None) -> list[str]:
    asked = analyse(question)
    return [u.text for _, u in answer_units(asked, [_whole(text)], policy or Policy(), shape_of(asked))]


def test_a_pages_dateline_is_never_quoted_as_a_fact() -> None:
    lines = _quoted(OPENED, RETURNS)
    assert any(line.startswith("Opened items can be returned within 14 days") for line in lines)
    assert not any("Last updated" in line for line in lines)


def test_a_question_asking_when_the_page_was_updated_is_answered_with_its_dateline() -> None:
    assert "Last updated: 3 November 2026" in _quoted("when was the returns page last updated?", RETURNS)


def test_a_record_made_before_the_dateline_rule_quotes_the_dateline_as_it_did() -> None:
    old = replace(Policy(), quote_no_datelines=False)
    assert "Last updated: 3 November 2026" in _quoted(OPENED, RETURNS, old)


def test_a_yes_no_question_about_a_place_is_answered_by_the_sentence_naming_its_region() -> None:
    assert _quoted("能寄到香港吗", SHIPPING_ZH) == ["港澳台地区暂不支持配送。"]


def test_a_yes_no_question_in_english_about_a_place_is_answered_by_the_sentence_naming_it() -> None:
    assert _quoted("can you ship to hong kong?", SHIPPING_ZH) == ["港澳台地区暂不支持配送。"]


def test_a_record_made_before_the_place_answer_rule_quotes_the_passage_as_it_did() -> None:
    old = replace(Policy(), quote_place_first=False)
    assert _quoted("能寄到香港吗", SHIPPING_ZH, old) != ["港澳台地区暂不支持配送。"]
