"""What each unit of the evidence says about the question: the measure asked, the values a unit states,
furniture, the units a quote carries, and which units are candidates at all."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.quotes import candidates, context_of, furniture, lead_in, stated_kinds
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.question.analysis import analyse, asked_measure
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, ParsedDocument
from evidence_loop.tools.windows import Window

PLANS = """# Plans and pricing

Acme Cloud offers three plans. Prices are per user per month.

| Plan | Price per month | Storage |
|---|---|---|
| Starter | $8 | 50 GB |
| Enterprise | $30 | Unlimited |

To reset your password:

1. Click Forgot password.
2. Open the reset link. The link expires after 60 minutes.
"""
# 0 heading | 1 three plans | 2 prices per month | 3 header | 4 Starter | 5 Enterprise | 6 intro | 7, 8 steps

RESET = """Reset the camera

Cam C100: the Reset key is on the back. Hold it for 5 seconds.
Cam C200: the Reset key is under the cover. Hold it for 10 seconds.
"""
# 0 title line | 1 C100 key | 2 C100 hold | 3 C200 key | 4 C200 hold


@pytest.fixture(scope="module")
def plans() -> ParsedDocument:
    return parse_document(DocumentInput("plans", PLANS, format="markdown", title="Plans and pricing"))


@pytest.fixture(scope="module")
def reset() -> ParsedDocument:
    return parse_document(DocumentInput("reset", RESET, title="Reset the camera"))


def _whole(doc: ParsedDocument) -> Checked:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, 1.0, (), (), ())
    return Checked(Window(doc.doc_id, doc.version, tuple(range(len(doc.units)))), doc, check, 1.0)


@pytest.mark.parametrize(
    ("question", "measure"),
    [
        ("How long is the password reset link valid?", {"duration"}),
        ("重置链接多久失效？", {"duration"}),
        ("How much is the Enterprise plan per month?", {"amount"}),
        ("企业版多少钱一个月？", {"amount"}),
        ("When was the Pixel 5a announced?", {"date"}),
        ("What is the release date of the game?", {"date"}),
        ("退款什么时候到账？", {"date"}),
        ("How many backup codes do I get?", {"count"}),
        ("一个账号能绑定几个设备？", {"count"}),
        ("What percentage of the fee is refunded?", {"percentage"}),
        ("How many days does a refund take?", {"duration"}),
        ("What is Bixby?", set()),
        ("How do I reset my password?", set()),
        ("西藏经济增长了多少？", {"count", "amount", "percentage", "duration"}),
        ("余额是什么意思？", set()),
    ],
)
def test_a_measure_word_asks_for_one_kind_of_value(question: str, measure: set[str]) -> None:
    assert asked_measure(question) == measure


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("The link expires after 60 minutes.", {"duration"}),
        ("The warranty lasts three years from delivery.", {"duration"}),
        ("整机保修三年，电池保修一年。", {"duration"}),
        ("| Enterprise | $30 | Unlimited |", {"amount"}),
        ("You get 10 backup codes when you turn on 2FA.", {"count"}),
        ("全年城镇新增就业1269万人，比上年增加83万人。", {"count"}),
        ("Turn on 2FA in Settings.", set()),
        ("The draft was held on July 29, 2021, in Brooklyn.", {"date"}),
        ("Aug 26, 2021 ...", set()),
        ("Open Settings and tap Location.", set()),
    ],
)
def test_a_text_states_the_kinds_of_value_it_writes(text: str, kinds: set[str]) -> None:
    assert stated_kinds(text) == kinds


def test_a_value_made_of_the_questions_own_number_is_not_stated() -> None:
    assert "date" not in stated_kinds("The 2021 season started late.", frozenset({"2021"}))


def test_headings_a_repeated_page_title_footers_and_wordless_units_are_furniture() -> None:
    text = (
        "Reset your password | Acme Help\n\n# Steps\n\n---\n\nClick Forgot password.\n\n"
        "© 2026 Acme Inc. All rights reserved.\n\nWas this article helpful?\n"
    )
    doc = parse_document(DocumentInput("r", text, format="markdown", title="Reset your password | Acme Help"))
    assert [furniture(u, doc) for u in doc.units] == [True, True, True, False, True, True]


def test_a_table_row_is_quoted_with_its_header_row(plans: ParsedDocument) -> None:
    question = analyse("How much is the Enterprise plan?")
    assert context_of(plans.units[5], plans, frozenset(range(9)), question) == (plans.units[3],)


def test_a_list_item_carries_its_intro_when_the_intro_names_what_it_lacks(plans: ParsedDocument) -> None:
    held = frozenset(range(9))
    assert context_of(plans.units[8], plans, held, analyse("How long is the password reset link valid?")) == (
        plans.units[6],
    )
    assert context_of(plans.units[8], plans, held, analyse("How long is the link valid?")) == ()


def test_a_sentence_carries_the_opening_of_its_paragraph_when_that_names_its_subject(
    reset: ParsedDocument,
) -> None:
    assert lead_in(reset, reset.units[4]) == (reset.units[3],)
    assert lead_in(reset, reset.units[3]) == ()
    question = analyse("How long do I hold the C200 reset key?")
    assert context_of(reset.units[4], reset, frozenset(range(5)), question) == (reset.units[3],)


def test_a_unit_whose_paragraph_names_a_look_alike_model_is_no_candidate(reset: ParsedDocument) -> None:
    question = analyse("How long do I hold the reset key of the C200?")
    texts = [q.unit.text for q in candidates(question, [_whole(reset)], Policy())]
    assert "Hold it for 10 seconds." in texts
    assert "Hold it for 5 seconds." not in texts


def test_a_unit_that_states_the_asked_measure_is_marked(plans: ParsedDocument) -> None:
    question = analyse("How long is the reset link valid?")
    stating = [q.unit.ordinal for q in candidates(question, [_whole(plans)], Policy()) if q.states]
    assert stating == [8]
