"""`evloop tool-schema` and the function-calling loop of docs/integrations.md, run as written
against the loopback fake OpenAI server: the model calls `ask`, reads the cited answer or the
refusal, and replies."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import openai
import pytest

from evidence_loop.agent.doors.api.toolkit import PUBLIC, AskArguments, ask_tool_schema, run_ask_tool
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import InputError
from tests.fake_openai_server import FakeOpenAIServer, text_reply, tool_calls_reply

ROOT = Path(__file__).resolve().parents[2]


def the_loop() -> str:
    page = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = page.split("## A function-calling loop", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_loop_in_the_docs_is_twenty_lines() -> None:
    assert len(the_loop().splitlines()) <= 20


def test_tool_schema_prints_ask_as_an_openai_function(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tool-schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["type"] == "function" and schema["function"]["name"] == "ask"
    parameters = schema["function"]["parameters"]
    assert parameters["required"] == ["question"]
    assert set(parameters["properties"]) == {"question", "groups", "history"}


def test_tool_schema_strict_closes_the_object_and_requires_every_argument_nullable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tool-schema", "--strict"]) == 0
    function = json.loads(capsys.readouterr().out)["function"]
    parameters = function["parameters"]
    assert function["strict"] is True and parameters["additionalProperties"] is False
    assert parameters["required"] == ["question", "groups", "history"]
    for name in ("groups", "history"):
        assert {"type": "null"} in parameters["properties"][name]["anyOf"]
        assert "default" not in parameters["properties"][name]
    assert parameters["properties"]["question"] == {
        "type": "string", "description": "the user's question, as asked (Chinese or English)"
    }  # fmt: skip


def test_the_strict_schema_is_the_one_the_openai_library_makes_of_the_arguments() -> None:
    made = openai.pydantic_function_tool(AskArguments, name="ask")["function"]
    assert made.get("strict") is True
    ours = ask_tool_schema(strict=True)["function"]["parameters"]
    assert without_titles(made["parameters"]) == without_titles(ours)


def without_titles(schema: Any) -> Any:
    """A schema without the names and prose pydantic adds (``title``, the model's ``description``)."""
    if isinstance(schema, dict):
        return {k: without_titles(v) for k, v in schema.items() if k not in ("title", "description")}
    if isinstance(schema, list):
        return [without_titles(v) for v in schema]
    return schema


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    with Service.open(tmp_path / ".evloop", create=True) as service:
        service.ingest(load_sample_kb())
    return tmp_path


def run_loop(workdir: Path, server: FakeOpenAIServer, question: str, reply: str) -> str:
    arguments = {"question": question, "groups": None, "history": None}  # strict: every argument sent
    server.enqueue(200, tool_calls_reply(("ask", json.dumps(arguments, ensure_ascii=False))))
    server.enqueue(200, text_reply(reply))
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-fake", "MODEL": "fake"}
    env["PYTHONPATH"] = str(ROOT)  # this tree, from the work folder too (a relative path would not be)
    done = subprocess.run(
        [sys.executable, "-c", the_loop()], cwd=workdir, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == reply
    first, second = server.requests
    assert first.body["tools"] == [json.loads(printed_schema("--strict"))]
    (tool_message,) = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert tool_message["tool_call_id"] == "call_0"
    content: str = tool_message["content"]
    return content


def printed_schema(*flags: str) -> str:
    """What `evloop tool-schema` prints (the command run in this process)."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["tool-schema", *flags]) == 0
    return out.getvalue()


def test_the_docs_loop_hands_the_model_a_cited_answer(workdir: Path, fake_openai: FakeOpenAIServer) -> None:
    read = run_loop(workdir, fake_openai, "LM-S10 整机保修多久？", "整机保修3年 [2]")
    assert read.startswith("status: answered\n")
    assert "[2] warranty-zh@1 [179:212]" in read and "| LM-S10 | 3年 |" in read


def test_the_docs_loop_hands_the_model_a_refusal_with_what_is_missing(
    workdir: Path, fake_openai: FakeOpenAIServer
) -> None:
    read = run_loop(workdir, fake_openai, "LM-Z900 的整机保修期是多久？", "资料中没有 LM-Z900 的保修信息。")
    assert read.startswith("status: insufficient_evidence\n")
    assert "REFUSED" in read and "uncovered_slot: no evidence mentions the model 'LM-Z900'" in read


def test_a_model_cannot_grant_itself_groups(workdir: Path) -> None:
    with Service.open(workdir / ".evloop") as service:
        with pytest.raises(InputError, match="staff"):
            run_ask_tool(service, {"question": "员工购买学习设备打几折？", "groups": ["staff"]}, PUBLIC)
        assert run_ask_tool(service, '{"question": "员工购买学习设备打几折？"}').startswith(
            "status: insufficient_evidence"
        )
