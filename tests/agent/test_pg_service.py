"""The service, its HTTP API and the trace commands over a PostgreSQL store: the same answers and the
same audit routes as over a folder, the traces in the store's tables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.traces.stores.pg_store import PgTraceStore
from tests.agent.api_support import AUDIT_PUBLIC, PUBLIC, STAFF, api_client

WARRANTY_ZH = "LM-S10 整机保修多久？"
SHIPPING = "Shipping\nOrders ship within 2 business days."


@pytest.fixture
def pg_service(pg_url: str) -> Iterator[Service]:
    service = Service.open(pg_url)
    service.ingest(load_sample_kb())
    yield service
    service.close()


def test_a_service_over_a_database_keeps_its_traces_there(pg_service: Service) -> None:
    outcome = pg_service.ask(WARRANTY_ZH)
    assert isinstance(pg_service.traces, PgTraceStore) and outcome.status == "answered"
    assert outcome.trace is not None and pg_service.verify(outcome.run_id).final_hash == outcome.trace.hash
    assert pg_service.replay(outcome.run_id).identical


def test_the_trace_routes_answer_as_over_a_folder(pg_service: Service) -> None:
    client: TestClient = api_client(pg_service)
    run_id = client.post("/v1/ask", json={"question": WARRANTY_ZH}, headers=PUBLIC.headers).json()["run_id"]
    trace = client.get(f"/v1/traces/{run_id}", headers=PUBLIC.headers).json()
    assert (trace["header"]["caller"], trace["complete"]) == ("public-bot", True)
    assert client.get(f"/v1/traces/{run_id}", headers=STAFF.headers).status_code == 404
    assert client.get(f"/v1/traces/{run_id}/verify", headers=AUDIT_PUBLIC.headers).json()["ok"]
    replayed = client.post(f"/v1/traces/{run_id}/replay", headers=PUBLIC.headers).json()
    assert replayed["identical"]


def test_the_trace_commands_read_the_store(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "corpus.jsonl"
    source.write_text(json.dumps({"doc_id": "ship", "text": SHIPPING}) + "\n", encoding="utf-8")
    assert main(["ingest", str(source), "--store", pg_url]) == 0
    assert main(["ask", "how fast do orders ship", "--store", pg_url, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.splitlines()[-1])["run_id"]
    for argv in (
        ["trace", "verify", run_id],
        ["trace", "show", run_id],
        ["replay", run_id],
        ["trace", "list"],
    ):
        assert main([*argv, "--store", pg_url]) == 0, argv
    out = capsys.readouterr().out
    assert f"{run_id}: ok - hash chain verifies" in out and f"{run_id}: identical" in out
    assert main(["trace", "export", run_id, "--store", pg_url]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records[0]["run_id"] == run_id and records[-1]["type"] == "footer"
