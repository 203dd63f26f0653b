"""Reading the store's database: the corpus view live at a generation, one stored version parsed.

Everything here reads; callers that need several statements to agree run them inside one
transaction (``read_transaction``), which in WAL mode sees one committed state throughout.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from evidence_loop.tools.errors import NotFoundError
from evidence_loop.tools.search.passages import passage_ids
from evidence_loop.tools.search.snapshot import CorpusView, VersionInfo
from evidence_loop.tools.store.doc_list import DocumentInfo as DocumentInfo
from evidence_loop.tools.store.doc_list import read_documents as read_documents
from evidence_loop.tools.store.schema import database_errors
from evidence_loop.tools.store.schema import read_transaction as read_transaction
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.types import DocFormat, ParsedDocument, Section, Unit, UnitKind

T = TypeVar("T")

# Spans are half-open: a version is live at g when added_gen <= g < removed_gen (NULL = still live).
_LIVE = """live AS (SELECT doc_id, version FROM spans
                    WHERE added_gen <= :g AND (removed_gen IS NULL OR removed_gen > :g))"""

_DOCS_SQL = f"""WITH {_LIVE}
SELECT v.doc_id, v.version, v.title, v.acl, v.sha256, v.text
FROM live JOIN versions v ON v.doc_id = live.doc_id AND v.version = live.version
ORDER BY v.doc_id"""

_UNITS_SQL = f"""WITH {_LIVE}
SELECT u.doc_id, u.ordinal, u.kind, u.section_id, u.start, u."end", u.link, {{tokens}}
FROM live JOIN units u ON u.doc_id = live.doc_id AND u.version = live.version
ORDER BY u.doc_id, u.ordinal"""
# How many tokens a unit's stored list holds, counted by SQLite: the tokens are joined by single
# spaces and never contain one (tools/store/ingest.py), so the count is the spaces plus one.
_TOKEN_COUNT = "length(u.tokens) - length(replace(u.tokens, ' ', '')) + (u.tokens != '')"


def load_view(conn: Db, generation: int, *, tokens: bool = True) -> tuple[CorpusView, list[list[str]]]:
    """The versions live at ``generation``, their units in (doc_id, ordinal) order, and each unit's tokens.

    Run it inside a transaction (a read transaction, or the ingest's write transaction). Without
    ``tokens`` (a snapshot whose indexes are loaded from their files) the token lists are not read,
    only counted, and the list returned is empty: at 100,000 units they were half the time of
    opening an index and most of its peak memory.
    """
    docs: list[VersionInfo] = []
    texts: list[str] = []
    doc_index: dict[str, int] = {}
    for doc_id, version, title, acl, sha, text in conn.execute(_DOCS_SQL, {"g": generation}):
        doc_index[doc_id] = len(docs)
        docs.append(VersionInfo(doc_id, version, title, tuple(json.loads(acl)), sha))
        texts.append(text)
    units: list[Unit] = []
    owners: list[int] = []
    token_lists: list[list[str]] = []
    counts: list[int] = []
    kinds: dict[
        str, UnitKind
    ] = {}  # one string per kind, and the doc_id of the version: held once, not per unit
    sql = _UNITS_SQL.format(tokens="u.tokens" if tokens else _TOKEN_COUNT)
    for doc_id, ordinal, kind, section_id, start, end, link, held in conn.execute(sql, {"g": generation}):
        d = doc_index[doc_id]
        info = docs[d]
        shared = kinds.setdefault(kind, cast(UnitKind, kind))
        units.append(
            Unit(
                info.doc_id, info.version, ordinal, shared, section_id, start, end, texts[d][start:end], link
            )
        )
        owners.append(d)
        if tokens:
            token_lists.append(held.split())
            counts.append(len(token_lists[-1]))
        else:
            counts.append(held)
    view = CorpusView(
        generation,
        tuple(docs),
        tuple(units),
        np.array(owners, dtype=np.int32),
        passage_ids(units),
        np.array(counts, dtype=np.int32),
    )
    return view, token_lists


def _version_row(conn: Db, doc_id: str, version: str, columns: str) -> tuple[Any, ...]:
    """``columns`` of one stored version's row; NotFoundError if the store has no such version."""
    row = conn.execute(
        f"SELECT {columns} FROM versions WHERE doc_id = ? AND version = ?", (doc_id, version)
    ).fetchone()
    if row is None:
        raise NotFoundError(f"no document {doc_id!r} version {version!r} in the store")
    return tuple(row)


def read_version_info(conn: Db, doc_id: str, version: str) -> VersionInfo:
    """Title, ACL and hash of one stored version; NotFoundError if the store has no such version."""
    title, acl, sha256 = _version_row(conn, doc_id, version, "title, acl, sha256")
    return VersionInfo(doc_id, version, title, tuple(json.loads(acl)), sha256)


def read_parsed(conn: Db, doc_id: str, version: str) -> ParsedDocument:
    """A stored version rebuilt from its rows (not re-parsed): exactly what was indexed."""
    title, fmt, text = _version_row(conn, doc_id, version, "title, format, text")
    key = (doc_id, version)
    sections = tuple(
        Section(sid, parent, level, stitle, start, end, tuple(json.loads(path)))
        for sid, parent, level, stitle, start, end, path in conn.execute(
            'SELECT section_id, parent_id, level, title, start, "end", path FROM sections '
            "WHERE doc_id = ? AND version = ? ORDER BY section_id",
            key,
        )
    )
    units = tuple(
        Unit(doc_id, version, ordinal, cast(UnitKind, kind), sid, start, end, text[start:end], link)
        for ordinal, kind, sid, start, end, link in conn.execute(
            'SELECT ordinal, kind, section_id, start, "end", link FROM units '
            "WHERE doc_id = ? AND version = ? ORDER BY ordinal",
            key,
        )
    )
    return ParsedDocument(doc_id, version, title, cast(DocFormat, fmt), text, sections, units)


class DbSource:
    """A :class:`~tools.search.snapshot.VersionSource` over one read connection shared by threads.

    A damaged database surfaces as IndexStateError, whichever read meets the damage.
    """

    def __init__(self, conn: sqlite3.Connection, folder: Path) -> None:
        self._conn = conn
        self._folder = folder
        self._lock = threading.Lock()

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` inside one read transaction on the shared connection."""
        with self._lock, database_errors(self._folder), read_transaction(self._conn) as conn:
            return fn(conn)

    def close(self) -> None:
        """Close the connection; snapshots that still need it will fail."""
        with self._lock:
            self._conn.close()

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        """Title, ACL and hash of a stored version."""
        with self._lock, database_errors(self._folder):
            return read_version_info(self._conn, doc_id, version)

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        """A stored version's sections and units, read in one transaction."""
        with self._lock, database_errors(self._folder), read_transaction(self._conn) as conn:
            return read_parsed(conn, doc_id, version)


class WriterSource:
    """A :class:`~tools.search.snapshot.VersionSource` over a write transaction's connection, its own
    uncommitted rows included: what the scale of a generation about to be committed is measured on.
    Only the writing thread may use it, and only until the transaction ends."""

    def __init__(self, conn: Db) -> None:
        self._conn = conn

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        return read_version_info(self._conn, doc_id, version)

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        return read_parsed(self._conn, doc_id, version)
