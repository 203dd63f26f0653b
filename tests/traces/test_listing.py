"""The console's run list: newest first from the day folders, filtered, paged by a cursor."""

from __future__ import annotations

from datetime import date

from evidence_loop.traces.reading.listing import Cursor, RunLister, RunRow
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import RunWriter


def everything(_: RunRow) -> bool:
    return True


def test_finished_runs_come_newest_first_across_days_and_unfinished_ones_on_request(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_run("r-old", created_at="2025-03-01T08:00:00Z")
    write_run("r-mid", created_at="2025-03-02T08:00:00Z", finish="insufficient_evidence")
    write_run("r-new", created_at="2025-03-02T09:00:00Z", groups=["staff"])
    write_run("r-going", created_at="2025-03-02T09:30:00Z", finish=None)
    lister = RunLister(store)

    rows, more = lister.page(everything)
    going, _ = lister.page(everything, unfinished=True)

    assert [(r.run_id, r.status) for r in rows] == [
        ("r-new", "answered"),
        ("r-mid", "insufficient_evidence"),
        ("r-old", "answered"),
    ]
    assert more is None and rows[0].groups == ("staff",) and rows[0].question == "课程开始前可以退款吗？"
    assert [(r.run_id, r.status) for r in going] == [("r-going", "incomplete")]


def test_a_run_finished_after_the_first_page_is_listed_at_the_next(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_run("r-1", created_at="2025-03-01T08:00:00Z")
    lister = RunLister(store)
    first, _ = lister.page(everything)
    write_run("r-2", created_at="2025-03-01T08:01:00Z")
    second, _ = lister.page(everything)

    assert [r.run_id for r in first] == ["r-1"] and [r.run_id for r in second] == ["r-2", "r-1"]


def test_pages_resume_where_the_last_one_ended_and_filters_apply(
    store: TraceStore, write_run: RunWriter
) -> None:
    for n in range(7):
        status = "answered" if n % 2 else "insufficient_evidence"
        write_run(f"r-{n}", created_at=f"2025-03-0{1 + n // 3}T08:0{n}:00Z", finish=status)
    lister = RunLister(store)

    seen, cursor = [], None
    while True:
        rows, cursor = lister.page(everything, size=3, cursor=cursor)
        seen += [r.run_id for r in rows]
        if cursor is None:
            break
    answered, _ = lister.page(lambda r: r.status == "answered", size=10)
    one_day, _ = lister.page(everything, size=10, day=date(2025, 3, 2))

    assert seen == [f"r-{n}" for n in reversed(range(7))]
    assert [r.run_id for r in answered] == ["r-5", "r-3", "r-1"]
    assert [r.run_id for r in one_day] == ["r-5", "r-4", "r-3"]


def test_a_cursor_reads_back_from_its_text() -> None:
    cursor = Cursor(date(2025, 3, 2), 50)
    assert Cursor.parse(cursor.text()) == cursor and Cursor.parse("garbage") is None
