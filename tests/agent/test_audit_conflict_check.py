"""A missed conflict on the run page: the candidates the conflict check considered and why each was
dropped, read from the trace's ``conflict_scan`` step (candidates set aside before any adjudicator)
and its ``conflict`` steps (candidates given a verdict).

The ``conflict_scan`` step is the conflicts branch's (traces/records/steps.py there); until it is merged,
these
traces are built by hand with a stand-in of that step's shape, and with the real step once it exists.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import Field

from evidence_loop.agent.access.keys import LOCAL
from evidence_loop.agent.doors.api import audit_render
from evidence_loop.agent.doors.api.audit_conflicts import conflict_check
from evidence_loop.agent.doors.api.audit_page import review_views, run_view
from evidence_loop.agent.doors.api.schemas import DOC_ID_CHARS
from evidence_loop.agent.service import Service
from evidence_loop.traces import Trace, VerifyResult
from evidence_loop.traces.feedback.feedback import NOTE_CHARS, VERDICTS, FeedbackRecord
from evidence_loop.traces.records import steps as trace_steps
from evidence_loop.traces.records.schema import CorpusInfo, TraceEvent, TraceFooter, TraceHeader
from evidence_loop.traces.records.steps import ConflictStep, DecidedStep, StepModel, ValueRecord
from tests.agent.api_support import AUDIT_PUBLIC, api_client


class ScanStandIn(StepModel):
    """The conflicts branch's ``conflict_scan`` step, field for field."""

    step: Literal["conflict_scan"] = Field(default="conflict_scan", exclude=True)
    candidates: int
    dropped: list[dict[str, Any]]


def scan(candidates: int, *dropped: dict[str, Any]) -> StepModel:
    step: type[StepModel] = getattr(trace_steps, "ConflictScanStep", ScanStandIn)
    return step(candidates=candidates, dropped=list(dropped))  # type: ignore[call-arg]


def value(text: str, doc_id: str, start: int) -> ValueRecord:
    return ValueRecord(value=text, doc_id=doc_id, version="1", start=start, end=start + len(text))


ONE_PAGE = {
    "slot": "- From Apps, tap Galaxy …",
    "kind": "named",
    "values": [value("Store", "s10-apps", 4628), value("Wearable", "s10-apps", 4836)],
    "dropped": "one document (s10-apps) states both values",
}
TWO_SCOPES = {
    "slot": "refund period",
    "kind": "duration",
    "values": [value("30 days", "refund-faq", 120), value("7 days", "vip-rules", 40)],
    "dropped": "the two sides name different customer groups (VIP members, everyone)",
}
ADJUDICATED = ConflictStep(
    slot="warranty",
    kind="duration",
    values=[value("2 years", "warranty", 10), value("1 year", "warranty-old", 12)],
    verdict="supersedes",
    adjudicator="rules",
    reason="the newer version supersedes the older",
    scope=None,
)


def trace_of(*data: StepModel) -> Trace:
    header = TraceHeader(
        run_id="r-missed",
        created_at="2025-03-01T08:00:00Z",
        code_version="0",
        corpus=CorpusInfo(generation=1, fingerprint="f"),
        question="How long is the refund period?",
    )
    decided = DecidedStep(status="answered", why="1 window", outcome={"status": "answered", "answer": None})
    events = tuple(
        TraceEvent.model_construct(seq=n, step=d.step, data=d, prev_hash="", hash="")
        for n, d in enumerate([*data, decided])
    )
    return Trace(header, events, TraceFooter(outcome_status="answered", events=len(events), prev_hash=""))


def readable(doc_id: str, version: str) -> bool:
    return doc_id != "vip-rules"


def test_every_candidate_is_listed_with_its_values_and_what_became_of_it() -> None:
    check = conflict_check(trace_of(scan(1, ONE_PAGE), ADJUDICATED).events, lambda d, v: True)

    assert [(c.slot, c.outcome, c.why) for c in check.candidates] == [
        ("- From Apps, tap Galaxy …", "set aside", "one document (s10-apps) states both values"),
        ("warranty", "supersedes", "the newer version supersedes the older"),
    ]
    assert check.candidates[0].values == [
        "Store (s10-apps@1 [4628:4633])",
        "Wearable (s10-apps@1 [4836:4844])",
    ]
    assert (check.scanned, check.went_on) == (True, 1)


def test_a_candidate_naming_a_document_the_viewer_may_not_read_is_counted_not_shown() -> None:
    check = conflict_check(trace_of(scan(0, ONE_PAGE, TWO_SCOPES)).events, readable)

    assert [c.slot for c in check.candidates] == ["- From Apps, tap Galaxy …"] and check.hidden == 1


def test_a_trace_without_a_scan_or_a_conflict_step_has_nothing_to_show() -> None:
    assert conflict_check(trace_of().events, readable).empty


def page(trace: Trace, reviews: list[FeedbackRecord]) -> str:
    view = run_view(trace, VerifyResult(True, True, None, None), lambda d, v: None, readable)
    response = audit_render.render(
        "run.html",
        title="Run",
        run=view,
        reviews=review_views(reviews, lambda doc_id: True),
        verdicts=VERDICTS,
        note_chars=NOTE_CHARS,
        doc_id_chars=DOC_ID_CHARS,
        csrf="",
        caller=LOCAL,
        signed_in=False,
    )
    return bytes(response.body).decode()


def missed(run_id: str = "r-missed") -> FeedbackRecord:
    return FeedbackRecord(
        seq=1,
        run_id=run_id,
        run_hash="h",
        verdict="missed_conflict",
        created_at="2025-03-02T08:00:00Z",
        prev="",
    )


def test_the_run_page_of_a_missed_conflict_shows_each_candidate_and_why_it_was_dropped() -> None:
    html = page(trace_of(scan(0, ONE_PAGE, TWO_SCOPES)), [missed()])

    assert 'id="conflict-candidates"' in html
    assert (
        "one document (s10-apps) states both values" in html and "Wearable (s10-apps@1 [4836:4844])" in html
    )
    assert "1 candidate(s) name a document your groups may not read" in html and "vip-rules" not in html


def test_the_run_page_of_a_missed_conflict_without_candidates_says_none_was_recorded() -> None:
    html = page(trace_of(), [missed()])

    assert 'id="no-candidates"' in html and 'id="conflict-candidates"' not in html


def test_a_run_page_without_candidates_or_a_missed_conflict_has_no_conflict_check() -> None:
    assert "Conflict check" not in page(trace_of(), [])


@pytest.mark.skipif(
    not hasattr(trace_steps, "ConflictScanStep"),
    reason="the conflict_scan step comes with the conflicts branch",
)
def test_a_stored_run_with_a_conflict_scan_shows_its_candidates_on_the_console(service: Service) -> None:
    assert service.traces is not None
    outcome = service.ask("LM-S10 整机保修多久？")
    stored = service.trace(outcome.run_id)
    header = stored.header.model_copy(update={"run_id": "r-scanned", "hash": ""})
    writer = service.traces.begin(header)
    for event in stored.events:
        if isinstance(event.data, DecidedStep):
            writer.append(scan(0, {**ONE_PAGE, "values": [value("3年", "warranty-zh", 10)]}))
        writer.append(event.data)
    assert stored.footer is not None
    writer.finish(stored.footer.outcome_status, versions_read=stored.footer.versions_read)
    writer.close()

    html = api_client(service).get("/audit/runs/r-scanned", headers=AUDIT_PUBLIC.headers).text

    assert 'id="conflict-candidates"' in html and "one document (s10-apps) states both values" in html
