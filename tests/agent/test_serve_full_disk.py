"""`evloop serve` with its trace folder on a disk that fills up, as a real server process.

Fail closed by default: no answer without its audit record (503 ``trace-store-unavailable`` with
Retry-After), and /readyz not ready, so a load balancer stops sending traffic until traces can be
written again. ``--when-traces-fail answer-untraced`` answers instead, each outcome saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.store.folder import Store
from tests.agent.test_api_server import Server
from tests.agent.test_api_server import start as start_server
from tests.disk_support import SmallDisk, small_disk

pytestmark = pytest.mark.processes  # real server processes

QUESTION = {"question": "LM-S10 的整机保修期是多久？"}
TIMEOUT_S = 60


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    with small_disk(tmp_path, monkeypatch, size_kb=1024) as made:
        yield made


@pytest.fixture
def index(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    with Store.open(folder, create=True) as store:
        store.ingest(load_sample_kb())
    return folder


@contextmanager
def _serve(tmp_path: Path, index: Path, disk: SmallDisk, *args: str) -> Iterator[Server]:
    traces = disk.folder / "traces"
    running = start_server(tmp_path, "--index", str(index), "--traces", str(traces), *args, env=disk.env)
    try:
        yield next(running)
    finally:
        running.close()  # stops the server


def _ask(server: Server) -> httpx.Response:
    return httpx.post(f"{server.url}/v1/ask", json=QUESTION, timeout=TIMEOUT_S)


def _ready(server: Server) -> httpx.Response:
    return httpx.get(f"{server.url}/readyz", timeout=TIMEOUT_S)


def _header_less(disk: SmallDisk) -> list[Path]:
    return [path for path in (disk.folder / "traces").rglob("*.jsonl") if path.stat().st_size == 0]


def test_a_full_trace_disk_refuses_answers_and_readiness_until_it_has_room(
    tmp_path: Path, index: Path, disk: SmallDisk
) -> None:
    with _serve(tmp_path, index, disk) as server:
        first = _ask(server)
        assert first.status_code == 200 and first.json()["trace"]["hash"]

        disk.fill()
        refused = _ask(server)
        assert refused.status_code == 503, refused.text
        assert refused.json()["type"] == "urn:evloop:problem:trace-store-unavailable"
        assert int(refused.headers["Retry-After"]) > 0
        assert str(disk.folder) not in refused.text, "server paths go to the log, not to the caller"
        not_ready = _ready(server)
        assert not_ready.status_code == 503 and "trace-store-unavailable" in not_ready.json()["type"]
        assert _header_less(disk) == []
        assert "no space left on the disk" in server.log.read_text()

        disk.free()
        assert _ready(server).status_code == 200
        again = _ask(server)
        assert again.status_code == 200 and again.json()["trace"]["hash"]


def test_answer_untraced_answers_and_every_outcome_says_it_was_not_traced(
    tmp_path: Path, index: Path, disk: SmallDisk
) -> None:
    with _serve(tmp_path, index, disk, "--when-traces-fail", "answer-untraced") as server:
        disk.fill()
        answered = _ask(server)
        assert answered.status_code == 200, answered.text
        body = answered.json()
        assert body["status"] == "answered"
        assert body["trace"]["traced"] is False and "hash" not in body["trace"]
        assert body["trace"]["reason"].startswith("not traced: no space left on the disk")
        assert _ready(server).status_code == 200
        assert _header_less(disk) == []
