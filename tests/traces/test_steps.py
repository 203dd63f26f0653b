"""The typed steps: the data an event holds is exactly what pydantic dumps of its step, nothing more."""

from __future__ import annotations

import pytest

from evidence_loop.traces.records.steps import STEP_KINDS, CheckedStep, TraceStep, parse_step
from tests.traces.conftest import EXAMPLES

SIGNALS = {"coverage": 0.75, "score": 0.61}
JUDGED = EXAMPLES["checked"].model_copy(
    update={"signals": SIGNALS, "judge": {"probability": 0.7, "logit": 0.85, "threshold": 0.2}}
)


@pytest.mark.parametrize("step", [*EXAMPLES.values(), JUDGED], ids=[*EXAMPLES, "checked-judged"])
def test_a_steps_trace_data_is_its_model_dump(step: TraceStep) -> None:
    assert step.trace_data() == step.model_dump()


@pytest.mark.parametrize("kind", STEP_KINDS)
def test_a_step_reads_back_from_its_data_as_itself(kind: str) -> None:
    step = EXAMPLES[kind]
    assert parse_step(kind, step.trace_data()) == step


def test_the_step_name_is_the_events_not_the_datas() -> None:
    assert "step" not in EXAMPLES["checked"].trace_data()


def test_llm_records_keep_their_step_name_inside_as_tools_llm_client_writes_them() -> None:
    assert EXAMPLES["llm_request"].trace_data()["step"] == "llm_request"


def test_an_optional_field_without_a_value_is_left_out_not_written_as_null() -> None:
    plain, judged = EXAMPLES["checked"].trace_data(), JUDGED.trace_data()
    assert ("signals" in plain, "judge" in plain) == (False, False)
    assert judged["signals"] == SIGNALS and isinstance(JUDGED, CheckedStep)


def test_a_record_field_without_a_value_is_kept_as_null_where_the_loop_writes_null() -> None:
    assert EXAMPLES["checked"].trace_data()["missing"][0]["value"] is None
