"""Reviewers' verdicts in the shared store: ``feedback_records``, one row per record, append-only.

Each row holds the very line a folder journal would (``traces.feedback``), so the chain and its
check are the same. Appending takes a transaction-scoped advisory lock, reads the newest record and
inserts the next one: replicas posting at once stay in one chain. The table and its append-only
trigger come from ``evloop migrate`` (tools/store/pg_schema.py, migration 3).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Final

from evidence_loop.tools.store.pg import connect, unavailable
from evidence_loop.traces.feedback import GENESIS, FeedbackEntry, FeedbackRecord, parse_record, sealed

FEEDBACK_LOCK: Final = 0x65766C6F6F71  # one writer of the chain at a time, across replicas
_NEWEST = "SELECT line FROM feedback_records ORDER BY seq DESC LIMIT 1"
_INSERT = "INSERT INTO feedback_records (seq, run_id, created_at, line) VALUES (%s, %s, %s, %s)"


class PgFeedback:
    """The reviews of a PostgreSQL store."""

    def __init__(self, url: str) -> None:
        self.url = url

    def append(self, entry: FeedbackEntry) -> FeedbackRecord:
        """Add one verdict at the end of the log, committed when this returns."""
        with unavailable(self.url), connect(self.url) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (FEEDBACK_LOCK,))
            row = conn.execute(_NEWEST).fetchone()
            last = parse_record(row[0]) if row else None
            record = sealed(entry, last.seq + 1 if last else 1, last.hash if last else GENESIS)
            conn.execute(_INSERT, (record.seq, record.run_id, record.created_at, record.line()))
        return record

    def records(self, since: date | None = None) -> list[FeedbackRecord]:
        """Every readable record in log order; ``since`` keeps those posted on that UTC day or later."""
        start = datetime.combine(since, time(), tzinfo=UTC) if since else datetime(1970, 1, 1, tzinfo=UTC)
        sql = "SELECT line FROM feedback_records WHERE created_at >= %s ORDER BY seq"
        with unavailable(self.url), connect(self.url) as conn:
            rows = conn.execute(sql, (start,)).fetchall()
        return [r for r in (parse_record(line) for (line,) in rows) if r is not None]
