"""Keys without restarts: a keyring loaded from a file follows it, so `evloop keys add|remove` takes effect
on a running `serve` (every worker) and `mcp --http` within seconds; a broken file changes nothing."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from evidence_loop.agent.access import keys as auth
from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.cli.app import main
from tests.agent.test_api_server import Server, add_key, start
from tests.agent.test_mcp import start_http

# What the issue asks: a key added or revoked is accepted or refused within this many seconds.
WITHIN_S = 5.0
RELOADED = "keys reloaded from"


def keys_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    path = tmp_path / "keys.json"
    return path, add_key(path, "admin", capsys, "--scopes", "ask,ingest,publish")


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Look at the file on every request, and trust a file as soon as it is written (the tests need not
    wait out RELOAD_EVERY_S and _SETTLE_S)."""
    monkeypatch.setattr(auth, "RELOAD_EVERY_S", 0.0)
    monkeypatch.setattr(auth, "_SETTLE_S", -1.0)


# --- the keyring -------------------------------------------------------------------------------------


def test_a_key_added_to_the_file_is_accepted_without_loading_it_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at_once: None
) -> None:
    path, _ = keys_file(tmp_path, capsys)
    keyring = Keyring.load(path)
    new = add_key(path, "newbie", capsys, "--scopes", "ask")
    caller = keyring.authenticate(new)
    assert caller is not None and caller.name == "newbie"


def test_a_key_removed_from_the_file_is_refused_from_then_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at_once: None
) -> None:
    path, admin = keys_file(tmp_path, capsys)
    keyring = Keyring.load(path)
    assert main(["keys", "remove", "admin", "--file", str(path)]) == 0
    assert keyring.authenticate(admin) is None


def test_a_broken_keys_file_keeps_the_keys_loaded_before_and_says_why_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at_once: None, evloop_caplog: pytest.LogCaptureFixture
) -> None:
    path, admin = keys_file(tmp_path, capsys)
    keyring = Keyring.load(path)
    path.write_text('{"keys": [{"name": "x"', encoding="utf-8")
    with evloop_caplog.at_level(logging.WARNING, logger="evidence_loop"):
        callers = [keyring.authenticate(admin) for _ in range(3)]
    assert [c.name if c else None for c in callers] == ["admin", "admin", "admin"]
    said = [r.getMessage().split(";")[1] for r in evloop_caplog.records]
    assert said == [" keeping the 1 keys loaded before"]
    assert "not a JSON keys file" in evloop_caplog.records[0].getMessage()


def test_a_keys_file_that_is_gone_keeps_the_keys_loaded_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at_once: None
) -> None:
    path, admin = keys_file(tmp_path, capsys)
    keyring = Keyring.load(path)
    path.unlink()
    caller = keyring.authenticate(admin)
    assert caller is not None and caller.name == "admin"


def test_a_keyring_made_from_keys_holds_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, admin = keys_file(tmp_path, capsys)
    held = Keyring(Keyring.load(path).keys)
    path.unlink()
    assert held.authenticate(admin) is not None


# --- real processes ----------------------------------------------------------------------------------


def until(check: Callable[[], bool], within_s: float) -> float:
    """Seconds until ``check()`` held; fails past ``within_s`` plus a bound for a busy machine's replies."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < within_s + 60, f"not within {within_s} s"
        time.sleep(0.05)
    return time.monotonic() - started


def status(url: str, key: str) -> int:
    """The status of a request that needs an ask key and costs nothing: a trace that does not exist."""
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{url}/v1/traces/0000000000000000", headers=headers, timeout=60).status_code


def hammered(server: Server, key: str, stop: threading.Event, seen: list[int]) -> Iterator[threading.Thread]:
    """Two clients sending requests on fresh connections, so that both workers get some."""

    def send() -> None:
        while not stop.is_set():
            seen.append(status(server.url, key))

    threads = [threading.Thread(target=send, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    yield from threads


@pytest.mark.processes
def test_a_key_added_and_revoked_while_serve_runs_two_workers_is_accepted_and_refused_on_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: Path
) -> None:
    path, admin = keys_file(tmp_path, capsys)
    with contextmanager(start)(tmp_path, "--index", str(index), "--keys", str(path), workers=2) as server:
        reloads = server.log.read_text().count(RELOADED)
        new = add_key(path, "newbie", capsys, "--scopes", "ask")
        stop, seen = threading.Event(), []  # type: ignore[var-annotated]
        threads = list(hammered(server, new, stop, seen))
        try:
            took = until(lambda: server.log.read_text().count(RELOADED) >= reloads + 2, WITHIN_S)
            accepted = len(seen)
            until(lambda: len(seen) > accepted + 10, WITHIN_S)
            assert (took <= WITHIN_S, set(seen[accepted:])) == (True, {404})
            assert main(["keys", "remove", "newbie", "--file", str(path)]) == 0
            took = until(lambda: server.log.read_text().count(RELOADED) >= reloads + 4, WITHIN_S)
            refused = len(seen)
            until(lambda: len(seen) > refused + 10, WITHIN_S)
            assert (took <= WITHIN_S, set(seen[refused:])) == (True, {401})
        finally:
            stop.set()
            for thread in threads:
                thread.join(120)
        path.write_text("{broken", encoding="utf-8")
        assert {status(server.url, admin) for _ in range(20)} == {404}
        assert {status(server.url, new) for _ in range(20)} == {401}


@pytest.mark.processes
def test_a_key_added_and_revoked_while_mcp_http_runs_is_let_in_and_kept_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: Path
) -> None:
    path, _ = keys_file(tmp_path, capsys)
    with start_http(index, tmp_path / "mcp.log", "--keys", str(path)) as url:

        def gate(key: str) -> int:
            return httpx.post(
                url, json={}, headers={"Authorization": f"Bearer {key}"}, timeout=60
            ).status_code

        new = add_key(path, "newbie", capsys, "--scopes", "ask")
        assert until(lambda: gate(new) != 401, WITHIN_S) <= WITHIN_S
        assert main(["keys", "remove", "newbie", "--file", str(path)]) == 0
        assert until(lambda: gate(new) == 401, WITHIN_S) <= WITHIN_S


@pytest.fixture
def index(tmp_path: Path) -> Path:
    from evidence_loop.agent.doors.cli.sample import load_sample_kb
    from evidence_loop.agent.service import Service

    folder = tmp_path / "index"
    with Service.open(folder, create=True) as service:
        service.ingest(load_sample_kb())
    return folder
