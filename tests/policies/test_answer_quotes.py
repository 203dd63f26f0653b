"""The answer quotes the units that state what is asked: the kind of value asked, about the asked
entity, a procedure whole and in order, a FAQ entry and not its page, never a title; evidence with
nothing to quote is a refusal; a record made before the rule answers as it did."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.answer import answer_units, unquotable
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.question.shape import shape_of
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, ParsedDocument, Unit
from evidence_loop.tools.windows import Window

RESET = """# Reset your password

If you forgot your password, you can reset it from the sign-in page.

## Steps

To reset your password:

1. On the sign-in page, click Forgot password.
2. Enter the email address of your account.
3. Open the reset link in the email. The link expires after 60 minutes.
4. Choose a new password of at least 12 characters.
"""
EXPORT = """# Export your data

You can export all projects as a ZIP archive from Settings > Data. Export links stay valid for 7 days.
"""
PLANS = """# Plans and pricing

Acme Cloud offers three plans. Prices are per user per month.

| Plan | Price per month | Storage |
|---|---|---|
| Starter | $8 | 50 GB |
| Business | $15 | 1 TB |
| Enterprise | $30 | Unlimited |
"""
FAQ = """# Orders FAQ

Can I change the delivery address? You can change it until the order ships.
Can I pay on delivery? Paying on delivery is not supported.
Can I pay in instalments? Orders over $600 can be paid in 3 or 6 instalments.
"""


def _doc(doc_id: str, text: str) -> ParsedDocument:
    return parse_document(DocumentInput(doc_id, text, format="markdown", title=text.splitlines()[0][2:]))


def _whole(doc: ParsedDocument, score: float = 1.0) -> Checked:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, score, (), (), ())
    return Checked(Window(doc.doc_id, doc.version, tuple(range(len(doc.units)))), doc, check, 1.0)


def _quoted(question: str, *items: Checked, policy: Policy | None = None) -> list[str]:
    asked = analyse(question)
    return [u.text for _, u in answer_units(asked, items, policy or Policy(), shape_of(asked))]


@pytest.fixture(scope="module")
def reset() -> ParsedDocument:
    return _doc("reset", RESET)


@pytest.fixture(scope="module")
def export() -> ParsedDocument:
    return _doc("export", EXPORT)


@pytest.fixture(scope="module")
def plans() -> ParsedDocument:
    return _doc("plans", PLANS)


def test_a_how_long_question_quotes_the_step_that_states_the_duration_with_its_intro(
    reset: ParsedDocument, export: ParsedDocument
) -> None:
    quoted = _quoted("How long is the password reset link valid?", _whole(reset), _whole(export, 0.9))
    assert quoted == [
        "To reset your password:",
        "3. Open the reset link in the email. The link expires after 60 minutes.",
    ]


def test_a_neighbouring_articles_value_of_the_same_kind_is_not_quoted(
    reset: ParsedDocument, export: ParsedDocument
) -> None:
    quoted = _quoted("How long is the password reset link valid?", _whole(export), _whole(reset, 0.95))
    assert not any("Export links" in text for text in quoted)


def test_a_price_question_quotes_the_asked_plans_row_with_its_header_row(plans: ParsedDocument) -> None:
    quoted = _quoted("How much is the Enterprise plan per month?", _whole(plans))
    assert quoted == [plans.units[3].text, "| Enterprise | $30 | Unlimited |"]


def test_a_how_do_i_question_quotes_the_whole_numbered_list_in_order_with_its_intro(
    reset: ParsedDocument,
) -> None:
    quoted = _quoted("How do I reset my password?", _whole(reset))
    steps = [u.text for u in reset.units if u.kind == "list_item"]
    assert quoted[-5:] == ["To reset your password:", *steps]


def test_a_page_title_or_heading_is_never_quoted(reset: ParsedDocument) -> None:
    quoted = _quoted("reset your password steps", _whole(reset))
    assert not {"# Reset your password", "## Steps"} & set(quoted)


def test_a_yes_no_question_on_a_faq_page_quotes_its_entry_not_the_page() -> None:
    faq = parse_document(DocumentInput("faq", FAQ, format="markdown", title="Orders FAQ"))
    assert _quoted("Can I pay on delivery?", _whole(faq)) == [
        "Can I pay on delivery?",
        "Paying on delivery is not supported.",
    ]


def test_a_passage_stays_within_its_character_budget(reset: ParsedDocument) -> None:
    small = Policy(quote_passage_chars=150, quote_procedure_chars=150)
    quoted = _quoted("How do I reset my password?", _whole(reset), policy=small)
    assert 0 < sum(len(t) for t in quoted) <= 150


PAIRING = """# Remote control

You can control the TV with the Smart Remote.

## Pairing the remote

Point the remote at the remote sensor of the TV.

Press and hold the Back and Play buttons together for 3 seconds.

Note: pairing may take up to a minute on some models.

### If pairing fails

Replace the batteries of the remote.

Press and hold the Back and Play buttons again.

## Battery

The remote uses two AA batteries.
"""


def test_a_how_do_i_question_quotes_a_procedure_over_paragraphs_and_sub_steps_whole_in_order() -> None:
    doc = _doc("remote", PAIRING)
    sections = {doc.sections[u.section_id].title for u in doc.units}
    assert {"Pairing the remote", "If pairing fails"} <= sections  # steps in a section and its subsection
    asked = analyse("How do I pair the remote with the TV?")
    units = [u for _, u in answer_units(asked, [_whole(doc)], Policy(), shape_of(asked))]
    steps = [u for u in doc.units if u.kind == "sentence" and 3 <= u.ordinal <= 9]
    assert [u.text for u in units][-len(steps) :] == [u.text for u in steps]
    assert "The remote uses two AA batteries." not in [u.text for u in units]
    assert all(doc.text[u.start : u.end] == u.text for u in units)


def test_a_record_made_before_the_whole_procedure_quotes_the_anchors_own_units() -> None:
    doc = _doc("remote", PAIRING)
    asked = analyse("How do I pair the remote with the TV?")
    old = replace(Policy(), quote_procedure_chars=0)
    texts = [u.text for _, u in answer_units(asked, [_whole(doc)], old, shape_of(asked))]
    assert "Replace the batteries of the remote." not in texts


GUIDE = """# Cam C200 guide

Last updated: 10 January 2026

## Restarting the camera

To restart the camera, unplug it for 10 seconds and plug it back in. The status light blinks blue.
"""
ZH_GUIDE = """# 常见问题

更新于 2025-09-18

## 重启摄像头

拔下摄像头电源，等待10秒后重新插上。指示灯闪蓝色。
"""


@pytest.mark.parametrize(
    ("text", "question"), [(GUIDE, "How do I restart the camera?"), (ZH_GUIDE, "摄像头怎么重启？")]
)
def test_a_how_do_i_answer_does_not_lead_with_the_pages_dateline(text: str, question: str) -> None:
    doc = _doc("guide", text)
    quoted = _quoted(question, _whole(doc))
    steps = [u.text for u in doc.units if u.kind == "sentence"][1:]
    assert quoted == steps


def test_a_record_made_before_the_dateline_rule_quotes_it_as_it_did() -> None:
    doc = _doc("guide", GUIDE)
    old = replace(Policy(), quote_skip_datelines=False, quote_no_datelines=False)
    assert (
        _quoted("How do I restart the camera?", _whole(doc), policy=old)[0] == "Last updated: 10 January 2026"
    )


def test_evidence_with_nothing_to_quote_is_a_refusal_that_says_so() -> None:
    headings = parse_document(
        DocumentInput("h", "# Take a screenshot\n\n## Screenshot settings\n", format="markdown")
    )
    units = answer_units(analyse("How do I take a screenshot?"), [_whole(headings)], Policy(), "procedure")
    assert units == []
    assert [piece.kind for piece in unquotable(units, Policy())] == ["no_relevant_evidence"]


def test_a_record_made_before_the_rule_quotes_as_it_did(reset: ParsedDocument) -> None:
    old = replace(Policy(), quote_stating=False, max_answer_sentences=1)
    asked = analyse("How long is the password reset link valid?")
    units: list[tuple[int, Unit]] = answer_units(asked, [_whole(reset)], old, "fact")
    assert [u.ordinal for _, u in units] == [1]  # the words' count ranked the intro first, as then
    assert unquotable([], old) == []
