"""The day journal with other processes on the same folder: two writer processes lose no run (a
journal each), a kill in the middle of a commit group leaves every run that returned complete, and
readers see no failure while another process appends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_loop.traces import read_manifest
from evidence_loop.traces.reading.listing import RunLister
from evidence_loop.traces.stores.store import TraceStore
from tests.trace_support import run_killed_writer
from tests.traces.conftest import HeaderFactory
from tests.traces.test_journal import DAY, WAIT_S, journals, write

TWO_WRITERS = """
import sys, threading
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS
from tests.traces.test_group_sync import header

store = TraceStore(sys.argv[1])
name = sys.argv[2]

def run(thread):
    for n in range(25):
        with store.begin(header(f"{name}-{thread}-{n}")) as writer:
            for step in SAMPLE_STEPS:
                writer.append(step)
            writer.finish("answered")

threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
for t in threads: t.start()
for t in threads: t.join()
"""


def test_two_writer_processes_on_one_folder_lose_no_run(tmp_path: Path) -> None:
    root = tmp_path / "traces"
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", TWO_WRITERS, str(root), name], cwd=repo, env=env, stderr=subprocess.PIPE
        )
        for name in ("a", "b")
    ]
    for child in children:
        assert child.wait(WAIT_S * 4) == 0, child.stderr.read() if child.stderr else ""
        if child.stderr:
            child.stderr.close()
    store = TraceStore(root)
    expected = {f"{name}-{t}-{n}" for name in "ab" for t in range(4) for n in range(25)}
    verdicts = dict(store.verify_all())
    assert len(journals(store)) == 2, "a journal per writing process"
    assert set(verdicts) == expected and all(v.complete for v in verdicts.values())
    assert set(read_manifest(root / DAY)) == expected
    assert {s.run_id for s in store.list() if s.status == "complete"} == expected
    assert [(name, v.ok) for name, v in store.verify_chain()] == [("run chain", True)], "a chain per journal"


CRASHING_WRITER = """
import os, stat, sys, threading
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS
from tests.traces.test_group_sync import header

syncs = 0
lock = threading.Lock()

def fsync(fd):
    global syncs
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        with lock:
            syncs += 1
            if syncs == int(sys.argv[2]):
                os._exit(9)  # the kill: mid-group, frames written, some runs not yet synced
    os.fsync(fd)

store = TraceStore(sys.argv[1], fsync=fsync)

def run(n):
    with store.begin(header(f"c-{n}")) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        writer.finish("answered")
    sys.stdout.write(f"returned c-{n}\\n")
    sys.stdout.flush()

for wave in range(4):  # each wave needs a sync of its own: the kill always comes
    threads = [threading.Thread(target=run, args=(4 * wave + n,)) for n in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
"""


@pytest.mark.parametrize("kill_at", [1, 2, 3])
def test_a_kill_mid_group_leaves_every_returned_run_complete_and_nothing_failing(
    tmp_path: Path, kill_at: int
) -> None:
    root = tmp_path / "traces"
    child = run_killed_writer(CRASHING_WRITER, root, kill_at, WAIT_S)
    assert child.returncode == 9, child.stderr
    returned = {line.split()[1] for line in child.stdout.splitlines()}
    store = TraceStore(root)
    verdicts = dict(store.verify_all())
    assert journals(store) and not list(root.rglob("c-*"))
    assert verdicts and all(v.ok for v in verdicts.values())
    assert returned <= {run for run, v in verdicts.items() if v.complete}
    assert [(name, v.ok) for name, v in store.verify_chain()] == [("run chain", True)], "a kill is no break"


APPENDING_WRITER = """
import sys
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS
from tests.traces.test_group_sync import header

store = TraceStore(sys.argv[1])
for n in range(int(sys.argv[2])):
    with store.begin(header(f"w-{n}")) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        writer.finish("answered")
"""


def test_readers_while_another_process_appends_see_no_failure_and_every_listed_run_whole(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    root = tmp_path / "traces"
    store = TraceStore(root)
    write(store, make_header, "first")  # the day exists before the writer starts
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    writer = subprocess.Popen([sys.executable, "-c", APPENDING_WRITER, str(root), "300"], cwd=repo, env=env)
    reader = TraceStore(root)
    rounds = 0
    try:
        while writer.poll() is None or rounds < 2:
            rounds += 1
            verdicts = dict(reader.verify_all())
            assert all(v.ok for v in verdicts.values()), [
                (r, v.reason) for r, v in verdicts.items() if not v.ok
            ]
            rows, _ = RunLister(reader).page(lambda _: True, size=20)
            assert all(row.finished and row.status == "answered" for row in rows)
            summaries = reader.list()
            assert all(s.status in ("complete", "incomplete") for s in summaries)
    finally:
        assert writer.wait(WAIT_S * 4) == 0
    assert rounds >= 2, rounds
    assert len(journals(reader)) == 2, "this process's journal and the writer's"
    assert {run for run, v in reader.verify_all() if v.complete} == {"first", *(f"w-{n}" for n in range(300))}
