"""The SQLite schema of the embedded store: DDL, connection settings, version check, generation counter.

One database file, ``store.sqlite3``, in WAL mode so that readers never wait for the one writer.

    meta       key/value: schema_version, generation (the last committed generation)
    documents  one row per doc_id ever ingested
    versions   one row per (doc_id, version): text, sha256, title, format, acl json, metadata json,
               added_gen (first generation it was live), removed_gen (end of its latest live span,
               NULL = live now) and is_current (1 for the one live version of a document)
    spans      every [added_gen, removed_gen) interval during which a version was live; a version that
               is deleted and later ingested again gets a second span, so a replay pinned to any past
               generation sees exactly what was live then
    sections   the section tree of each version
    units      the hit units of each version, with their BM25 tokens (``tools.tokenize.recall_tokens``)
               space-joined so that the indexes can be rebuilt (for a past generation, or after losing
               the index files) without re-tokenising
    acl        (doc_id, version, group) rows mirroring versions.acl, for queries by group

Rows of a version are never deleted: old versions stay readable for replay. Only an explicit
``replace`` rewrites a version's rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_loop.tools.disk import disk_error
from evidence_loop.tools.errors import DiskError, IndexStateError

if TYPE_CHECKING:
    from evidence_loop.tools.store.sql import Db  # its Source protocol imports the search stack

# 2: units.tokens hold recall_tokens (words plus CJK bigrams); a version-1 store must be rebuilt.
SCHEMA_VERSION = 2
DB_NAME = "store.sqlite3"

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (doc_id TEXT PRIMARY KEY, created_gen INTEGER NOT NULL);
CREATE TABLE versions (
    doc_id TEXT NOT NULL REFERENCES documents(doc_id),
    version TEXT NOT NULL,
    title TEXT NOT NULL,
    format TEXT NOT NULL,
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    acl TEXT NOT NULL,
    metadata TEXT NOT NULL,
    added_gen INTEGER NOT NULL,
    removed_gen INTEGER,
    is_current INTEGER NOT NULL,
    UNIQUE (doc_id, version)
);
CREATE UNIQUE INDEX versions_one_current ON versions(doc_id) WHERE is_current = 1;
CREATE TABLE spans (
    doc_id TEXT NOT NULL,
    version TEXT NOT NULL,
    added_gen INTEGER NOT NULL,
    removed_gen INTEGER,
    PRIMARY KEY (doc_id, version, added_gen),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
) WITHOUT ROWID;
CREATE TABLE sections (
    doc_id TEXT NOT NULL,
    version TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    parent_id INTEGER,
    level INTEGER NOT NULL,
    title TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (doc_id, version, section_id),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
) WITHOUT ROWID;
CREATE TABLE units (
    doc_id TEXT NOT NULL,
    version TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    link INTEGER,
    tokens TEXT NOT NULL,
    PRIMARY KEY (doc_id, version, ordinal),
    FOREIGN KEY (doc_id, version, section_id) REFERENCES sections(doc_id, version, section_id)
) WITHOUT ROWID;
CREATE TABLE acl (
    doc_id TEXT NOT NULL,
    version TEXT NOT NULL,
    grp TEXT NOT NULL,
    PRIMARY KEY (doc_id, version, grp),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
) WITHOUT ROWID;
CREATE INDEX acl_by_group ON acl(grp);
"""


def no_index(folder: Path) -> IndexStateError:
    """The error of a folder that holds no store."""
    return IndexStateError(f"no index at {folder}; create one with `evloop ingest PATH --index {folder}`")


@contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One deferred transaction: every statement inside sees the same committed state."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def rebuild_hint(folder: Path) -> str:
    """The sentence every IndexStateError about a damaged store ends with."""
    return f"delete {folder} and ingest again: `evloop ingest PATH --index {folder}`"


@contextmanager
def database_errors(folder: Path) -> Iterator[None]:
    """A damaged database (any sqlite3.DatabaseError while opening or using it) as IndexStateError;
    a full disk or an I/O error as DiskError, which is no damage.

    ProgrammingError (a closed connection, a bad statement) is a bug here, not damage: it stays as is.
    """
    try:
        yield
    except sqlite3.ProgrammingError:
        raise
    except sqlite3.DatabaseError as exc:
        disk = disk_error(exc, folder, "using the store")
        if disk is not None:
            raise disk from exc
        raise IndexStateError(
            f"the database {folder / DB_NAME} cannot be used ({exc}); `evloop check --index {folder}` "
            f"lists the damage; restore from your sources: {rebuild_hint(folder)}"
        ) from exc


def connect(db_path: Path) -> sqlite3.Connection:
    """Open a connection in autocommit mode (transactions are explicit) with WAL and foreign keys on.

    DiskError when the disk is full or failing (SQLite must grow its shared-memory file to open a
    WAL database): :func:`connect_read_only` may still read it then.
    """
    conn = sqlite3.connect(db_path, timeout=30.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL is safe in WAL mode against application crashes, which is what we promise.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        disk = disk_error(exc, db_path.parent, "opening the store")
        if disk is not None:
            raise disk from exc
        raise IndexStateError(
            f"{db_path} is not a readable evidence-loop database ({exc}); {rebuild_hint(db_path.parent)}"
        ) from exc
    return conn


def connect_read_only(db_path: Path, why: DiskError) -> sqlite3.Connection:
    """A connection that reads the database without writing a byte, for a disk that takes no more.

    With nothing in the write-ahead log the database file alone is the whole store: it is opened
    ``immutable`` (no locks, no shared-memory file). Otherwise the log is read into this process's
    memory (exclusive locking mode, which needs no shared-memory file). Temporary tables stay in
    memory. ``why`` is raised when even that cannot read it.
    """
    wal = db_path.with_name(db_path.name + "-wal")
    try:
        empty_log = not wal.exists() or wal.stat().st_size == 0
        if empty_log:
            uri = f"{db_path.resolve().as_uri()}?mode=ro&immutable=1"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        else:
            conn = sqlite3.connect(db_path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("PRAGMA query_only=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (OSError, sqlite3.DatabaseError) as exc:
        raise why from exc
    return conn


def create_schema(conn: sqlite3.Connection) -> None:
    """Create every table of an empty database at generation 0."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _DDL.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("schema_version", str(SCHEMA_VERSION)), ("generation", "0")],
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def is_blank(conn: sqlite3.Connection) -> bool:
    """True for a database with no tables yet (new, or a creation killed before it committed)."""
    try:
        count: int = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        return count == 0
    except sqlite3.DatabaseError:
        return False  # not a database at all: check_schema reports it


def check_schema(conn: sqlite3.Connection, folder: Path) -> None:
    """Raise IndexStateError unless the database was written by this schema version."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        disk = disk_error(exc, folder, "reading the store")
        if disk is not None:
            raise disk from exc
        raise IndexStateError(
            f"{folder / DB_NAME} is not a readable evidence-loop database ({exc}); {rebuild_hint(folder)}"
        ) from exc
    if row is None or row[0] != str(SCHEMA_VERSION):
        found = "no schema version" if row is None else f"schema version {row[0]}"
        raise IndexStateError(
            f"{folder / DB_NAME} has {found}; this evloop reads schema version {SCHEMA_VERSION}; "
            f"{rebuild_hint(folder)}"
        )


def read_generation(conn: Db) -> int:
    """The last committed generation (inside a transaction: the one this transaction sees)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    if row is None:
        raise IndexStateError("the store has no generation counter")
    return int(row[0])


def write_generation(conn: Db, generation: int) -> None:
    """Record a new generation; visible to others when the surrounding transaction commits."""
    conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (str(generation),))
