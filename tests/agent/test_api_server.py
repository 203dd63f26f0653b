"""The API on a real uvicorn server started by ``evloop serve`` on a loopback port; and ``evloop keys``.

Covers what only a real server shows: the CLI wiring, binding, worker processes, and questions
served while an ingest runs in the same process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from evidence_loop.agent.access.keys import Keyring, hash_key
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service

pytestmark = pytest.mark.processes  # real uvicorn servers, some with worker processes

# Only a bound for a server that never comes up: the wait ends as soon as every worker is ready.
STARTUP_SECONDS = 240
# What uvicorn logs once a worker's app is built (index loaded) and it accepts requests.
WORKER_STARTED = "Application startup complete."
WARRANTY_ZH = "LM-S10 整机保修多久？"


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    key: str
    process: subprocess.Popen[bytes]
    log: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def add_key(keys: Path, name: str, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["keys", "add", name, "--file", str(keys), *args]) == 0
    return capsys.readouterr().out.strip()


def start(
    tmp_path: Path,
    *args: str,
    key: str = "",
    workers: int = 1,
    env: dict[str, str] | None = None,
    program: Sequence[str] = ("-m", "evidence_loop.agent.doors.cli.app", "serve"),
) -> Iterator[Server]:
    """Run ``evloop serve`` (or ``program``) with ``args`` until the test ends; wait until every
    worker is ready."""
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    # Several workers log at info level: each says when it is up, which is how the wait knows.
    flags = ["--quiet"] if workers == 1 else ["--workers", str(workers)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, *program, "--port", str(port), *flags, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    server = Server(f"http://127.0.0.1:{port}", key, process, log)
    try:
        _wait_until_ready(server, workers)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_ready(server: Server, workers: int) -> None:
    """Until /readyz answers (the index is loaded) and, with several workers, each has logged so."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"the server exited: {server.log.read_text()}")
        if "died" in server.log.read_text():
            raise AssertionError(f"a worker was killed before it came up: {server.log.read_text()}")
        if _ready(server) and (workers == 1 or server.log.read_text().count(WORKER_STARTED) >= workers):
            return
        time.sleep(0.1)
    raise AssertionError(f"the server did not come up in {STARTUP_SECONDS} s: {server.log.read_text()}")


def _ready(server: Server) -> bool:
    try:
        return httpx.get(f"{server.url}/readyz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def index(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    service = Service.open(folder, create=True)
    service.ingest(load_sample_kb())
    service.close()
    return folder


@pytest.fixture
def server(tmp_path: Path, index: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Server]:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "tester", capsys, "--groups", "staff", "--scopes", "ask,ingest,audit,publish")
    yield from start(tmp_path, "--index", str(index), "--keys", str(keys), key=key)


def auth(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.key}"}


# --- evloop keys -------------------------------------------------------------------------------------


def test_keys_add_prints_the_key_once_and_stores_only_its_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.json"

    key = add_key(keys, "chatbot", capsys, "--groups", "staff", "--scopes", "audit,ask")

    stored = json.loads(keys.read_text())
    assert stored == {
        "keys": [
            {"name": "chatbot", "sha256": hash_key(key), "groups": ["staff"], "scopes": ["ask", "audit"]}
        ]
    }
    assert key not in keys.read_text()
    assert keys.stat().st_mode & 0o777 == 0o600


def test_keys_list_shows_names_groups_and_scopes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys.json"
    add_key(keys, "chatbot", capsys)

    assert main(["keys", "list", "--file", str(keys)]) == 0
    assert capsys.readouterr().out == "chatbot  groups=-  scopes=ask\n"


def test_keys_remove_revokes_a_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "chatbot", capsys)

    assert main(["keys", "remove", "chatbot", "--file", str(keys)]) == 0
    assert Keyring.load(keys).authenticate(key) is None


def test_keys_revoke_is_keys_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "chatbot", capsys)
    kept = add_key(keys, "staff", capsys)

    assert main(["keys", "revoke", "chatbot", "--file", str(keys)]) == 0
    keyring = Keyring.load(keys)
    assert (keyring.authenticate(key), keyring.authenticate(kept) is not None) == (None, True)


def test_a_second_key_with_the_same_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.json"
    add_key(keys, "chatbot", capsys)

    assert main(["keys", "add", "chatbot", "--file", str(keys)]) == 2


def test_an_unknown_scope_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["keys", "add", "x", "--scopes", "admin", "--file", str(tmp_path / "k.json")]) == 2


def test_a_keys_file_holding_a_plain_key_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": "a", "key": "secret", "scopes": ["ask"]}]}))

    assert main(["serve", "--keys", str(keys), "--index", str(tmp_path / "i")]) == 2


# --- a real server ---------------------------------------------------------------------------------


def test_a_real_server_answers_with_a_key_and_refuses_without(server: Server) -> None:
    answered = httpx.post(f"{server.url}/v1/ask", json={"question": WARRANTY_ZH}, headers=auth(server))
    refused = httpx.post(f"{server.url}/v1/ask", json={"question": WARRANTY_ZH})

    assert (answered.status_code, answered.json()["status"]) == (200, "answered")
    assert (refused.status_code, refused.headers["content-type"]) == (401, "application/problem+json")


def test_a_real_server_publishes_its_openapi_document(server: Server) -> None:
    document = httpx.get(f"{server.url}/openapi.json").json()

    assert "/v1/ask" in document["paths"]


def batch_document(i: int) -> dict[str, str]:
    """A help-centre sized document (about 2600 characters), so that a batch takes a while to ingest."""
    text = "".join(
        f"第{i}号批量文档第{j}段。本段说明批量导入的第{j}条规则，编号BATCH{i:03d}-{j}。\n\n"
        for j in range(60)
    )
    return {"doc_id": f"batch-{i:03d}", "text": text}


def test_questions_during_an_ingest_see_all_of_the_batch_or_none_of_it(server: Server) -> None:
    batch = {"documents": [batch_document(i) for i in range(300)]}
    probes: list[tuple[bool, int, int]] = []  # (ingest in flight, batch documents listed, ask status)
    in_flight, done = threading.Event(), threading.Event()

    def watch() -> None:
        with httpx.Client(base_url=server.url, headers=auth(server), timeout=30) as client:
            while not done.is_set():
                during = in_flight.is_set()
                listing = client.get("/v1/documents").json()["documents"]
                asked = client.post("/v1/ask", json={"question": "第7号批量文档第3段的编号是什么？"})
                probes.append(
                    (during, sum(d["doc_id"].startswith("batch-") for d in listing), asked.status_code)
                )

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        in_flight.set()
        response = httpx.post(f"{server.url}/v1/documents", json=batch, headers=auth(server), timeout=120)
        in_flight.clear()
        # two more probes: the second one started after the ingest had returned
        settled = len(probes) + 2
        deadline = time.monotonic() + 60
        while len(probes) < settled and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        done.set()
        watcher.join()

    assert response.status_code == 200, response.text
    assert sum(during for during, _, _ in probes) >= 1  # questions were answered while it ran
    assert {listed for _, listed, _ in probes} <= {0, 300} and probes[-1][1] == 300
    assert {status for _, _, status in probes} == {200}


def test_without_keys_the_server_listens_on_loopback_only_and_says_so(tmp_path: Path, index: Path) -> None:
    for server in start(tmp_path, "--index", str(index), "--host", "0.0.0.0"):
        response = httpx.post(f"{server.url}/v1/ask", json={"question": WARRANTY_ZH})

        assert response.status_code == 200
        assert "listening on 127.0.0.1 (loopback) only, not 0.0.0.0" in server.log.read_text()


def test_worker_processes_see_an_ingest_made_through_any_of_them(
    tmp_path: Path, index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "tester", capsys, "--scopes", "ask,ingest,publish")
    doc = {"doc_id": "gift-cards-zh", "text": "礼品卡自购买之日起有效期为36个月，过期后余额不退。"}
    for server in start(tmp_path, "--index", str(index), "--keys", str(keys), key=key, workers=2):
        assert httpx.post(f"{server.url}/v1/documents", json=doc, headers=auth(server)).status_code == 200
        # A new connection each time, so that the questions spread over both workers.
        answers = [
            httpx.post(
                f"{server.url}/v1/ask", json={"question": "礼品卡有效期多久？"}, headers=auth(server)
            ).json()
            for _ in range(8)
        ]

        assert {a["answer"]["citations"][0]["doc_id"] for a in answers} == {"gift-cards-zh"}


# A busy machine, staged: every worker process spends this long before it imports anything, more
# than the 5 s in which uvicorn's supervisor, by default, expects a new worker to answer its ping.
SLOW_WORKER_START = """
import sys
import time

if any("spawn_main" in arg for arg in sys.orig_argv):
    time.sleep(6)
"""


def test_worker_processes_that_are_slow_to_start_are_not_killed_before_they_are_up(
    tmp_path: Path, index: Path
) -> None:
    site = tmp_path / "slow-start"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_WORKER_START)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    for server in start(tmp_path, "--index", str(index), workers=2, env={"PYTHONPATH": path}):
        response = httpx.post(f"{server.url}/v1/ask", json={"question": WARRANTY_ZH})

        assert response.json()["status"] == "answered"
        assert "died" not in server.log.read_text()


def test_a_worker_imports_no_llm_library_while_no_model_is_configured(tmp_path: Path) -> None:
    # What a worker imports (the CLI is its __main__) and does before it serves; pydantic-ai and
    # openai alone were most of a worker's start-up, for a conflict adjudicator it did not use.
    start_worker = (
        "import sys, pathlib, evidence_loop.agent.doors.cli.app, evidence_loop.agent.doors.api.app\n"
        "from agent.service import Service\n"
        "Service.open(pathlib.Path(sys.argv[1]), create=True).settle()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic_ai', 'openai'}))\n"
    )
    unset = ("EVLOOP_LLM_CONFIG", "EVLOOP_LLM_MODEL", "OPENAI_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    command = [sys.executable, "-c", start_worker, str(tmp_path / "index")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)

    assert done.stdout.strip() == "[]"
