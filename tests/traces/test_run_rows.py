"""A console row read from the few records that say it: the answer's text, the reason, the missing
kinds, a follow-up's earlier turns; alike from a run's own file and from its journal frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evidence_loop.traces.reading.listing import RunLister
from evidence_loop.traces.reading.run_rows import ANSWER_CHARS, RunRow
from evidence_loop.traces.records.steps import DecidedStep, ResolvedStep, TraceStep
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import EXAMPLES, HeaderFactory

REFUSED = {
    "status": "insufficient_evidence",
    "answer": None,
    "missing": [
        {"kind": "uncovered_slot", "detail": "no evidence mentions 'LM-Z900'", "value": "LM-Z900"},
        {"kind": "missing_scope", "detail": "the scope sentence is cut"},
        {"kind": "uncovered_slot", "detail": "no evidence mentions '2025'", "value": "2025"},
    ],
}


def follow_up(*turns: tuple[str, str | None]) -> ResolvedStep:
    history: list[Any] = [{"text": text, **({"run_id": run} if run else {})} for text, run in turns]
    return EXAMPLES["resolved"].model_copy(update={"history": history})  # type: ignore[return-value]


def decided(outcome: dict[str, Any], why: str) -> DecidedStep:
    return DecidedStep(status=str(outcome["status"]), why=why, outcome=outcome)


def row_of_run(
    store: TraceStore, make_header: HeaderFactory, steps: list[TraceStep], **header: Any
) -> RunRow:
    writer = store.begin(make_header(**header))
    for step in steps:
        writer.append(step)
    last = steps[-1]
    if isinstance(last, DecidedStep):
        writer.finish(last.status)
    writer.close()
    rows, _ = RunLister(store).page(lambda _: True, unfinished=not isinstance(last, DecidedStep))
    return rows[0]


@pytest.fixture(params=["files", "journal"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> TraceStore:
    return TraceStore(tmp_path / "traces", layout=request.param)


def test_a_refusal_row_names_each_missing_kind_once_in_order_and_the_reason(
    any_store: TraceStore, make_header: HeaderFactory
) -> None:
    steps = [EXAMPLES["recalled"], decided(REFUSED, "uncovered_slot: LM-Z900; missing_scope: cut")]

    row = row_of_run(any_store, make_header, steps)

    assert row.missing == ("uncovered_slot", "missing_scope")
    assert row.why == "uncovered_slot: LM-Z900; missing_scope: cut"
    assert row.answer == ""


def test_an_answer_row_holds_the_answer_on_one_line_cut_to_its_preview(
    any_store: TraceStore, make_header: HeaderFactory
) -> None:
    text = "The whole unit is covered for 3 years.\n" + "Batteries for one year. " * 20
    outcome = {"status": "answered", "answer": {"text": text, "citations": []}, "missing": []}

    row = row_of_run(any_store, make_header, [EXAMPLES["recalled"], decided(outcome, "1 window")])

    assert row.answer.startswith("The whole unit is covered for 3 years. Batteries for one year.")
    assert len(row.answer) == ANSWER_CHARS and row.answer.endswith("…")


def test_a_follow_up_row_holds_its_earlier_turns_and_the_run_ids_they_named(
    any_store: TraceStore, make_header: HeaderFactory
) -> None:
    turns = follow_up(("X200路由器支持哪些频段", "r-first"), ("它多重？", None), ("价格呢", "r-third"))
    steps = [EXAMPLES["embedded"], turns, EXAMPLES["recalled"], decided(REFUSED, "missing")]

    row = row_of_run(any_store, make_header, steps, run_id="r-fourth")

    assert row.earlier == ("X200路由器支持哪些频段", "它多重？", "价格呢")
    assert row.follows == ("r-first", "r-third")
    assert row.conversation == "r-first"


def test_a_run_asked_alone_is_its_own_conversation(any_store: TraceStore, make_header: HeaderFactory) -> None:
    row = row_of_run(any_store, make_header, [EXAMPLES["recalled"], decided(REFUSED, "x")], run_id="r-solo")

    assert (row.earlier, row.follows, row.conversation) == ((), (), "r-solo")


def test_a_decided_step_longer_than_the_first_read_of_the_tail_is_still_read(
    any_store: TraceStore, make_header: HeaderFactory
) -> None:
    evidence = [
        {"doc_id": f"d{n}", "version": "1", "start": 0, "end": 9, "pad": "x" * 900} for n in range(60)
    ]
    outcome = {**REFUSED, "evidence": evidence}

    row = row_of_run(any_store, make_header, [EXAMPLES["recalled"], decided(outcome, "missing")])

    assert row.missing == ("uncovered_slot", "missing_scope")


def test_an_unfinished_run_has_no_answer_reason_or_missing_kinds(
    any_store: TraceStore, make_header: HeaderFactory
) -> None:
    row = row_of_run(any_store, make_header, [EXAMPLES["recalled"], EXAMPLES["slid"]])

    assert (row.status, row.answer, row.why, row.missing) == ("incomplete", "", "", ())
