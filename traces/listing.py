"""Newest runs first, a page at a time, for the audit console: read from the day folders, not all traces.

    RunRow                 what a list shows of one run: time, status, question, groups, latency
    read_row(path)         a row from a trace file's first and last lines only
    RunLister(store)       pages of rows, newest first, filtered, with a cursor that resumes a page

A day's finished runs come from its ``finished.manifest`` (finish order, newest last), read
incrementally; the runs that never finished (still going, or stopped) from the files and journal
frames of the day that it does not name, listed on request. Only the rows a page needs are read:
two short reads per run of its own file, or one read of its frame where the manifest places it;
a finished run's row never changes, so rows are kept once read and a filter that scans further
than one page pays for each run once per process. A store whose traces
are not files (PostgreSQL) is listed from ``trace_runs`` and each run's header record.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Final

from evidence_loop.traces.journal import Frame, frame_index, journal_files, read_frame, scan_file
from evidence_loop.traces.manifest import MANIFEST_NAME, finished_runs
from evidence_loop.traces.pg_store import PgTraceStore
from evidence_loop.traces.store import TraceStore

_Place = tuple[str, str | None, int | None, float | None]  # run id, journal, frame offset, finished at
_TAIL: Final = 8192  # bytes read from a trace's end to find its last line
CACHE_MAX: Final = 200_000


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    created_at: str
    status: str  # the outcome's status, else "incomplete" or "unreadable"
    question: str
    groups: tuple[str, ...]
    caller: str | None
    latency_ms: int | None  # from the run's start to its trace's last write (files only)
    finished: bool


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


def _last_line(path: Path, size: int) -> bytes:
    with path.open("rb") as file:
        take = min(size, _TAIL)
        while True:
            file.seek(size - take)
            chunk = file.read(take).rstrip(b"\n")
            cut = chunk.rfind(b"\n")
            if cut >= 0 or take == size:
                return chunk[cut + 1 :]
            take = min(size, take * 4)


def read_row(path: Path) -> RunRow | None:
    """The row of one trace file (None when it is gone); a file whose header cannot be read is
    ``unreadable``."""
    try:
        with path.open("rb") as file:
            first = file.readline()
        stat = path.stat()
        last = _last_line(path, stat.st_size) if stat.st_size > len(first) else b"{}"
    except FileNotFoundError:
        return None
    except OSError:
        return _unreadable(path.stem)
    return _row_of(path.stem, first, last, stat.st_mtime)


def read_frame_row(journal: Path, run_id: str, offset: int | None, at: float | None) -> RunRow | None:
    """The row of a run in a journal: its frame at ``offset`` (found by a scan when that is not
    known or wrong); None when it is not there."""
    frame = read_frame(journal, offset, run_id) if offset is not None else None
    if frame is None:
        frame = next((f for f in scan_file(journal) if isinstance(f, Frame) and f.run_id == run_id), None)
    if frame is None:
        return None
    committed = frame.records[: frame.records.rfind(b"\n") + 1]  # a torn last line is left out
    lines = committed.rstrip(b"\n").rsplit(b"\n", 1)
    first = frame.records.split(b"\n", 1)[0]
    return _row_of(run_id, first, lines[-1] if len(lines) > 1 else b"{}", at)


def _row_of(run_id: str, first: bytes, last_line: bytes, at: float | None) -> RunRow:
    """A row from a trace's first line (its header) and last one; ``at`` is when it was written last."""
    try:
        header, last = json.loads(first), json.loads(last_line)
    except ValueError:
        return _unreadable(run_id)
    if not isinstance(header, dict) or header.get("type") != "header":
        return _unreadable(run_id)
    finished = isinstance(last, dict) and last.get("type") == "footer"
    created = str(header.get("created_at", ""))
    try:
        latency = round((at - datetime.fromisoformat(created).timestamp()) * 1000) if at else None
    except ValueError:
        latency = None
    return RunRow(
        run_id=str(header.get("run_id", run_id)),
        created_at=created,
        status=str(last.get("outcome_status")) if finished else "incomplete",
        question=str(header.get("question", "")),
        groups=tuple(str(g) for g in header.get("groups") or ()),
        caller=header.get("caller"),
        latency_ms=latency if finished and latency is not None and latency >= 0 else None,
        finished=finished,
    )


def _unreadable(run_id: str) -> RunRow:
    return RunRow(run_id, "", "unreadable", "", (), None, None, False)


class RunLister:
    """Pages of a trace store's runs, newest first.

    Finished runs come from each day's manifest, read incrementally (it is append-only: only the
    bytes added since the last page are read). Runs that never finished are not in any manifest:
    they are listed, from a scan of the day folders, when ``unfinished`` is asked for.
    """

    def __init__(self, store: TraceStore) -> None:
        self.store = store
        self._rows: dict[str, RunRow] = {}
        self._days: dict[Path, tuple[int, list[_Place]]] = {}  # manifest bytes read, runs in it
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

    def _candidates(
        self, day: date | None, cursor: Cursor | None, unfinished: bool
    ) -> Iterator[tuple[Cursor, RunRow | None]]:
        """(the cursor that resumes at it, row) of each run, newest first; a cursor's offset counts
        from the oldest run of its day, so it stays put while newer runs arrive."""
        for when, folder in self.store.day_folders():
            if (day is not None and when != day) or (cursor is not None and when > cursor.day):
                continue
            ids = self._unfinished(folder) if unfinished else self._finished(folder)
            top = len(ids) - 1
            if cursor is not None and when == cursor.day:
                top = min(top, cursor.offset)
            for index in range(top, -1, -1):
                yield Cursor(when, index), self._row(folder, ids[index])

    def _finished(self, folder: Path) -> list[_Place]:
        """The runs of the day's manifest in finish order, reading only what was appended since."""
        with self._lock:
            done, ids = self._days.get(folder, (0, []))
            try:
                with (folder / MANIFEST_NAME).open("rb") as manifest:
                    manifest.seek(done)
                    fresh = manifest.read()
            except FileNotFoundError:
                return ids
            whole = fresh.rfind(b"\n") + 1  # a line still being written is read next time
            if whole:
                runs = finished_runs(fresh[:whole])
                ids = ids + [(r.run_id, r.journal, r.offset, r.at) for r in runs]
                self._days[folder] = (done + whole, ids)
            return ids

    def _unfinished(self, folder: Path) -> list[_Place]:
        """The day's runs that its manifest does not name: files by name, then journal frames in
        the order written."""
        known = {place[0] for place in self._finished(folder)}
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
    """Pages of a PostgreSQL store: ``trace_runs`` newest first, each row's header from its record."""

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
            batch = self.store.newest(offset, self.BATCH, day=day, unfinished=unfinished)
            for n, (run_id, status, line) in enumerate(batch):
                row = _header_row(run_id, status, line)
                if not keep(row):
                    continue
                if len(rows) == size:
                    return rows, Cursor(date.min, offset + n)
                rows.append(row)
            if len(batch) < self.BATCH:
                return rows, None
            offset += len(batch)


def _header_row(run_id: str, status: str, line: str) -> RunRow:
    try:
        header = json.loads(line)
    except ValueError:
        header = {}
    groups = tuple(str(g) for g in header.get("groups") or ())
    question, created = str(header.get("question", "")), str(header.get("created_at", ""))
    return RunRow(
        run_id, created, status, question, groups, header.get("caller"), None, status != "incomplete"
    )


def lister_for(store: TraceStore) -> RunLister | StoreLister:
    """The lister that suits the store: day folders for files, ``trace_runs`` for PostgreSQL."""
    return StoreLister(store) if isinstance(store, PgTraceStore) else RunLister(store)
