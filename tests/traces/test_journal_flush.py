"""The journal synced by its own thread (``TraceStore(..., sync_within=...)``): a run returns once its
frame is written, the thread makes it durable within the window, runs written together share its
sync and keep their order, a failed sync is logged with its runs, and a process killed once its run
returned loses nothing."""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from pathlib import Path

import pytest

from evidence_loop.traces import read_manifest
from evidence_loop.traces.journal.journal import frame_index
from evidence_loop.traces.stores.store import TraceStore
from tests.trace_support import run_killed_writer
from tests.traces.conftest import HeaderFactory
from tests.traces.test_journal import DAY, WAIT_S, journals, write


def _wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_run_returns_before_its_frame_is_synced_and_the_journal_thread_syncs_it(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    release = threading.Event()
    synced: list[int] = []  # the journal's size at each sync that completed

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return
        release.wait(WAIT_S)  # a slow disk: the sync is still in flight when the run returns
        synced.append(os.fstat(fd).st_size)

    store = TraceStore(tmp_path / "traces", fsync=fsync, sync_within=0.001)
    final = write(store, make_header, "r-1")
    assert synced == [], "the run returned without waiting for the sync"
    assert read_manifest(store.root / DAY)["r-1"].final_hash == final
    release.set()
    [journal] = journals(store)
    _wait_for(lambda: synced and synced[-1] == journal.stat().st_size, "the thread synced the frame")
    store.close()
    assert dict(store.verify_all())["r-1"].complete


def test_runs_of_several_writers_share_the_thread_syncs_and_keep_their_order(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    syncs: list[int] = []
    release = threading.Event()

    def fsync(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            release.wait(WAIT_S)  # a slow disk: every run returns while the first sync is in flight
            syncs.append(os.fstat(fd).st_size)

    store = TraceStore(tmp_path / "traces", fsync=fsync, sync_within=0.001)

    def writer(name: str) -> None:
        for n in range(10):
            write(store, make_header, f"{name}-{n}")

    threads = [threading.Thread(target=writer, args=(name,)) for name in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    release.set()
    store.close()
    [journal] = journals(store)
    order = [run_id for run_id, _, _ in frame_index(journal)]
    for name in "abcd":
        assert [r for r in order if r.startswith(name)] == [f"{name}-{n}" for n in range(10)]
    assert syncs[-1] == journal.stat().st_size, "closing the store synced every frame"
    # the first sync, the one covering the 39 runs written during it, and the closing anchor's
    assert len(syncs) <= 3, syncs
    assert all(verdict.complete for _, verdict in store.verify_all())
    assert [(name, v.ok) for name, v in store.verify_chain()] == [("run chain", True)]


def test_a_failed_sync_of_the_journal_thread_is_logged_with_its_runs_and_the_next_run_takes_a_new_journal(
    tmp_path: Path, make_header: HeaderFactory, evloop_caplog: pytest.LogCaptureFixture
) -> None:
    failures = [OSError(5, "sync failed")]

    def fsync(fd: int) -> None:
        if failures and not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise failures.pop()

    store = TraceStore(tmp_path / "traces", fsync=fsync, sync_within=0.001)
    write(store, make_header, "r-answered")
    _wait_for(lambda: not failures and any("r-answered" in r.getMessage() for r in evloop_caplog.records),
              "the failed sync was logged naming the run")  # fmt: skip
    [record] = [r for r in evloop_caplog.records if "r-answered" in r.getMessage()]
    assert record.levelname == "ERROR" and "sync failed" in record.getMessage()
    write(store, make_header, "r-next")
    store.close()
    assert len(journals(store)) == 2, "a journal whose sync failed takes no more frames"
    assert dict(store.verify_all())["r-next"].complete


KILLED_AFTER_ITS_RUN = """
import os, signal, sys
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS
from tests.traces.test_group_sync import header

store = TraceStore(sys.argv[1], fsync=os.fdatasync, sync_within=60.0)  # no sync before the kill
for n in range(int(sys.argv[2])):
    with store.begin(header(f"k-{n}")) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        print(f"k-{n}", writer.finish("answered"), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_a_process_killed_once_its_runs_returned_loses_none_of_them(tmp_path: Path) -> None:
    root = tmp_path / "traces"
    done = run_killed_writer(KILLED_AFTER_ITS_RUN, root, 5, WAIT_S * 2)
    assert done.returncode == -signal.SIGKILL, done.stderr
    answered = dict(line.split() for line in done.stdout.splitlines())
    assert len(answered) == 5
    store = TraceStore(root)
    verdicts = dict(store.verify_all())
    assert set(verdicts) == set(answered) and all(v.complete for v in verdicts.values())
    manifest = read_manifest(root / DAY)
    assert {run_id: manifest[run_id].final_hash for run_id in answered} == answered
    assert [(name, v.ok) for name, v in store.verify_chain()] == [("run chain", True)]
