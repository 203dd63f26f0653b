"""Traces in PostgreSQL: the file store's records to the byte, the same verdicts, append-only rows,
grouped commits that each run waits for, and retention by whole days."""

from __future__ import annotations

import threading
import time
import zlib
from datetime import UTC, date, datetime
from pathlib import Path

import psycopg
import pytest

from evidence_loop.tools.errors import InputError, NotFoundError
from evidence_loop.traces.records.writer import TraceWriter
from evidence_loop.traces.stores.pg_store import PgTraceStore
from evidence_loop.traces.stores.store import TraceStore
from tests.trace_support import edit_run
from tests.traces.conftest import EXAMPLES, SAMPLE_STEPS, HeaderFactory


@pytest.fixture
def pg_traces(pg_url: str) -> PgTraceStore:
    store = PgTraceStore(pg_url)
    yield store  # type: ignore[misc]
    store.close()


def write(store: TraceStore, header: HeaderFactory, run_id: str, *, finish: str | None = "answered") -> str:
    with store.begin(header(run_id=run_id)) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        return writer.finish(finish) if finish else ""


def test_a_run_reads_back_as_the_file_store_writes_it(
    pg_traces: PgTraceStore, make_header: HeaderFactory, tmp_path: Path
) -> None:
    files = TraceStore(tmp_path / "traces")
    assert write(pg_traces, make_header, "r-1") == write(files, make_header, "r-1")
    stored, filed = pg_traces.read("r-1"), files.read("r-1")
    assert stored.records == filed.records and stored.events == filed.events
    verdict = pg_traces.verify("r-1")
    assert (verdict.ok, verdict.complete) == (True, True)


def test_a_run_whose_text_holds_unicode_line_separators_is_stored_line_for_line(
    pg_traces: PgTraceStore, make_header: HeaderFactory, tmp_path: Path
) -> None:
    files = TraceStore(tmp_path / "traces")
    question = "退款\u2028规则\u2029 and\x85 more"  # JSON leaves them as they are: a record's line holds them
    for store in (pg_traces, files):
        with store.begin(make_header(run_id="r-sep", question=question)) as writer:
            for step in SAMPLE_STEPS:
                writer.append(step)
            writer.finish("answered")
    stored = pg_traces.read("r-sep")
    assert stored.records == files.read("r-sep").records and stored.header.question == question
    assert pg_traces.verify("r-sep").ok
    [summary] = pg_traces.list()
    assert (summary.events, summary.bytes) == (len(SAMPLE_STEPS), len(files.raw("r-sep")))


def test_an_unfinished_run_is_stored_as_incomplete(
    pg_traces: PgTraceStore, make_header: HeaderFactory
) -> None:
    with pytest.raises(RuntimeError), pg_traces.begin(make_header(run_id="r-2")) as writer:
        writer.append(EXAMPLES["recalled"])
        raise RuntimeError("the run failed")
    trace = pg_traces.read("r-2")
    assert [e.step for e in trace.events] == ["recalled", "aborted"] and trace.footer is None
    verdict = pg_traces.verify("r-2")
    assert (verdict.ok, verdict.complete) == (True, False)
    [summary] = pg_traces.list(status="incomplete")
    assert summary.run_id == "r-2"


def test_list_filters_by_time_and_status(pg_traces: PgTraceStore, make_header: HeaderFactory) -> None:
    for n, day in enumerate(("2025-03-01", "2025-03-02", "2025-03-03")):
        with pg_traces.begin(make_header(run_id=f"r-{n}", created_at=f"{day}T08:00:00Z")) as writer:
            writer.finish("answered" if n != 1 else "insufficient_evidence")
    since = datetime(2025, 3, 2, tzinfo=UTC)
    assert [s.run_id for s in pg_traces.list(since=since)] == ["r-1", "r-2"]
    assert [s.run_id for s in pg_traces.list(status="insufficient_evidence")] == ["r-1"]
    assert pg_traces.list()[0].created_at == "2025-03-01T08:00:00Z"


def test_records_cannot_be_changed_or_removed(
    pg_traces: PgTraceStore, pg_url: str, make_header: HeaderFactory
) -> None:
    write(pg_traces, make_header, "r-3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in ("UPDATE trace_runs SET body = NULL", "DELETE FROM trace_runs"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
    assert pg_traces.verify("r-3").ok


def test_a_run_is_one_compressed_row_and_no_record_rows(
    pg_traces: PgTraceStore, pg_url: str, make_header: HeaderFactory
) -> None:
    write(pg_traces, make_header, "r-3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        (body,) = conn.execute("SELECT body FROM trace_runs WHERE run_id = 'r-3'").fetchone() or (None,)
        (records,) = conn.execute("SELECT count(*) FROM trace_records").fetchone() or (None,)
    assert records == 0
    assert zlib.decompress(body).startswith(b'{"type":"header"') and len(body) < len(zlib.decompress(body))


def test_a_run_stored_a_row_per_record_before_compressed_rows_still_reads_verifies_and_lists(
    pg_traces: PgTraceStore, pg_url: str, make_header: HeaderFactory, tmp_path: Path
) -> None:
    write(pg_traces, make_header, "r-new")  # the documents its header names, stored as any run's
    files = TraceStore(tmp_path / "traces", layout="files")  # schema 3, as the rows were written then
    final = write(files, make_header, "r-old")
    lines = files.raw("r-old").decode("utf-8").splitlines()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO trace_runs (run_id, created_at, question, status, outcome_status, final_hash, "
            "events, bytes) VALUES ('r-old', '2025-03-01T08:00:00Z', 'q', 'complete', 'answered', %s, %s, 1)",
            (final, len(lines) - 2),
        )
        for n, line in enumerate(lines):
            conn.execute("INSERT INTO trace_records (run_id, n, line) VALUES ('r-old', %s, %s)", (n, line))
    assert pg_traces.read("r-old").final_hash == final and pg_traces.verify("r-old").complete
    rows = pg_traces.newest(0, 10)
    assert {row[0] for row in rows} == {"r-old", "r-new"}
    assert all('"type":"header"' in header for _, _, header, _, _ in rows)
    # the console's row reads the last event of each, from the record rows or the compressed body
    last = {run_id: decided for run_id, _, _, decided, _ in rows}
    assert last["r-old"] == lines[-2] and last["r-new"] is not None and '"type":"event"' in last["r-new"]


def test_a_record_changed_behind_the_trigger_fails_verification_as_a_change_of_the_events(
    pg_traces: PgTraceStore, make_header: HeaderFactory
) -> None:
    write(pg_traces, make_header, "r-4")
    edit_run(pg_traces, "r-4", lambda lines: [*lines[:3], lines[3].replace(b"0.61", b"0.99"), *lines[4:]])
    verdict = pg_traces.verify("r-4")
    assert (verdict.ok, verdict.first_bad_seq) == (False, 0) and "the events changed" in verdict.reason


def test_a_compressed_row_that_no_longer_decompresses_fails_verification_as_damage(
    pg_traces: PgTraceStore, pg_url: str, make_header: HeaderFactory
) -> None:
    write(pg_traces, make_header, "r-4")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE trace_runs DISABLE TRIGGER trace_runs_append_only")
        conn.execute("UPDATE trace_runs SET body = substring(body from 1 for 40) WHERE run_id = 'r-4'")
    verdicts = dict(pg_traces.verify_all())
    assert not verdicts["r-4"].ok and "damaged" in verdicts["r-4"].reason


def test_a_trace_cut_short_behind_the_trigger_is_truncated(
    pg_traces: PgTraceStore, make_header: HeaderFactory
) -> None:
    write(pg_traces, make_header, "r-5")
    edit_run(pg_traces, "r-5", lambda lines: lines[:5])
    verdict = pg_traces.verify("r-5")
    assert not verdict.ok and verdict.reason.startswith("truncated")


def test_runs_finishing_together_are_all_durable_when_each_returns(
    pg_traces: PgTraceStore, pg_url: str, make_header: HeaderFactory
) -> None:
    writers = [pg_traces.begin(make_header(run_id=f"g-{n:02d}")) for n in range(24)]
    for writer in writers:
        writer.append(EXAMPLES["recalled"])
    finals: dict[str, str] = {}

    def finish(writer: TraceWriter) -> None:
        finals[writer.header.run_id] = writer.finish("answered")
        with psycopg.connect(pg_url) as conn:  # visible to anyone once finish returned
            row = conn.execute("SELECT final_hash FROM trace_runs WHERE run_id = %s", (writer.header.run_id,))
            assert row.fetchone() == (finals[writer.header.run_id],)

    threads = [threading.Thread(target=finish, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(finals) == 24 and all(pg_traces.verify(run).ok for run in finals)
    assert [(name, v.ok) for name, v in pg_traces.verify_chain()] == [("run chain", True)]


def test_a_run_id_is_stored_once(pg_traces: PgTraceStore, make_header: HeaderFactory) -> None:
    write(pg_traces, make_header, "r-6")
    with pytest.raises(InputError, match="already has a trace"):
        write(pg_traces, make_header, "r-6")
    assert pg_traces.verify("r-6").ok


def test_a_run_id_twice_in_one_commit_group_fails_only_the_later_run(
    pg_traces: PgTraceStore, pg_url: str, make_header: HeaderFactory
) -> None:
    write(pg_traces, make_header, "r-7")  # stored before: a group holding it again commits the rest
    outcomes: dict[str, str] = {}

    def finish(name: str, run_id: str) -> None:
        try:
            write(pg_traces, make_header, run_id)
            outcomes[name] = "stored"
        except InputError:
            outcomes[name] = "refused"

    with psycopg.connect(pg_url) as blocker:  # holds the committer's first group at its insert
        blocker.execute("LOCK TABLE trace_runs IN EXCLUSIVE MODE")
        first = threading.Thread(target=finish, args=("first", "r-8"))
        first.start()
        deadline = time.monotonic() + 60
        while pg_traces._queue.qsize() and time.monotonic() < deadline:
            time.sleep(0.01)  # the committer took r-8 and waits on the lock
        rest = [
            threading.Thread(target=finish, args=(name, run_id))
            for name, run_id in (("a", "twice"), ("b", "twice"), ("again", "r-7"), ("other", "r-9"))
        ]
        for thread in rest:
            thread.start()
        while pg_traces._queue.qsize() < len(rest) and time.monotonic() < deadline:
            time.sleep(0.01)  # all four wait in the queue: the next group holds them together
        blocker.rollback()
    for thread in (first, *rest):
        thread.join(60)

    assert sorted(outcomes.values()) == ["refused", "refused", "stored", "stored", "stored"]
    assert (outcomes["first"], outcomes["other"], outcomes["again"]) == ("stored", "stored", "refused")
    assert {outcomes["a"], outcomes["b"]} == {"stored", "refused"}
    assert all(pg_traces.verify(run).ok for run in ("r-7", "r-8", "r-9", "twice"))
    chain = list(pg_traces.verify_chain())  # a run refused for its id took no number: no gap
    assert [(name, v.ok) for name, v in chain] == [("run chain", True)], chain


def test_an_unknown_run_is_not_found(pg_traces: PgTraceStore) -> None:
    with pytest.raises(NotFoundError):
        pg_traces.read("nope")


def test_prune_removes_whole_days_before_the_cut(pg_traces: PgTraceStore, make_header: HeaderFactory) -> None:
    for n, day in enumerate(("2025-03-01", "2025-03-01", "2025-03-02")):
        with pg_traces.begin(make_header(run_id=f"p-{n}", created_at=f"{day}T08:00:00Z")) as writer:
            writer.finish("answered")
    dry = pg_traces.prune(date(2025, 3, 2), dry_run=True)
    assert (dry.days, dry.runs, dry.kept_days, len(pg_traces.list())) == (1, 2, 1, 3)
    report = pg_traces.prune(date(2025, 3, 2))
    assert (report.days, report.runs) == (1, 2) and [s.run_id for s in pg_traces.list()] == ["p-2"]
