"""A run whose conflict was adjudicated by an LLM replays with the recorded replies, no model needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.conflict_check import ConflictChecker
from agent.llm_adjudicator import LLMAdjudicator
from agent.service import Service
from tests.llm_support import Script, answer, config, read
from tools.store import Store
from tools.types import DocumentInput
from traces import TraceStore

QUESTION = "退款须在购买后多少天内申请？"
DOCS = [
    DocumentInput("refund-a", "# 退款\n\n退款须在购买后30天内申请，逾期不予受理。\n", format="markdown"),
    DocumentInput("refund-b", "# 退款说明\n\n退款须在购买后60天内申请，逾期不予受理。\n", format="markdown"),
]


def _verdict(quote_a: str, quote_b: str) -> dict[str, Any]:
    return {
        "verdicts": [
            {
                "candidate": 0,
                "verdict": "conflict",
                "reason": "the two pages give different refund periods for the same purchase",
                "scope": None,
                "superseded_by": None,
                "quotes": [{"evidence_id": "e1", "text": quote_a}, {"evidence_id": "e2", "text": quote_b}],
            }
        ]
    }


def test_an_llm_adjudicated_conflict_replays_identical_from_the_trace(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index", create=True)
    store.ingest(DOCS)
    script = Script([read("e1", "e2"), answer(_verdict("购买后30天内申请", "购买后60天内申请"))])
    check = ConflictChecker(LLMAdjudicator(script.model(), config()))
    service = Service(store, traces=TraceStore(tmp_path / "traces"), conflict_check=check)
    outcome = service.ask(QUESTION)
    assert outcome.status == "conflicting_evidence"
    assert outcome.conflicts[0].adjudicator == "llm"
    assert outcome.signals.llm_calls >= 1
    steps = [e.step for e in service.trace(outcome.run_id).events]
    assert "llm_request" in steps and "llm_reply" in steps

    report = service.replay(outcome.run_id)  # model requests stay blocked (tests/conftest.py)
    assert report.identical, report.describe()
    assert report.replayed_status == "conflicting_evidence"
    store.close()
