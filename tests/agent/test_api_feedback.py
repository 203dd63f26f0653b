"""POST /v1/runs/{run_id}/feedback: reviewers' verdicts, stored append-only and hash-linked to the run,
over a folder and over PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.location import Location
from evidence_loop.traces.feedback.feedback import latest
from evidence_loop.traces.feedback.feedback_chain import check_chain
from tests.agent.api_support import ALL_KEYS, AUDIT_STAFF, PUBLIC, STAFF, Key, api_client

WARRANTY_ZH = "LM-S10 整机保修多久？"
REVIEW_PUBLIC = Key("public-reviewer", "pk-review", (), ("review",))
REVIEW_STAFF = Key("staff-reviewer", "pk-review-staff", ("staff",), ("review",))
KEYS = (*ALL_KEYS, REVIEW_PUBLIC, REVIEW_STAFF)


@pytest.fixture
def served(store_location: Location, tmp_path: Path) -> Iterator[tuple[Service, TestClient]]:
    traces = tmp_path / "traces" if isinstance(store_location, Path) else None
    service = Service.open(store_location, create=True, traces=traces)
    service.ingest(load_sample_kb())
    yield service, api_client(service, keys_for=KEYS)
    service.close()


def ask(client: TestClient, key: Key) -> dict[str, str]:
    reply = client.post("/v1/ask", json={"question": WARRANTY_ZH}, headers=key.headers)
    assert reply.status_code == 200, reply.text
    return {"run_id": reply.json()["run_id"], "hash": reply.json()["trace"]["hash"]}


def review(client: TestClient, key: Key, run_id: str, **body: str) -> tuple[int, dict[str, object]]:
    reply = client.post(f"/v1/runs/{run_id}/feedback", json=body, headers=key.headers)
    return reply.status_code, reply.json()


def test_a_verdict_is_stored_linked_to_the_runs_final_hash(served: tuple[Service, TestClient]) -> None:
    service, client = served
    run = ask(client, PUBLIC)

    status, record = review(
        client, REVIEW_PUBLIC, run["run_id"], verdict="wrong_evidence", doc_id="d1", note="n"
    )

    assert status == 201
    assert (record["run_hash"], record["verdict"], record["reviewer"], record["doc_id"]) == (
        run["hash"],
        "wrong_evidence",
        "public-reviewer",
        "d1",
    )
    assert service.traces is not None
    assert [r.model_dump() for r in service.traces.feedback.records()] == [record]


def test_a_later_verdict_supersedes_an_earlier_one_without_rewriting_it(
    served: tuple[Service, TestClient],
) -> None:
    service, client = served
    run_id = ask(client, PUBLIC)["run_id"]

    review(client, REVIEW_PUBLIC, run_id, verdict="correct")
    review(client, REVIEW_PUBLIC, run_id, verdict="should_have_refused")

    assert service.traces is not None
    records = service.traces.feedback.records()
    assert [r.verdict for r in records] == ["correct", "should_have_refused"]
    assert latest(records)[run_id].verdict == "should_have_refused"
    assert check_chain(records).ok and records[1].prev == records[0].hash
    listed = client.get(f"/v1/runs/{run_id}/feedback", headers=REVIEW_PUBLIC.headers).json()
    assert [f["verdict"] for f in listed["feedback"]] == ["correct", "should_have_refused"]


def test_a_reviewer_cannot_judge_a_run_its_groups_could_not_read(served: tuple[Service, TestClient]) -> None:
    _, client = served
    staff_run = ask(client, STAFF)["run_id"]

    hidden = client.post(
        f"/v1/runs/{staff_run}/feedback", json={"verdict": "correct"}, headers=REVIEW_PUBLIC.headers
    )
    unknown = client.post(
        "/v1/runs/0000000000000000/feedback", json={"verdict": "correct"}, headers=REVIEW_PUBLIC.headers
    )
    allowed = client.post(
        f"/v1/runs/{staff_run}/feedback", json={"verdict": "correct"}, headers=REVIEW_STAFF.headers
    )

    assert (hidden.status_code, unknown.status_code, allowed.status_code) == (404, 404, 201)


def test_a_key_without_the_review_scope_is_refused(served: tuple[Service, TestClient]) -> None:
    _, client = served
    run_id = ask(client, STAFF)["run_id"]

    for key in (STAFF, AUDIT_STAFF):
        reply = client.post(f"/v1/runs/{run_id}/feedback", json={"verdict": "correct"}, headers=key.headers)
        assert (reply.status_code, reply.json()["type"]) == (403, "urn:evloop:problem:missing-scope")


def test_an_unknown_verdict_is_a_422(served: tuple[Service, TestClient]) -> None:
    _, client = served
    run_id = ask(client, PUBLIC)["run_id"]

    status, _ = review(client, REVIEW_PUBLIC, run_id, verdict="meh")

    assert status == 422
