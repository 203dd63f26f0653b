"""The lines a finished run adds to the day manifest and the index, appended through descriptors the
store keeps open: still right after many runs, across days, when another process writes, tears a
line or replaces the index, when a day folder goes, and when the writing process is killed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError
from evidence_loop.traces import MANIFEST_NAME, TraceStore, read_manifest
from evidence_loop.traces.journal.manifest import FinishedRun, append_finished
from evidence_loop.traces.records.schema import TraceHeader
from tests.traces.conftest import SAMPLE_STEPS

HeaderFactory = Callable[..., TraceHeader]


def _run(store: TraceStore, make_header: HeaderFactory, run_id: str, day: str = "2025-03-01") -> str:
    writer = store.begin(make_header(run_id=run_id, created_at=f"{day}T08:30:00Z"))
    with writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        return writer.finish("answered")


def _index(store: TraceStore) -> list[dict[str, object]]:
    return [json.loads(line) for line in store.index_path.read_text(encoding="utf-8").splitlines()]


def test_many_runs_over_two_days_each_have_their_manifest_and_index_line(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    store = TraceStore(tmp_path / "traces")
    finals = {}
    for n in range(60):
        run_id = f"r-{n:04d}"
        finals[run_id] = _run(store, make_header, run_id, "2025-03-01" if n % 3 else "2025-03-02")
    for day, names in (("01", {r for i, r in enumerate(finals) if i % 3}), ("02", set(list(finals)[::3]))):
        manifest = read_manifest(store.root / "2025" / "03" / day)
        assert set(manifest) == names
        assert all(manifest[r].final_hash == finals[r] and manifest[r].offset is not None for r in names)
    assert [line["run_id"] for line in _index(store)] == list(finals)
    assert {line["final_hash"] for line in _index(store)} == set(finals.values())
    store.close()
    reopened = TraceStore(tmp_path / "traces")  # read by another store: the manifests place every frame
    assert all(reopened.verify(r).ok and reopened.read(r).final_hash == h for r, h in finals.items())
    for run_id in ("r-0001", "r-0003"):
        with pytest.raises(InputError, match="already has a trace"):
            store.begin(make_header(run_id=run_id, created_at="2025-03-02T09:00:00Z"))


def test_a_run_id_another_process_finished_between_this_stores_runs_is_refused(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    store = TraceStore(tmp_path / "traces")
    _run(store, make_header, "r-0001")
    _run(store, make_header, "r-0002")
    day = store.root / "2025" / "03" / "01"
    with store.begin(make_header(run_id="r-0003")) as writer:
        writer.append(SAMPLE_STEPS[0])
        # another process's runs finish while this one goes on: their lines come before its own
        append_finished(day, FinishedRun("r-other", "0" * 64, 3))
        append_finished(day, FinishedRun("r-more", "1" * 64, 3))
        writer.finish("answered")
    _run(store, make_header, "r-0004")
    for run_id in ("r-other", "r-more"):
        with pytest.raises(InputError, match="already has a trace"):
            store.begin(make_header(run_id=run_id))
    assert list(read_manifest(day)) == ["r-0001", "r-0002", "r-other", "r-more", "r-0003", "r-0004"]


def test_a_line_torn_by_another_process_leaves_the_next_runs_index_line_whole(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    store = TraceStore(tmp_path / "traces")
    _run(store, make_header, "r-0001")
    with store.index_path.open("ab") as index:
        index.write(b'{"run_id":"r-killed","crea')  # a process killed mid-write
    _run(store, make_header, "r-0002")
    lines = store.index_path.read_bytes().split(b"\n")
    assert lines[1] == b'{"run_id":"r-killed","crea' and json.loads(lines[2])["run_id"] == "r-0002"
    assert [s.run_id for s in store.list()] == ["r-0001", "r-0002"]


def test_an_index_rewritten_or_removed_between_runs_gets_the_next_runs_line(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    store = TraceStore(tmp_path / "traces")
    _run(store, make_header, "r-0001")
    _run(store, make_header, "r-0002")
    store.rewrite_index(lambda summary: summary.run_id == "r-0002")  # a new file renamed over it
    _run(store, make_header, "r-0003")
    assert [line["run_id"] for line in _index(store)] == ["r-0002", "r-0003"]
    store.index_path.unlink()
    _run(store, make_header, "r-0004")
    assert [line["run_id"] for line in _index(store)] == ["r-0004"]


def test_a_day_removed_and_made_again_gets_a_new_manifest(tmp_path: Path, make_header: HeaderFactory) -> None:
    store = TraceStore(tmp_path / "traces", layout="files")  # a journal stays open with its day
    _run(store, make_header, "r-0001")
    day = store.root / "2025" / "03" / "01"
    shutil.rmtree(day)  # retention removed the day while this store kept its manifest open
    _run(store, make_header, "r-0002")
    assert list(read_manifest(day)) == ["r-0002"]
    assert store.verify("r-0002").ok


def test_lines_of_runs_finished_before_a_kill_are_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "traces"
    script = f"""
import os, signal
from pathlib import Path
from evidence_loop.traces import TraceStore
from evidence_loop.traces.records.schema import CorpusInfo, TraceHeader
from tests.traces.conftest import SAMPLE_STEPS
store = TraceStore(Path({str(root)!r}))
for n in range(5):
    header = TraceHeader(run_id=f"r-{{n}}", created_at="2025-03-01T08:30:00Z", code_version="0",
                         policy={{"a": 1}}, corpus=CorpusInfo(generation=1, fingerprint="f"), question="q")
    writer = store.begin(header)
    for step in SAMPLE_STEPS:
        writer.append(step)
    writer.finish("answered")
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2], check=False)
    assert done.returncode == -9
    store = TraceStore(root)
    runs = [f"r-{n}" for n in range(5)]
    assert list(read_manifest(root / "2025" / "03" / "01")) == runs
    assert [line["run_id"] for line in _index(store)] == runs
    assert all(store.verify(r).ok for r in runs)
    assert (root / "2025" / "03" / "01" / MANIFEST_NAME).read_bytes().endswith(b"\n")
