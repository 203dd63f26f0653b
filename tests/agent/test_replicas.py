"""Several `evloop serve` replicas over one PostgreSQL store, on loopback ports.

A batch ingested through one replica is answered by every replica; a replica killed mid-ingest
leaves the batch all there or not at all; a server stopped mid-load gives 503 problems (never a
500) and service resumes when it is back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from evidence_loop.tools.store.postgres import PgStore
from tests.agent.test_api_server import Server, add_key
from tests.agent.test_api_server import start as start_server
from tests.pg_server import PgServer

REPO = Path(__file__).resolve().parents[2]
# Bounds on waiting (never a measurement): a busy 2-core machine meets them.
SEEN_WITHIN_S = 60.0
PROBLEM_JSON = "application/problem+json"
UNAVAILABLE = "urn:evloop:problem:store-unavailable"


def batch(tag: str, count: int = 30) -> list[dict[str, object]]:
    """Documents whose only shared word is ``tag``: one question finds any of them. They agree on what
    they state (the pass is valid for a week), so that the answer is a matter of which replica has
    them, never of a conflict between them (codes 11 and 12 valid for 13 and 14 days are, to the
    conflict screen, one attribute with two values)."""
    return [
        {
            "doc_id": f"{tag}-{i}",
            "text": f"{tag.title()} rule {i}\nThe {tag} pass is valid for one week.",
        }
        for i in range(count)
    ]


def ask(server: Server, question: str) -> httpx.Response:
    body = {"question": question, "options": {"include_evidence": False}}
    return httpx.post(f"{server.url}/v1/ask", json=body, headers=_auth(server), timeout=30)


def ingest(server: Server, docs: list[dict[str, object]]) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/documents", json={"documents": docs}, headers=_auth(server), timeout=60
    )


def _auth(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.key}"}


def cites(response: httpx.Response, tag: str) -> bool:
    if response.status_code != 200 or response.json()["status"] != "answered":
        return False
    return any(c["doc_id"].startswith(f"{tag}-") for c in response.json()["answer"]["citations"])


def wait_until(condition: Callable[[], bool], bound: float = SEEN_WITHIN_S) -> None:
    pause = threading.Event()
    for _ in range(int(bound / 0.1)):
        if condition():
            return
        pause.wait(0.1)
    raise AssertionError(f"not within {bound:g} s")


@pytest.fixture
def keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    path = tmp_path / "keys.json"
    return path, add_key(path, "ops", capsys, "--scopes", "ask,ingest,audit,publish")


@contextmanager
def replicas(
    tmp_path: Path,
    url: str,
    keys: tuple[Path, str],
    count: int,
    file_traces: tuple[int, ...] = (),
    program: tuple[str, ...] = ("-m", "evidence_loop.agent.doors.cli.app", "serve"),
) -> Iterator[list[Server]]:
    """``count`` replicas of `evloop serve --store URL` (or ``program``); those in ``file_traces``
    keep their traces in a folder of their own, the others in the store."""
    path, key = keys
    environ = {"PYTHONPATH": str(REPO)}
    with ExitStack() as stack:
        servers = []
        for n in range(count):
            args: tuple[str, ...] = ("--store", url, "--keys", str(path))
            if n in file_traces:
                args += ("--traces", str(tmp_path / f"traces-{n}"))
            servers.append(stack.enter_context(_started(tmp_path, args, key, environ, program)))
        yield servers


def _started(
    tmp_path: Path, args: tuple[str, ...], key: str, env: dict[str, str], program: tuple[str, ...]
) -> ContextManager[Server]:
    return contextmanager(start_server)(tmp_path, *args, key=key, env=env, program=program)


def test_a_batch_ingested_through_one_replica_is_answered_by_all_three(
    tmp_path: Path, pg_url: str, keys: tuple[Path, str]
) -> None:
    with replicas(tmp_path, pg_url, keys, 3) as servers:
        assert not cites(ask(servers[2], "how long is the kestrel pass valid"), "kestrel")
        reply = ingest(servers[0], batch("kestrel"))
        assert reply.status_code == 200, reply.text
        for server in servers:
            wait_until(lambda s=server: cites(ask(s, "how long is the kestrel pass valid"), "kestrel"))


def test_a_replica_killed_mid_ingest_leaves_the_batch_all_there_or_not_at_all(
    tmp_path: Path, pg_url: str, keys: tuple[Path, str]
) -> None:
    for stage, expected in (("rows", 0), ("index", 0), ("commit", 30)):
        tag = f"osprey{stage}"
        crashing = replicas(tmp_path, pg_url, keys, 1, program=("-m", "tests.agent.crashing_replica", stage))
        with pytest.raises(httpx.TransportError), crashing as doomed:  # gone before it replies
            ingest(doomed[0], batch(tag))
        with PgStore.open(pg_url) as store:
            kept = [d.doc_id for d in store.documents() if d.doc_id.startswith(tag)]
            assert len(kept) == expected, stage
    with replicas(tmp_path, pg_url, keys, 1) as servers:
        assert ingest(servers[0], batch("ospreyrows")).status_code == 200  # the lock was released
        assert cites(ask(servers[0], "how long is the ospreyrows pass valid"), "ospreyrows")


@pytest.fixture
def own_server() -> Iterator[PgServer]:
    """A server of its own, to stop and start again without disturbing the other tests."""
    server = PgServer.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.mark.postgres
def test_a_stopped_database_gives_503s_never_500s_and_service_resumes(
    tmp_path: Path, own_server: PgServer, keys: tuple[Path, str]
) -> None:
    url = own_server.new_database()
    statuses: list[int] = []
    with replicas(tmp_path, url, keys, 2, file_traces=(1,)) as servers:
        assert ingest(servers[0], batch("heron")).status_code == 200
        wait_until(lambda: all(cites(ask(s, "how long is the heron pass valid"), "heron") for s in servers))
        stop = threading.Event()
        load = threading.Thread(target=_load, args=(servers, stop, statuses))
        load.start()
        try:
            own_server.stop()
            down = ingest(servers[1], batch("egret"))
            assert (down.status_code, down.headers["content-type"]) == (503, PROBLEM_JSON)
            assert down.json()["type"] == UNAVAILABLE
            wait_until(lambda: _ready(servers[1]) == {"status": "ready", "store": "unreachable"})
            # Its traces in a folder, replica 1 answers from the generation it holds; replica 0 cannot
            # make its trace durable in the store, so it does not answer.
            assert cites(ask(servers[1], "how long is the heron pass valid"), "heron")
            refused = ask(servers[0], "how long is the heron pass valid")
            assert (refused.status_code, refused.json()["type"]) == (
                503,
                "urn:evloop:problem:store-unavailable",
            )
            own_server.start_again()
            wait_until(lambda: all(_ready(s) == {"status": "ready"} for s in servers))
            assert ingest(servers[1], batch("egret")).status_code == 200
            wait_until(lambda: cites(ask(servers[0], "how long is the egret pass valid"), "egret"))
        finally:
            stop.set()
            load.join(SEEN_WITHIN_S)
    assert statuses and set(statuses) <= {200, 503}, sorted(set(statuses))


def _load(servers: list[Server], stop: threading.Event, statuses: list[int]) -> None:
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            for server in servers:
                body = {"question": "how long is the heron pass valid"}
                reply = client.post(f"{server.url}/v1/ask", json=body, headers=_auth(server))
                statuses.append(reply.status_code)


def _ready(server: Server) -> dict[str, object]:
    """The probe's answer without the policy's hash (tests/agent/test_serve_policy.py checks it)."""
    reply = httpx.get(f"{server.url}/readyz", timeout=10)
    body = dict(reply.json()) if reply.status_code == 200 else {"status": reply.status_code}
    body.pop("policy", None)
    return body
