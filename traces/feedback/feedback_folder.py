"""The reviews of a folder trace store: one append-only journal per UTC day, and the chain's tail anchor.

Layout (outside the day folders, so pruning traces keeps the reviews)::

    feedback/2026-03-01.journal     one record per line, in the order they were posted
    feedback/anchor                 the seq and hash of the last record (``traces.feedback.feedback_chain``),
                                    rewritten after each append: a new file renamed over the old one
    feedback/.lock                  taken while appending, so writers of several processes stay in line

A journal's name does not end in ``.jsonl`` and it is not inside a day folder: the trace store never
reads it. A record is appended (and synced) before the anchor moves to it: a stop between the two
leaves one record after the anchor, which the check counts as unanchored, never as a failure.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import date
from pathlib import Path
from typing import Final

from evidence_loop.traces.feedback.feedback import (
    FeedbackEntry,
    FeedbackRecord,
    LogRead,
    TailAnchor,
    Unreadable,
    next_place,
    parse_anchor,
    parse_record,
    sealed,
    since_only,
)
from evidence_loop.traces.records.schema import parse_utc

_IN_PROCESS = threading.Lock()  # where no file lock exists (Windows), one process keeps the chain whole
JOURNAL_SUFFIX: Final = ".journal"
ANCHOR_NAME: Final = "anchor"


class FolderFeedback:
    """The reviews of a folder trace store: one journal per UTC day under ``root``."""

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self.root = Path(root)
        self._fsync = fsync

    def append(self, entry: FeedbackEntry) -> FeedbackRecord:
        """Add one verdict at the end of the log, then anchor the tail there (durable when this returns)."""
        self.root.mkdir(parents=True, exist_ok=True)
        day = parse_utc(entry.created_at).date().isoformat()
        fd = os.open(self.root / ".lock", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            with _IN_PROCESS:
                if sys.platform != "win32":
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
                record = sealed(entry, *next_place(self._last(), self._anchor()))
                self._write(self.root / f"{day}{JOURNAL_SUFFIX}", record.line().encode("utf-8") + b"\n")
                self._write_anchor(TailAnchor(record.seq, record.hash))
        finally:
            os.close(fd)
        return record

    def records(self, since: date | None = None) -> list[FeedbackRecord]:
        """Every record, in log order; ``since`` keeps those posted on that UTC day or later."""
        return since_only(self.read_log(), since)

    def read_log(self) -> LogRead:
        """The whole log: each journal's lines in order, those that hold no record named, the anchor."""
        read = LogRead([], [], [], [], self._anchor())
        for journal in self._journals():
            lines = journal.read_bytes().split(b"\n")
            for number, line in enumerate(lines, 1):
                if number == len(lines) and not line:
                    break  # the newline that ends the journal
                record = parse_record(line)
                if record is None:  # with no newline after it, a write cut short (the journal's end)
                    where = f"{journal.name} line {number}"
                    read.unreadable.append(Unreadable(where, len(read.records), number == len(lines)))
                    continue
                read.records.append(record)
                read.places.append(f"{journal.name} line {number}")
                read.days.append(journal.name.removesuffix(JOURNAL_SUFFIX))
        return read

    def _journals(self) -> list[Path]:
        try:
            names = sorted(p for p in os.listdir(self.root) if p.endswith(JOURNAL_SUFFIX))
        except FileNotFoundError:
            return []
        return [self.root / name for name in names]

    def _last(self) -> FeedbackRecord | None:
        """The newest record: the last readable line of the newest journal that has one."""
        for journal in reversed(self._journals()):
            for line in reversed(journal.read_bytes().splitlines()):
                record = parse_record(line)
                if record is not None:
                    return record
        return None

    def _anchor(self) -> TailAnchor | None:
        """The tail anchor beside the journals (None: a log written before anchors, or none yet)."""
        try:
            return parse_anchor((self.root / ANCHOR_NAME).read_bytes())
        except FileNotFoundError:
            return None

    def _write_anchor(self, anchor: TailAnchor) -> None:
        """The new anchor as a new file renamed over the old one: a reader sees the old or the new."""
        temporary = self.root / f"{ANCHOR_NAME}.tmp"
        temporary.write_bytes(json.dumps({"seq": anchor.seq, "hash": anchor.hash}).encode() + b"\n")
        if self._fsync:
            with temporary.open("rb") as file:
                os.fsync(file.fileno())
        os.replace(temporary, self.root / ANCHOR_NAME)
        if self._fsync and os.name != "nt":
            folder = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)

    def _write(self, journal: Path, line: bytes) -> None:
        created = not journal.exists()
        fd = os.open(journal, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size > 0 and not _ends_with_newline(fd):
                line = b"\n" + line  # a torn last line stays alone, the new record whole
            os.write(fd, line)
            if self._fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if created and self._fsync:
            folder = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)


def _ends_with_newline(fd: int) -> bool:
    return os.pread(fd, 1, os.fstat(fd).st_size - 1) == b"\n"
