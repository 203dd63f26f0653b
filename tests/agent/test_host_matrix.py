"""``evloop serve`` (its API and its console) and ``evloop mcp --http`` answer one Host and Origin
matrix: both listen on every address with keys, and a foreign Host or Origin is refused by both
though the key is valid (the MCP SDK's own check is off for any address but loopback)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from tests.agent.test_api_server import Server, free_port, start

pytestmark = pytest.mark.processes  # real server processes

STARTUP_SECONDS = 240
ALLOWED = ("--allow-host", "chat.internal", "--allow-origin", "https://help.example")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def matrix(port: int) -> list[dict[str, str]]:
    """Host and Origin headers: foreign, own, operator-allowed, and the browser's edge cases."""
    return [
        {"Host": f"evil.example:{port}"},
        {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
        {"Host": f"127.0.0.1:{port}"},
        {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
        {"Host": f"127.0.0.1:{port}", "Origin": "http://evil.example"},
        {"Host": f"127.0.0.1:{port}", "Origin": "null"},
        {"Host": "localhost:1"},
        {"Host": "chat.internal"},
        {"Host": f"chat.internal:{port}", "Origin": "https://help.example"},
        {"Host": "127.0.0.1.evil.example"},
    ]


EXPECTED = [421, 421, 200, 200, 403, 403, 421, 200, 200, 421]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The sample help centre and a keys file holding one key with the ask and audit scopes."""
    folder = tmp_path_factory.mktemp("matrix")
    with Service.open(folder / "index", create=True) as service:
        service.ingest(load_sample_kb())
    keys = folder / "keys.json"
    added = subprocess.run(
        [sys.executable, "-m", "evidence_loop.agent.doors.cli.app", "keys", "add", "matrix", "--file",
        str(keys),
         "--scopes", "ask,audit"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    return folder / "index", keys, added.stdout.strip()


@pytest.fixture(scope="module")
def served(keyed: tuple[Path, Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    index, keys, key = keyed
    folder = tmp_path_factory.mktemp("serve")
    yield from start(
        folder, "--index", str(index), "--keys", str(keys), "--host", "0.0.0.0", *ALLOWED, key=key
    )


@pytest.fixture(scope="module")
def mcp_served(keyed: tuple[Path, Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    index, keys, key = keyed
    port = free_port()
    log = tmp_path_factory.mktemp("mcp") / "mcp.log"
    argv = ["mcp", "--http", "--index", str(index), "--keys", str(keys), "--host", "0.0.0.0",
            "--port", str(port), *ALLOWED]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "evidence_loop.agent.doors.cli.app", *argv], stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
        )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}", key, process, log)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _answers(server):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"evloop mcp did not come up: {log.read_text()}"
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


def _answers(server: Server) -> bool:
    try:
        httpx.get(f"{server.url}/mcp", timeout=5)
    except httpx.TransportError:
        return False
    return True


def port_of(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def statuses(
    server: Server, method: str, path: str, body: object = None, extra: dict[str, str] | None = None
) -> list[int]:
    """The status of one request per row of the matrix, each with the server's valid key."""
    bearer = {"Authorization": f"Bearer {server.key}", **(extra or {})}
    with httpx.Client(base_url=server.url, timeout=60) as client:
        return [
            client.request(method, path, headers={**bearer, **headers}, json=body).status_code
            for headers in matrix(port_of(server))
        ]


def test_serve_answers_the_host_and_origin_matrix(served: Server) -> None:
    assert statuses(served, "POST", "/v1/ask", {"question": "LM-S10 整机保修多久？"}) == EXPECTED


def test_the_console_answers_the_same_matrix(served: Server) -> None:
    assert statuses(served, "GET", "/audit") == EXPECTED


def test_mcp_over_http_answers_the_same_matrix(mcp_served: Server) -> None:
    accept = {"Accept": "application/json, text/event-stream"}

    assert statuses(mcp_served, "POST", "/mcp", INITIALIZE, accept) == EXPECTED
