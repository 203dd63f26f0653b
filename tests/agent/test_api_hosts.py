"""A real ``evloop serve`` answers only requests that name it in Host, and browsers only from its own
origin: a page on another site (a form POST, or DNS rebinding) can neither write nor read through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evidence_loop.agent.doors.api.hosts import HostRules
from evidence_loop.agent.doors.cli.app import main
from tests.agent.test_api_server import Server, add_key, start

pytestmark = pytest.mark.processes  # real server processes

EVIL = "http://evil.example"
STAFF_QUESTION = {"question": "员工购买学习设备有什么优惠？", "groups": ["staff"]}
ATTACK = "# 保修\n\nLM-S10 的整机保修期为99年，一律免费更换。\n"


@pytest.fixture
def local(tmp_path: Path, index: Path) -> Iterator[Server]:
    """No keys: the local caller, every group, the server a page in the user's browser would target."""
    yield from start(tmp_path, "--index", str(index), "--allow-origin", "https://help.example")


def port(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def upload(server: Server, **headers: str) -> httpx.Response:
    """What an HTML form on any page can make the browser send: no preflight for multipart."""
    files = {"file": ("warranty.md", ATTACK.encode(), "text/markdown")}
    return httpx.post(f"{server.url}/v1/documents", files=files, data={"version": "2"}, headers=headers)


def listed(server: Server) -> set[str]:
    return {d["doc_id"] for d in httpx.get(f"{server.url}/v1/documents").json()["documents"]}


def test_a_form_posted_from_another_site_under_a_rebound_host_writes_nothing(local: Server) -> None:
    response = upload(local, Host=f"evil.example:{port(local)}", Origin=EVIL)

    assert response.status_code == 421
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "urn:evloop:problem:host-not-allowed"
    assert "warranty" not in listed(local)


def test_a_form_posted_from_another_site_to_the_loopback_address_writes_nothing(local: Server) -> None:
    response = upload(local, Host=f"127.0.0.1:{port(local)}", Origin=EVIL)

    assert response.status_code == 403
    assert response.json()["type"] == "urn:evloop:problem:origin-not-allowed"
    assert "warranty" not in listed(local)


def test_a_rebound_name_cannot_read_what_a_group_may_read(local: Server) -> None:
    url = f"{local.url}/v1/ask"

    rebound = httpx.post(url, json=STAFF_QUESTION, headers={"Host": f"evil.example:{port(local)}"})
    own = httpx.post(url, json=STAFF_QUESTION, headers={"Host": f"localhost:{port(local)}"})

    assert rebound.status_code == 421 and "7折" not in rebound.text
    assert own.status_code == 200 and "7折" in own.text


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_the_loopback_names_with_the_port_and_the_own_origin_are_answered(local: Server, name: str) -> None:
    host = f"{name}:{port(local)}"

    response = upload(local, Host=host, Origin=f"http://{host}")

    assert response.status_code == 200, response.text
    assert "warranty" in listed(local)


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "localhost:1"},  # another port: another server
        {"Host": "localhost"},
        {"Host": "127.0.0.1.evil.example"},
        {"Origin": "null"},  # a sandboxed frame or a file:// page
        {"Origin": "http://127.0.0.1:1"},  # another service on this machine
    ],
)
def test_other_hosts_and_origins_are_refused(local: Server, headers: dict[str, str]) -> None:
    response = httpx.post(f"{local.url}/v1/ask", json=STAFF_QUESTION, headers=headers)

    assert response.status_code in (403, 421)
    assert response.json()["detail"]


def test_an_origin_the_operator_listed_is_accepted(local: Server) -> None:
    response = httpx.post(
        f"{local.url}/v1/ask", json=STAFF_QUESTION, headers={"Origin": "https://help.example"}
    )

    assert response.status_code == 200


def test_allowed_names_hold_in_every_worker_and_with_keys(
    tmp_path: Path, index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "tester", capsys, "--groups", "staff", "--scopes", "ask")
    args = ("--index", str(index), "--keys", str(keys), "--allow-host", "chat.internal")
    env = {"EVLOOP_ALLOW_ORIGINS": "https://help.example"}
    for server in start(tmp_path, *args, key=key, workers=2, env=env):
        auth = {"Authorization": f"Bearer {key}"}
        # A new connection each time, so that the requests spread over both workers.
        statuses = [
            httpx.post(f"{server.url}/v1/ask", json=STAFF_QUESTION, headers={**auth, **headers}).status_code
            for headers in (
                {"Host": f"evil.example:{port(server)}"},
                {"Host": "chat.internal"},
                {"Host": f"chat.internal:{port(server)}", "Origin": "https://help.example"},
                {"Origin": EVIL},
            )
            for _ in range(4)
        ]

        assert statuses == [421] * 4 + [200] * 8 + [403] * 4


@pytest.mark.parametrize(
    ("hosts", "origins"),
    [(("http://chat.internal",), ()), (("chat internal",), ()), ((), ("chat.internal",)), ((), ("ftp://x",))],
)
def test_a_host_or_origin_that_is_not_one_is_refused_at_start(
    hosts: tuple[str, ...], origins: tuple[str, ...]
) -> None:
    with pytest.raises(ValueError, match="is not"):
        HostRules.of("127.0.0.1", hosts, origins)


def test_serve_refuses_an_allowed_host_that_is_not_a_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["serve", "--index", str(tmp_path / "index"), "--allow-host", "https://x.example/"])

    assert code != 0
    assert "'https://x.example/' is not a host name" in capsys.readouterr().err
    assert not (tmp_path / "index").exists()
