"""``evloop mcp`` in a real subprocess, reached by the MCP SDK's own client over stdio and over
streamable HTTP: an answered question with its citations and offsets, a refused one with its
missing pieces, and the keys of ``evloop serve`` bounding what an HTTP caller reads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from evidence_loop.agent.access.keys import hash_key
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.types import DocumentInput
from tests.agent.test_api_server import free_port

pytestmark = pytest.mark.processes  # real server processes

ANSWERED = "LM-S10 整机保修多久？"
REFUSED = "LM-Z900 的整机保修期是多久？"
STAFF_QUESTION = "员工购机优惠是多少？"
STARTUP_SECONDS = 240
CLI = ("-m", "evidence_loop.agent.doors.cli.app", "mcp")
STAFF_KEY, PUBLIC_KEY = "mk-staff", "mk-public"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mcp") / "index"
    with Service.open(folder, create=True) as service:
        service.ingest(load_sample_kb())
    return folder


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keys") / "keys.json"
    records = [
        f'{{"name": "staff-bot", "sha256": "{hash_key(STAFF_KEY)}", "groups": ["staff"], "scopes": ["ask"]}}',
        f'{{"name": "public-bot", "sha256": "{hash_key(PUBLIC_KEY)}", "groups": [], "scopes": ["ask"]}}',
    ]
    path.write_text('{"keys": [' + ", ".join(records) + "]}", encoding="utf-8")
    return path


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return result


async def check_answered_and_refused(client: Client) -> None:
    """The acceptance exchange: one answer cited to exact offsets, one refusal naming what is missing."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"ask", "search", "get_document", "list_documents", "replay"}
    asks = tools["ask"].input_schema
    assert asks["required"] == ["question"] and set(asks["properties"]) == {"question", "groups", "history"}
    assert all(field.get("description") for field in asks["properties"].values())
    assert tools["ask"].output_schema is not None and "status" in tools["ask"].output_schema["properties"]

    answered = await call(client, "ask", {"question": ANSWERED})
    outcome = answered.structured_content
    assert outcome is not None and outcome["status"] == "answered"
    citations = outcome["answer"]["citations"]
    assert citations
    for cite in citations:
        span = await call(
            client, "get_document", {"doc_id": cite["doc_id"], "version": cite["version"],
                                      "start": cite["start"], "end": cite["end"]}
        )  # fmt: skip
        assert span.structured_content is not None and span.structured_content["text"] == cite["quote"]
        assert f"{cite['doc_id']}@{cite['version']} [{cite['start']}:{cite['end']}]" in text_of(answered)
    assert outcome["run_id"] in text_of(answered)

    refused = await call(client, "ask", {"question": REFUSED})
    outcome = refused.structured_content
    assert outcome is not None and outcome["status"] == "insufficient_evidence"
    assert any(m["kind"] == "uncovered_slot" and "LM-Z900" in m["detail"] for m in outcome["missing"])
    said = text_of(refused)
    assert "REFUSED" in said and "LM-Z900" in said and "insufficient_evidence" in said

    replayed = await call(client, "replay", {"run_id": outcome["run_id"]})
    assert replayed.structured_content is not None and replayed.structured_content["identical"] is True


def stdio(index: Path, env: dict[str, str], *args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=[*CLI, "--index", str(index), *args], env={**os.environ, **env}
    )
    return Client(params)


def run(check: Callable[[Client], Awaitable[None]], client: Client) -> None:
    async def main() -> None:
        async with client:
            await check(client)

    anyio.run(main)


def test_over_stdio_a_client_gets_an_answer_with_offsets_and_a_refusal_with_its_missing_pieces(
    index: Path,
) -> None:
    run(check_answered_and_refused, stdio(index, {}))


def test_over_stdio_the_environment_names_the_groups_read_with(index: Path) -> None:
    async def staff_reads_the_staff_page(client: Client) -> None:
        outcome = (await call(client, "ask", {"question": STAFF_QUESTION})).structured_content
        assert outcome is not None and outcome["status"] == "answered"
        assert any(e["doc_id"] == "staff-discount-zh" for e in outcome["evidence"])
        widened = await client.call_tool("ask", {"question": STAFF_QUESTION, "groups": ["sales"]})
        assert widened.is_error and "sales" in text_of(widened)

    async def the_public_does_not(client: Client) -> None:
        outcome = (await call(client, "ask", {"question": STAFF_QUESTION})).structured_content
        assert outcome is not None and outcome["status"] == "insufficient_evidence"
        docs = (await call(client, "list_documents", {})).structured_content
        assert docs is not None and "staff-discount-zh" not in {d["doc_id"] for d in docs["documents"]}
        hidden = await client.call_tool("get_document", {"doc_id": "staff-discount-zh"})
        assert hidden.is_error and "no document" in text_of(hidden)

    run(staff_reads_the_staff_page, stdio(index, {"EVLOOP_GROUPS": "staff"}))
    run(the_public_does_not, stdio(index, {"EVLOOP_GROUPS": ""}))


@contextmanager
def start_http(index: Path, log: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``evloop mcp --http`` on a free loopback port until the test ends; yields the endpoint."""
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, *CLI, "--index", str(index), "--http", "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _listening(url):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"no MCP server in {STARTUP_SECONDS} s: {log.read_text()}"
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def http_server(index: Path, keys_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_http(index, tmp_path_factory.mktemp("log") / "mcp.log", "--keys", str(keys_file)) as url:
        yield url


def _listening(url: str) -> bool:
    try:
        httpx.post(url, json={}, timeout=5)
    except httpx.TransportError:
        return False
    return True


def run_http(check: Callable[[Client], Awaitable[None]], url: str, key: str) -> None:
    async def main() -> None:
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            transport: AbstractAsyncContextManager[Any] = streamable_http_client(url, http_client=http)
            async with Client(transport) as client:
                await check(client)

    anyio.run(main)


def test_over_http_a_client_gets_an_answer_with_offsets_and_a_refusal_with_its_missing_pieces(
    http_server: str,
) -> None:
    run_http(check_answered_and_refused, http_server, PUBLIC_KEY)


def test_over_http_the_key_bounds_the_groups_and_a_request_without_one_is_refused(http_server: str) -> None:
    async def staff(client: Client) -> None:
        outcome = (await call(client, "ask", {"question": STAFF_QUESTION})).structured_content
        assert outcome is not None and outcome["status"] == "answered"

    async def public(client: Client) -> None:
        outcome = (await call(client, "ask", {"question": STAFF_QUESTION})).structured_content
        assert outcome is not None and outcome["status"] == "insufficient_evidence"
        widened = await client.call_tool("ask", {"question": STAFF_QUESTION, "groups": ["staff"]})
        assert widened.is_error and "staff" in text_of(widened)

    run_http(staff, http_server, STAFF_KEY)
    run_http(public, http_server, PUBLIC_KEY)
    assert httpx.post(http_server, json={}, timeout=30).status_code == 401
    assert (
        httpx.post(http_server, json={}, headers={"Authorization": "Bearer nope"}, timeout=30).status_code
        == 401
    )


def test_the_ask_tool_reads_a_follow_up_with_its_history(tmp_path: Path) -> None:
    """The tool's history reaches the loop: "and for X?" keeps the asked attribute and swaps the entity."""
    from evidence_loop.agent.access.keys import LOCAL
    from evidence_loop.agent.doors.api import toolkit

    with Service.open(tmp_path / "ix", create=True) as service:
        service.ingest(
            [DocumentInput(doc_id="w", text="# Warranty\n\nThe LM-X200 has a one-year warranty.\n")]
        )
        alone = toolkit.ask(service, LOCAL, "And for the LM-X200?", None, [])
        followed = toolkit.ask(service, LOCAL, "And for the LM-X200?", None, ["How long is the warranty?"])
        assert alone.resolved_question is None
        assert followed.question == "And for the LM-X200?"
        assert followed.resolved_question is not None and "warranty" in followed.resolved_question.lower()
        assert followed.status == "answered"


def test_a_stdio_session_runs_as_the_caller_its_environment_names(keys_file: Path) -> None:
    from evidence_loop.agent.access.keys import Keyring
    from evidence_loop.agent.doors.api.mcp_server import stdio_caller

    keyring = Keyring.load(keys_file)
    assert stdio_caller({}, None).groups == frozenset()  # the public documents, never every group
    assert stdio_caller({"EVLOOP_GROUPS": "staff, sales"}, None).groups == {"staff", "sales"}
    staff = stdio_caller({"EVLOOP_API_KEY": STAFF_KEY}, keyring)
    assert (staff.name, staff.groups) == ("staff-bot", {"staff"})
    with pytest.raises(InputError, match="EVLOOP_API_KEY"):
        stdio_caller({"EVLOOP_API_KEY": "wrong"}, keyring)
    with pytest.raises(InputError, match="EVLOOP_API_KEY"):
        stdio_caller({}, keyring)
    with pytest.raises(InputError, match="no --keys"):
        stdio_caller({"EVLOOP_API_KEY": STAFF_KEY}, None)


def test_over_http_without_keys_every_request_is_the_process_caller(index: Path, tmp_path: Path) -> None:
    async def staff(client: Client) -> None:
        outcome = (await call(client, "ask", {"question": STAFF_QUESTION})).structured_content
        assert outcome is not None and outcome["status"] == "answered"

    with start_http(index, tmp_path / "mcp.log", env={"EVLOOP_GROUPS": "staff"}) as url:
        run_http(staff, url, "no-key-needed")
