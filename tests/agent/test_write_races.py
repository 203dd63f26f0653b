"""A key's write permission and its write are one transaction, across worker processes and replicas.

The race of issue 20: key ``admin`` (groups alpha, beta) writes doc X version b1 under ACL [beta];
while that write is still in its transaction, key ``ka`` (group alpha) sends X b1 with
``?replace=true`` under ACL [alpha] through another process. Checked before the write's transaction,
ka's replace passed (X's live version is alpha's) and then overwrote the beta text once admin's
write committed. Checked inside it, ka's replace meets b1 under [beta] and is refused.

The servers are real processes (``tests/agent/gated_server.py``: the app of ``evloop serve`` whose
store holds a write at its stage "rows" until the test opens a gate), over one index folder, under
``--workers 2``, and as two replicas of one PostgreSQL database.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.types import DocumentInput
from tests.agent.test_api_server import Server, add_key, start

pytestmark = pytest.mark.processes  # real server processes

GATED = ("-m", "tests.agent.gated_server")
REPO = Path(__file__).resolve().parents[2]
ROUNDS = 3
ATTEMPTS = 4  # ka's concurrent attempts per round, each on a connection of its own
# Bounds on waiting (never a measurement): a busy 2-core machine meets them.
REACHED_WITHIN_S = 60.0
ENTERED_WITHIN_S = 20.0
REQUEST_S = 180.0
# After admin's write, X's live version is b1 under [beta], which ka cannot read: "not writable".
REFUSED = (403, "urn:evloop:problem:doc-id-not-writable")
BETA_TEXT = "Beta rule. The beta desk refunds within 21 days."
KA_TEXT = "Alpha rule. The alpha desk refunds within 3 days."


@pytest.fixture
def keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "keys.json"
    admin = add_key(path, "admin", capsys, "--groups", "alpha,beta", "--scopes", "ingest")
    ka = add_key(path, "ka", capsys, "--groups", "alpha", "--scopes", "ingest")
    return path, {"admin": admin, "ka": ka}


def seed(location: Location, rounds: int) -> None:
    """Doc X of each round, live as version a1 under [alpha]: ka may write it, and b1 is not stored."""
    with open_store(location, create=True) as store:
        store.ingest(
            DocumentInput(f"race-{n}", "Alpha rule. Refunds within 7 days.", "a1", acl=("alpha",))
            for n in range(rounds)
        )


def served(
    tmp_path: Path, gate: Path, keys: Path, where: tuple[str, str], workers: int = 1
) -> Iterator[Server]:
    args = ("--gate", str(gate), *where, "--keys", str(keys))
    return start(tmp_path, *args, workers=workers, env={"PYTHONPATH": str(REPO)}, program=GATED)


def marks(gate: Path, kind: str) -> int:
    return sum(1 for p in gate.iterdir() if p.name.startswith(f"{kind}-"))


def wait_for(condition: Callable[[], bool], bound: float) -> bool:
    pause = threading.Event()
    for _ in range(int(bound / 0.05)):
        if condition():
            return True
        pause.wait(0.05)
    return False


def post(url: str, key: str, doc_id: str, acl: list[str], text: str, replace: bool) -> httpx.Response:
    body = {"doc_id": doc_id, "version": "b1", "acl": acl, "text": text}
    params = {"replace": "true"} if replace else {}
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.post(f"{url}/v1/documents", json=body, params=params, headers=headers, timeout=REQUEST_S)


def race(
    gate: Path, admin_url: str, ka_urls: list[str], secrets: dict[str, str], doc_id: str
) -> list[httpx.Response]:
    """admin's write held in its transaction, ka's replaces sent meanwhile; every reply, admin's first."""
    (gate / "open").unlink(missing_ok=True)
    held, entered = marks(gate, "held"), marks(gate, "entered")
    replies: dict[int, httpx.Response] = {}

    def send(n: int, url: str, key: str, acl: list[str], text: str, replace: bool) -> None:
        replies[n] = post(url, key, doc_id, acl, text, replace)

    admin = threading.Thread(target=send, args=(0, admin_url, secrets["admin"], ["beta"], BETA_TEXT, False))
    admin.start()
    assert wait_for(lambda: marks(gate, "held") > held, REACHED_WITHIN_S), (
        "admin's write never reached its rows"
    )
    kas = [
        threading.Thread(target=send, args=(n, url, secrets["ka"], ["alpha"], KA_TEXT, True))
        for n, url in enumerate(ka_urls, start=1)
    ]
    for thread in kas:
        thread.start()
    # Until a replace of ka has been handed to a service (past the route's own work) while admin's
    # write is held: under --workers 2, one that reached admin's own worker may wait before that.
    wait_for(lambda: marks(gate, "entered") > entered + 1, ENTERED_WITHIN_S)
    (gate / "open").touch()
    for thread in (admin, *kas):
        thread.join(REQUEST_S)
    return [replies[n] for n in range(len(ka_urls) + 1)]


def assert_admin_kept_b1(location: Location, replies: list[httpx.Response], doc_id: str) -> None:
    admin, *kas = replies
    assert admin.status_code == 200, admin.text
    assert [(r.status_code, r.json().get("type")) for r in kas] == [REFUSED] * len(kas)
    with open_store(location) as store:
        snapshot = store.snapshot()
        assert (snapshot.parsed(doc_id, "b1").text, snapshot.acl(doc_id, "b1")) == (BETA_TEXT, ("beta",))


@contextmanager
def servers(
    tmp_path: Path, gate: Path, keys: Path, where: tuple[str, str], count: int, workers: int = 1
) -> Iterator[list[Server]]:
    with ExitStack() as stack:
        yield [
            stack.enter_context(contextmanager(served)(tmp_path, gate, keys, where, workers))
            for _ in range(count)
        ]


def test_a_replace_through_another_process_never_overwrites_a_version_held_under_another_acl(
    tmp_path: Path, keys: tuple[Path, dict[str, str]]
) -> None:
    index, gate = tmp_path / "index", tmp_path / "gate"
    gate.mkdir()
    seed(index, 1)
    with servers(tmp_path, gate, keys[0], ("--index", str(index)), 2) as (first, second):
        replies = race(gate, first.url, [second.url], keys[1], "race-0")

    assert_admin_kept_b1(index, replies, "race-0")


def test_under_two_worker_processes_no_interleaving_lets_a_replace_overwrite_a_version_it_cannot_hold(
    tmp_path: Path, keys: tuple[Path, dict[str, str]]
) -> None:
    index, gate = tmp_path / "index", tmp_path / "gate"
    gate.mkdir()
    seed(index, ROUNDS)
    with servers(tmp_path, gate, keys[0], ("--index", str(index)), 1, workers=2) as (server,):
        rounds = [
            race(gate, server.url, [server.url] * ATTEMPTS, keys[1], f"race-{n}") for n in range(ROUNDS)
        ]

    for n, replies in enumerate(rounds):
        assert_admin_kept_b1(index, replies, f"race-{n}")


def test_two_replicas_on_one_database_check_and_write_in_one_transaction(
    tmp_path: Path, pg_url: str, keys: tuple[Path, dict[str, str]]
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    seed(pg_url, 1)
    with servers(tmp_path, gate, keys[0], ("--store", pg_url), 2) as (first, second):
        replies = race(gate, first.url, [second.url], keys[1], "race-0")

    assert_admin_kept_b1(pg_url, replies, "race-0")
