"""Newest runs first, a page at a time, for the audit console: read from the day folders, not all traces.

    RunLister(store)       pages of rows (``traces.reading.run_rows``), newest first, filtered, with a cursor
                           that resumes a page; every row of a range of days (the figures page)
    StoreLister(store)     the same over PostgreSQL

A day's finished runs come from its ``finished.manifest`` (finish order, newest last), read
incrementally and parsed lazily: a page parses the lines of the runs it passes over, newest first,
not the whole day (a fresh first page of a day of 100,000 runs parses about 50 lines); a filter
parses one line more per run it scans, which costs little beside reading that run's row. The runs
that never finished (still going, or stopped) come from the files and journal frames of the day
that it does not name, listed on request. Only the rows a page needs are read:
two short reads per run of its own file (its head and its tail), or one read of its frame where the
manifest places it; a finished run's row never changes, so rows are kept once read and a filter
that scans further than one page pays for each run once per process. A store whose traces are not
files (PostgreSQL) is listed from ``trace_runs`` and, for each run, the same records a file's row
is read from.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Final

import orjson

from evidence_loop.traces.journal.journal import frame_index, journal_files
from evidence_loop.traces.journal.manifest import MANIFEST_NAME, parse_line, record_lines
from evidence_loop.traces.reading.run_rows import Records, RunRow, read_frame_row, read_row, row_of
from evidence_loop.traces.stores.pg_store import PgTraceStore
from evidence_loop.traces.stores.store import TraceStore

__all__ = ["CACHE_MAX", "Cursor", "RunLister", "RunRow", "StoreLister", "lister_for"]

_Place = tuple[str, str | None, int | None, float | None]  # run id, journal, frame offset, finished at
CACHE_MAX: Final = 200_000


@dataclass(slots=True)
class _Day:
    """A day's manifest as read so far: the bytes read, the lines that hold a run (in finish order,
    unparsed), and the place of each line parsed yet (None: a damaged line, no run)."""

    done: int = 0
    lines: list[bytes] = field(default_factory=list)
    places: dict[int, _Place | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page ends: the day and the position within that day's runs, newest first."""

    day: date
    offset: int

    def text(self) -> str:
        return f"{self.day.isoformat()}.{self.offset}"

    @classmethod
    def parse(cls, text: str) -> Cursor | None:
        day, _, offset = text.partition(".")
        try:
            return cls(date.fromisoformat(day), int(offset))
        except ValueError:
            return None


class RunLister:
    """Pages of a trace store's runs, newest first.

    Finished runs come from each day's manifest, read incrementally (it is append-only: only the
    bytes added since the last page are read). Runs that never finished are not in any manifest:
    they are listed, from a scan of the day folders, when ``unfinished`` is asked for.
    """

    def __init__(self, store: TraceStore) -> None:
        self.store = store
        self._rows: dict[str, RunRow] = {}
        self._days: dict[Path, _Day] = {}
        self._lock = threading.Lock()

    def page(
        self,
        keep: Callable[[RunRow], bool],
        *,
        size: int = 50,
        day: date | None = None,
        cursor: Cursor | None = None,
        unfinished: bool = False,
    ) -> tuple[list[RunRow], Cursor | None]:
        """Up to ``size`` rows that ``keep`` accepts, from ``cursor`` on (or the newest, or the
        newest of ``day``), and the cursor of the next page (None: no more). ``unfinished``: the
        runs that have no end instead of the finished ones."""
        rows: list[RunRow] = []
        for at, row in self._candidates(day, cursor, unfinished):
            if row is None or not keep(row):
                continue
            if len(rows) == size:
                return rows, at
            rows.append(row)
        return rows, None

    def each(self, keep: Callable[[RunRow], bool], first: date, last: date) -> Iterator[RunRow]:
        """Every finished run of the UTC days ``first`` to ``last`` that ``keep`` accepts, newest first."""
        for when, folder in self.store.day_folders():
            if first <= when <= last:
                runs = self._finished(folder)
                for index in range(len(runs.lines) - 1, -1, -1):
                    place = self._place(runs, index)
                    row = self._row(folder, place) if place is not None else None
                    if row is not None and keep(row):
                        yield row

    def _candidates(
        self, day: date | None, cursor: Cursor | None, unfinished: bool
    ) -> Iterator[tuple[Cursor, RunRow | None]]:
        """(the cursor that resumes at it, row) of each run, newest first; a cursor's offset counts
        from the oldest run of its day, so it stays put while newer runs arrive."""
        for when, folder in self.store.day_folders():
            if (day is not None and when != day) or (cursor is not None and when > cursor.day):
                continue
            ids = self._unfinished(folder) if unfinished else []
            runs = self._finished(folder) if not unfinished else _Day()
            top = (len(ids) if unfinished else len(runs.lines)) - 1
            if cursor is not None and when == cursor.day:
                top = min(top, cursor.offset)
            for index in range(top, -1, -1):
                place = ids[index] if unfinished else self._place(runs, index)
                yield Cursor(when, index), self._row(folder, place) if place is not None else None

    def _finished(self, folder: Path) -> _Day:
        """The day's manifest, reading only what was appended since (all of it again when it was
        rewritten shorter); its lines are parsed by ``_place``, when a page reaches them."""
        with self._lock:
            runs = self._days.get(folder) or _Day()
            try:
                with (folder / MANIFEST_NAME).open("rb") as manifest:
                    if os.fstat(manifest.fileno()).st_size < runs.done:
                        runs = _Day()
                    manifest.seek(runs.done)
                    fresh = manifest.read()
            except FileNotFoundError:
                return runs
            whole = fresh.rfind(b"\n") + 1  # a line still being written is read next time
            if whole:  # a new _Day: a page still reading the old one keeps reading what it saw
                runs = _Day(runs.done + whole, runs.lines + record_lines(fresh[:whole]), runs.places)
            self._days[folder] = runs
            return runs

    def _place(self, runs: _Day, index: int) -> _Place | None:
        """The place of the day's ``index``-th run (from the oldest), its line parsed once."""
        if index not in runs.places:
            run = parse_line(runs.lines[index])
            place = (run.run_id, run.journal, run.offset, run.at) if run is not None else None
            with self._lock:
                runs.places[index] = place
        return runs.places[index]

    def _unfinished(self, folder: Path) -> list[_Place]:
        """The day's runs that its manifest does not name: files by name, then journal frames in
        the order written."""
        runs = self._finished(folder)
        parsed = (self._place(runs, index) for index in range(len(runs.lines)))
        known = {place[0] for place in parsed if place is not None}
        with os.scandir(folder) as entries:
            files = sorted(
                e.name[:-6] for e in entries if e.name.endswith(".jsonl") and e.name[:-6] not in known
            )
        places: list[_Place] = [(name, None, None, None) for name in files]
        for journal in journal_files(folder):
            places.extend(
                (run_id, journal.name, offset, None)
                for run_id, offset, _ in frame_index(journal)
                if run_id not in known
            )
        return places

    def _row(self, folder: Path, place: _Place) -> RunRow | None:
        run_id, journal, offset, at = place
        row = self._rows.get(run_id)
        if row is not None:
            return row
        if journal is not None:
            row = read_frame_row(folder / journal, run_id, offset, at)
        else:
            row = read_row(folder / f"{run_id}.jsonl")
        if row is not None and row.finished:
            with self._lock:
                if len(self._rows) >= CACHE_MAX:
                    self._rows.clear()
                self._rows[run_id] = row
        return row


class StoreLister:
    """Pages of a PostgreSQL store: ``trace_runs`` newest first, each row from its records."""

    BATCH = 200

    def __init__(self, store: PgTraceStore) -> None:
        self.store = store

    def page(
        self,
        keep: Callable[[RunRow], bool],
        *,
        size: int = 50,
        day: date | None = None,
        cursor: Cursor | None = None,
        unfinished: bool = False,
    ) -> tuple[list[RunRow], Cursor | None]:
        rows: list[RunRow] = []
        offset = cursor.offset if cursor is not None else 0
        while True:
            batch = self._rows(offset, day, day, unfinished)
            for n, row in enumerate(batch):
                if not keep(row):
                    continue
                if len(rows) == size:
                    return rows, Cursor(date.min, offset + n)
                rows.append(row)
            if len(batch) < self.BATCH:
                return rows, None
            offset += len(batch)

    def each(self, keep: Callable[[RunRow], bool], first: date, last: date) -> Iterator[RunRow]:
        """Every finished run of the UTC days ``first`` to ``last`` that ``keep`` accepts, newest first."""
        offset = 0
        while True:
            batch = self._rows(offset, first, last, False)
            yield from (row for row in batch if keep(row))
            if len(batch) < self.BATCH:
                return
            offset += len(batch)

    def _rows(self, offset: int, first: date | None, last: date | None, unfinished: bool) -> list[RunRow]:
        found = self.store.newest(offset, self.BATCH, first=first, last=last, unfinished=unfinished)
        return [_pg_row(*place) for place in found]


def _pg_row(run_id: str, status: str, header: str, decided: str | None, resolved: str | None) -> RunRow:
    """A row of a PostgreSQL run: its status from ``trace_runs`` (its footer says no more), the rest
    from its records."""
    footer = orjson.dumps({"type": "footer", "outcome_status": status}) if status != "incomplete" else b"{}"
    records = Records(
        header.encode(),
        footer,
        decided.encode() if decided is not None else None,
        resolved.encode() if resolved is not None else None,
    )
    return row_of(run_id, records, None)


def lister_for(store: TraceStore) -> RunLister | StoreLister:
    """The lister that suits the store: day folders for files, ``trace_runs`` for PostgreSQL."""
    return StoreLister(store) if isinstance(store, PgTraceStore) else RunLister(store)
