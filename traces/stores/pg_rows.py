"""A run's records in PostgreSQL: one compressed row per run, written by groups; older rows read too.

From schema migration 7 on, a run's records (the very lines a trace file would hold, header to
footer) are kept zlib-compressed in ``trace_runs.body``, in the run's own row: one row a run where
the records took one row each in ``trace_records`` before. Rows written before (their ``body`` is
NULL) are read from ``trace_records`` as they always were, and verify as they always did.

A group of finished runs is written by one statement (``INSERT_GROUP``): its rows go in as arrays,
so the group costs one round trip and one WAL flush whatever its size. ``COPY`` would stream the
same rows, but it can neither skip a run id already stored (the rest of the group must still
commit) nor number the runs in their writer's chain of the day (``traces.verification.pg_chain``) in the same
statement; the array insert does both.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any, Final

from evidence_loop.tools.errors import NotFoundError, TraceError
from evidence_loop.traces.journal.journal import ZLIB_LEVEL

Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]

# A group of runs in one statement, so one round trip (autocommit: its own transaction): the documents
# they name that the table lacks, then the runs whose ids are new (a run id already stored is skipped,
# not an error: the rest of the group still commits), numbered in this writer's run chain of their day
# after the number that day had reached (``traces.verification.pg_chain``), each with its records compressed.
INSERT_GROUP: Final = """WITH documents AS (
    INSERT INTO trace_documents (hash, body) SELECT * FROM unnest(%s::text[], %s::text[])
    ON CONFLICT (hash) DO NOTHING),
fresh AS (SELECT u.*, row_number() OVER (PARTITION BY u.day ORDER BY u.ord) AS k FROM unnest(
    %s::text[], %s::timestamptz[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::bigint[],
    %s::date[], %s::int[], %s::bytea[]) WITH ORDINALITY AS u(run_id, created_at, question, status,
    outcome_status, final_hash, events, bytes, day, base, body, ord)
    WHERE NOT EXISTS (SELECT 1 FROM trace_runs t WHERE t.run_id = u.run_id))
INSERT INTO trace_runs (run_id, created_at, question, status, outcome_status, final_hash,
    events, bytes, writer, wseq, body) SELECT run_id, created_at, question, status, outcome_status,
    final_hash, events, bytes, %s, base + k, body FROM fresh ON CONFLICT (run_id) DO NOTHING
    RETURNING run_id, wseq"""

# The readiness probe's run: a body of random bytes (as incompressible as a compressed trace), never
# committed.
PROBE: Final = """INSERT INTO trace_runs (run_id, created_at, question, status, events, bytes, body)
    VALUES (%(id)s, now(), '', 'incomplete', 0, 0,
    (SELECT decode(string_agg(md5(random()::text || i), ''), 'hex')
    FROM generate_series(1, %(chunks)s) AS i))"""
PROBE_CHUNK: Final = 16  # bytes of one md5 decoded

# A run's records: its compressed body, or (a row written before migration 7) its record rows.
_RECORDS = """SELECT r.body, (SELECT string_agg(line || E'\\n', '' ORDER BY n) FROM trace_records
    WHERE run_id = r.run_id) FROM trace_runs r WHERE r.run_id = %s"""

# Runs newest first with what a console's row reads (``traces.reading.run_rows``): a compressed run's body, or
# (a row written before migration 7) its header, its decided step (the last event of a finished run) and
# its resolved step (a follow-up's: the first event, or the second after the question's vector) by key.
NEWEST: Final = """SELECT r.run_id, coalesce(r.outcome_status, r.status), r.status, r.events, r.body,
    h.line, d.line, (SELECT t.line FROM trace_records t WHERE r.body IS NULL AND t.run_id = r.run_id
    AND t.n IN (1, 2) AND left(t.line, 64) LIKE '%%"step":"resolved"%%' LIMIT 1)
    FROM trace_runs r LEFT JOIN trace_records h ON r.body IS NULL AND h.run_id = r.run_id AND h.n = 0
    LEFT JOIN trace_records d ON r.body IS NULL AND r.status = 'complete' AND d.run_id = r.run_id
    AND d.n = r.events
    WHERE (r.body IS NOT NULL OR h.line IS NOT NULL)
    AND (%s::timestamptz IS NULL OR r.created_at >= %s) AND (%s::timestamptz IS NULL OR r.created_at < %s)
    AND (r.status <> 'complete') = %s ORDER BY r.created_at DESC, r.run_id DESC OFFSET %s LIMIT %s"""
_RESOLVED = b'"step":"resolved"'


def packed(records: bytes) -> bytes:
    """A run's records as its row keeps them (zlib, the journal's level)."""
    return zlib.compress(records, ZLIB_LEVEL)


def unpacked(run_id: str, body: bytes) -> bytes:
    """The records a row's body holds; a body that does not decompress is damage (``TraceError``)."""
    try:
        return zlib.decompress(body)
    except zlib.error as exc:
        raise TraceError(f"run {run_id}: its stored records do not read back (damaged: {exc})") from exc


def read_records(query: Query, run_id: str) -> bytes:
    """The records of ``run_id`` as written, from its row's body or its record rows."""
    rows = query(_RECORDS, (run_id,))
    if not rows or (rows[0][0] is None and rows[0][1] is None):
        raise NotFoundError(f"no trace for run {run_id!r} in the store")
    body, lines = rows[0]
    return unpacked(run_id, bytes(body)) if body is not None else str(lines).encode("utf-8")


def console_row(
    run_id: str,
    shown: str,
    status: str,
    events: int,
    body: bytes | None,
    header: str | None,
    decided: str | None,
    resolved: str | None,
) -> tuple[str, str, str, str | None, str | None]:
    """A row of ``NEWEST`` as the console reads it: (run id, status or outcome status, header line,
    decided line, resolved line), the lines of a compressed run taken from its body."""
    run_id, shown = str(run_id), str(shown)
    if body is None:
        return run_id, shown, str(header), decided, resolved
    try:
        lines = unpacked(run_id, bytes(body)).split(b"\n")
    except TraceError:
        return run_id, shown, "", None, None  # the console shows the run as damaged; verify names it

    def text(n: int) -> str:  # only the lines a row shows are decoded
        return lines[n].decode("utf-8", "replace")

    last = text(events) if status == "complete" and 0 < events < len(lines) else None
    follow = next((text(n) for n in (1, 2) if n < len(lines) and _RESOLVED in lines[n][:64]), None)
    return run_id, shown, text(0), last, follow


def bodies(records: Sequence[bytes]) -> list[bytes]:
    """The bodies of a group's runs, in its order."""
    return [packed(r) for r in records]
