"""Schema 2 traces cite the stored text of what a run recalled and decided (offsets and sha256)
instead of copying it; readers resolve it from the store and say when a version's text is gone;
verify checks each cited text's sha256."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.app import create_app
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import SCHEMA_VERSION, Trace, TraceStore
from evidence_loop.traces.verification.citations import check_citations, resolve, text_sha256, with_citations
from evidence_loop.traces.verification.verify import verify

Capture = pytest.CaptureFixture[str]
QUESTION = "LM-S10 的整机保修期是多久？"


@pytest.fixture()
def service(index: Path) -> Any:
    with Service.open(index) as opened:
        yield opened


def _asked(service: Service) -> tuple[Outcome, Trace]:
    outcome = service.ask(QUESTION)
    assert outcome.status == "answered" and outcome.trace is not None
    return outcome, service.trace(outcome.trace.id)


def _data(trace: Trace, step: str) -> list[dict[str, Any]]:
    return [event.data.trace_data() for event in trace.events if event.step == step]


def test_a_new_trace_cites_the_text_it_recalled_and_decided_and_copies_none_of_it(service: Service) -> None:
    outcome, trace = _asked(service)
    decided = _data(trace, "decided")[0]["outcome"]
    hits = [hit for data in _data(trace, "recalled") for hit in data["hits"]]

    assert trace.header.schema_version == SCHEMA_VERSION == 4
    assert hits and all("text" not in hit and len(hit["sha256"]) == 64 for hit in hits)
    assert [e.get("text") for e in decided["evidence"]] == [None] * len(outcome.evidence)
    assert [e["sha256"] for e in decided["evidence"]] == [text_sha256(e.text) for e in outcome.evidence]
    assert outcome.answer is not None
    assert [c["sha256"] for c in decided["answer"]["citations"]] == [
        text_sha256(c.quote) for c in outcome.answer.citations
    ]
    assert decided["answer"]["text"] == outcome.answer.text  # what the run said is kept whole


def test_a_resolved_trace_shows_the_text_the_run_saw(service: Service) -> None:
    outcome, trace = _asked(service)
    shown = service.shown(trace)
    decided = _data(shown, "decided")[0]["outcome"]

    assert [e["text"] for e in decided["evidence"]] == [e.text for e in outcome.evidence]
    assert outcome.answer is not None
    assert [c["quote"] for c in decided["answer"]["citations"]] == [c.quote for c in outcome.answer.citations]
    snapshot = service.snapshot()
    for data in _data(shown, "recalled"):
        for hit in data["hits"]:
            text = snapshot.parsed(hit["doc_id"], hit["version"]).text
            assert hit["text"] == text[hit["start"] : hit["end"]][:160]
    assert shown.records == trace.records  # the records stay as written: they still verify
    assert verify(shown).ok


def test_a_span_whose_version_the_store_no_longer_holds_says_so(service: Service) -> None:
    _, trace = _asked(service)
    shown = resolve(trace, lambda doc_id, version: None)
    evidence = _data(shown, "decided")[0]["outcome"]["evidence"][0]

    assert "text" not in evidence
    assert evidence["unresolved"].startswith(
        f"text of {evidence['doc_id']}@{evidence['version']} not resolved"
    )
    found = check_citations(trace, lambda doc_id, version: None)
    assert found.ok and found.checked == 0 and found.unavailable > 0


def test_verify_fails_at_the_event_whose_cited_text_the_store_holds_otherwise(service: Service) -> None:
    _, trace = _asked(service)
    snapshot = service.snapshot()

    def changed(doc_id: str, version: str) -> str:
        return snapshot.parsed(doc_id, version).text.replace("保修", "保俢")

    first_recall = next(event.seq for event in trace.events if event.step == "recalled")
    verdict = with_citations(verify(trace), trace, changed)
    assert (verdict.ok, verdict.first_bad_seq) == (False, first_recall)
    assert "is not the text cited" in verdict.reason
    assert service.verify(trace.header.run_id).ok
    assert "cited texts match the store" in service.verify(trace.header.run_id).reason


def test_a_new_trace_replays_identical(service: Service) -> None:
    _, trace = _asked(service)
    assert service.replay(trace.header.run_id).identical


def test_show_and_export_read_the_cited_text_in_and_say_which_the_store_lacks(
    capsys: Capture, index: Path, tmp_path: Path
) -> None:
    assert main(["ask", QUESTION, "--index", str(index), "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    run_id, evidence = outcome["run_id"], outcome["evidence"][0]

    assert main(["trace", "show", run_id, "--index", str(index)]) == 0
    assert " ".join(evidence["text"].split())[:30] in capsys.readouterr().out
    assert main(["trace", "export", run_id, "--index", str(index)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported[-2]["data"]["outcome"]["evidence"][0]["text"] == evidence["text"]
    assert main(["trace", "export", run_id, "--index", str(index), "--as-written"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert "text" not in written[-2]["data"]["outcome"]["evidence"][0]

    other = tmp_path / "other"
    with Store.open(other, create=True) as store:
        store.ingest(load_sample_kb()[:1])
    traces = str(index / "traces")
    assert main(["trace", "show", run_id, "--index", str(other), "--traces", traces]) == 0
    assert f"[text of {evidence['doc_id']}@{evidence['version']} not resolved" in capsys.readouterr().out


def test_the_api_shows_a_trace_with_its_cited_text(index: Path) -> None:
    with Service.open(index) as service, TestClient(create_app(service, None)) as client:
        outcome = client.post("/v1/ask", json={"question": QUESTION}).json()
        body = client.get(f"/v1/traces/{outcome['run_id']}").json()

    decided = next(event for event in body["events"] if event["step"] == "decided")
    assert decided["data"]["outcome"]["evidence"][0]["text"] == outcome["evidence"][0]["text"]


def test_a_trace_verify_run_checks_the_cited_texts(capsys: Capture, index: Path) -> None:
    assert main(["ask", QUESTION, "--index", str(index), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]

    assert main(["trace", "verify", run_id, "--index", str(index)]) == 0
    assert "cited texts match the store" in capsys.readouterr().out
    assert TraceStore(index / "traces").verify(run_id).ok
