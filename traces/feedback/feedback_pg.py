"""Reviewers' verdicts in the shared store: ``feedback_records``, one row per record, append-only.

Each row holds the very line a folder journal would (``traces.feedback.feedback``), so the chain and its
check are the same. Appending takes a transaction-scoped advisory lock, reads the newest record and
the tail anchor (the one row of ``feedback_tail``), inserts the next record and moves the anchor to
it, in one transaction: replicas posting at once stay in one chain, and a row deleted behind the
append-only trigger (the last one too) breaks it. The tables and the trigger come from
``evloop migrate`` (tools/store/pg_schema.py, migrations 3 and 5); a log written before migration 5
has no anchor until its next append.
"""

from __future__ import annotations

from datetime import UTC, date
from typing import Any, Final

from evidence_loop.tools.store.pg import connect, unavailable
from evidence_loop.traces.feedback.feedback import (
    FeedbackEntry,
    FeedbackRecord,
    LogRead,
    TailAnchor,
    Unreadable,
    next_place,
    parse_record,
    sealed,
    since_only,
)

FEEDBACK_LOCK: Final = 0x65766C6F6F71  # one writer of the chain at a time, across replicas
_NEWEST = "SELECT line FROM feedback_records ORDER BY seq DESC LIMIT 1"
_TAIL = "SELECT seq, hash FROM feedback_tail"
_INSERT = "INSERT INTO feedback_records (seq, run_id, created_at, line) VALUES (%s, %s, %s, %s)"
_ANCHOR = (
    "INSERT INTO feedback_tail (one, seq, hash) VALUES (true, %s, %s) "
    "ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash"
)


class PgFeedback:
    """The reviews of a PostgreSQL store."""

    def __init__(self, url: str) -> None:
        self.url = url

    def append(self, entry: FeedbackEntry) -> FeedbackRecord:
        """Add one verdict at the end of the log and anchor the tail there, committed when this returns."""
        with unavailable(self.url), connect(self.url) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (FEEDBACK_LOCK,))
            row = conn.execute(_NEWEST).fetchone()
            last = parse_record(row[0]) if row else None
            record = sealed(entry, *next_place(last, _anchor(conn.execute(_TAIL).fetchone())))
            conn.execute(_INSERT, (record.seq, record.run_id, record.created_at, record.line()))
            conn.execute(_ANCHOR, (record.seq, record.hash))
        return record

    def records(self, since: date | None = None) -> list[FeedbackRecord]:
        """Every record in log order; ``since`` keeps those posted on that UTC day or later."""
        return since_only(self.read_log(), since)

    def read_log(self) -> LogRead:
        """Every row in log order (a row that holds no record named by its seq), and the anchor."""
        with unavailable(self.url), connect(self.url) as conn:
            rows = conn.execute("SELECT seq, created_at, line FROM feedback_records ORDER BY seq").fetchall()
            anchor = _anchor(conn.execute(_TAIL).fetchone())
        read = LogRead([], [], [], [], anchor)
        for seq, created, line in rows:
            record = parse_record(line)
            if record is None:
                read.unreadable.append(Unreadable(f"feedback_records row {seq}", len(read.records), False))
                continue
            read.records.append(record)
            read.places.append(f"feedback_records row {seq}")
            read.days.append(created.astimezone(UTC).date().isoformat())
        return read


def _anchor(row: tuple[Any, ...] | None) -> TailAnchor | None:
    return TailAnchor(int(row[0]), str(row[1])) if row is not None else None
