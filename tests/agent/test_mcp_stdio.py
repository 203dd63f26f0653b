"""``evloop mcp`` over stdio answers every request: one holding a lone surrogate (``"\\ud800"``), a
byte that is not UTF-8 or JSON nested too deeply gets a JSON-RPC error naming it, where the MCP SDK
alone sends nothing (its parser refuses the line and its session only logs it), and the session goes on."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from evidence_loop.agent.doors.api.mcp_stdio import refusal
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service

REPLY_SECONDS = 240
SURROGATE_WORDS = "a lone surrogate U+D800 at character 0 is not Unicode text; send UTF-8 text"


def call(question: str, request_id: object = 7) -> str:
    arguments = {"name": "ask", "arguments": {"question": question}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": arguments})


def test_a_request_holding_a_lone_surrogate_is_answered_with_its_id_and_the_words_of_every_door() -> None:
    refused, reply = refusal(call("\ud800 warranty"))

    assert refused and reply is not None
    assert (reply.id, reply.error.code) == (7, -32602)
    assert reply.error.message == f"params.arguments.question: {SURROGATE_WORDS}"


def test_bytes_that_are_not_utf8_are_answered_not_passed_on_as_replacement_characters() -> None:
    line = call("x").replace('"x"', '"\udcff warranty"')  # the byte 0xff as stdin decodes it

    refused, reply = refusal(line)

    assert refused and reply is not None
    assert reply.error.message == "the message is not UTF-8 (byte 0xff); send UTF-8 text"


def test_a_line_too_deep_to_read_its_id_is_answered_with_a_null_id() -> None:
    line = '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ' + "[" * 5000 + "]" * 5000 + "}"

    refused, reply = refusal(line)

    assert refused and reply is not None
    assert reply.id is None and "nested deeper than 64 levels" in reply.error.message


def test_a_notification_holding_one_is_dropped_without_a_reply() -> None:
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"x": "\ud800"}})

    assert refusal(line) == (True, None)


@pytest.mark.parametrize("line", [call("LM-S10 整机保修多久？"), call("say \\ud800 as text"), "{not json"])
def test_every_other_line_goes_to_the_sdk_as_it_came(line: str) -> None:
    assert refusal(line) == (False, None)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    """``evloop mcp`` over stdio on the sample help centre, initialized."""
    index = tmp_path_factory.mktemp("mcp-stdio") / "index"
    with Service.open(index, create=True) as service:
        service.ingest(load_sample_kb())
    process = subprocess.Popen(
        [sys.executable, "-m", "evidence_loop.agent.doors.cli.app", "mcp", "--index", str(index)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(os.environ),
    )  # fmt: skip
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    send(process, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode())
    assert receive(process)["id"] == 1
    send(process, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield process
    process.kill()
    process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


def send(process: subprocess.Popen[bytes], line: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(line + b"\n")
    process.stdin.flush()


def receive(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], REPLY_SECONDS)
    assert ready, "no reply"
    reply: dict[str, Any] = json.loads(process.stdout.readline())
    return reply


@pytest.mark.processes
@pytest.mark.parametrize(
    "line",
    [call("\ud800").encode(), call("x").encode().replace(b'"x"', b'"\xff warranty"')],
)
def test_the_server_answers_a_request_the_sdk_cannot_read_and_the_session_goes_on(
    session: subprocess.Popen[bytes], line: bytes
) -> None:
    send(session, line)
    refused = receive(session)
    send(session, json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}).encode())
    listed = receive(session)

    assert refused["id"] == 7 and refused["error"]["code"] == -32602
    assert "not UTF-8" in refused["error"]["message"] or SURROGATE_WORDS in refused["error"]["message"]
    assert listed["id"] == 8 and "tools" in listed["result"]
