"""The /audit console's doors: Bearer or the sign-in cookie, its CSRF guard, and its scopes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.routes_audit import COOKIE, csrf_token
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.traces.reading.listing import lister_for
from evidence_loop.traces.stores.pg_store import PgTraceStore
from tests.agent.api_support import ALL_KEYS, AUDIT_PUBLIC, PUBLIC, Key, api_client

REVIEWER = Key("public-reviewer", "pk-review", (), ("audit", "review"))
WARRANTY_ZH = "LM-S10 整机保修多久？"


@pytest.fixture
def console(service: Service) -> Iterator[tuple[TestClient, str]]:
    client = api_client(service, keys_for=(*ALL_KEYS, REVIEWER))
    run_id = client.post("/v1/ask", json={"question": WARRANTY_ZH}, headers=PUBLIC.headers).json()["run_id"]
    yield client, run_id


def signed_in(client: TestClient, key: Key) -> str:
    reply = client.post(
        "/audit/login",
        content=f"key={key.secret}&next=/audit",
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert reply.status_code == 303, reply.text
    return reply.headers["set-cookie"]


def test_a_bearer_key_with_the_audit_scope_reads_the_pages(console: tuple[TestClient, str]) -> None:
    client, run_id = console
    assert client.get("/audit", headers=AUDIT_PUBLIC.headers).status_code == 200
    page = client.get(f"/audit/runs/{run_id}", headers=AUDIT_PUBLIC.headers)
    assert page.status_code == 200 and WARRANTY_ZH in page.text


def test_without_a_key_the_console_sends_people_to_sign_in(console: tuple[TestClient, str]) -> None:
    client, _ = console
    reply = client.get("/audit?status=answered", follow_redirects=False)
    assert (reply.status_code, reply.headers["location"]) == (
        303,
        "/audit/login?next=%2Faudit%3Fstatus%3Danswered",
    )


def test_a_key_without_the_audit_scope_is_refused(console: tuple[TestClient, str]) -> None:
    client, run_id = console
    assert client.get(f"/audit/runs/{run_id}", headers=PUBLIC.headers).status_code == 403
    assert client.get("/audit", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_signing_in_sets_an_http_only_strict_cookie_and_never_leaves_the_console(
    console: tuple[TestClient, str],
) -> None:
    client, _ = console
    cookie = signed_in(client, AUDIT_PUBLIC)
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower() and "Path=/audit" in cookie

    away = client.post(
        "/audit/login",
        content=f"key={AUDIT_PUBLIC.secret}&next=//evil.example/",
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    wrong = client.post(
        "/audit/login", content="key=nope", headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert away.headers["location"] == "/audit" and wrong.status_code == 401


def test_a_cookie_post_needs_the_pages_csrf_token_and_no_foreign_origin(
    console: tuple[TestClient, str],
) -> None:
    client, run_id = console
    signed_in(client, AUDIT_PUBLIC)
    url = f"/audit/runs/{run_id}/replay"
    token = csrf_token(AUDIT_PUBLIC.secret)

    assert client.post(url).status_code == 403
    assert (
        client.post(url, headers={"x-csrf-token": token, "origin": "https://evil.example"}).status_code == 403
    )
    replayed = client.post(url, headers={"x-csrf-token": token})
    assert replayed.status_code == 200 and replayed.json()["identical"] is True
    assert client.cookies.get(COOKIE) == AUDIT_PUBLIC.secret


def test_posting_a_review_from_the_console_needs_the_review_scope(console: tuple[TestClient, str]) -> None:
    client, run_id = console
    url = f"/audit/runs/{run_id}/feedback"
    for key, status in ((AUDIT_PUBLIC, 403), (REVIEWER, 201)):
        client.cookies.clear()
        signed_in(client, key)
        reply = client.post(
            url, json={"verdict": "correct"}, headers={"x-csrf-token": csrf_token(key.secret)}
        )
        assert reply.status_code == status, reply.text


def test_the_console_lists_and_shows_runs_kept_in_postgresql(pg_url: str) -> None:
    service = Service.open(pg_url)
    try:
        service.ingest(load_sample_kb())
        client = api_client(service)
        asked = client.post("/v1/ask", json={"question": WARRANTY_ZH}, headers=PUBLIC.headers).json()[
            "run_id"
        ]

        listing = client.get("/audit", headers=AUDIT_PUBLIC.headers)
        page = client.get(f"/audit/runs/{asked}", headers=AUDIT_PUBLIC.headers)

        assert f'data-run-id="{asked}"' in listing.text
        assert (
            page.status_code == 200 and 'class="evidence-span"' in page.text and "chain verifies" in page.text
        )
    finally:
        service.close()


def test_pages_of_runs_kept_in_postgresql_follow_one_another(pg_url: str) -> None:
    service = Service.open(pg_url)
    try:
        service.ingest(load_sample_kb())
        asked = [
            service.ask(q).run_id for q in (WARRANTY_ZH, "How do I reschedule a class?", "配送需要几天？")
        ]
        assert isinstance(service.traces, PgTraceStore)
        lister = lister_for(service.traces)

        first, cursor = lister.page(lambda _: True, size=2)
        rest, end = lister.page(lambda _: True, size=2, cursor=cursor)

        assert [r.run_id for r in first + rest] == asked[::-1] and end is None
        assert first[0].question == "配送需要几天？"
    finally:
        service.close()


def test_a_postgresql_row_holds_the_answer_the_missing_kinds_and_the_earlier_turns(pg_url: str) -> None:
    service = Service.open(pg_url)
    try:
        service.ingest(load_sample_kb())
        answered = service.ask(WARRANTY_ZH)
        refused = service.ask("LM-Z900 的整机保修期是多久？")
        follow = service.ask(
            "它的电池保修多久？", history=[{"question": WARRANTY_ZH, "run_id": answered.run_id}]
        )
        assert isinstance(service.traces, PgTraceStore) and refused.status == "insufficient_evidence"
        rows = {r.run_id: r for r in lister_for(service.traces).page(lambda _: True, size=10)[0]}

        assert answered.answer is not None and rows[answered.run_id].answer == " ".join(
            answered.answer.text.split()
        )
        assert rows[refused.run_id].missing == tuple(dict.fromkeys(m.kind for m in refused.missing))
        assert rows[follow.run_id].follows == (answered.run_id,)
        assert rows[follow.run_id].conversation == answered.run_id
    finally:
        service.close()
