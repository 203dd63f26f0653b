"""A run whose conflict was adjudicated by an LLM replays with the recorded replies, no model needed."""

from __future__ import annotations

from pathlib import Path

from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from tests.llm_support import REFUND_DOCS, REFUND_QUESTION, Script, answer, config, read, refund_verdict


def test_an_llm_adjudicated_conflict_replays_identical_from_the_trace(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index", create=True)
    store.ingest(REFUND_DOCS)
    script = Script([read("e1", "e2"), answer(refund_verdict())])
    check = ConflictChecker(LLMAdjudicator(script.model(), config()))
    service = Service(store, traces=TraceStore(tmp_path / "traces"), conflict_check=check)
    outcome = service.ask(REFUND_QUESTION)
    assert outcome.status == "conflicting_evidence"
    assert outcome.conflicts[0].adjudicator == "llm"
    assert outcome.signals.llm_calls >= 1
    steps = [e.step for e in service.trace(outcome.run_id).events]
    assert "llm_request" in steps and "llm_reply" in steps

    report = service.replay(outcome.run_id)  # model requests stay blocked (tests/conftest.py)
    assert report.identical, report.describe()
    assert report.replayed_status == "conflicting_evidence"
    store.close()
