"""Newest runs first, a page at a time, for the audit console: read from the day folders, not all traces.

    RunRow                 what a list shows of one run: time, status, question, groups, latency
    read_row(path)         a row from a trace file's first and last lines only
    RunLister(store)       pages of rows, newest first, filtered, with a cursor that resumes a page

A day's runs come from its ``finished.manifest`` (finish order, newest last) and the files of the
day that it does not name (runs still going, or stopped). Only the rows a page needs are read,
two short reads per run; a finished run's row never changes, so rows are kept once read and a
filter that scans further than one page pays for each run once per process. A store whose traces
are not files (PostgreSQL) is listed from ``store.list()`` and each run's header.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

from evidence_loop.tools.errors import NotFoundError, TraceError
from evidence_loop.traces.manifest import MANIFEST_NAME
from evidence_loop.traces.store import TraceStore

_RUN_ID: Final = re.compile(rb'\{"run_id":"([A-Za-z0-9._-]+)"')
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
        header = json.loads(first)
        last = json.loads(_last_line(path, stat.st_size)) if stat.st_size > len(first) else {}
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return _unreadable(path)
    if not isinstance(header, dict) or header.get("type") != "header":
        return _unreadable(path)
    finished = isinstance(last, dict) and last.get("type") == "footer"
    created = str(header.get("created_at", ""))
    try:
        latency = round((stat.st_mtime - datetime.fromisoformat(created).timestamp()) * 1000)
    except ValueError:
        latency = None
    return RunRow(
        run_id=str(header.get("run_id", path.stem)),
        created_at=created,
        status=str(last.get("outcome_status")) if finished else "incomplete",
        question=str(header.get("question", "")),
        groups=tuple(str(g) for g in header.get("groups") or ()),
        caller=header.get("caller"),
        latency_ms=latency if finished and latency is not None and latency >= 0 else None,
        finished=finished,
    )


def _unreadable(path: Path) -> RunRow:
    return RunRow(path.stem, "", "unreadable", "", (), None, None, False)


class RunLister:
    """Pages of a trace store's runs, newest first."""

    def __init__(self, store: TraceStore) -> None:
        self.store = store
        self._rows: dict[str, RunRow] = {}
        self._lock = threading.Lock()

    def page(
        self,
        keep: Callable[[RunRow], bool],
        *,
        size: int = 50,
        day: date | None = None,
        cursor: Cursor | None = None,
    ) -> tuple[list[RunRow], Cursor | None]:
        """Up to ``size`` rows that ``keep`` accepts, from ``cursor`` on (or the newest, or the
        newest of ``day``), and the cursor of the next page (None: no more)."""
        rows: list[RunRow] = []
        for at, row in self._candidates(day, cursor):
            if row is None or not keep(row):
                continue
            if len(rows) == size:
                return rows, at
            rows.append(row)
        return rows, None

    def _candidates(self, day: date | None, cursor: Cursor | None) -> Iterator[tuple[Cursor, RunRow | None]]:
        for when, folder in self.store.day_folders():
            if day is not None and when != day:
                continue
            if cursor is not None and when > cursor.day:
                continue
            start = cursor.offset if cursor is not None and when == cursor.day else 0
            names = self._day_runs(folder)
            for offset in range(start, len(names)):
                yield Cursor(when, offset), self._row(folder, names[offset])

    def _day_runs(self, folder: Path) -> list[str]:
        """The day's run ids, newest first: files the manifest does not name, then the manifest's."""
        try:
            finished = [m.decode() for m in _RUN_ID.findall((folder / MANIFEST_NAME).read_bytes())]
        except FileNotFoundError:
            finished = []
        known = set(finished)
        with os.scandir(folder) as entries:
            others = sorted(
                (e.name[:-6] for e in entries if e.name.endswith(".jsonl") and e.name[:-6] not in known),
                reverse=True,
            )
        return others + finished[::-1]

    def _row(self, folder: Path, run_id: str) -> RunRow | None:
        row = self._rows.get(run_id)
        if row is not None:
            return row
        row = read_row(folder / f"{run_id}.jsonl")
        if row is not None and row.finished:
            with self._lock:
                if len(self._rows) >= CACHE_MAX:
                    self._rows.clear()
                self._rows[run_id] = row
        return row


class StoreLister:
    """Pages of a store that keeps no files (PostgreSQL): its summaries, each row's header read."""

    def __init__(self, store: TraceStore) -> None:
        self.store = store

    def page(
        self,
        keep: Callable[[RunRow], bool],
        *,
        size: int = 50,
        day: date | None = None,
        cursor: Cursor | None = None,
    ) -> tuple[list[RunRow], Cursor | None]:
        summaries = self.store.list()[::-1]
        rows: list[RunRow] = []
        start = cursor.offset if cursor is not None else 0
        for n in range(start, len(summaries)):
            summary = summaries[n]
            if day is not None and not summary.created_at.startswith(day.isoformat()):
                continue
            row = self._row(summary.run_id, summary.outcome_status or summary.status)
            if row is None or not keep(row):
                continue
            if len(rows) == size:
                return rows, Cursor(date.min, n)
            rows.append(row)
        return rows, None

    def _row(self, run_id: str, status: str) -> RunRow | None:
        try:
            header: Any = self.store.read(run_id).header
        except (NotFoundError, TraceError):
            return None
        groups = tuple(header.groups)
        return RunRow(run_id, header.created_at, status, header.question, groups, header.caller, None, True)


def lister_for(store: TraceStore) -> RunLister | StoreLister:
    """The lister that suits the store: day folders for files, summaries otherwise."""
    return StoreLister(store) if type(store) is not TraceStore else RunLister(store)
