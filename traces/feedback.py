"""Reviewers' verdicts on runs: append-only, hash-chained, each one linked to the run it judges.

    FeedbackEntry        what a reviewer posts about one run (its verdict, the right doc_id, a note)
    FeedbackRecord       the entry as stored: its place in the log, the run's final hash, the chain
    FolderFeedback       the folder store's log: ``feedback/YYYY-MM-DD.journal`` under the trace root
    latest(records)      the verdict that stands for each run (a later one supersedes, never rewrites)
    check_chain(records) whether every record still hashes and links to the one before it

Layout of the folder store (outside the day folders, so pruning traces keeps the reviews)::

    feedback/2026-03-01.journal     one record per line, in the order they were posted
    feedback/.lock                  taken while appending, so writers of several processes stay in line

Each record carries ``run_hash``, the final hash of the run it judges (what the reviewer saw), and
``prev``, the hash of the record before it in the whole log (the first record of a day links to
the last of an earlier day), so a changed, dropped or re-ordered line breaks the chain. A journal's
name does not end in ``.jsonl`` and it is not inside a day folder: the trace store never reads it.
PostgreSQL keeps the same records in ``feedback_records`` (``traces.feedback_pg``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Final, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evidence_loop.traces.hashing import record_hash
from evidence_loop.traces.schema import RUN_ID_PATTERN, parse_utc

Verdict = Literal[
    "correct",
    "should_have_refused",
    "should_have_answered",
    "wrong_evidence",
    "missed_conflict",
    "false_conflict",
]
VERDICTS: Final[tuple[str, ...]] = get_args(Verdict)
_IN_PROCESS = threading.Lock()  # where no file lock exists (Windows), one process keeps the chain whole
JOURNAL_SUFFIX: Final = ".journal"
NOTE_CHARS: Final = 2000
GENESIS: Final = ""  # the ``prev`` of the first record of a log


class FeedbackRecord(BaseModel):
    """One stored verdict: the line a journal holds (and a ``feedback_records`` row)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["feedback"] = "feedback"
    seq: int = Field(ge=1, description="its place in the whole log, from 1")
    run_id: str = Field(pattern=RUN_ID_PATTERN)
    run_hash: str = Field(description="the final hash of the run it judges")
    verdict: Verdict
    doc_id: str | None = Field(default=None, description="the document that holds the right answer")
    note: str | None = Field(default=None, max_length=NOTE_CHARS)
    reviewer: str | None = Field(default=None, description="the API key name that posted it")
    created_at: str
    prev: str = Field(description="the hash of the record before it in the log ('' for the first)")
    hash: str = ""

    def line(self) -> str:
        return self.model_dump_json()


@dataclass(frozen=True, slots=True)
class FeedbackEntry:
    """What a reviewer says about one finished run; the log gives it its place and hashes."""

    run_id: str
    run_hash: str
    verdict: Verdict
    created_at: str
    reviewer: str | None = None
    doc_id: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """The verdict on a log: ok, or the first record (by seq) that does not hash or link."""

    ok: bool
    records: int
    first_bad_seq: int | None = None
    reason: str | None = None


class FeedbackLog(Protocol):
    """Where reviews are kept: appended to, read back in order."""

    def append(self, entry: FeedbackEntry) -> FeedbackRecord: ...
    def records(self, since: date | None = None) -> list[FeedbackRecord]: ...


def sealed(entry: FeedbackEntry, seq: int, prev: str) -> FeedbackRecord:
    """The record ``entry`` becomes at position ``seq`` after a record hashed ``prev``."""
    parse_utc(entry.created_at)
    record = FeedbackRecord(
        seq=seq,
        run_id=entry.run_id,
        run_hash=entry.run_hash,
        verdict=entry.verdict,
        doc_id=entry.doc_id,
        note=entry.note,
        reviewer=entry.reviewer,
        created_at=entry.created_at,
        prev=prev,
    )
    return record.model_copy(update={"hash": record_hash(record.model_dump())})


def parse_record(line: str | bytes) -> FeedbackRecord | None:
    """One stored record, or None for a torn or foreign line."""
    try:
        return FeedbackRecord.model_validate_json(line)
    except ValidationError:
        return None


def latest(records: Iterable[FeedbackRecord]) -> dict[str, FeedbackRecord]:
    """The standing verdict of each reviewed run: the last one posted about it."""
    standing: dict[str, FeedbackRecord] = {}
    for record in records:
        standing[record.run_id] = record
    return standing


def check_chain(records: Sequence[FeedbackRecord]) -> ChainCheck:
    """Whether the log is whole: seq 1, 2, 3...; each record's hash its own; each ``prev`` the hash
    of the record before it."""
    prev = GENESIS
    for n, record in enumerate(records, 1):
        if record.seq != n:
            return ChainCheck(False, len(records), n, f"record {n} is missing (found seq {record.seq})")
        if record.hash != record_hash(record.model_dump()):
            return ChainCheck(False, len(records), n, f"record {n} was changed after it was written")
        if record.prev != prev:
            return ChainCheck(False, len(records), n, f"record {n} does not follow record {n - 1}")
        prev = record.hash
    return ChainCheck(True, len(records))


def by_run(records: Iterable[FeedbackRecord]) -> Mapping[str, list[FeedbackRecord]]:
    """Every verdict posted about each run, oldest first."""
    grouped: dict[str, list[FeedbackRecord]] = {}
    for record in records:
        grouped.setdefault(record.run_id, []).append(record)
    return grouped


class FolderFeedback:
    """The reviews of a folder trace store: one journal per UTC day under ``root``."""

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self.root = Path(root)
        self._fsync = fsync

    def append(self, entry: FeedbackEntry) -> FeedbackRecord:
        """Add one verdict at the end of the log (durable when this returns)."""
        self.root.mkdir(parents=True, exist_ok=True)
        day = parse_utc(entry.created_at).date().isoformat()
        fd = os.open(self.root / ".lock", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            with _IN_PROCESS:
                if sys.platform != "win32":
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
                last = self._last()
                record = sealed(entry, last.seq + 1 if last else 1, last.hash if last else GENESIS)
                self._write(self.root / f"{day}{JOURNAL_SUFFIX}", record.line().encode("utf-8") + b"\n")
        finally:
            os.close(fd)
        return record

    def records(self, since: date | None = None) -> list[FeedbackRecord]:
        """Every readable record, in log order; ``since`` skips the journals of earlier days."""
        out: list[FeedbackRecord] = []
        for journal in self._journals():
            if since is not None and journal.name < since.isoformat():
                continue
            for line in journal.read_bytes().splitlines():
                record = parse_record(line)
                if record is not None:
                    out.append(record)
        return out

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
