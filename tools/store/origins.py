"""Where each document came from: the source a sync names, so that a prune retires only its own.

    doc_sources   doc_id -> source: the folder, file or name of the last sync that wrote or saw the
                  document (a document written without a source keeps the one it had, or none)

    record(conn, doc_id, source)   in a sync's transaction, for every document it holds (the source before)
    live_of(conn, source)          the doc_ids with a live version whose source is ``source``

In an index folder the table is created by the first write that records a source (``ensure``), as
the vectors' table is: a folder written before sources existed opens unchanged, its documents
without one. In PostgreSQL migration 6 creates it (``evloop migrate``).
"""

from __future__ import annotations

from evidence_loop.tools.store.sql import Db

DDL = """CREATE TABLE IF NOT EXISTS doc_sources (
    doc_id TEXT NOT NULL PRIMARY KEY REFERENCES documents(doc_id),
    source TEXT NOT NULL
)"""
INDEX_DDL = "CREATE INDEX IF NOT EXISTS doc_sources_by_source ON doc_sources(source)"


def ensure(conn: Db) -> None:
    """Create the table in a store that has none yet (SQLite only: PostgreSQL migrates it)."""
    conn.execute(DDL)
    conn.execute(INDEX_DDL)


def record(conn: Db, doc_id: str, source: str) -> str | None:
    """``doc_id`` comes from ``source`` from now on; returns the source it was recorded from before
    (None: none), so the caller reads it once and knows whether anything changed."""
    before = source_of(conn, doc_id)
    if before != source:
        conn.execute(
            "INSERT INTO doc_sources(doc_id, source) VALUES (?, ?) "
            "ON CONFLICT(doc_id) DO UPDATE SET source = excluded.source",
            (doc_id, source),
        )
    return before


def live_of(conn: Db, source: str) -> list[str]:
    """The doc_ids from ``source`` that have a live version, in code-point order."""
    rows = conn.execute(
        "SELECT s.doc_id FROM doc_sources s JOIN versions v ON v.doc_id = s.doc_id AND v.is_current = 1 "
        "WHERE s.source = ? ORDER BY s.doc_id",
        (source,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def source_of(conn: Db, doc_id: str) -> str | None:
    """The source ``doc_id`` was last synced from, or None."""
    row = conn.execute("SELECT source FROM doc_sources WHERE doc_id = ?", (doc_id,)).fetchone()
    return None if row is None else str(row[0])
