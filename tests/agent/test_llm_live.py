"""The adjudicator's protocol against a real local OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Checks the wiring, not the judgement: the request goes out, the typed output validates (or the rules
take over with a reason), and every attempt is recorded without the key. Run with, e.g.::

    EVLOOP_LIVE_BASE_URL=http://127.0.0.1:8000/v1 EVLOOP_LIVE_MODEL=qwen2.5-7b-instruct \
        .venv/bin/pytest -m live tests/agent/test_llm_live.py
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from pydantic_ai.models import override_allow_model_requests

from evidence_loop.agent.loop.conflict_check import Adjudication
from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
from evidence_loop.tools.models.llm_client import build_model
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.models.llm_recording import LLMRecorder
from tests.llm_support import CANDIDATE, QUESTION, VIEWS, records

BASE_URL = os.environ.get("EVLOOP_LIVE_BASE_URL", "")
pytestmark = [pytest.mark.live, pytest.mark.skipif(not BASE_URL, reason="EVLOOP_LIVE_BASE_URL is not set")]


@pytest.fixture(scope="module")
def live() -> Iterator[Adjudication]:
    config = ConflictLLMConfig(
        base_url=BASE_URL,
        model=os.environ.get("EVLOOP_LIVE_MODEL", "default"),
        api_key=os.environ.get("EVLOOP_LIVE_API_KEY", ""),
        timeout_s=120.0,
        deadline_s=300.0,
        force_tool_choice=os.environ.get("EVLOOP_LIVE_FORCE_TOOL_CHOICE", "1") == "1",
    )
    with override_allow_model_requests(True):
        yield LLMAdjudicator(build_model(config, LLMRecorder()), config)(QUESTION, [CANDIDATE], VIEWS)


def test_the_server_answers_with_a_tool_call_in_the_first_reply(live: Adjudication) -> None:
    first = records(live, "llm_reply")[0]
    assert first["outcome"] == "ok", first.get("error")
    kinds = [part["part_kind"] for part in first["model_response"]["parts"]]
    assert "tool-call" in kinds


def test_the_forced_tool_choice_is_in_the_request_when_configured(live: Adjudication) -> None:
    first = records(live, "llm_request")[0]
    body = json.loads(first["http_request"]["body"])
    expected = "required" if os.environ.get("EVLOOP_LIVE_FORCE_TOOL_CHOICE", "1") == "1" else "auto"
    assert body["tool_choice"] == expected


def test_there_is_one_typed_verdict_or_a_stated_fallback(live: Adjudication) -> None:
    assert len(live.verdicts) == 1
    if live.verdicts[0].adjudicator == "llm":
        assert live.fallback_reason is None and live.verdicts[0].quotes
    else:
        assert live.fallback_reason


def test_the_records_are_json_and_hold_no_authorization(live: Adjudication) -> None:
    recorded = json.dumps(live.records, ensure_ascii=False)
    assert "authorization" not in recorded.lower()
    assert live.llm_calls == sum(r["step"] == "llm_request" for r in live.records)
