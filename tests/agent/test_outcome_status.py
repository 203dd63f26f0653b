"""An outcome's fields agree with its status: no answer without "answered", no refusal without what is
missing, no conflicting outcome without its conflicts; a traced run says it was traced."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import evidence_loop
from evidence_loop.agent.outcome import Answer, Missing, Outcome, TraceRef
from tests.agent.test_outcome_signals import SIGNALS

GAP = Missing(kind="uncovered_slot", detail="no warranty period")
ANSWER = Answer(text="One year.", citations=[])


def _outcome(status: str, **fields: Any) -> Outcome:
    return Outcome(run_id="r1", status=status, question="q", signals=SIGNALS, **fields)  # type: ignore[arg-type]


def test_an_answered_outcome_without_an_answer_is_refused() -> None:
    with pytest.raises(ValidationError, match="needs an answer"):
        _outcome("answered")


def test_an_answered_outcome_with_missing_pieces_is_refused() -> None:
    with pytest.raises(ValidationError, match="nothing missing"):
        _outcome("answered", answer=ANSWER, missing=[GAP])


def test_a_refusal_without_missing_pieces_is_refused() -> None:
    with pytest.raises(ValidationError, match="says what is missing"):
        _outcome("insufficient_evidence")


def test_a_refusal_with_an_answer_is_refused() -> None:
    with pytest.raises(ValidationError, match="has no answer"):
        _outcome("insufficient_evidence", answer=ANSWER, missing=[GAP])


def test_a_conflicting_outcome_without_conflicts_is_refused() -> None:
    with pytest.raises(ValidationError, match="names its conflicts"):
        _outcome("conflicting_evidence")


def test_each_status_with_its_own_fields_is_an_outcome() -> None:
    assert _outcome("answered", answer=ANSWER).status == "answered"
    assert _outcome("insufficient_evidence", missing=[GAP]).missing == [GAP]


def test_a_trace_reference_says_the_run_was_traced() -> None:
    assert TraceRef(id="r1", hash="h").model_dump()["traced"] is True


def test_the_front_door_exports_status_and_the_too_long_question_error() -> None:
    assert {"Status", "QuestionTooLongError"} <= set(evidence_loop.__all__)
    assert issubclass(evidence_loop.QuestionTooLongError, evidence_loop.InputError)
    assert set(evidence_loop.Status.__args__) == {"answered", "insufficient_evidence", "conflicting_evidence"}
