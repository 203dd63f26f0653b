"""The audit console tells the truth under rewrites and hostile text: it marks only the text a run
read (never a later write's, on both backends), its review form answers a bad body as ``/v1`` does,
stored text shows its control and bidi characters, and every page carries its security headers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.routes_audit import CONSOLE_HEADERS
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.location import Location
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces.feedback.feedback import NOTE_CHARS
from tests.agent.api_support import ALL_KEYS, AUDIT_PUBLIC, PUBLIC, Key, api_client

REVIEWER = Key("public-reviewer", "pk-review", (), ("audit", "review"))
PIN = DocumentInput("door-pin", "# Door code\n\nThe LM-D7 door code is 5678.\n", "1", "Door code", "markdown")
QUESTION = "What is the LM-D7 door code?"
MARKED = re.compile(r'<mark class="evidence-span"[^>]*>(.*?)</mark>', re.S)


@pytest.fixture
def console(store_location: Location) -> Iterator[tuple[TestClient, Service]]:
    """Both backends: the sample help centre and a page a later write will rewrite, behind the API."""
    service = Service.open(store_location, create=True)
    service.ingest([*load_sample_kb(), PIN])
    yield api_client(service, keys_for=(*ALL_KEYS, REVIEWER)), service
    service.close()


def ask(client: TestClient) -> str:
    reply = client.post("/v1/ask", json={"question": QUESTION}, headers=PUBLIC.headers).json()
    assert reply["status"] == "answered" and "5678" in reply["answer"]["text"], reply
    return str(reply["run_id"])


def page(client: TestClient, run_id: str) -> str:
    reply = client.get(f"/audit/runs/{run_id}", headers=REVIEWER.headers)
    assert reply.status_code == 200
    return reply.text


def test_the_run_page_marks_the_text_the_run_read(console: tuple[TestClient, Service]) -> None:
    client, _ = console
    run_id = ask(client)

    marks = [unescape(m) for m in MARKED.findall(page(client, run_id))]

    assert any("5678" in mark for mark in marks)


def test_after_a_replace_the_run_page_never_marks_the_new_text(console: tuple[TestClient, Service]) -> None:
    client, _ = console
    run_id = ask(client)
    rewritten = {"doc_id": PIN.doc_id, "version": "1", "title": PIN.title, "format": "markdown",
                 "text": PIN.text.replace("5678", "1111")}  # fmt: skip
    written = client.post("/v1/documents?replace=true", json=rewritten, headers=ALL_KEYS[-1].headers)
    assert written.status_code in (200, 201), written.text

    html = page(client, run_id)

    marks = [unescape(m) for m in MARKED.findall(html)]
    assert not any("1111" in mark for mark in marks)
    assert "The text this run read is gone" in html and f"cited version replaced: {PIN.doc_id}@1" in html
    verify = unescape(re.search(r'<dd id="verify"[^>]*>(.*?)</dd>', html, re.S).group(1))  # type: ignore[union-attr]
    assert f"cited version replaced: {PIN.doc_id}@1" in verify


@pytest.mark.parametrize(
    "body",
    [
        '{"verdict": "correct", "note": "' + "n" * (NOTE_CHARS + 1) + '"}',
        '{"verdict": "correct", "doc_id": "' + "d" * 513 + '"}',
        '{"verdict": "splendid"}',
        "",
        "not json",
        '{"verdict": "correct", "note": "\\ud800"}',
    ],
)
def test_the_review_form_answers_a_bad_body_with_the_problem_of_v1(
    console: tuple[TestClient, Service], body: str
) -> None:
    client, _ = console
    run_id = ask(client)
    headers = {**REVIEWER.headers, "Content-Type": "application/json"}

    from_console = client.post(f"/audit/runs/{run_id}/feedback", content=body, headers=headers)
    from_v1 = client.post(f"/v1/runs/{run_id}/feedback", content=body, headers=headers)

    assert from_console.status_code == 422
    assert from_console.headers["content-type"] == "application/problem+json"
    assert from_console.json() == from_v1.json()


def test_the_review_form_bounds_what_it_lets_a_reviewer_type(console: tuple[TestClient, Service]) -> None:
    client, _ = console

    html = page(client, ask(client))

    assert f'<textarea id="fb-note" name="note" rows="2" maxlength="{NOTE_CHARS}">' in html
    assert 'id="fb-doc" name="doc_id" type="text" maxlength="512"' in html


def test_stored_text_shows_its_bidi_and_control_characters(
    console: tuple[TestClient, Service], tmp_path: Path
) -> None:
    client, _ = console
    question = "LM-D7 door code?\u202e edoc \x1b[2J"
    run_id = client.post("/v1/ask", json={"question": question}, headers=PUBLIC.headers).json()["run_id"]
    client.post(f"/v1/runs/{run_id}/feedback", json={"verdict": "correct", "note": "ok\u2067x"},
                headers=REVIEWER.headers)  # fmt: skip

    html = page(client, run_id)
    listed = client.get("/audit", headers=REVIEWER.headers).text

    for text in (html, listed):
        assert "\u202e" not in text and "\x1b" not in text
        assert "LM-D7 door code?\\u202e edoc \\u001b[2J" in unescape(text)
    assert "\u2067" not in html and "ok\\u2067x" in html


@pytest.mark.parametrize("path", ["/audit", "/audit/login", "run"])
def test_every_console_page_carries_its_security_headers(
    console: tuple[TestClient, Service], path: str
) -> None:
    client, _ = console
    url = f"/audit/runs/{ask(client)}" if path == "run" else path

    reply = client.get(url, headers=AUDIT_PUBLIC.headers)

    assert reply.status_code == 200
    policy = reply.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
    assert reply.headers["x-frame-options"] == "DENY"
    assert reply.headers["referrer-policy"] == CONSOLE_HEADERS["Referrer-Policy"]


def test_no_console_page_holds_inline_script_or_style(console: tuple[TestClient, Service]) -> None:
    client, _ = console
    html = page(client, ask(client))

    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert "<style" not in html and " style=" not in html and " on" + "click=" not in html


def test_the_api_docs_pages_that_load_a_cdn_are_not_served(console: tuple[TestClient, Service]) -> None:
    client, _ = console

    assert client.get("/docs").status_code == 404
    assert client.get("/redoc").status_code == 404
    assert client.get("/openapi.json").status_code == 200
