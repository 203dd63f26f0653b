"""GET /v1/traces/{run_id}, its verify and replay: who may see which trace, and what they are told."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from evidence_loop.agent.service import Service
from evidence_loop.traces import TraceStore
from tests.agent.api_support import (
    AUDIT_PUBLIC,
    AUDIT_STAFF,
    INGEST_STAFF,
    PUBLIC,
    STAFF,
    Key,
    api_client,
)
from tests.trace_support import edit_run, keep_lines

WARRANTY_ZH = "LM-S10 整机保修多久？"


def run_of(client: TestClient, key: Key, question: str = WARRANTY_ZH) -> str:
    response = client.post("/v1/ask", json={"question": question}, headers=key.headers)
    assert response.status_code == 200, response.text
    return str(response.json()["run_id"])


def test_a_key_reads_the_trace_of_its_own_run(client: TestClient) -> None:
    run_id = run_of(client, PUBLIC)

    trace = client.get(f"/v1/traces/{run_id}", headers=PUBLIC.headers).json()

    assert (trace["header"]["run_id"], trace["header"]["caller"], trace["complete"]) == (
        run_id,
        "public-bot",
        True,
    )
    assert trace["events"][0]["step"] == "recalled"


def test_another_keys_run_is_the_same_404_as_an_unknown_one(client: TestClient) -> None:
    run_id = run_of(client, STAFF)

    hidden = client.get(f"/v1/traces/{run_id}", headers=PUBLIC.headers)
    unknown = client.get("/v1/traces/0000000000000000", headers=PUBLIC.headers)

    assert (hidden.status_code, unknown.status_code) == (404, 404)
    assert hidden.json()["detail"].replace(run_id, "?") == unknown.json()["detail"].replace(
        "0000000000000000", "?"
    )


def test_an_auditor_reads_other_keys_runs_within_its_groups(client: TestClient) -> None:
    run_id = run_of(client, PUBLIC)

    assert client.get(f"/v1/traces/{run_id}", headers=AUDIT_PUBLIC.headers).status_code == 200


def test_an_auditor_cannot_read_a_run_that_read_with_groups_it_lacks(client: TestClient) -> None:
    run_id = run_of(client, STAFF)

    assert client.get(f"/v1/traces/{run_id}", headers=AUDIT_PUBLIC.headers).status_code == 404


def test_an_auditor_holding_the_runs_groups_reads_it(client: TestClient) -> None:
    run_id = run_of(client, STAFF)

    assert client.get(f"/v1/traces/{run_id}", headers=AUDIT_STAFF.headers).status_code == 200


def test_a_key_with_neither_ask_nor_audit_is_a_403(client: TestClient) -> None:
    run_id = run_of(client, PUBLIC)

    assert client.get(f"/v1/traces/{run_id}", headers=INGEST_STAFF.headers).status_code == 403


def test_a_run_id_that_cannot_be_one_is_a_422(client: TestClient) -> None:
    assert client.get("/v1/traces/..%2Fkeys", headers=AUDIT_STAFF.headers).status_code in (404, 422)
    assert client.get("/v1/traces/-x", headers=AUDIT_STAFF.headers).status_code == 422


def test_a_fresh_trace_verifies(client: TestClient) -> None:
    run_id = run_of(client, PUBLIC)

    result = client.get(f"/v1/traces/{run_id}/verify", headers=PUBLIC.headers).json()

    assert (result["ok"], result["complete"], result["first_bad_seq"]) == (True, True, None)


def test_an_edited_trace_fails_verification_at_the_edited_event(client: TestClient, service: Service) -> None:
    run_id = run_of(client, PUBLIC)
    assert service.traces is not None
    event = _edit_event(service.traces, run_id)

    result = client.get(f"/v1/traces/{run_id}/verify", headers=PUBLIC.headers).json()

    assert (result["ok"], result["first_bad_seq"]) == (False, event["seq"])


def test_a_replay_of_an_untouched_run_is_identical(client: TestClient) -> None:
    run_id = run_of(client, PUBLIC)

    report = client.post(f"/v1/traces/{run_id}/replay", headers=PUBLIC.headers).json()

    assert report == {
        "run_id": run_id,
        "identical": True,
        "divergence": None,
        "recorded_status": "answered",
        "replayed_status": "answered",
    }


def test_a_replay_of_a_tampered_run_is_a_409_naming_the_tampered_event(
    client: TestClient, service: Service
) -> None:
    run_id = run_of(client, PUBLIC)
    assert service.traces is not None
    event = _edit_event(service.traces, run_id)

    response = client.post(f"/v1/traces/{run_id}/replay", headers=PUBLIC.headers)

    assert (response.status_code, response.headers["content-type"]) == (409, "application/problem+json")
    problem = response.json()
    assert problem["type"] == "urn:evloop:problem:trace-tampered"
    assert f"tampered at event {event['seq']}" in problem["detail"]


def test_a_truncated_run_fails_verification_and_is_not_replayed(client: TestClient, service: Service) -> None:
    run_id = run_of(client, PUBLIC)
    assert service.traces is not None
    service.traces.index_path.unlink()
    keep_lines(service.traces, run_id, -1)  # the footer cut off

    result = client.get(f"/v1/traces/{run_id}/verify", headers=PUBLIC.headers).json()
    replayed = client.post(f"/v1/traces/{run_id}/replay", headers=PUBLIC.headers)

    assert (result["ok"], result["reason"].split(":")[0]) == (False, "truncated")
    assert replayed.status_code == 409 and "truncated" in replayed.json()["detail"]


def test_replay_and_verify_hide_other_keys_runs_too(client: TestClient) -> None:
    run_id = run_of(client, STAFF)

    statuses = (
        client.post(f"/v1/traces/{run_id}/replay", headers=PUBLIC.headers).status_code,
        client.get(f"/v1/traces/{run_id}/verify", headers=PUBLIC.headers).status_code,
    )

    assert statuses == (404, 404)


def test_without_tracing_the_trace_endpoints_say_so(service: Service) -> None:
    untraced = Service(service.store)
    client = api_client(untraced)
    run_id = run_of(client, PUBLIC)

    response = client.get(f"/v1/traces/{run_id}", headers=PUBLIC.headers)

    assert (response.status_code, response.json()["title"]) == (404, "Tracing is off")


def _edit_event(traces: TraceStore, run_id: str) -> dict[str, Any]:
    """Mark the second event of ``run_id`` edited, keeping its line valid JSON."""
    event: dict[str, Any] = {}

    def edit(lines: list[bytes]) -> list[bytes]:
        event.update(json.loads(lines[2]))
        event["data"]["edited"] = True
        return [*lines[:2], json.dumps(event, ensure_ascii=False).encode() + b"\n", *lines[3:]]

    edit_run(traces, run_id, edit)
    return event
