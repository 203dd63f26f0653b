"""Group commit of trace files: runs finishing together share one folder sync, each returns only once
a sync that covers its own file has completed, and a crash leaves no half-written trace that verifies."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError
from evidence_loop.traces.journal.group_sync import GroupSync
from evidence_loop.traces.records.writer import TraceWriter
from evidence_loop.traces.stores.store import TraceStore
from tests.trace_support import run_killed_writer
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory

RUNS = 16
WAIT_S = 60.0  # bound on a thread's wait on a busy machine


def test_a_file_made_while_a_sync_is_in_flight_waits_for_the_next_one(tmp_path: Path) -> None:
    release, entered = threading.Event(), threading.Event()
    calls: list[int] = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        entered.set()
        release.wait(WAIT_S)

    sync = GroupSync(tmp_path, fsync)
    first = threading.Thread(target=sync.wait_covered, args=(sync.mark(),))
    first.start()
    assert entered.wait(WAIT_S)
    late_mark = sync.mark()  # a file made now: the sync in flight may have missed its entry
    late = threading.Thread(target=sync.wait_covered, args=(late_mark,))
    late.start()
    release.set()
    first.join(WAIT_S)
    late.join(WAIT_S)
    assert sync.syncs == 2 and len(calls) == 2


def test_runs_finishing_together_share_folder_syncs_and_each_returns_durable(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    log: list[tuple[str, int]] = []  # ("file" | "folder start" | "folder end" | "returned", inode)
    lock = threading.Lock()

    def fsync(fd: int) -> None:
        inode = os.fstat(fd).st_ino
        folder = os.path.isdir(f"/proc/self/fd/{fd}")
        with lock:
            log.append(("folder start" if folder else "file", inode))
        if folder:
            time.sleep(0.05)  # a slow disk: runs finishing meanwhile pile up behind it
            with lock:
                log.append(("folder end", inode))

    store = TraceStore(tmp_path / "traces", fsync=fsync, layout="files")
    writers = [store.begin(make_header(run_id=f"g-{n}")) for n in range(RUNS)]
    for writer in writers:
        for step in SAMPLE_STEPS:
            writer.append(step)
    start = threading.Barrier(RUNS)

    def finish(writer: TraceWriter) -> None:
        start.wait(WAIT_S)
        writer.finish("answered")
        with lock:
            log.append(("returned", writer.path.stat().st_ino))

    threads = [threading.Thread(target=finish, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)

    folder_syncs = [n for n, (what, _) in enumerate(log) if what == "folder end"]
    for writer in writers:
        inode = writer.path.stat().st_ino
        synced, returned = log.index(("file", inode)), log.index(("returned", inode))
        assert synced < returned and any(end < returned for end in folder_syncs)
        assert store.verify(writer.header.run_id).complete
    assert 1 <= len(folder_syncs) < RUNS


def test_two_runs_given_one_id_at_once_leave_one_trace(tmp_path: Path, make_header: HeaderFactory) -> None:
    store = TraceStore(tmp_path / "traces", layout="files")
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def begin() -> None:
        start.wait(WAIT_S)
        try:
            with store.begin(make_header(run_id="twice")) as writer:
                writer.finish("answered")
            outcomes.append("written")
        except InputError:
            outcomes.append("refused")

    threads = [threading.Thread(target=begin) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    assert sorted(outcomes) == ["refused", "written"]
    assert store.verify("twice").complete


CRASHING_WRITER = """
import os, sys, threading
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS
from tests.traces.test_group_sync import header

folder_syncs = 0
lock = threading.Lock()

def fsync(fd):
    global folder_syncs
    if os.path.isdir(f"/proc/self/fd/{fd}"):
        with lock:
            folder_syncs += 1
            if folder_syncs == int(sys.argv[2]):
                os._exit(9)  # the kill: mid-group, footers written, some runs not yet synced
    os.fsync(fd)

store = TraceStore(sys.argv[1], fsync=fsync, layout="files")

def run(n):
    with store.begin(header(f"c-{n}")) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        writer.finish("answered")
    sys.stdout.write(f"returned c-{n}\\n")  # one write: print's text and newline interleave across threads
    sys.stdout.flush()

threads = [threading.Thread(target=run, args=(n,)) for n in range(16)]
for t in threads: t.start()
for t in threads: t.join()
"""


def header(run_id: str) -> object:
    from tests.traces.conftest import CorpusInfo, TraceHeader

    return TraceHeader(
        run_id=run_id,
        created_at="2025-03-01T08:30:00Z",
        code_version="0.1.0",
        policy={},
        corpus=CorpusInfo(generation=1, fingerprint="f" * 24),
        question="q",
    )


@pytest.mark.parametrize("kill_at", [1, 2, 3])
def test_a_crash_mid_group_leaves_every_returned_run_complete_and_no_half_trace_verifying_complete(
    tmp_path: Path, kill_at: int
) -> None:
    root = tmp_path / "traces"
    child = run_killed_writer(CRASHING_WRITER, root, kill_at, WAIT_S)
    assert child.returncode == 9, child.stderr
    returned = {line.split()[1] for line in child.stdout.splitlines()}
    store = TraceStore(root)
    verdicts = dict(store.verify_all())
    unborn = {run for run, v in verdicts.items() if "killed as it began" in v.reason}
    assert verdicts and all(v.ok for run, v in verdicts.items() if run not in unborn)
    assert returned <= {run for run, v in verdicts.items() if v.complete}
    for run in set(verdicts) - unborn:
        trace = store.read(run)
        whole = trace.footer is not None and len(trace.events) == len(SAMPLE_STEPS)
        assert verdicts[run].complete == whole, run
