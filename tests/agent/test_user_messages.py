"""A refusal carries words a chatbot may show its user as they are, in the question's language, through
every door: the outcome (Python), the HTTP response and its OpenAPI schema, the CLI, the tool text a
model reads; the trace keeps recording what it recorded before (the messages are a view)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api import toolkit
from evidence_loop.agent.loop.render import render_outcome
from evidence_loop.agent.service import Service
from tests.agent.api_support import PUBLIC

UNKNOWN_ZH = "LM-Z99 整机保修多久？"
UNKNOWN_EN = "How long is the warranty of the LM-Z99?"
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_a_chinese_refusal_tells_the_user_in_chinese_what_is_missing(service: Service) -> None:
    outcome = service.ask(UNKNOWN_ZH)

    assert outcome.status == "insufficient_evidence"
    message = outcome.missing[0].message
    assert "LM-Z99" in message and CJK.search(message)
    assert outcome.user_message() == message


def test_an_english_refusal_tells_the_user_in_english_what_is_missing(service: Service) -> None:
    outcome = service.ask(UNKNOWN_EN)

    message = outcome.missing[0].message
    assert "LM-Z99" in message and not CJK.search(message)


def test_an_answer_has_no_message_for_the_user(service: Service) -> None:
    assert service.ask("LM-S10 整机保修多久？").user_message() is None


def test_the_http_response_carries_each_piece_s_message(client: TestClient) -> None:
    reply = client.post("/v1/ask", json={"question": UNKNOWN_ZH}, headers=PUBLIC.headers).json()

    assert "LM-Z99" in reply["missing"][0]["message"]
    assert CJK.search(reply["missing"][0]["message"])


def test_the_openapi_schema_describes_the_message(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]

    assert "message" in schemas["Missing"]["properties"]
    assert "message" in schemas["Conflict"]["properties"]


def test_the_cli_shows_what_the_user_is_told(service: Service) -> None:
    text = render_outcome(service.ask(UNKNOWN_ZH))

    assert "to the user: 帮助文档里没有找到关于“LM-Z99”的内容。" in text


def test_a_model_reads_the_message_it_may_pass_on(service: Service) -> None:
    text = toolkit.outcome_text(service.ask(UNKNOWN_EN))

    assert "message for the user (may be shown as it is):" in text
    assert "I couldn't find anything about LM-Z99 in our help articles." in text


def test_the_trace_records_the_outcome_without_the_messages(service: Service) -> None:
    outcome = service.ask(UNKNOWN_ZH)
    events = service.traces.read(outcome.run_id).events
    decided = next(e for e in events if e.step == "decided")

    recorded = decided.data.trace_data()["outcome"]["missing"]
    assert recorded and all("message" not in m for m in recorded)


def test_a_replayed_refusal_is_identical(service: Service) -> None:
    outcome = service.ask(UNKNOWN_ZH)

    assert service.replay(outcome.run_id).identical
