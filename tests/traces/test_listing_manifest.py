"""The console's run list reads a day's manifest newest first, parsing only the lines a page reaches."""

from __future__ import annotations

from datetime import date

import pytest

from evidence_loop.traces.journal.manifest import MANIFEST_NAME, FinishedRun, parse_line, record_lines
from evidence_loop.traces.reading import listing
from evidence_loop.traces.reading.listing import Cursor, RunLister, RunRow
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import RunWriter

DAY = ("2025", "03", "01")


def everything(_: RunRow) -> bool:
    return True


def write_day(write_run: RunWriter, count: int) -> list[str]:
    """``count`` finished runs of one day, oldest first."""
    ids = [f"r-{n}" for n in range(count)]
    for n, run_id in enumerate(ids):
        write_run(run_id, created_at=f"2025-03-01T08:{n:02d}:00Z")
    return ids


def all_pages(lister: RunLister, size: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        rows, cursor = lister.page(everything, size=size, cursor=cursor)
        pages.append([r.run_id for r in rows])
        if cursor is None:
            return pages


def append_line(store: TraceStore, line: bytes) -> None:
    with (store.root.joinpath(*DAY) / MANIFEST_NAME).open("ab") as manifest:
        manifest.write(line)


def test_a_day_is_listed_newest_first_in_pages_that_neither_skip_nor_repeat_a_run(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 7)

    pages = all_pages(RunLister(store), size=3)

    assert pages == [["r-6", "r-5", "r-4"], ["r-3", "r-2", "r-1"], ["r-0"]]


def test_a_fresh_first_page_parses_only_the_manifest_lines_it_reaches(
    store: TraceStore, write_run: RunWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_day(write_run, 20)
    parsed: list[bytes] = []
    parse = parse_line

    def counting(line: bytes) -> FinishedRun | None:
        parsed.append(line)
        return parse(line)

    monkeypatch.setattr(listing, "parse_line", counting)

    rows, _ = RunLister(store).page(everything, size=3)

    assert [r.run_id for r in rows] == ["r-19", "r-18", "r-17"]
    assert len(parsed) == 4, "the page's three runs and the one that tells there is a next page"


def test_a_run_finished_between_two_pages_leaves_the_next_page_where_it_was(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 5)
    lister = RunLister(store)
    first, cursor = lister.page(everything, size=2)
    write_run("r-late", created_at="2025-03-01T09:00:00Z")
    second, _ = lister.page(everything, size=2, cursor=cursor)
    newest, _ = lister.page(everything, size=2)

    assert [r.run_id for r in first] == ["r-4", "r-3"] and [r.run_id for r in second] == ["r-2", "r-1"]
    assert [r.run_id for r in newest] == ["r-late", "r-4"]


def test_a_line_still_being_written_is_listed_once_it_is_whole(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 3)
    manifest = store.root.joinpath(*DAY) / MANIFEST_NAME
    content = manifest.read_bytes()
    manifest.write_bytes(content[:-20])  # r-2's line, cut short while it is written
    lister = RunLister(store)
    before, _ = lister.page(everything)
    append_line(store, content[-20:])
    after, _ = lister.page(everything)

    assert [r.run_id for r in before] == ["r-1", "r-0"]
    assert [r.run_id for r in after] == ["r-2", "r-1", "r-0"]


def test_a_damaged_manifest_line_is_skipped_and_pages_around_it_stay_whole(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 3)
    append_line(store, b'{"run_id":"r-broken","final_hash":\n')
    append_line(store, b"not a record at all\n")
    write_run("r-3", created_at="2025-03-01T08:03:00Z")
    write_run("r-4", created_at="2025-03-01T08:04:00Z")

    pages = all_pages(RunLister(store), size=2)

    assert [run for page in pages for run in page] == ["r-4", "r-3", "r-2", "r-1", "r-0"]
    assert all(pages), "no page is empty"


def test_a_line_glued_onto_a_torn_one_is_read_from_its_own_start(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 1)
    append_line(store, b'{"run_id":"r-torn","fin')  # cut by a power cut, no newline
    write_run("r-1", created_at="2025-03-01T08:01:00Z")

    rows, _ = RunLister(store).page(everything)

    assert [r.run_id for r in rows] == ["r-1", "r-0"]


def test_a_cursor_resumes_at_the_same_run_in_a_lister_started_later(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 4)
    append_line(store, b'{"run_id":"r-broken"}\n')
    write_run("r-4", created_at="2025-03-01T08:04:00Z")
    _, cursor = RunLister(store).page(everything, size=2)
    assert cursor is not None
    write_run("r-5", created_at="2025-03-01T08:05:00Z")

    resumed, _ = RunLister(store).page(everything, size=2, cursor=Cursor.parse(cursor.text()))

    assert [r.run_id for r in resumed] == ["r-2", "r-1"]


def test_the_figures_and_the_unfinished_runs_read_every_line_of_the_day(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 4)
    append_line(store, b'{"run_id":"damaged\n')
    write_run("r-going", created_at="2025-03-01T08:10:00Z", finish=None)
    lister = RunLister(store)
    lister.page(everything, size=1)

    every = [r.run_id for r in lister.each(everything, date(2025, 3, 1), date(2025, 3, 1))]
    going, _ = lister.page(everything, unfinished=True)

    assert every == ["r-3", "r-2", "r-1", "r-0"]
    assert [r.run_id for r in going] == ["r-going"]


def test_a_manifest_rewritten_shorter_is_read_again_from_its_start(
    store: TraceStore, write_run: RunWriter
) -> None:
    write_day(write_run, 3)
    manifest = store.root.joinpath(*DAY) / MANIFEST_NAME
    lister = RunLister(store)
    lister.page(everything)
    manifest.write_bytes(manifest.read_bytes().split(b"\n", 1)[0] + b"\n")

    rows, _ = lister.page(everything)

    assert [r.run_id for r in rows] == ["r-0"]


def test_a_line_that_holds_no_record_takes_no_place_among_the_runs() -> None:
    whole = b'{"run_id":"a"}\n{"run_id":"b"}\n'
    with_other = b'{"run_id":"a"}\n{"link":"x"}{"run_id":"b"}\n{"anchor":"y"}\n'

    assert record_lines(whole) == [b'{"run_id":"a"}', b'{"run_id":"b"}']
    assert record_lines(with_other) == [b'{"run_id":"a"}', b'{"link":"x"}{"run_id":"b"}']
