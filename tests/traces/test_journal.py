"""The day journal: a day's finished runs are frames of one file per writing process, synced once per
commit group; a run is read by a seek to the offset its manifest line records; a frame torn at the
journal's end reads as an interrupted write, a changed byte as tampering; retention removes whole
days; a day holding runs of both layouts reads as one. Other processes writing the same folder:
``test_journal_processes``."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from datetime import date
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError, TraceStoreUnavailableError
from evidence_loop.traces import MANIFEST_NAME, prune, read_manifest
from evidence_loop.traces.journal.journal import JOURNAL_SUFFIX, frame_index
from evidence_loop.traces.reading.listing import RunLister
from evidence_loop.traces.stores.store import TraceStore
from tests.disk_support import small_disk
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory

WAIT_S = 60.0  # bound on a wait on a busy machine
DAY = "2025/03/01"


@pytest.fixture
def journal_store(tmp_path: Path) -> TraceStore:
    return TraceStore(tmp_path / "traces")


@pytest.fixture
def plain_store(tmp_path: Path) -> TraceStore:
    """Frames as written before they were compressed: the tests that edit a frame's records do so here
    (``test_journal_zlib`` edits compressed ones)."""
    return TraceStore(tmp_path / "plain", compress=None)


def write(
    store: TraceStore, make_header: HeaderFactory, run_id: str, *, finish: bool = True, **header: object
) -> str:
    with store.begin(make_header(run_id=run_id, **header)) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        return writer.finish("answered") if finish else ""


def journals(store: TraceStore) -> list[Path]:
    return sorted(store.root.rglob(f"*{JOURNAL_SUFFIX}"))


def test_runs_of_a_day_are_frames_of_one_journal_and_each_reads_back_as_written(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    finals = [write(journal_store, make_header, f"r-{n}") for n in range(3)]
    [journal] = journals(journal_store)
    assert journal.parent == journal_store.root / DAY
    assert list(journal_store.root.rglob("*.jsonl")) == [journal_store.index_path], "no file per run"
    assert [run for run, _, _ in frame_index(journal)] == ["r-0", "r-1", "r-2"]
    for n, final in enumerate(finals):
        trace = journal_store.read(f"r-{n}")
        assert (trace.complete, trace.final_hash, [e.data for e in trace.events]) == (
            True,
            final,
            SAMPLE_STEPS,
        )
        assert journal_store.verify(f"r-{n}").complete


def test_runs_finishing_together_share_one_sync_of_the_journal_and_each_returns_durable(
    journal_store: TraceStore, make_header: HeaderFactory, tmp_path: Path
) -> None:
    first_sync, release = threading.Event(), threading.Event()
    synced: list[int] = []  # the journal's size at each of its syncs
    log: list[tuple[str, int]] = []  # ("synced", journal size) and ("returned", frame offset), in order
    lock = threading.Lock()

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return
        first_sync.set()
        release.wait(WAIT_S)  # a slow disk: the runs finishing meanwhile pile up behind this sync
        with lock:
            synced.append(os.fstat(fd).st_size)
            log.append(("synced", synced[-1]))

    store = TraceStore(tmp_path / "slow", fsync=fsync)

    def run(n: int) -> None:
        write(store, make_header, f"g-{n}")
        with lock:
            log.append(("returned", read_manifest(store.root / DAY)[f"g-{n}"].offset or 0))

    leader = threading.Thread(target=run, args=(0,))
    leader.start()
    assert first_sync.wait(WAIT_S)
    followers = [threading.Thread(target=run, args=(n,)) for n in range(1, 6)]
    for thread in followers:
        thread.start()
    [journal] = journals(store)
    deadline = time.monotonic() + WAIT_S
    while len(frame_index(journal)) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)  # the followers' frames are written; they wait for the next sync
    release.set()
    for thread in [leader, *followers]:
        thread.join(WAIT_S)
    assert len(synced) == 2, "one sync for the leader's group, one for the five that finished during it"
    assert synced[-1] == journal.stat().st_size
    for at, (what, offset) in enumerate(log):
        if what == "returned":  # a sync that holds its frame completed before it returned
            assert any(w == "synced" and size > offset for w, size in log[:at]), log
    assert all(verdict.complete for _, verdict in store.verify_all())


def _cut_into_last_frame(store: TraceStore, run_id: str) -> Path:
    """What a kill mid-write leaves: the journal ends inside the frame of ``run_id``, a run that
    never got as far as its manifest and index lines."""
    [journal] = journals(store)
    offset = read_manifest(journal.parent)[run_id].offset
    assert offset is not None
    manifest = journal.parent / MANIFEST_NAME
    manifest.write_bytes(
        b"".join(
            line for line in manifest.read_bytes().splitlines(keepends=True) if run_id.encode() not in line
        )
    )
    store.index_path.unlink()
    with journal.open("r+b") as file:
        file.truncate(offset + 900)
    return journal


def test_a_frame_torn_at_the_end_of_the_journal_verifies_as_interrupted_not_tampered(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    write(journal_store, make_header, "r-done")
    write(journal_store, make_header, "r-killed")
    _cut_into_last_frame(journal_store, "r-killed")

    verdicts = dict(journal_store.verify_all())
    assert verdicts["r-done"].ok and verdicts["r-done"].complete
    killed = verdicts["r-killed"]
    assert (killed.ok, killed.complete, killed.written) == (True, False, False)
    assert killed.reason.startswith("interrupted: the journal ends inside this run's frame")


def test_a_frame_cut_short_of_the_end_its_manifest_recorded_is_truncated(
    plain_store: TraceStore, make_header: HeaderFactory
) -> None:
    write(plain_store, make_header, "r-done")
    final = write(plain_store, make_header, "r-cut")
    [journal] = journals(plain_store)
    with journal.open("r+b") as file:
        file.truncate(journal.stat().st_size - 200)  # into the footer

    verdict = dict(plain_store.verify_all())["r-cut"]
    assert (verdict.ok, verdict.first_bad_seq) == (False, 8)
    assert (
        verdict.reason
        == f"truncated: the run finished with hash {final} at event 8 but the file ends at event 8"
    )


def test_a_changed_byte_in_a_frame_is_tampering_with_its_events_and_the_other_runs_still_verify(
    plain_store: TraceStore, make_header: HeaderFactory
) -> None:
    for run in ("r-1", "r-2", "r-3"):
        write(plain_store, make_header, run)
    [journal] = journals(plain_store)
    content = journal.read_bytes()
    second = read_manifest(journal.parent)["r-2"].offset
    at = content.index(b'"move":"left"', second)
    journal.write_bytes(content[:at] + b'"move":"lefT"' + content[at + 13 :])

    verdicts = dict(plain_store.verify_all())
    assert (verdicts["r-2"].ok, verdicts["r-2"].first_bad_seq) == (False, 0)
    assert "the events changed" in verdicts["r-2"].reason
    assert verdicts["r-1"].complete and verdicts["r-3"].complete


def test_bytes_inserted_into_a_frame_fail_its_events_and_the_frames_after_it_still_verify(
    plain_store: TraceStore, make_header: HeaderFactory
) -> None:
    for run in ("r-1", "r-2", "r-3"):
        write(plain_store, make_header, run)
    [journal] = journals(plain_store)
    content = journal.read_bytes()
    at = content.index(b"different scopes", read_manifest(journal.parent)["r-2"].offset or 0)
    journal.write_bytes(content[:at] + b"quite " + content[at:])

    verdicts = dict(plain_store.verify_all())
    assert (verdicts["r-2"].ok, verdicts["r-2"].first_bad_seq) == (False, 0)
    assert verdicts["r-1"].complete and verdicts["r-3"].complete and len(verdicts) == 3
    assert "the events changed" in plain_store.verify("r-2").reason, (
        "read by id too, though its length changed"
    )


def test_bytes_that_are_no_frame_are_damage_and_the_frames_after_them_still_verify(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    write(journal_store, make_header, "r-1")
    write(journal_store, make_header, "r-2")
    [journal] = journals(journal_store)
    journal.write_bytes(b"stray bytes\n" + journal.read_bytes())  # every offset moves too

    verdicts = dict(journal_store.verify_all())
    assert [run for run, verdict in verdicts.items() if not verdict.ok] == [f"{journal.name}@0"]
    assert (
        verdicts[f"{journal.name}@0"].reason
        == f"damaged: bytes 0-12 of {journal.name} hold no frame (changed or inserted bytes)"
    )
    assert verdicts["r-1"].complete and verdicts["r-2"].complete
    assert journal_store.verify("r-2").complete, "found by a scan where its offset no longer points"


def _bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read through /proc/self/io")
def test_show_reads_the_frame_its_manifest_places_not_the_journal(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    for n in range(200):
        write(journal_store, make_header, f"r-{n:03d}")
    [journal] = journals(journal_store)
    before = _bytes_read()
    trace = journal_store.read("r-100")
    read = _bytes_read() - before
    manifest = (journal.parent / MANIFEST_NAME).stat().st_size
    assert trace.header.run_id == "r-100" and trace.complete
    assert read < manifest + 3 * len(journal_store.raw("r-100")) < journal.stat().st_size // 5


def test_show_finds_a_run_whose_manifest_line_is_gone_or_points_elsewhere(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    finals = {run: write(journal_store, make_header, run) for run in ("r-1", "r-2", "r-3")}
    manifest = journal_store.root / DAY / MANIFEST_NAME
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    lines[1]["offset"] = lines[0]["offset"]  # r-2 placed at r-1's frame: a stale or wrong index
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines[:2]))  # r-3's line lost
    assert {run: journal_store.read(run).final_hash for run in finals} == finals
    assert journal_store.verify("r-2").complete


def test_an_unfinished_run_is_a_frame_without_footer_listed_as_incomplete(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    write(journal_store, make_header, "r-done")
    crashed = make_header(run_id="r-crashed", created_at="2025-03-01T09:00:00Z")
    with pytest.raises(RuntimeError), journal_store.begin(crashed) as writer:
        writer.append(SAMPLE_STEPS[0])
        raise RuntimeError("index vanished")
    assert journal_store.read("r-crashed").events[-1].step == "aborted"
    assert [(s.run_id, s.status) for s in journal_store.list()] == [
        ("r-done", "complete"),
        ("r-crashed", "incomplete"),
    ]
    lister = RunLister(journal_store)
    assert [r.run_id for r in lister.page(lambda _: True)[0]] == ["r-done"]
    assert [r.run_id for r in lister.page(lambda _: True, unfinished=True)[0]] == ["r-crashed"]
    assert lister.page(lambda _: True)[0][0].latency_ms is not None


def test_retention_removes_whole_days_of_journals(
    journal_store: TraceStore, make_header: HeaderFactory
) -> None:
    for n in range(3):
        write(journal_store, make_header, f"old-{n}", created_at="2025-03-01T08:00:00Z")
    write(journal_store, make_header, "new-0", created_at="2025-03-02T08:00:00Z")

    report = prune(journal_store, date(2025, 3, 2), today=date(2025, 3, 3))
    assert (report.days, report.runs, report.kept_days) == (1, 3, 1)
    assert not (journal_store.root / DAY).exists()
    assert [s.run_id for s in journal_store.list()] == ["new-0"]
    assert [run for run, v in journal_store.verify_all() if v.complete] == ["new-0"]


def test_a_day_holding_runs_of_both_layouts_lists_shows_and_verifies_as_one(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    root = tmp_path / "traces"
    old = TraceStore(root, layout="files")
    write(old, make_header, "r-file", created_at="2025-03-01T08:00:00Z")
    new = TraceStore(root)
    write(new, make_header, "r-frame", created_at="2025-03-01T09:00:00Z")

    assert (root / DAY / "r-file.jsonl").is_file() and len(journals(new)) == 1
    assert [s.run_id for s in new.list()] == ["r-file", "r-frame"]
    assert {run: v.complete for run, v in new.verify_all()} == {"r-file": True, "r-frame": True}
    assert new.read("r-file").records == old.read("r-file").records
    assert [r.run_id for r in RunLister(new).page(lambda _: True)[0]] == ["r-frame", "r-file"]


def test_a_run_whose_frame_cannot_be_synced_fails_closed_and_the_next_run_takes_a_new_journal(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    failures = [OSError(5, "sync failed")]

    def fsync(fd: int) -> None:
        if failures and not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise failures.pop()

    store = TraceStore(tmp_path / "traces", fsync=fsync)
    with pytest.raises(TraceStoreUnavailableError, match="sync failed"):
        write(store, make_header, "r-unsynced")
    assert "r-unsynced" not in read_manifest(store.root / DAY), (
        "a run not durable is not recorded as finished"
    )
    write(store, make_header, "r-next")
    assert len(journals(store)) == 2
    assert dict(store.verify_all())["r-next"].complete


def test_a_run_id_in_use_on_its_day_is_refused_going_on_finished_or_by_another_process(
    journal_store: TraceStore, make_header: HeaderFactory, tmp_path: Path
) -> None:
    going = journal_store.begin(make_header(run_id="r-1"))
    with pytest.raises(InputError, match="already has a trace"):
        journal_store.begin(make_header(run_id="r-1"))
    going.finish("answered")
    with pytest.raises(InputError, match="already has a trace"):
        journal_store.begin(make_header(run_id="r-1", created_at="2025-03-01T09:00:00Z"))
    another = TraceStore(journal_store.root)  # another process's store on the same folder
    with pytest.raises(InputError, match="already has a trace"):
        another.begin(make_header(run_id="r-1", created_at="2025-03-01T10:00:00Z"))


def test_a_full_disk_refuses_the_run_and_leaves_the_journal_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_header: HeaderFactory
) -> None:
    with small_disk(tmp_path, monkeypatch, size_kb=512) as disk:
        store = TraceStore(disk.folder / "traces")
        write(store, make_header, "before")
        disk.fill()
        with pytest.raises(TraceStoreUnavailableError, match="no space left on the disk"):
            write(store, make_header, "r-full")
        assert store.probe(failed=True) is not None, "not writable while the disk is full"
        assert {run: v.complete for run, v in store.verify_all()} == {"before": True}

        disk.free()
        assert store.probe(failed=True) is None
        write(store, make_header, "r-after")
        assert {run: v.complete for run, v in store.verify_all()} == {"before": True, "r-after": True}
