"""Every door refuses the same hostile input in the same words: ``Service`` in Python, the HTTP API,
the MCP tools, and the CLI's files (``tools.inputs``, ``agent.loop.history``). Each kind of input (a lone
surrogate in a question, a history turn or a group; a history over the limit; a question over the
limit) is sent through each door, and the refusal must carry the one message."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.types import TextContent

from evidence_loop.agent.doors.api.mcp_server import build_server, fixed
from evidence_loop.agent.doors.api.toolkit import PUBLIC
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.loop.history import MAX_HISTORY_TURNS
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import InputError
from evidence_loop.traces.records.steps import ResolvedStep
from tests.agent.api_support import STAFF, api_client, open_sample

SURROGATE = "LM-S10 \ud800 保修多久？"
SURROGATE_WORDS = "a lone surrogate U+D800 at character 7 is not Unicode text; send UTF-8 text"
TOO_MANY = ["LM-S10 有哪些功能？"] * (MAX_HISTORY_TURNS + 1)
TOO_MANY_WORDS = f"the history has {MAX_HISTORY_TURNS + 1} turns; the limit is {MAX_HISTORY_TURNS}"
QUESTION = "LM-S10 整机保修多久？"
# kind -> (question, groups, history): what each door is sent
CASES: dict[str, tuple[str, list[str] | None, list[str] | None]] = {
    "surrogate in the question": (SURROGATE, None, None),
    "surrogate in a history turn": (QUESTION, None, ["LM-S10 \ud800 保修多久？"]),
    "history over the limit": (QUESTION, None, TOO_MANY),
}
WORDS = {
    "surrogate in the question": SURROGATE_WORDS,
    "surrogate in a history turn": SURROGATE_WORDS,
    "history over the limit": TOO_MANY_WORDS,
}
Door = Callable[[str, list[str] | None, list[str] | None], str]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    service = open_sample(tmp_path_factory.mktemp("doors"))
    yield service
    service.close()


@pytest.fixture(scope="module")
def client(service: Service) -> TestClient:
    return api_client(service)


def through_python(service: Service) -> Door:
    def door(question: str, groups: list[str] | None, history: list[str] | None) -> str:
        with pytest.raises(InputError) as caught:
            service.ask(question, groups or [], history=history)
        return str(caught.value)

    return door


def through_http(client: TestClient) -> Door:
    def door(question: str, groups: list[str] | None, history: list[str] | None) -> str:
        body: dict[str, Any] = {"question": question}
        if groups is not None:
            body["groups"] = groups
        if history is not None:
            body["history"] = history
        # json.dumps spells a lone surrogate as the escape \ud800, as a client would send it
        headers = {**STAFF.headers, "Content-Type": "application/json"}
        response = client.post("/v1/ask", content=json.dumps(body).encode(), headers=headers)
        assert response.status_code == 422, response.text
        problem = response.json()
        assert problem["type"] == "urn:evloop:problem:invalid-request"
        return str(problem["detail"])

    return door


def through_mcp(service: Service) -> Door:
    def door(question: str, groups: list[str] | None, history: list[str] | None) -> str:
        arguments: dict[str, Any] = {"question": question, "history": history}
        if groups is not None:
            arguments["groups"] = groups

        async def call() -> str:
            async with Client(build_server(service, fixed(PUBLIC))) as session:
                result = await session.call_tool("ask", arguments)
            assert result.is_error
            (block,) = result.content
            assert isinstance(block, TextContent)
            return block.text

        return anyio.run(call)

    return door


def through_a_batch_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], index: Path) -> Door:
    def door(question: str, groups: list[str] | None, history: list[str] | None) -> str:
        questions = tmp_path / "questions.jsonl"
        record = {"id": "q1", "question": question, **({"history": history} if history else {})}
        questions.write_text(json.dumps(record) + "\n", encoding="utf-8")
        out = tmp_path / "results.jsonl"

        code = main(["batch", str(questions), "--out", str(out), "--index", str(index)])

        err = capsys.readouterr().err
        assert code == 2 and not out.exists() and not out.with_suffix(".jsonl.part").exists()
        (line,) = [line for line in err.splitlines() if line.startswith("evloop: error:")]
        return line

    return door


@pytest.mark.parametrize("kind", sorted(CASES))
@pytest.mark.parametrize("door", ["python", "http", "mcp", "batch file"])
def test_every_door_refuses_the_same_input_in_the_same_words(
    kind: str,
    door: str,
    service: Service,
    client: TestClient,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    index: Path,
) -> None:
    doors: dict[str, Door] = {
        "python": through_python(service),
        "http": through_http(client),
        "mcp": through_mcp(service),
        "batch file": through_a_batch_file(tmp_path, capsys, index),
    }

    said = doors[door](*CASES[kind])

    assert WORDS[kind] in said


@pytest.mark.parametrize("door", ["python", "mcp"])
def test_a_group_holding_a_lone_surrogate_is_refused_before_it_reaches_a_trace(
    door: str, service: Service
) -> None:
    if door == "python":
        said = through_python(service)(QUESTION, ["staff\ud800"], None)
    else:
        said = through_mcp(service)(QUESTION, ["\ud800"], None)

    assert "lone surrogate U+D800" in said


def test_only_the_turns_a_follow_up_reads_reach_its_trace(service: Service) -> None:
    history = [f"第{n}个问题：LM-S10 有哪些功能？" for n in range(MAX_HISTORY_TURNS)]

    outcome = service.ask("它的整机保修期是多久？", [], history=history)

    resolved = [e.data for e in service.trace(outcome.run_id).events if isinstance(e.data, ResolvedStep)]
    (step,) = resolved
    read = service.policy.followup_turns
    assert [turn["text"] for turn in step.history] == history[-read:]
    assert outcome.resolved_question is not None and "LM-S10" in outcome.resolved_question


def test_a_history_file_over_the_limit_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: Path
) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(["LM-S10 有哪些功能？"] * 5000), encoding="utf-8")

    code = main(["ask", QUESTION, "--history-file", str(turns), "--index", str(index)])

    err = capsys.readouterr().err
    assert code == 2
    assert [line for line in err.splitlines() if line.startswith("evloop: error:")] == [
        f"evloop: error: the history has 5000 turns; the limit is {MAX_HISTORY_TURNS} "
        "(a follow-up reads the last few) (hint: nothing was written)"
    ]
    assert not (index / "traces").exists()


def test_chat_refuses_a_line_that_is_not_utf8_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], index: Path
) -> None:
    typed = b"\xff warranty?\n" + QUESTION.encode() + b"\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(typed), encoding="utf-8"))

    code = main(["chat", "--index", str(index), "--no-evidence"])

    out, err = capsys.readouterr()
    assert code == 0
    errors = [line for line in err.splitlines() if line.startswith("evloop: error:")]
    refused = "the question: a lone surrogate U+DCFF at character 0 is not Unicode text; send UTF-8 text"
    assert errors == [f"evloop: error: {refused}"]
    assert f"[answered] {QUESTION}" in out


@pytest.mark.parametrize(
    ("tool", "arguments"), [("search", {"query": "LM-S10 \ud800"}), ("get_document", {"doc_id": "a\ud800"})]
)
def test_the_other_mcp_tools_refuse_a_lone_surrogate_as_ask_does(
    service: Service, tool: str, arguments: dict[str, Any]
) -> None:
    async def call() -> str:
        async with Client(build_server(service, fixed(PUBLIC))) as session:
            result = await session.call_tool(tool, arguments)
        assert result.is_error
        (block,) = result.content
        assert isinstance(block, TextContent)
        return block.text

    assert "a lone surrogate U+D800 at character" in anyio.run(call)
