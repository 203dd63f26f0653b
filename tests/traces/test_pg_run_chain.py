"""The run chain in PostgreSQL: a run whose rows are deleted behind the append-only trigger breaks
verification, first, middle or last (its writer closed, or the next day begun); a row moved to
another day is misfiled; runs from before the chain are counted, never failed; retention is no break."""

from __future__ import annotations

from datetime import date

import psycopg

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.traces.stores.pg_store import PgTraceStore
from tests.trace_support import edit_row
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory

DAY = "2025-03-01"


def runs(
    url: str, make_header: HeaderFactory, count: int, day: str = DAY, *, close: bool = True
) -> PgTraceStore:
    """A writer's ``count`` runs of ``day`` (closed: a process that stopped)."""
    store = PgTraceStore(url)
    for n in range(count):
        with store.begin(make_header(run_id=f"{day}-{n:02d}", created_at=f"{day}T08:30:00Z")) as writer:
            for step in SAMPLE_STEPS:
                writer.append(step)
            writer.finish("answered")
    if close:
        store.close()
    return store


def delete(url: str, *run_ids: str) -> None:
    """A run's rows deleted, as whoever may switch the trigger's guard on can."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET evloop.prune = 'on'")
        for run_id in run_ids:
            conn.execute("DELETE FROM trace_runs WHERE run_id = %s", (run_id,))


def breaks(url: str) -> list[tuple[str, str]]:
    store = PgTraceStore(url)
    rows = list(store.verify_chain())
    store.close()
    assert rows[-1][0] == "run chain"
    return [(name, verdict.reason) for name, verdict in rows[:-1]]


def test_an_untouched_writer_holds_and_is_anchored_at_its_end(
    pg_url: str, make_header: HeaderFactory
) -> None:
    runs(pg_url, make_header, 3)

    store = PgTraceStore(pg_url)
    *rows, (_, summary) = store.verify_chain()
    store.close()
    assert (
        rows == []
        and summary.reason == "run chain holds: 1 day, 1 writers' days chained, 1 anchored at their end"
    )


def test_a_run_deleted_from_the_middle_breaks_the_chain(pg_url: str, make_header: HeaderFactory) -> None:
    runs(pg_url, make_header, 5)
    delete(pg_url, f"{DAY}-02")

    assert breaks(pg_url) == [
        (
            f"{DAY}-03",
            f"run chain: run 3 of writer {writer(pg_url)}'s runs of {DAY} is gone (the one before {DAY}-03)",
        )
    ]
    assert main(["trace", "verify", "--all", "--store", pg_url]) == 1


def test_the_first_and_the_last_run_deleted_break_the_chain(pg_url: str, make_header: HeaderFactory) -> None:
    runs(pg_url, make_header, 5)
    delete(pg_url, f"{DAY}-00", f"{DAY}-04")

    found = breaks(pg_url)
    assert [name for name, _ in found] == [f"{DAY}-01", f"{writer(pg_url)}/{DAY}"]
    assert found[1][1].endswith("is gone (its last: runs were removed from its end)")


def test_the_next_day_anchors_a_writer_that_never_closed(pg_url: str, make_header: HeaderFactory) -> None:
    killed = runs(pg_url, make_header, 3, close=False)
    runs(pg_url, make_header, 1, "2025-03-02")
    delete(pg_url, f"{DAY}-02")

    assert [name for name, _ in breaks(pg_url)] == [f"{writer(pg_url)}/{DAY}"]
    killed.close()


def test_a_run_moved_to_another_day_is_misfiled(pg_url: str, make_header: HeaderFactory) -> None:
    runs(pg_url, make_header, 2)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE trace_runs DISABLE TRIGGER trace_runs_append_only")
        conn.execute(
            "UPDATE trace_runs SET created_at = created_at + interval '4 days' WHERE run_id = %s",
            (f"{DAY}-01",),
        )

    store = PgTraceStore(pg_url)
    verdict = store.verify(f"{DAY}-01")
    store.close()
    assert (
        verdict.reason
        == "misfiled: the run began on 2025-03-01 but is kept under 2025-03-05 (moved or copied)"
    )


def test_runs_from_before_the_chain_are_counted_not_failed(pg_url: str, make_header: HeaderFactory) -> None:
    runs(pg_url, make_header, 3)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE trace_runs DISABLE TRIGGER trace_runs_append_only")
        conn.execute("UPDATE trace_runs SET writer = NULL, wseq = NULL")
        conn.execute("ALTER TABLE trace_anchors DISABLE TRIGGER trace_anchors_append_only")
        conn.execute("DELETE FROM trace_anchors")
    delete(pg_url, f"{DAY}-01")

    store = PgTraceStore(pg_url)
    *rows, (_, summary) = store.verify_chain()
    store.close()
    assert (
        rows == []
        and "2 runs written before the chain (no number: a run deleted goes unseen)" in summary.reason
    )


def test_retention_leaves_the_chain_whole(pg_url: str, make_header: HeaderFactory) -> None:
    runs(pg_url, make_header, 2)
    runs(pg_url, make_header, 2, "2025-03-02")
    store = PgTraceStore(pg_url)
    store.prune(date(2025, 3, 2))
    store.close()

    assert breaks(pg_url) == []


def writer(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT DISTINCT writer FROM trace_runs WHERE created_at < '2025-03-02'"
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_records_reordered_within_a_run_fail_it_at_the_first_out_of_place(
    pg_url: str, make_header: HeaderFactory
) -> None:
    runs(pg_url, make_header, 1)
    # records 2 and 3 (events 1 and 2) swapped
    edit_row(pg_url, f"{DAY}-00", lambda lines: [*lines[:2], lines[3], lines[2], *lines[4:]])

    store = PgTraceStore(pg_url)
    verdict = store.verify(f"{DAY}-00")
    store.close()
    assert (verdict.ok, verdict.first_bad_seq) == (
        False,
        1,
    ) and "removed, inserted or reordered" in verdict.reason
