"""TraceStore.list: every run on disk, finished or not, filtered by time and status."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError
from evidence_loop.traces.stores.store import TraceStore


def _ids(store: TraceStore, since: datetime | None = None, status: str | None = None) -> list[str]:
    return [summary.run_id for summary in store.list(since=since, status=status)]


def test_list_is_empty_for_a_new_store(store: TraceStore) -> None:
    assert store.list() == []


def test_list_orders_runs_oldest_first(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run("r-b", created_at="2025-03-02T09:00:00Z")
    write_run("r-a", created_at="2025-03-01T10:00:00Z")
    write_run("r-c", created_at="2025-03-01T10:00:00Z")
    assert _ids(store) == ["r-a", "r-c", "r-b"]


def test_list_includes_incomplete_runs_that_the_index_does_not_know(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    write_run("r-done")
    write_run("r-killed", finish=None)
    summaries = {s.run_id: s for s in store.list()}
    assert (summaries["r-killed"].status, summaries["r-killed"].outcome_status) == ("incomplete", None)
    assert (summaries["r-done"].status, summaries["r-done"].outcome_status) == ("complete", "answered")


def test_list_reads_a_finished_run_whose_index_line_was_lost(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    write_run("r-1")
    store.index_path.unlink()  # killed between the durable footer and the index append
    [summary] = store.list()
    assert (summary.run_id, summary.status, summary.final_hash) == (
        "r-1",
        "complete",
        store.read("r-1").final_hash,
    )


def test_list_survives_a_torn_index_line(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run("r-1")
    with store.index_path.open("ab") as index:
        index.write(b'{"run_id":"r-2","crea')
    write_run("r-2")
    assert _ids(store) == ["r-1", "r-2"]
    assert store.index_path.read_bytes().count(b"\n") == 3, "the next entry starts on a fresh line"


def test_list_filters_by_since(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run("r-old", created_at="2025-02-28T23:00:00Z")
    write_run("r-edge", created_at="2025-03-01T08:00:00Z")
    write_run("r-new", created_at="2025-03-02T01:00:00Z", finish=None)
    assert _ids(store, since=datetime(2025, 3, 1, 8, tzinfo=UTC)) == ["r-edge", "r-new"]


def test_list_filters_by_trace_status(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run("r-done")
    write_run("r-killed", finish=None)
    assert (_ids(store, status="incomplete"), _ids(store, status="complete")) == (["r-killed"], ["r-done"])


def test_list_filters_by_outcome_status(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run("r-yes", finish="answered")
    write_run("r-no", finish="insufficient_evidence")
    assert _ids(store, status="insufficient_evidence") == ["r-no"]


def test_list_summarizes_question_size_and_path(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run("r-1", question="  退款\n多久到账？" + "啊" * 100)
    [summary] = store.list()
    assert summary.question.startswith("退款 多久到账？") and len(summary.question) == 80
    assert (store.root / summary.path, summary.bytes, summary.events) == (path, path.stat().st_size, 8)


def test_a_file_without_a_readable_header_is_listed_as_unreadable(store: TraceStore) -> None:
    day = store.root / "2025" / "03" / "01"
    day.mkdir(parents=True)
    (day / "r-torn.jsonl").write_bytes(b'{"type":"hea')
    [summary] = store.list()
    assert (summary.run_id, summary.status) == ("r-torn", "unreadable")


def test_list_ignores_foreign_files_and_folders(store: TraceStore, write_run: Callable[..., Path]) -> None:
    write_run("r-1")
    (store.root / "exports").mkdir()
    (store.root / "exports" / "x.jsonl").write_text("{}\n", encoding="utf-8")
    (store.root / "2025" / "03" / "01" / "notes.txt").write_text("hi", encoding="utf-8")
    assert _ids(store) == ["r-1"]


def test_since_must_be_timezone_aware(store: TraceStore) -> None:
    with pytest.raises(InputError, match="timezone-aware"):
        store.list(since=datetime(2025, 3, 1))
