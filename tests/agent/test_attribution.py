"""Bad-case attribution: each wrong or ungrounded outcome gets exactly one cause."""

from __future__ import annotations

from typing import Any

import pytest

from evidence_loop.agent.tuning.attribution import attribute, cause, merged_texts, table

TEXT = "Returns are free within 30 days. Refunds take five business days."


def _ev(doc: str, start: int, end: int) -> dict[str, Any]:
    return {"doc_id": doc, "version": "1", "start": start, "end": end, "text": TEXT[start:end]}


ANSWER = {"id": "q", "expect": "answer", "gold_answers": ["five business days"], "gold_doc_ids": ["returns"]}
HIT = [_ev("returns", 33, 66)]
MISS = [_ev("returns", 0, 32)]


@pytest.mark.parametrize(
    ("question", "result", "expected"),
    [
        (ANSWER, {"status": "answered", "evidence": HIT, "recalled": ["returns"]}, None),
        (
            ANSWER,
            {"status": "answered", "evidence": [_ev("other", 0, 5)], "recalled": ["other"]},
            "recall_miss",
        ),
        (ANSWER, {"status": "answered", "evidence": MISS, "recalled": ["returns"]}, "selection_miss"),
        (
            ANSWER,
            {"status": "insufficient_evidence", "evidence": HIT, "recalled": ["returns"]},
            "wrong_refusal",
        ),
        (ANSWER, {"status": "insufficient_evidence", "evidence": [], "recalled": ["x"]}, "recall_miss"),
        (
            ANSWER,
            {"status": "insufficient_evidence", "evidence": MISS, "recalled": ["returns"]},
            "selection_miss",
        ),
        (ANSWER, {"status": "conflicting_evidence", "evidence": HIT}, "false_conflict"),
        ({"id": "r", "expect": "refuse"}, {"status": "answered"}, "wrong_answer"),
        ({"id": "r", "expect": "refuse"}, {"status": "insufficient_evidence"}, None),
        ({"id": "r", "expect": "refuse"}, {"status": "conflicting_evidence"}, "false_conflict"),
        ({"id": "c", "expect": "conflict"}, {"status": "answered"}, "missed_conflict"),
        ({"id": "c", "expect": "conflict"}, {"status": "conflicting_evidence"}, None),
    ],
)
def test_each_bad_case_has_one_cause(
    question: dict[str, Any], result: dict[str, Any], expected: str | None
) -> None:
    assert cause(question, result) == expected


def test_an_answer_cut_by_two_touching_pieces_of_one_document_counts_as_held() -> None:
    pieces = [_ev("returns", 33, 50), _ev("returns", 45, 66)]
    assert any("five business days" in t for t in merged_texts(pieces))
    assert cause(ANSWER, {"status": "answered", "evidence": pieces, "recalled": ["returns"]}) is None


def test_free_form_answers_are_judged_by_their_gold_document() -> None:
    free = {**ANSWER, "gold_answers": ["wait about a week"], "metadata": {"answer_type": "free_form"}}
    assert cause(free, {"status": "answered", "evidence": MISS, "recalled": ["returns"]}) is None
    assert cause(free, {"status": "insufficient_evidence", "evidence": MISS}) == "wrong_refusal"


def test_the_table_lists_every_cause_largest_first() -> None:
    questions = [ANSWER, {"id": "r", "expect": "refuse"}, {"id": "r2", "expect": "refuse"}]
    results = [{"id": "q", "status": "answered", "evidence": HIT}, {"id": "r", "status": "answered"}]
    rows = attribute(questions, results)
    assert [r["cause"] for r in rows] == ["wrong_answer"]  # r2 has no result: not a bad case of ours
    counts = table(rows, len(questions))
    assert counts[0] == ("wrong_answer", 1, 1 / 3) and len(counts) == 6
