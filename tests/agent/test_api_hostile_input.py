"""Client input the API cannot use is a 4xx problem, never a 5xx; and no error closes its connection.

JSON can spell what UTF-8 cannot (a lone surrogate, ``"\\ud800"``) and nest deeper than a parser
can follow; each is refused where it enters, with the field it was found in. The last tests run a
real uvicorn server on a loopback port and send every request over one keep-alive connection.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api import Limits, create_app
from evidence_loop.agent.doors.api.problems import problem_response
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from tests.agent.api_support import ADMIN, STAFF, Key, keyring, open_sample

PROBLEM = "application/problem+json"
SURROGATE = "\ud800"
DEEP = 5_000
STARTUP_SECONDS = 120
BODY_LIMIT = 50_000


def send(
    client: TestClient, path: str, body: bytes, key: Key = ADMIN, media: str = "application/json"
) -> Any:
    """POST raw bytes: ``json.dumps`` keeps a lone surrogate as the escape ``\\ud800``, as a client would."""
    return client.post(path, content=body, headers={**key.headers, "content-type": media})


def assert_invalid(response: Any, where: str, says: str) -> None:
    assert (response.status_code, response.headers["content-type"]) == (422, PROBLEM), response.text
    problem = response.json()
    assert problem["type"] == "urn:evloop:problem:invalid-request"
    assert problem["detail"].startswith(f"{where}: ") and says in problem["detail"], problem["detail"]


def test_a_lone_surrogate_in_the_groups_of_a_question_is_a_422_naming_the_field(client: TestClient) -> None:
    body = json.dumps({"question": "LM-S10 保修多久？", "groups": [SURROGATE]}).encode()

    assert_invalid(send(client, "/v1/ask", body, STAFF), "body.groups.0", "lone surrogate U+D800")


def test_a_problem_whose_detail_echoes_a_lone_surrogate_can_still_be_sent() -> None:
    response = problem_response(403, f"this key does not hold the groups: {SURROGATE}", slug="x")

    assert json.loads(response.body)["detail"] == "this key does not hold the groups: ?"


DOCUMENT_FIELDS: list[tuple[str, object, str]] = [
    ("text", f"保修一年{SURROGATE}。", "text"),
    ("title", f"保修{SURROGATE}", "title"),
    ("acl", [f"staff{SURROGATE}"], "acl.0"),
    ("metadata", {"source": SURROGATE}, "metadata"),
    ("metadata", {SURROGATE: "key"}, "metadata"),
    ("metadata", {"tags": [["deep", SURROGATE]]}, "metadata"),
]


@pytest.mark.parametrize(("field", "value", "where"), DOCUMENT_FIELDS)
def test_a_lone_surrogate_anywhere_in_a_json_document_is_a_422_naming_the_field(
    client: TestClient, field: str, value: object, where: str
) -> None:
    doc = {"doc_id": "surrogate", "text": "保修一年。", field: value}

    assert_invalid(send(client, "/v1/documents", json.dumps(doc).encode()), f"body.{where}", "lone surrogate")


@pytest.mark.parametrize(("field", "value", "where"), DOCUMENT_FIELDS)
def test_a_lone_surrogate_anywhere_in_an_ndjson_line_is_a_422_naming_the_line_and_field(
    client: TestClient, field: str, value: object, where: str
) -> None:
    good = json.dumps({"doc_id": "fine", "text": "保修一年。"})
    bad = json.dumps({"doc_id": "surrogate", "text": "保修一年。", field: value})
    body = f"{good}\n{bad}\n".encode()

    response = send(client, "/v1/documents", body, media="application/x-ndjson")

    assert_invalid(response, f"body.line 2.{where}", "lone surrogate")


def test_nothing_of_a_refused_batch_is_written(client: TestClient, service: Service) -> None:
    before = service.store.generation
    batch = {"documents": [{"doc_id": "fine", "text": "保修一年。"}, {"doc_id": "bad", "text": SURROGATE}]}

    assert send(client, "/v1/documents", json.dumps(batch).encode()).status_code == 422
    assert service.store.generation == before


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("media", ["application/json", "application/x-ndjson"])
def test_metadata_nested_five_thousand_levels_deep_is_a_422(client: TestClient, media: str) -> None:
    body = f'{{"doc_id": "deep", "text": "保修一年。", "metadata": {{"a": {nested(DEEP)}}}}}'.encode()

    where = "body" if media == "application/json" else "body.line 1"
    assert_invalid(send(client, "/v1/documents", body, media=media), where, "nested too deeply")


def test_metadata_deeper_than_its_limit_but_readable_json_is_a_422_saying_the_limit(
    client: TestClient,
) -> None:
    body = f'{{"doc_id": "deep", "text": "保修一年。", "metadata": {{"a": {nested(100)}}}}}'.encode()

    assert_invalid(send(client, "/v1/documents", body), "body.metadata", "deeper than 32 levels")


def test_metadata_within_its_depth_limit_is_stored(client: TestClient) -> None:
    body = f'{{"doc_id": "nested", "text": "保修一年。", "metadata": {{"a": {nested(30)}}}}}'.encode()

    assert send(client, "/v1/documents", body).status_code == 200


def test_a_question_body_nested_five_thousand_levels_deep_is_a_422(client: TestClient) -> None:
    body = f'{{"question": "保修多久？", "groups": {nested(DEEP)}}}'.encode()

    assert_invalid(send(client, "/v1/ask", body), "body", "nested too deeply")


@pytest.mark.parametrize("path", ["/v1/ask", "/v1/documents"])
def test_a_number_longer_than_python_reads_is_a_422(client: TestClient, path: str) -> None:
    body = f'{{"question": "x", "doc_id": "n", "text": "t", "metadata": {{"n": {"9" * 5000}}}}}'.encode()

    assert_invalid(send(client, path, body), "body", "a number longer than")


# --- a real server, one connection ------------------------------------------------------------------

CRASH = "crash this request"


class CrashingService(Service):
    """A real service, except that one question fails with an unexpected error."""

    def ask(self, question: str, groups: Collection[str] = (), **options: Any) -> Outcome:
        if question == CRASH:
            raise RuntimeError("an unexpected failure")
        return super().ask(question, groups, **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def real_server(tmp_path: Path) -> Iterator[int]:
    """The API over a crashing service on uvicorn, in a thread, on a loopback port."""
    service = open_sample(tmp_path)
    crashing = CrashingService(service.store, traces=service.traces)
    port = free_port()
    config = uvicorn.Config(
        create_app(crashing, keyring(), Limits(body_bytes=BODY_LIMIT)), host="127.0.0.1", port=port
    )
    config.log_level = "critical"
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the server did not come up"
    yield port
    server.should_exit = True
    thread.join()
    service.close()


def exchange(conn: http.client.HTTPConnection, method: str, path: str, body: bytes = b"") -> tuple[int, bool]:
    """One request on the connection; (status, whether the server will close the connection)."""
    headers = {**ADMIN.headers, "content-type": "application/json"}
    conn.request(method, path, body=body or None, headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status, response.will_close


def test_one_keep_alive_connection_outlives_4xx_and_5xx_answers(real_server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", real_server, timeout=60)
    requests: list[tuple[str, str, bytes]] = [
        ("GET", "/healthz", b""),
        ("POST", "/v1/ask", json.dumps({"question": "x", "groups": [SURROGATE]}).encode()),
        ("POST", "/v1/documents", f'{{"doc_id": "d", "text": "t", "metadata": {nested(DEEP)}}}'.encode()),
        ("POST", "/v1/ask", json.dumps({"question": CRASH}).encode()),
        ("GET", "/v1/nothing-here", b""),
        ("POST", "/v1/ask", json.dumps({"question": CRASH}).encode()),
        ("POST", "/v1/ask", json.dumps({"question": "LM-S10 整机保修多久？"}).encode()),
    ]
    try:
        conn.connect()
        first = conn.sock
        answers = [exchange(conn, method, path, body) for method, path, body in requests]
        same_socket = conn.sock is first
    finally:
        conn.close()

    assert answers == [
        (200, False),
        (422, False),
        (422, False),
        (500, False),
        (404, False),
        (500, False),
        (200, False),
    ]
    assert same_socket


def test_only_a_body_over_the_limit_closes_the_connection_and_the_server_says_so(real_server: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", real_server, timeout=60)
    try:
        refused = exchange(conn, "POST", "/v1/documents", b" " * (BODY_LIMIT + 1))
    finally:
        conn.close()

    assert refused == (413, True)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("media", ["application/json", "application/x-ndjson"])
def test_nan_or_an_infinity_in_metadata_is_a_422_naming_the_field(
    client: TestClient, service: Service, media: str, value: str
) -> None:
    metadata = f'{{"limits": {{"max": [1, {value}]}}}}'
    body = f'{{"doc_id": "odd", "text": "保修一年。", "metadata": {metadata}}}'.encode()

    response = send(client, "/v1/documents", body, media=media)

    assert response.status_code == 422, response.text
    assert "'limits.max[1]'" in response.json()["detail"] and "finite number" in response.json()["detail"]
    assert "odd" not in {d.doc_id for d in service.documents()}


@pytest.mark.parametrize("value", ["NaN", "Infinity"])
def test_a_timeout_that_is_not_a_finite_number_is_a_422_saying_so(client: TestClient, value: str) -> None:
    body = f'{{"question": "保修多久？", "options": {{"timeout_s": {value}}}}}'.encode()

    assert_invalid(send(client, "/v1/ask", body), "body.options.timeout_s", "finite number")
