"""Two sources giving the asked identifier different values in different words are a conflict candidate."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.candidates import ConflictRules, find_candidates
from evidence_loop.policies.conflicts.slots import unit_of
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.question.slots import extract_slots
from evidence_loop.policies.types import EvidenceView

TABLE_EN = (
    "| Model | Whole-unit warranty | Battery warranty |\n| --- | --- | --- |\n"
    "| LM-X200 | 1 year | 6 months |\n| LM-S10 | 3 years | 1 year |"
)
TABLE_ZH = (
    "| 型号 | 整机保修 | 电池保修 |\n| --- | --- | --- |\n| LM-X200 | 1年 | 6个月 |\n| LM-S10 | 3年 | 1年 |"
)
QUESTION_EN = "What is the warranty period of the LM-X200 tablet?"
QUESTION_ZH = "LM-X200 平板的整机保修期是多久？"


def view(evidence_id: str, text: str, doc_id: str | None = None) -> EvidenceView:
    return EvidenceView(
        evidence_id, doc_id or f"doc-{evidence_id}", "1", True, ("Warranty",), 0, len(text), text
    )


def sides(question: str, left: str, right: str, **kwargs: str) -> list[tuple[str, str]]:
    scan = find_candidates(analyse(question), [view("e1", left), view("e2", right, **kwargs)])
    return [(c.left.value, c.right.value) for c in (*scan.candidates, *(v.candidate for v in scan.resolved))]


DISAGREE = [
    pytest.param(
        QUESTION_EN,
        TABLE_EN,
        "The warranty period of the LM-X200 tablet is 99 years.",
        ("1 year", "99 years"),
        id="row-vs-sentence-en",
    ),
    pytest.param(
        QUESTION_ZH, TABLE_ZH, "LM-X200 平板的整机保修期为99年。", ("1年", "99年"), id="row-vs-sentence-zh"
    ),
    pytest.param(
        QUESTION_EN,
        "The LM-X200 tablet is covered for one year.",
        "Warranty: the LM-X200 tablet, 2 years.",
        ("one year", "2 years"),
        id="words-and-digits",
    ),
    pytest.param(
        "第8条规定的退款期限是多少天？",
        "第8条：退款期限为签收后7天。",
        "按照第8条，退款须在15天内申请。",
        ("7天", "15天"),
        id="clause-zh",
    ),
]


@pytest.mark.parametrize(("question", "left", "right", "expected"), DISAGREE)
def test_different_values_for_the_asked_identifier_worded_apart_are_a_candidate(
    question: str, left: str, right: str, expected: tuple[str, str]
) -> None:
    assert sides(question, left, right) == [expected]


AGREE = [
    pytest.param(QUESTION_EN, TABLE_EN, "The LM-X200 tablet is covered for 1 year.", id="same-value"),
    pytest.param(
        QUESTION_EN, TABLE_EN, "LM-X200 平板的整机保修期为1年。", id="same-value-in-the-other-language"
    ),
    pytest.param(
        QUESTION_EN,
        TABLE_EN,
        "A full charge of the LM-X200 tablet takes 3 hours.",
        id="another-unit-is-another-attribute",
    ),
    pytest.param(QUESTION_EN, TABLE_EN, "The warranty of the LM-S10 tablet is 5 years.", id="another-model"),
    pytest.param(
        "What is the warranty period of the tablet?",
        "The tablet is covered for 1 year.",
        "Warranty: the tablet is covered for 2 years in total.",
        id="no-identifier-asked",
    ),
    pytest.param(
        "Is the LM-X200 warranty 1 year or 2 years?",
        "The LM-X200 warranty is 1 year.",
        "LM-X200: 2 years of warranty.",
        id="values-the-question-names",
    ),
]


@pytest.mark.parametrize(("question", "left", "right"), AGREE)
def test_no_candidate_when_the_sources_share_the_value_or_speak_of_something_else(
    question: str, left: str, right: str
) -> None:
    assert sides(question, left, right) == []


def test_one_source_stating_two_values_is_two_scopes_not_a_conflict() -> None:
    scan = find_candidates(
        analyse(QUESTION_EN),
        [
            view("e1", TABLE_EN, doc_id="warranty"),
            view("e2", "The LM-X200 tablet is covered for 99 years.", "warranty"),
        ],
    )

    assert (scan.candidates, scan.resolved) == ((), ())


def test_the_candidate_cites_each_value_at_its_offsets() -> None:
    right = "The warranty period of the LM-X200 tablet is 99 years."
    scan = find_candidates(analyse(QUESTION_EN), [view("e1", TABLE_EN), view("e2", right)])

    (candidate,) = scan.candidates
    assert TABLE_EN[candidate.left.start : candidate.left.end] == "1 year"
    assert right[candidate.right.start : candidate.right.end] == "99 years"
    assert (candidate.kind, candidate.slot) == ("duration", "LM-X200: duration")


def test_with_the_rule_off_a_disagreement_worded_apart_is_not_seen() -> None:
    views = [view("e1", TABLE_EN), view("e2", "The warranty period of the LM-X200 tablet is 99 years.")]

    scan = find_candidates(analyse(QUESTION_EN), views, ConflictRules.of(Policy(slot_values=False)))

    assert scan.candidates == ()


@pytest.mark.parametrize(
    ("value", "unit"),
    [("1 year", {"年", "year"}), ("6个月", {"个月", "months"}), ("¥299", {"¥", "元"})],
)
def test_a_values_unit_is_read_in_every_spelling(value: str, unit: set[str]) -> None:
    (slot,) = extract_slots(value)

    assert unit <= unit_of(slot)
