"""POST /v1/ask over HTTP: every outcome is a 200, keys and scopes are enforced, limits are explicit."""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api import Limits
from evidence_loop.agent.loop.runtime import ConflictReport, Recorder
from evidence_loop.agent.outcome import Citation, Conflict, ConflictSide, Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.types import EvidenceView
from tests.agent.api_support import ADMIN, INGEST_PUBLIC, PUBLIC, STAFF, Key, Reply, api_client, open_sample

PROBLEM = "application/problem+json"
WARRANTY_ZH = "LM-S10 整机保修多久？"
UNKNOWN_MODEL = "LM-Z99 整机保修多久？"
STAFF_QUESTION = "员工购买学习设备打几折？"


def ask(client: TestClient, question: str, key: Key = PUBLIC, **body: object) -> dict[str, Any]:
    response = client.post("/v1/ask", json={"question": question, **body}, headers=key.headers)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def assert_problem(response: Reply, status: int) -> dict[str, Any]:
    """The response is an RFC 9457 problem with this status, and says so in its content type."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail"} <= body.keys()
    assert body["status"] == status
    return body


# --- the three outcomes ---------------------------------------------------------------------------


def test_an_answer_is_a_200_with_cited_sentences_and_a_run_id(client: TestClient) -> None:
    outcome = ask(client, WARRANTY_ZH)

    assert outcome["status"] == "answered"
    assert "3年" in outcome["answer"]["text"]
    assert outcome["answer"]["citations"][0]["doc_id"] == "warranty-zh"
    assert outcome["run_id"] == outcome["trace"]["id"]


def test_a_refusal_is_a_200_that_names_the_missing_piece(client: TestClient) -> None:
    outcome = ask(client, UNKNOWN_MODEL)

    assert outcome["status"] == "insufficient_evidence"
    assert outcome["answer"] is None
    assert [m["value"] for m in outcome["missing"]] == ["LM-Z99"]


def test_conflicting_evidence_is_a_200_citing_both_sides(tmp_path: Path) -> None:
    def always_conflict(
        question: Question, views: Sequence[EvidenceView], recorder: Recorder
    ) -> ConflictReport:
        sides = [ConflictSide(value=v.text[:8], citation=_citation(v)) for v in views[:2]]
        conflict = Conflict(
            slot="duration", values=sides, verdict="conflict", adjudicator="rules", reason="test"
        )
        return ConflictReport(conflicts=(conflict,), blocking=True)

    service = open_sample(tmp_path)
    conflicted = Service(service.store, traces=service.traces, conflict_check=always_conflict)

    outcome = ask(api_client(conflicted), WARRANTY_ZH)

    assert outcome["status"] == "conflicting_evidence"
    assert outcome["conflicts"][0]["slot"] == "duration"


def _citation(view: EvidenceView) -> Citation:
    return Citation(
        n=1,
        evidence_id=view.evidence_id,
        doc_id=view.doc_id,
        version=view.version,
        section=list(view.section),
        start=view.start,
        end=view.end,
        quote=view.text,
    )


def test_the_response_is_a_valid_outcome(client: TestClient) -> None:
    outcome = Outcome.model_validate(ask(client, WARRANTY_ZH))

    assert outcome.question == WARRANTY_ZH


# --- keys, scopes and groups ----------------------------------------------------------------------


def test_a_request_without_a_key_is_a_401_with_a_bearer_challenge(client: TestClient) -> None:
    response = client.post("/v1/ask", json={"question": WARRANTY_ZH})

    assert_problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_wrong_key_is_a_401(client: TestClient) -> None:
    response = client.post(
        "/v1/ask", json={"question": WARRANTY_ZH}, headers={"Authorization": "Bearer nope"}
    )

    assert assert_problem(response, 401)["detail"] == "the API key is not valid"


def test_a_key_without_the_ask_scope_is_a_403(client: TestClient) -> None:
    response = client.post("/v1/ask", json={"question": WARRANTY_ZH}, headers=INGEST_PUBLIC.headers)

    assert "'ask'" in str(assert_problem(response, 403)["detail"])


def test_a_staff_key_reads_the_staff_only_document(client: TestClient) -> None:
    outcome = ask(client, STAFF_QUESTION, STAFF)

    assert "staff-discount-zh" in {e["doc_id"] for e in outcome["evidence"]}


def test_a_request_may_narrow_its_keys_groups(client: TestClient) -> None:
    outcome = ask(client, STAFF_QUESTION, STAFF, groups=[])

    assert "staff-discount-zh" not in {e["doc_id"] for e in outcome["evidence"]}


def test_a_request_naming_a_group_its_key_lacks_is_a_403(client: TestClient) -> None:
    response = client.post(
        "/v1/ask", json={"question": STAFF_QUESTION, "groups": ["staff"]}, headers=PUBLIC.headers
    )

    assert "staff" in str(assert_problem(response, 403)["detail"])


def test_without_keys_every_request_is_the_local_caller(service: Service) -> None:
    response = api_client(service, local=True).post(
        "/v1/ask", json={"question": STAFF_QUESTION, "groups": ["staff"]}
    )

    assert response.status_code == 200
    assert service.trace(response.json()["run_id"]).header.caller == "local"


def test_the_trace_header_names_the_key_that_asked(client: TestClient, service: Service) -> None:
    run_id = str(ask(client, WARRANTY_ZH, ADMIN)["run_id"])

    assert service.trace(run_id).header.caller == "admin"


# --- what to send back ----------------------------------------------------------------------------


def test_include_evidence_false_leaves_out_the_windows_but_keeps_the_citations(client: TestClient) -> None:
    outcome = ask(client, WARRANTY_ZH, options={"include_evidence": False})

    assert (outcome["evidence"], len(outcome["answer"]["citations"]) > 0) == ([], True)


def test_include_steps_false_leaves_out_how_windows_grew(client: TestClient) -> None:
    outcome = ask(client, WARRANTY_ZH, options={"include_steps": False})

    assert [e["steps"] for e in outcome["evidence"]] == [[] for _ in outcome["evidence"]]


# --- limits and errors ----------------------------------------------------------------------------


def test_an_unknown_field_is_a_422_problem_naming_it(client: TestClient) -> None:
    response = client.post("/v1/ask", json={"question": WARRANTY_ZH, "k": 3}, headers=PUBLIC.headers)

    assert assert_problem(response, 422)["detail"] == "body.k: Extra inputs are not permitted"


def test_an_unknown_option_is_rejected_too(client: TestClient) -> None:
    body = {"question": WARRANTY_ZH, "options": {"mode": "seed"}}

    assert_problem(client.post("/v1/ask", json=body, headers=PUBLIC.headers), 422)


def test_a_question_over_the_limit_is_refused_with_its_length_and_the_limit(service: Service) -> None:
    client = api_client(service, Limits(question_chars=10))

    response = client.post("/v1/ask", json={"question": "保修" * 6}, headers=PUBLIC.headers)

    assert assert_problem(response, 422)["detail"] == "the question has 12 characters; the limit is 10"


def test_a_blank_question_is_a_400(client: TestClient) -> None:
    assert_problem(client.post("/v1/ask", json={"question": "   "}, headers=PUBLIC.headers), 400)


def test_a_body_declared_over_the_limit_is_a_413_before_it_is_read(service: Service) -> None:
    client = api_client(service, Limits(body_bytes=100))

    response = client.post("/v1/ask", json={"question": "保" * 200}, headers=PUBLIC.headers)

    assert "limit is 100" in str(assert_problem(response, 413)["detail"])


def test_a_streamed_body_over_the_limit_is_a_413(service: Service) -> None:
    client = api_client(service, Limits(body_bytes=100))
    chunks = iter([b'{"question": "', b"x" * 80, b"y" * 80, b'"}'])

    response = client.post(
        "/v1/ask", content=chunks, headers={**PUBLIC.headers, "content-type": "application/json"}
    )

    assert_problem(response, 413)


def test_malformed_json_is_a_422_problem(client: TestClient) -> None:
    response = client.post(
        "/v1/ask", content=b"{nope", headers={**PUBLIC.headers, "content-type": "application/json"}
    )

    assert_problem(response, 422)


class SlowService(Service):
    """A real service whose questions wait until ``release`` is set (for the timeout)."""

    release: threading.Event

    def ask(self, question: str, groups: Collection[str] = (), **options: Any) -> Outcome:
        self.release.wait(10)
        return super().ask(question, groups, caller=options.get("caller"))


def slow_service(service: Service) -> SlowService:
    slow = SlowService(service.store, traces=service.traces)
    slow.release = threading.Event()
    return slow


def test_a_question_past_the_timeout_is_a_504(service: Service) -> None:
    slow = slow_service(service)
    try:
        response = api_client(slow, Limits(timeout_s=0.2)).post(
            "/v1/ask", json={"question": WARRANTY_ZH}, headers=PUBLIC.headers
        )
    finally:
        slow.release.set()

    assert "0.2 s" in str(assert_problem(response, 504)["detail"])


def test_a_caller_may_ask_for_a_shorter_timeout_than_the_servers(service: Service) -> None:
    slow = slow_service(service)
    body = {"question": WARRANTY_ZH, "options": {"timeout_s": 0.5}}
    try:
        response = api_client(slow, Limits(timeout_s=30)).post("/v1/ask", json=body, headers=PUBLIC.headers)
    finally:
        slow.release.set()

    assert_problem(response, 504)


class BrokenService(Service):
    """A real service whose questions fail with an unexpected error carrying internals."""

    def ask(self, question: str, groups: Collection[str] = (), **options: Any) -> Outcome:
        raise RuntimeError("/srv/secret/index.sqlite3 is locked by pid 4242")


def test_an_unexpected_error_is_a_500_problem_that_leaks_nothing(service: Service) -> None:
    broken = BrokenService(service.store, traces=service.traces)

    response = api_client(broken).post("/v1/ask", json={"question": "x"}, headers=PUBLIC.headers)

    body = assert_problem(response, 500)
    assert "secret" not in response.text and "4242" not in response.text
    assert body["type"] == "urn:evloop:problem:internal"


def test_an_unknown_path_is_a_404_problem(client: TestClient) -> None:
    assert_problem(client.get("/v1/nothing-here"), 404)


def test_a_wrong_method_is_a_405_problem(client: TestClient) -> None:
    assert_problem(client.get("/v1/ask", headers=PUBLIC.headers), 405)


# --- probes and the OpenAPI document ---------------------------------------------------------------


def test_healthz_says_the_process_is_up(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_says_ready_and_nothing_about_the_corpus(client: TestClient) -> None:
    assert client.get("/readyz").json() == {"status": "ready", "policy": Policy().digest()}


def test_readyz_is_a_503_problem_when_the_index_cannot_be_read(service: Service) -> None:
    client = api_client(service)
    service.close()

    assert_problem(client.get("/readyz"), 503)


def test_the_openapi_answer_schema_is_the_real_outcome_type(client: TestClient) -> None:
    document = client.get("/openapi.json").json()

    answer = document["paths"]["/v1/ask"]["post"]["responses"]["200"]["content"]["application/json"]
    assert answer["schema"] == {"$ref": "#/components/schemas/Outcome"}
    assert document["components"]["schemas"]["Outcome"]["properties"].keys() == Outcome.model_fields.keys()


def test_the_openapi_document_declares_every_error_as_problem_json(client: TestClient) -> None:
    document = client.get("/openapi.json").json()

    error_types = {
        media
        for operations in document["paths"].values()
        for operation in operations.values()
        for status, response in operation["responses"].items()
        if status[0] in "45"
        for media in response["content"]
    }
    assert error_types == {PROBLEM}
