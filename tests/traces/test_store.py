"""The store and writer: one durable, append-only file per run, read back exactly as written."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError, NotFoundError, TraceError, TraceStoreUnavailableError
from evidence_loop.traces.records.schema import CHAINED_SCHEMA, SCHEMA_VERSION, TraceEvent, TraceHeader
from evidence_loop.traces.records.steps import AbortedStep, TraceStep
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import EXAMPLES

Steps = list[TraceStep]


def test_a_written_trace_reads_back_equal(
    store: TraceStore, make_header: Callable[..., TraceHeader], sample_steps: Steps
) -> None:
    with store.begin(make_header()) as writer:
        hashes = [writer.append(step) for step in sample_steps]
        final = writer.finish("answered")
    trace = store.read("r-0001")
    assert (trace.header, [e.data for e in trace.events], trace.complete) == (
        writer.header,
        sample_steps,
        True,
    )
    assert [e.hash for e in trace.events] == hashes
    assert trace.footer is not None
    assert (trace.footer.hash, trace.footer.outcome_status, trace.footer.events) == (final, "answered", 8)


def test_events_are_numbered_from_zero_and_linked_to_their_predecessor(
    store: TraceStore, make_header: Callable[..., TraceHeader]
) -> None:
    with store.begin(make_header()) as writer:
        writer.append(EXAMPLES["recalled"])
        writer.append(EXAMPLES["checked"])
    first, second = store.read("r-0001").events
    assert (first.seq, second.seq) == (0, 1)
    assert (first.prev_hash, second.prev_hash) == (writer.header.hash, first.hash)


def test_trace_file_lives_under_its_utc_day(
    store: TraceStore, make_header: Callable[..., TraceHeader]
) -> None:
    with store.begin(make_header(created_at="2025-12-31T23:59:59+00:00")) as writer:
        writer.finish("answered")
    assert store.path("r-0001") == store.root / "2025" / "12" / "31" / "r-0001.jsonl"


def test_a_run_of_its_own_file_is_written_in_the_chained_schema_with_a_hash(
    store: TraceStore, make_header: Callable[..., TraceHeader]
) -> None:
    with store.begin(make_header()) as writer:
        pass
    assert writer.header.schema_version == CHAINED_SCHEMA
    assert len(writer.header.hash) == 64


def test_a_journal_run_that_finishes_is_written_in_the_current_schema(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    journal = TraceStore(tmp_path / "journal")
    with journal.begin(make_header()) as writer:
        writer.finish("answered")
    assert journal.read("r-0001").header.schema_version == SCHEMA_VERSION


def test_policy_hash_is_filled_in_from_the_policy(make_header: Callable[..., TraceHeader]) -> None:
    assert make_header(policy={"a": 1}).policy_hash != make_header(policy={"a": 2}).policy_hash


def test_llm_settings_holding_a_secret_are_refused(make_header: Callable[..., TraceHeader]) -> None:
    with pytest.raises(ValueError, match="api_key"):
        make_header(llm={"model": "m", "api_key": "sk-123"})


def test_llm_settings_may_name_token_limits(make_header: Callable[..., TraceHeader]) -> None:
    assert make_header(llm={"model": "m", "quirks": {"max_tokens": 512}}).llm["quirks"] == {"max_tokens": 512}


def test_created_at_must_be_utc(make_header: Callable[..., TraceHeader]) -> None:
    with pytest.raises(ValueError, match="not in UTC"):
        make_header(created_at="2025-03-01T08:30:00+08:00")


def test_finish_fsyncs_the_trace_before_returning(
    tmp_path: Path, make_header: Callable[..., TraceHeader], sample_steps: Steps
) -> None:
    synced: list[int] = []  # inode of every file or folder synced

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)

    store = TraceStore(tmp_path, fsync=fsync, layout="files")
    writer = store.begin(make_header())
    for step in sample_steps:
        writer.append(step)
    file_inode = writer.path.stat().st_ino
    assert synced == [], "nothing is synced before finish"
    writer.finish("answered")
    assert synced.count(file_inode) == 1
    assert writer.path.parent.stat().st_ino in synced, "the new file's folder entry is made durable too"


def test_fsync_each_syncs_every_line(
    tmp_path: Path, make_header: Callable[..., TraceHeader], sample_steps: Steps
) -> None:
    synced: list[int] = []
    store = TraceStore(tmp_path, fsync_each=True, fsync=synced.append)
    with store.begin(make_header()) as writer:
        after_header = len(synced)
        for step in sample_steps:
            writer.append(step)
        assert len(synced) - after_header == len(sample_steps)


def test_a_finished_trace_is_readable_from_another_process(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run()
    script = (
        "import sys; from pathlib import Path; from traces import read_trace, verify;"
        "t = read_trace(Path(sys.argv[1])); r = verify(t); print(t.complete, r.ok, len(t.events))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "True", "8"]


def test_an_exception_leaves_an_incomplete_trace_ending_in_an_aborted_event(
    store: TraceStore, make_header: Callable[..., TraceHeader]
) -> None:
    with pytest.raises(RuntimeError), store.begin(make_header()) as writer:
        writer.append(EXAMPLES["recalled"])
        raise RuntimeError("index vanished")
    trace = store.read("r-0001")
    assert not trace.complete
    assert trace.events[-1].data == AbortedStep(error="RuntimeError", message="index vanished")


def test_no_event_is_taken_after_finish(store: TraceStore, make_header: Callable[..., TraceHeader]) -> None:
    writer = store.begin(make_header())
    writer.finish("answered")
    with pytest.raises(TraceError, match="finished"):
        writer.append(EXAMPLES["recalled"])


def test_finish_adds_one_line_to_the_index(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run()
    [line] = store.index_path.read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert (entry["run_id"], entry["status"], entry["outcome_status"], entry["events"]) == (
        "r-0001",
        "complete",
        "answered",
        8,
    )
    assert entry["bytes"] == path.stat().st_size
    assert entry["final_hash"] == store.read("r-0001").final_hash


def test_a_run_id_cannot_be_reused(store: TraceStore, make_header: Callable[..., TraceHeader]) -> None:
    store.begin(make_header(created_at="2025-03-01T08:30:00Z")).close()
    with pytest.raises(InputError, match="already has a trace"):
        store.begin(make_header(created_at="2025-03-02T08:30:00Z"))


@pytest.mark.parametrize("run_id", ["../escape", "a/b", "", ".hidden", "x" * 200])
def test_run_ids_unusable_as_file_names_are_refused(store: TraceStore, run_id: str) -> None:
    with pytest.raises(InputError, match="run id"):
        store.path(run_id)


def test_an_unknown_run_id_is_not_found(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run()
    with pytest.raises(NotFoundError, match="r-9999"):
        store.read("r-9999")


def test_a_trace_can_be_read_by_its_path(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run()
    assert store.read(path).header.run_id == store.read(str(path)).header.run_id == "r-0001"


def test_each_event_is_one_line_on_disk(store: TraceStore, write_run: Callable[..., Path]) -> None:
    lines = write_run().read_text(encoding="utf-8").splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == ["header"] + ["event"] * 8 + ["footer"]


def test_non_ascii_text_is_stored_unescaped(store: TraceStore, write_run: Callable[..., Path]) -> None:
    assert "课程开始前可以退款吗" in write_run().read_text(encoding="utf-8")


def test_event_models_match_the_file_records(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run()
    second_line = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    assert TraceEvent.model_validate(second_line) == store.read("r-0001").events[0]


def test_a_failed_folder_sync_fails_finish(
    tmp_path: Path, make_header: Callable[..., TraceHeader], sample_steps: Steps
) -> None:
    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(5, "folder sync failed")

    store = TraceStore(tmp_path, fsync=fsync, layout="files")
    writer = store.begin(make_header())
    for step in sample_steps:
        writer.append(step)
    with pytest.raises(TraceStoreUnavailableError, match="folder sync failed"):
        writer.finish("answered")  # the run is not reported durable
    assert not store.index_path.exists(), "a run whose durability failed is not indexed as finished"
