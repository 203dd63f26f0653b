"""The folder store's side of the day journals: a run's records in memory until it ends, the open
journal of each day, and the run ids already taken.

    PendingFrame   what a ``TraceWriter`` writes into for a journal run: its lines reach the day's
                   journal as one frame when the run finishes (the writer's sync) or is closed
                   unfinished; it keeps the frame's link in its journal's run chain (``prev``)
    Journals       this process's open journal per day, created on first use (and its folder entry
                   synced), replaced by a new one after a failed write or sync; the store hears of
                   each journal opened (to anchor the day before) and closed (to anchor its tail)
    locate         where a run's trace is: its own file, or its journal frame (a seek, else a scan)
    TakenIds       run ids in use: this store's runs going on, and those the recent day manifests name
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from evidence_loop.tools.errors import TraceError
from evidence_loop.traces.journal.journal import (
    ZLIB_LEVEL,
    Frame,
    Fsync,
    Journal,
    journal_files,
    journal_name,
    read_frame,
    scan_file,
)
from evidence_loop.traces.journal.manifest import MANIFEST_NAME, FinishedRun, finished_runs

OPEN_DAYS: Final = 3  # journals kept open: today, yesterday (runs begun before midnight), one spare
_RUN_ID: Final = re.compile(rb'\{"run_id": ?"([A-Za-z0-9._-]+)"')


JournalHook = Callable[[Path, Journal], None]


def _ignore(_day: Path, _journal: Journal) -> None:
    return None


class Journals:
    """The journal this process appends to, one per day folder."""

    def __init__(
        self,
        fsync: Fsync,
        level: int | None = ZLIB_LEVEL,
        *,
        opened: JournalHook = _ignore,
        closing: JournalHook = _ignore,
        within: float | None = None,
    ) -> None:
        self._fsync = fsync
        self._level = level
        self._within = within  # None: each run waits for its sync; else synced that long after
        self._open: dict[Path, Journal] = {}
        self._lock = threading.Lock()
        self._opened = opened  # a new day's journal (not one replacing a broken journal)
        self._closing = closing  # a whole journal about to be closed (not a broken one)

    def for_day(self, day: Path, new_dirs: Iterable[Path] = ()) -> Journal:
        """The day's open journal; a new one (its folder entry durable) if none is open or it broke.
        A journal opened for a day this process had none open (not one replacing a broken journal)
        is announced (``opened``) once it is in place."""
        with self._lock:
            journal = self._open.pop(day, None)
            if journal is not None and not journal.broken:
                self._open[day] = journal
                return journal
            replacing = journal is not None
            if journal is not None:
                journal.close()  # broken: its runs have failed already
            journal = Journal(day / journal_name(), self._fsync, self._level, within=self._within)
            try:
                self._sync_folders(sorted({day, *(d.parent for d in new_dirs)}))
            except OSError:
                journal.close()
                raise
            self._open[day] = journal
            while len(self._open) > OPEN_DAYS:
                oldest = min(self._open)
                self._close(oldest, self._open.pop(oldest))
        if not replacing:
            self._opened(day, journal)
        return journal

    def close(self) -> None:
        with self._lock:
            for day, journal in self._open.items():
                self._close(day, journal)
            self._open.clear()

    def _close(self, day: Path, journal: Journal) -> None:
        if not journal.broken:
            with contextlib.suppress(OSError):  # an anchor not written: the journal's end unanchored
                self._closing(day, journal)
        journal.close()

    def _sync_folders(self, folders: list[Path]) -> None:
        if os.name == "nt":  # folders cannot be opened for fsync on Windows
            return
        for folder in folders:
            fd = os.open(folder, os.O_RDONLY)
            try:
                self._fsync(fd)
            finally:
                os.close(fd)


class PendingFrame(io.BytesIO):
    """What the writer takes for a file: its committed lines become one frame of the day's journal
    when the run finishes (``commit``, the writer's sync) or is closed unfinished (unsynced)."""

    def __init__(
        self, run_id: str, journal: Callable[[], Journal], done: Callable[[PendingFrame], None]
    ) -> None:
        super().__init__()
        self.run_id = run_id
        self._journal = journal
        self._done = done
        self._sent = False
        self.committed = False
        self.journal: Journal | None = None
        self.offset = -1
        self.prev = ""  # the hash the frame before it in its journal ended on
        self.last = ""  # the hash its own records end on

    def fileno(self) -> int:
        return -1

    def commit(self) -> None:
        """Append the frame and return once a sync covers it, or once it is written to a journal
        that its thread syncs (``OSError`` when it cannot be)."""
        number = self._send()
        if self.journal is not None:
            self.journal.wait_durable(number)
        self.committed = True

    def close(self) -> None:
        """Without a commit, the run's lines so far go to the journal (an incomplete trace), unsynced;
        a disk that refuses them loses that record only (the run raised already)."""
        if not self.closed:
            with contextlib.suppress(OSError):
                self._send()
            super().close()
            if not self.committed:
                self._done(self)  # a finished run is released once its manifest line names it

    def _send(self) -> int:
        if self._sent:
            return 0
        self._sent = True
        data = self.getvalue()
        committed = data[: data.rfind(b"\n") + 1]  # a torn line (a failed write) is left out
        if not committed:
            return 0
        journal = self._journal()
        appended = journal.append(self.run_id, committed)
        self.offset, self.prev, self.last = appended.offset, appended.prev, appended.last
        self.journal = journal
        return appended.number


class Placed:
    """Where the day manifests place each finished run, read as they grow (a few days kept): what
    makes reading run after run of a day (``replay --all``) one read of its manifest, not one each.
    A place is only a hint: the frame found there must name the run."""

    DAYS = 4

    def __init__(self) -> None:
        self._days: dict[Path, tuple[int, dict[str, FinishedRun]]] = {}
        self._lock = threading.Lock()

    def get(self, day: Path, run_id: str) -> FinishedRun | None:
        with self._lock:
            done, runs = self._days.pop(day, (0, {}))
            try:
                with (day / MANIFEST_NAME).open("rb") as manifest:
                    size = os.fstat(manifest.fileno()).st_size
                    if size < done:  # rewritten since: read it again
                        done, runs = 0, {}
                    manifest.seek(done)
                    fresh = manifest.read(size - done)
            except (FileNotFoundError, NotADirectoryError):
                return None
            whole = fresh.rfind(b"\n") + 1
            runs.update((run.run_id, run) for run in finished_runs(fresh[:whole]))
            self._days[day] = (done + whole, runs)
            while len(self._days) > self.DAYS:
                del self._days[next(iter(self._days))]
            return runs.get(run_id)


def locate(run_id: str, days: list[Path], placed: Placed) -> tuple[Path, Frame | None] | None:
    """Where the trace of ``run_id`` is, ``days`` newest first: its own file, else the journal frame
    its day manifest places (a seek), else one found by scanning the journals (a run that never
    finished, or a manifest line lost or wrong); None when it is nowhere."""
    for day in days:
        own = day / f"{run_id}.jsonl"
        if own.is_file():
            return own, None
        place = placed.get(day, run_id)
        if place is not None and place.journal is not None and place.offset is not None:
            frame = read_frame(day / place.journal, place.offset, run_id)
            if frame is not None:
                return day / place.journal, frame
    for day in days:
        for journal in journal_files(day):
            for item in scan_file(journal):
                if isinstance(item, Frame) and item.run_id == run_id:
                    return journal, item
    return None


def frame_records(path: Path, frame: Frame) -> bytes:
    """The records of a journal frame; ``TraceError`` when its compressed records do not read back."""
    if frame.error is not None:
        raise TraceError(f"trace of run {frame.run_id} in {path.name}@{frame.offset}: {frame.error}")
    return frame.records


class TakenIds:
    """Run ids in use in a store: those of runs going on here, and those the day manifests name (every
    finished run); each manifest is read again only from where it was last read, once it has grown.
    A run that never finished is named by no manifest: its id is not checked once it ended."""

    def __init__(self) -> None:
        self._own: set[str] = set()
        self._read: dict[Path, tuple[int, set[str]]] = {}
        self._lock = threading.Lock()

    def take(self, run_id: str, days: Iterable[Path]) -> bool:
        """Record ``run_id`` as begun here; False when it was in use already (going on here, or named
        by the manifest of one of ``days``; the ids of other days are no longer kept)."""
        with self._lock:
            wanted = set(days)
            for stale in set(self._read) - wanted:
                del self._read[stale]
            if run_id in self._own or any(run_id in self._named(day) for day in wanted):
                return False
            self._own.add(run_id)
            return True

    def release(self, run_id: str) -> None:
        """The run ended (its manifest line names it if it finished)."""
        with self._lock:
            self._own.discard(run_id)

    def finished(self, run_id: str, day: Path, line: tuple[int, int]) -> None:
        """The run ended, named by the manifest line of ``day`` this store wrote at ``line`` (start,
        end): that line need not be read back when it follows what was read (no other line between)."""
        with self._lock:
            self._own.discard(run_id)
            done, ids = self._read.get(day, (-1, set()))
            if done == line[0]:
                ids.add(run_id)
                self._read[day] = (line[1], ids)

    def _named(self, day: Path) -> set[str]:
        done, ids = self._read.get(day, (0, set()))
        try:
            size = os.stat(day / MANIFEST_NAME).st_size
        except (FileNotFoundError, NotADirectoryError):
            return ids
        if size > done:
            with (day / MANIFEST_NAME).open("rb") as manifest:
                manifest.seek(done)
                fresh = manifest.read(size - done)
            whole = fresh.rfind(b"\n") + 1
            ids.update(m.decode() for m in _RUN_ID.findall(fresh, 0, whole))  # not a copy per run
            self._read[day] = (done + whole, ids)
        return ids
