"""A sync killed with kill -9 leaves the knowledge base as it was before or as it is after, never a mix:
`evloop ingest FOLDER --prune` in real processes, on both backends, killed at each stage of its write
and from outside while it embeds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.tools.store.location import Location, open_store
from tests.damage_support import ROOT
from tests.fake_embedding_server import FakeEmbeddingServer

pytestmark = pytest.mark.processes

# The CLI's own code, with the store it opens killing its process when the write reaches a stage.
KILLED_SYNC = """
import sys
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.commands import ingest
from evidence_loop.tools.store.location import open_store
from tests.damage_support import kill_at

stage, where, location, folder = sys.argv[1:5]
ingest.open_store = lambda *a, **k: open_store(*a, **k, checkpoint=kill_at(stage))
sys.exit(main(["ingest", folder, "--prune", where, location]))
"""
# Bound on waiting for the killed sync to reach its embedding: a busy 2-core machine meets it.
WAIT_S = 120.0


def article(i: int, years: int | None = None) -> str:
    return f"# Model LM-B{i:02d}\n\nThe LM-B{i:02d} has a warranty of {years or i + 1} years.\n"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for i in range(20):
        (folder / f"lm-b{i:02d}.md").write_text(article(i), encoding="utf-8")
    return folder


def flag(location: Location) -> list[str]:
    return ["--store", location] if isinstance(location, str) else ["--index", str(location)]


def state(location: Location) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each live document's current version and every version it has."""
    with open_store(location) as store:
        return {d.doc_id: (d.current_version, d.versions) for d in store.documents()}


def edit(kb: Path) -> None:
    """One file changed, one deleted, one added."""
    (kb / "lm-b05.md").write_text(article(5, years=9), encoding="utf-8")
    (kb / "lm-b06.md").unlink()
    (kb / "lm-b99.md").write_text(article(99), encoding="utf-8")


def expected_after(before: dict[str, tuple[str, tuple[str, ...]]]) -> dict[str, tuple[str, tuple[str, ...]]]:
    after = {doc_id: v for doc_id, v in before.items() if doc_id != "lm-b06"}
    return {**after, "lm-b05": ("2", ("1", "2")), "lm-b99": ("1", ("1",))}


@pytest.mark.parametrize("stage", ["rows", "index", "commit"])
def test_a_sync_killed_at_a_stage_of_its_write_leaves_the_state_before_or_after_it(
    kb: Path, store_location: Location, stage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(kb), *flag(store_location)]) == 0
    before = state(store_location)
    edit(kb)

    command = [sys.executable, "-c", KILLED_SYNC, stage, *flag(store_location), str(kb)]
    killed = subprocess.run(command, cwd=ROOT, timeout=WAIT_S, check=False, capture_output=True)

    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert state(store_location) == (expected_after(before) if stage == "commit" else before)
    if not isinstance(store_location, str):  # `evloop check` looks at a folder's files and rows
        assert main(["check", *flag(store_location)]) == 0
    capsys.readouterr()


@pytest.fixture
def slow_endpoint() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer(delay_s=0.5).start()
    yield server
    server.stop()


def test_a_sync_killed_from_outside_while_it_embeds_leaves_the_state_before_it(
    kb: Path, store_location: Location, slow_endpoint: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in slow_endpoint.environ.items():
        monkeypatch.setenv(name, value)
    assert main(["ingest", str(kb), *flag(store_location), "--no-progress"]) == 0
    before = state(store_location)
    for i in range(20, 40):  # twenty new articles: their embedding takes several slow requests
        (kb / f"lm-b{i:02d}.md").write_text(
            article(i) + "A second sentence.\nA third one.\n", encoding="utf-8"
        )
    edit(kb)
    sent = len(slow_endpoint.passages)
    env = {**os.environ, **slow_endpoint.environ}
    command = [
        sys.executable,
        "-m",
        "evidence_loop.agent.doors.cli.app",
        "ingest",
        str(kb),
        "--prune",
        *flag(store_location),
    ]
    sync = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT_S
        while len([t for t in slow_endpoint.passages[sent:] if "LM-B" in t]) < 8:
            assert sync.poll() is None and time.monotonic() < deadline, "the sync never reached its embedding"
            time.sleep(0.05)
        sync.send_signal(signal.SIGKILL)
    finally:
        sync.wait(WAIT_S)

    assert sync.returncode == -signal.SIGKILL
    assert state(store_location) == before
