"""Reviewers' verdicts on runs: append-only, hash-chained, each one linked to the run it judges.

    FeedbackEntry        what a reviewer posts about one run (its verdict, the right doc_id, a note)
    FeedbackRecord       the entry as stored: its place in the log, the run's final hash, the chain
    FeedbackLog          where a store keeps them: ``traces.feedback.feedback_folder`` (a journal per UTC day
                         beside the traces), ``traces.feedback.feedback_pg`` (PostgreSQL)
    LogRead              a log as read back: its records, the lines that hold none, its tail anchor
    latest(records)      the verdict that stands for each run (a later one supersedes, never rewrites)
    standing(records)    each reviewer's latest verdict on one run (what ``calibrate --feedback`` reads)
    next_place(...)      the seq and ``prev`` of the record an append adds

Each record carries ``run_hash``, the final hash of the run it judges (what the reviewer saw), and
``prev``, the hash of the record before it in the whole log (the first record of a day links to
the last of an earlier day), so a changed, dropped or re-ordered record breaks the chain. Each append
also rewrites the log's tail anchor (the new record's seq and hash), so a dropped last record breaks
it too: ``traces.feedback.feedback_chain`` checks both. A line that holds no record is reported (a warning in
the log, and in ``LogRead``), never skipped in silence.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Final, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evidence_loop.traces.records.hashing import record_hash
from evidence_loop.traces.records.schema import RUN_ID_PATTERN, parse_utc

Verdict = Literal[
    "correct",
    "should_have_refused",
    "should_have_answered",
    "wrong_evidence",
    "missed_conflict",
    "false_conflict",
]
VERDICTS: Final[tuple[str, ...]] = get_args(Verdict)
NOTE_CHARS: Final = 2000
GENESIS: Final = ""  # the ``prev`` of the first record of a log
_LOG = logging.getLogger(__name__)


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
class TailAnchor:
    """The last record a log held when it was last appended to."""

    seq: int
    hash: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A line of the log that holds no record: where it is, and how many records come before it."""

    where: str
    after: int  # records read before it
    cut_short: bool  # the log's very last bytes, with no newline: a write interrupted


@dataclass(frozen=True, slots=True)
class LogRead:
    """A feedback log as read back, records in log order."""

    records: list[FeedbackRecord]
    places: list[str]  # where each record is ("2026-03-01.journal line 4")
    days: list[str | None]  # the UTC day each record's place says it was posted on (None: any)
    unreadable: list[Unreadable] = field(default_factory=list)
    anchor: TailAnchor | None = None


class FeedbackLog(Protocol):
    """Where reviews are kept: appended to, read back in order."""

    def append(self, entry: FeedbackEntry) -> FeedbackRecord: ...
    def records(self, since: date | None = None) -> list[FeedbackRecord]: ...
    def read_log(self) -> LogRead: ...


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


def standing(records: Iterable[FeedbackRecord]) -> list[FeedbackRecord]:
    """The latest verdict of each reviewer among one run's verdicts (oldest first), in the order posted."""
    mine: dict[str | None, FeedbackRecord] = {}
    for record in records:
        mine.pop(record.reviewer, None)
        mine[record.reviewer] = record
    return list(mine.values())


def by_run(records: Iterable[FeedbackRecord]) -> Mapping[str, list[FeedbackRecord]]:
    """Every verdict posted about each run, oldest first."""
    grouped: dict[str, list[FeedbackRecord]] = {}
    for record in records:
        grouped.setdefault(record.run_id, []).append(record)
    return grouped


def next_place(last: FeedbackRecord | None, anchor: TailAnchor | None) -> tuple[int, str]:
    """The seq and ``prev`` of the next record: after the newest readable record, or after the one the
    tail anchor names when that is as far or further (a last record dropped or made unreadable leaves
    its gap in the chain for good, instead of the next record quietly taking its place)."""
    if anchor is not None and anchor.seq >= 1 and (last is None or anchor.seq >= last.seq):
        return anchor.seq + 1, anchor.hash
    return (last.seq + 1, last.hash) if last is not None else (1, GENESIS)


def parse_anchor(text: str | bytes) -> TailAnchor:
    """A stored tail anchor; one that does not read names seq -1 (the check then fails: an anchor was
    there, and it cannot say where the log ended)."""
    try:
        raw = json.loads(text)
    except ValueError:
        return TailAnchor(-1, "")
    seq, digest = (raw.get("seq"), raw.get("hash")) if isinstance(raw, dict) else (None, None)
    return TailAnchor(seq, digest) if type(seq) is int and isinstance(digest, str) else TailAnchor(-1, "")


def since_only(read: LogRead, since: date | None) -> list[FeedbackRecord]:
    """The records of a log read back, those posted before ``since`` left out; each line that holds no
    record is logged (a warning), never skipped in silence."""
    for line in read.unreadable:
        _LOG.warning("feedback log: %s holds no record; it was skipped", line.where)
    first = since.isoformat() if since is not None else ""
    return [record for record in read.records if record.created_at[:10] >= first]
