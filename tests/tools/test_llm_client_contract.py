"""The LLM client against a loopback OpenAI-compatible server: retries, quirks, records, fallbacks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai.models import override_allow_model_requests

from evidence_loop.agent.loop.conflict_check import Adjudication, rules_adjudicator
from evidence_loop.agent.loop.llm_adjudicator import SYSTEM_PROMPT, LLMAdjudicator
from evidence_loop.tools.models.llm_client import build_model, replay_model
from evidence_loop.tools.models.llm_recording import LLMRecorder
from tests.fake_openai_server import FakeOpenAIServer, error_body, text_reply, tool_calls_reply
from tests.llm_support import CANDIDATE, COMPATIBLE, QUESTION, VIEWS, config, records, with_quote

FINAL = json.dumps(COMPATIBLE, ensure_ascii=False)
BAD_QUOTE = json.dumps(with_quote(COMPATIBLE, "购买后45天内申请"), ensure_ascii=False)


@pytest.fixture(autouse=True)
def allow_requests() -> Iterator[None]:
    """These tests talk to the loopback server only; everywhere else model requests stay refused."""
    with override_allow_model_requests(True):
        yield


def adjudicate(server: FakeOpenAIServer, **changes: Any) -> Adjudication:
    cfg = config(base_url=server.base_url, **changes)
    return LLMAdjudicator(build_model(cfg, LLMRecorder()), cfg)(QUESTION, [CANDIDATE], VIEWS)


def replies(result: Adjudication) -> list[tuple[Any, ...]]:
    return [
        (r["call"], r["attempt"], r["outcome"], r["status"])
        for r in result.records
        if r["step"] == "llm_reply"
    ]


def test_a_429_is_retried_and_both_attempts_are_recorded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(429, error_body("slow down", "rate_limit_exceeded"))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    assert replies(result) == [(1, 1, "error", 429), (1, 2, "ok", 200)]
    assert [v.adjudicator for v in result.verdicts] == ["llm"]
    assert result.llm_calls == 2


def test_http_bodies_are_recorded_verbatim(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(429, error_body("slow down", "rate_limit_exceeded"))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    sent = [r["http_request"]["body"] for r in records(result, "llm_request")]
    received = [r["http_response"]["body"] for r in records(result, "llm_reply")]
    assert sent == [request.raw for request in fake_openai.requests]
    assert json.loads(received[0]) == error_body("slow down", "rate_limit_exceeded")


def test_the_model_response_is_recorded_as_pydantic_ai_json(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    (reply,) = records(result, "llm_reply")
    part = reply["model_response"]["parts"][0]
    assert (part["part_kind"], part["tool_name"], json.loads(part["args"])) == (
        "tool-call",
        "final_result",
        COMPATIBLE,
    )


def test_repeated_500s_fall_back_to_the_rules_with_the_reason(fake_openai: FakeOpenAIServer) -> None:
    for _ in range(4):
        fake_openai.enqueue(500, error_body("boom"))
    result = adjudicate(fake_openai)
    assert result.verdicts == rules_adjudicator(QUESTION, [CANDIDATE], VIEWS).verdicts
    assert result.fallback_reason is not None and "failed after 4 attempt(s)" in result.fallback_reason
    assert replies(result) == [(1, n, "error", 500) for n in (1, 2, 3, 4)]
    assert len(fake_openai.requests) == result.llm_calls == 4


def test_a_400_is_not_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(400, error_body("bad request", "invalid_request_error"))
    result = adjudicate(fake_openai)
    assert replies(result) == [(1, 1, "error", 400)]
    assert [v.adjudicator for v in result.verdicts] == ["rules"]


def test_a_timeout_is_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)), delay_s=2.0)
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai, timeout_s=0.3)
    first = records(result, "llm_reply")[0]
    assert (first["outcome"], first["error_class"], first["http_response"]) == (
        "error",
        "ModelTimeoutError",
        None,
    )
    assert [v.adjudicator for v in result.verdicts] == ["llm"]


def test_timeouts_on_every_attempt_fall_back_to_the_rules(fake_openai: FakeOpenAIServer) -> None:
    for _ in range(2):
        fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)), delay_s=2.0)
    result = adjudicate(fake_openai, timeout_s=0.2, max_attempts=2)
    assert result.fallback_reason is not None and "ModelTimeoutError" in result.fallback_reason
    assert [v.adjudicator for v in result.verdicts] == ["rules"]


def test_malformed_tool_arguments_are_sent_back_and_then_corrected(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", '{"verdicts": [{"candidate": 0,')))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    tool_messages = [m for m in fake_openai.requests[1].body["messages"] if m["role"] == "tool"]
    assert "Invalid JSON" in tool_messages[0]["content"]
    assert [v.adjudicator for v in result.verdicts] == ["llm"]


def test_an_unknown_tool_name_is_sent_back_with_the_known_tools(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("delete_everything", "{}")))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    tool_messages = [m for m in fake_openai.requests[1].body["messages"] if m["role"] == "tool"]
    assert "Unknown tool name: 'delete_everything'" in tool_messages[0]["content"]
    assert [v.adjudicator for v in result.verdicts] == ["llm"]


def test_an_empty_reply_is_sent_back_and_then_answered(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, text_reply(""))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    assert len(fake_openai.requests) == 2
    assert [v.adjudicator for v in result.verdicts] == ["llm"]


def test_a_quote_not_in_the_evidence_is_retried_then_falls_back(fake_openai: FakeOpenAIServer) -> None:
    for _ in range(3):
        fake_openai.enqueue(200, tool_calls_reply(("final_result", BAD_QUOTE)))
    result = adjudicate(fake_openai)
    assert "is not an exact quote of e1" in json.dumps(fake_openai.requests[1].body, ensure_ascii=False)
    assert result.fallback_reason is not None and "invalid after retries" in result.fallback_reason
    assert [v.adjudicator for v in result.verdicts] == ["rules"]
    assert len(fake_openai.requests) == 3


def test_the_forced_tool_choice_quirk_sends_required(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    adjudicate(fake_openai, force_tool_choice=True)
    assert fake_openai.requests[0].body["tool_choice"] == "required"


def test_without_the_forced_tool_choice_quirk_the_choice_is_auto(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    adjudicate(fake_openai, force_tool_choice=False)
    assert fake_openai.requests[0].body.get("tool_choice", "auto") == "auto"


def test_without_a_system_role_no_system_message_is_sent(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    adjudicate(fake_openai, system_role=False)
    messages = fake_openai.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["user"]
    assert messages[0]["content"].startswith(SYSTEM_PROMPT)


def test_with_a_system_role_the_instructions_go_as_a_system_message(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    adjudicate(fake_openai)
    messages = fake_openai.requests[0].body["messages"]
    assert [(m["role"], m["content"] == SYSTEM_PROMPT) for m in messages] == [
        ("system", True),
        ("user", False),
    ]


def test_max_tokens_is_sent_only_when_the_quirk_allows(fake_openai: FakeOpenAIServer) -> None:
    for _ in range(2):
        fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    adjudicate(fake_openai, send_max_tokens=True, max_tokens=300)
    adjudicate(fake_openai, send_max_tokens=False)
    sent = [(r.body.get("max_completion_tokens"), "max_tokens" in r.body) for r in fake_openai.requests]
    assert sent == [(300, False), (None, False)]


def test_json_schema_output_asks_for_a_response_format_and_reads_text(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(200, text_reply(FINAL))
    result = adjudicate(fake_openai, json_schema_output=True)
    assert fake_openai.requests[0].body["response_format"]["type"] == "json_schema"
    assert [v.adjudicator for v in result.verdicts] == ["llm"]


def test_the_api_key_is_sent_but_never_recorded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(429, error_body("slow down", "rate_limit_exceeded"))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    result = adjudicate(fake_openai)
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-SECRET-123"
    recorded = json.dumps(result.records, ensure_ascii=False)
    assert "sk-SECRET-123" not in recorded
    assert "authorization" not in recorded.lower()


def test_a_replay_uses_the_recorded_replies_without_the_server(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(429, error_body("slow down", "rate_limit_exceeded"))
    fake_openai.enqueue(200, tool_calls_reply(("read_evidence", '{"evidence_id": "e1"}')))
    fake_openai.enqueue(200, tool_calls_reply(("final_result", FINAL)))
    live = adjudicate(fake_openai)
    cfg = config()
    replayed = LLMAdjudicator(replay_model(live.records), cfg)(QUESTION, [CANDIDATE], VIEWS)
    assert replayed.verdicts == live.verdicts
    assert len(fake_openai.requests) == 3


def test_a_replay_of_a_failed_call_falls_back_the_same_way(fake_openai: FakeOpenAIServer) -> None:
    for _ in range(4):
        fake_openai.enqueue(500, error_body("boom"))
    live = adjudicate(fake_openai)
    replayed = LLMAdjudicator(replay_model(live.records), config())(QUESTION, [CANDIDATE], VIEWS)
    assert (replayed.verdicts, replayed.fallback_reason) == (live.verdicts, live.fallback_reason)
