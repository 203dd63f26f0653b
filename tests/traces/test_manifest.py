"""The day manifest: a finished run's end is recorded beside its trace, so a cut trace reads as
truncated (even with its index line gone), a run that never finished as incomplete, and
``verify_all`` checks every trace, however damaged one of them is."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.tools.errors import TraceStoreUnavailableError
from evidence_loop.traces import MANIFEST_NAME, FinishedRun, TraceStore, read_manifest
from evidence_loop.traces.journal.manifest import append_finished
from evidence_loop.traces.records.hashing import record_hash
from evidence_loop.traces.records.schema import TraceHeader
from evidence_loop.traces.verification.verify import HEADER_SEQ

RunWriter = Callable[..., Path]


def _keep_lines(path: Path, count: int) -> None:
    """Cut a trace file after its first ``count`` lines, as a truncation would."""
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:count]))


def test_finish_appends_the_runs_final_hash_and_event_count_to_its_days_manifest(
    store: TraceStore, write_run: RunWriter
) -> None:
    path = write_run()
    [(run_id, line)] = read_manifest(path.parent).items()
    assert (run_id, line.final_hash, line.events) == ("r-0001", store.read(path).final_hash, 8)
    assert [s.run_id for s in store.list()] == ["r-0001"], "the manifest is never taken for a trace"


def test_a_run_that_did_not_finish_has_no_manifest_line(store: TraceStore, write_run: RunWriter) -> None:
    path = write_run(finish=None)
    assert read_manifest(path.parent) == {}


def test_a_trace_cut_after_its_last_event_is_truncated_though_its_index_line_is_gone(
    store: TraceStore, write_run: RunWriter
) -> None:
    path = write_run()
    final = store.read(path).final_hash
    store.index_path.unlink()
    _keep_lines(path, 9)  # header and 8 events: the footer is gone
    result = store.verify("r-0001")
    assert (result.ok, result.complete, result.first_bad_seq) == (False, False, 8)
    assert (
        result.reason
        == f"truncated: the run finished with hash {final} at event 8 but the file ends at event 8"
    )


def test_a_trace_cut_after_its_header_is_truncated_though_its_index_line_is_gone(
    store: TraceStore, write_run: RunWriter
) -> None:
    path = write_run()
    store.index_path.write_bytes(b"")
    _keep_lines(path, 1)
    result = store.verify("r-0001")
    assert (result.ok, result.first_bad_seq) == (False, 0)
    assert result.reason.startswith("truncated:") and result.reason.endswith(
        "at event 8 but the file ends at event 0"
    )


def test_a_trace_cut_in_the_middle_of_a_line_is_truncated(store: TraceStore, write_run: RunWriter) -> None:
    path = write_run()
    store.index_path.unlink()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    result = store.verify("r-0001")
    assert not result.ok and result.reason.startswith("truncated:")


def test_a_crashed_run_with_no_final_record_verifies_as_incomplete(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_run(finish=None)
    result = store.verify("r-0001")
    assert (result.ok, result.complete, result.events) == (True, False, 8)
    assert "incomplete, the run did not finish" in result.reason


def test_a_footer_rewritten_with_a_fresh_hash_is_reported_as_rewritten(
    store: TraceStore, write_run: RunWriter
) -> None:
    path = write_run()
    store.index_path.unlink()
    lines = path.read_text(encoding="utf-8").splitlines()
    footer = json.loads(lines[-1])
    footer["outcome_status"] = "insufficient_evidence"
    footer["hash"] = record_hash(footer)
    lines[-1] = json.dumps(footer)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = store.verify("r-0001")
    assert not result.ok and result.reason.startswith("rewritten: the run finished with hash")


def test_a_torn_manifest_line_does_not_take_the_next_one_with_it(tmp_path: Path) -> None:
    (tmp_path / MANIFEST_NAME).write_bytes(b'{"run_id":"a","final_hash":"aa","ev')  # a power cut mid-line
    append_finished(tmp_path, FinishedRun("b", "bb", 3))
    append_finished(tmp_path, FinishedRun("c", "cc", 4))
    assert read_manifest(tmp_path) == {"b": FinishedRun("b", "bb", 3), "c": FinishedRun("c", "cc", 4)}
    assert read_manifest(tmp_path, only="c") == {"c": FinishedRun("c", "cc", 4)}


def test_the_manifest_is_not_fsynced_on_its_own_unless_every_line_is(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    for fsync_each in (False, True):
        synced: list[int] = []

        def fsync(fd: int, synced: list[int] = synced) -> None:
            synced.append(os.fstat(fd).st_ino)

        store = TraceStore(tmp_path / str(fsync_each), fsync=fsync, fsync_each=fsync_each)
        writer = store.begin(make_header())
        writer.finish("answered")
        manifest = writer.path.parent / MANIFEST_NAME
        assert (manifest.stat().st_ino in synced) is fsync_each


def test_a_failed_folder_sync_records_nothing_in_the_manifest(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(5, "folder sync failed")

    store = TraceStore(tmp_path, fsync=fsync, layout="files")
    writer = store.begin(make_header())
    with pytest.raises(TraceStoreUnavailableError, match="folder sync failed"):
        writer.finish("answered")
    assert read_manifest(writer.path.parent) == {}


def test_verify_all_checks_every_trace_past_one_whose_header_is_damaged(
    store: TraceStore, write_run: RunWriter
) -> None:
    paths = [write_run(f"r-{i}") for i in range(4)]
    header, rest = paths[0].read_bytes().split(b"\n", 1)
    paths[0].write_bytes(header[:-10] + b"\n" + rest)  # r-0 sorts first: it used to stop the check
    results = dict(store.verify_all())
    assert sorted(results) == ["r-0", "r-1", "r-2", "r-3"]
    assert [run for run, result in results.items() if not result.ok] == ["r-0"]
    assert results["r-0"].first_bad_seq == HEADER_SEQ and "header" in results["r-0"].reason


def test_verify_all_reports_a_finished_run_whose_file_is_gone(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_run("r-1")
    write_run("r-2").unlink()
    results = dict(store.verify_all())
    assert results["r-1"].ok and not results["r-2"].ok
    assert results["r-2"].reason.startswith("missing: the run finished with hash")
